"""What a backend can see of a question in a prompt: the context, the instructions, and which
outcome each answer label stands for.

The conformance backend answers a prompt with a distribution keyed to what it sees there, so
that a provider which shows a question other than as asked (a part missing, options rotated,
levels reversed, criteria swapped, another question's instructions, no context) gets another
answer than the one expected for that question, and the checks notice.

It sees only what it can recognise: the parts of the request it was told about
(:meth:`Registry.register`), found in the text of the messages as they are or as JSON
(indented or not), and labels written the way prompts usually write them, at the start of a
line and outside any JSON value: ``A. billing``, ``(B) shipping``, ``C: ...``, ``2. high``,
``"yes" means: ...``, ``No: ...``. When it cannot tell which outcome a label stands for (a
format it does not know, a part found in two places), the pairing is *unreadable*: the answer
is then not compared, rather than compared wrongly.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_opdecide.conformance._structure import Received, received_body, scan_json
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    ScoreQuestion,
)
from pytest_opdecide.questions._json import json_identical

__all__ = ["Part", "Registry", "Sight", "canonical", "expected_sight", "outcome_parts"]

_LINE_START: Final = r"^[ \t]*(?:[-*•>][ \t]*)?"
_BOOLEAN_WORDS: Final = {"yes": ("yes", "true"), "no": ("no", "false")}

_ANSWER_LINE = re.compile(r"^Answer with [^\n]*", re.MULTILINE)
"""An answer instruction's line: no list of outcomes, whatever it names."""


def canonical(value: Any) -> str:
    """A JSON value as text that is equal for identical values (types and key order kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Part:
    """A part of a question that stands for one of its outcomes.

    Attributes:
        key: ``kind:`` and the canonical JSON of the value: equal parts have equal keys.
        value: The value (text or JSON).
        shown: What it is, for people: ``option 'billing' of question 'route'``.
    """

    key: str
    value: Any
    shown: str


def _part(kind: str, value: Any, shown: str) -> list[Part]:
    if isinstance(value, str) and not value.strip():
        return []  # blank text cannot be seen next to a label: not a part
    return [Part(f"{kind}:{canonical(value)}", value, shown)]


def outcome_parts(question_id: str, question: DecisionQuestion) -> list[list[Part]]:
    """The parts that stand for each outcome of ``question``, in outcome order."""
    where = f"of question {question_id!r}"
    if isinstance(question, ChoiceQuestion):
        outcomes = []
        for name, description in question.options.items():
            parts = _part("name", name, f"option {name!r} {where}")
            if description is not None:
                parts += _part(
                    "description", description, f"the description of option {name!r} {where}"
                )
            outcomes.append(parts)
        return outcomes
    if isinstance(question, ScoreQuestion):
        return [
            _part("level", level, f"level {index} {where}")
            for index, level in enumerate(question.levels)
        ]
    assert isinstance(question, BooleanQuestion)
    criteria = question.criteria
    sides: list[list[Part]] = []
    for side in ("true", "false"):
        value = None if criteria is None else getattr(criteria, side)
        sides.append([] if value is None else _part("criterion", value, f"criteria.{side} {where}"))
    return sides


@dataclass(frozen=True)
class Sight:
    """What a prompt showed of a question, as the distribution served for it is keyed.

    Attributes:
        kind: The question type the answer instruction asks about.
        context: Whether the request's context was in the prompt.
        instructions: The canonical JSON of every registered question's instructions found.
        outcomes: Per label, in label order, the keys of the parts found next to it; ``None``
            when which label stands for which outcome could not be read.
    """

    kind: str
    context: bool
    instructions: tuple[str, ...]
    outcomes: tuple[tuple[str, ...], ...] | None

    def seed(self) -> str:
        """The text the served distribution is drawn from."""
        return canonical(
            [
                self.kind,
                self.context,
                list(self.instructions),
                None if self.outcomes is None else [list(o) for o in self.outcomes],
            ]
        )


def expected_sight(question: DecisionQuestion) -> Sight:
    """What a prompt shows of ``question`` when it shows it as asked, with the context."""
    return Sight(
        question.type,
        True,
        (canonical(question.instructions),),
        tuple(tuple(sorted(part.key for part in parts)) for parts in outcome_parts("", question)),
    )


# ---------------------------------------------------------------- finding things in text


@functools.lru_cache(maxsize=4096)
def _text_patterns(text: str) -> tuple[re.Pattern[str], ...]:
    """How ``text`` may be written: as is (any whitespace), or JSON-escaped."""
    words = text.split()
    if not words:
        return ()
    patterns = [re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)")]
    for ascii_only in (True, False):
        escaped = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
        if escaped != text:
            patterns.append(re.compile(r"(?<!\w)" + re.escape(escaped) + r"(?!\w)"))
    return tuple(patterns)


def _spans_of(text: str, value: Any) -> list[tuple[int, int]]:
    """Where ``value`` is written in ``text``: as text, or as JSON (outermost values only)."""
    if isinstance(value, str):
        return [m.span() for pattern in _text_patterns(value) for m in pattern.finditer(text)]
    return [(start, end) for start, end, found in scan_json(text) if json_identical(found, value)]


def _walk_json(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk_json(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk_json(item)


def _found_in(segment: str, part: Part, json_values: Sequence[Any]) -> bool:
    if isinstance(part.value, str):
        return any(pattern.search(segment) for pattern in _text_patterns(part.value))
    return any(json_identical(found, part.value) for found in json_values)


def _marker(kind: str, label: str) -> re.Pattern[str]:
    if kind == "boolean":
        words = "|".join(_BOOLEAN_WORDS[label])
        return re.compile(
            _LINE_START
            + r"(?:if[ \t]+)?[\"']?(?:"
            + words
            + r")[\"']?[ \t]*(?:means\b|:|=|->|–|—|-)",
            re.MULTILINE | re.IGNORECASE,
        )
    return re.compile(
        _LINE_START
        + r"(?:(?i:option|level)[ \t]+)?[(\[]?[\"']?"
        + re.escape(label)
        + r"[\"']?[)\].:](?=\s|$)",
        re.MULTILINE,
    )


@dataclass
class Registry:
    """The request the prompts are about, and how to read them.

    Attributes:
        request: The registered request, or ``None``.
        parts: Per question type, every outcome part of the request's questions of that type
            (each outcome's parts as one list).
    """

    request: DecisionRequest | None = None
    parts: dict[str, list[list[Part]]] = field(default_factory=dict)

    def register(self, request: DecisionRequest) -> None:
        """Read the next prompts as asking about ``request``'s questions."""
        self.request = request
        self.parts = {}
        for question_id, question in request.questions.items():
            self.parts.setdefault(question.type, []).extend(outcome_parts(question_id, question))

    def describe(self, key: str) -> str:
        """A part key as people read it (``option 'billing' of question 'route'``)."""
        for outcomes in self.parts.values():
            for parts in outcomes:
                for part in parts:
                    if part.key == key:
                        return part.shown
        return key

    def questions_with_instructions(self, instructions: str) -> list[str]:
        """The ids of the registered questions whose instructions have this canonical JSON."""
        if self.request is None:
            return []
        return [
            question_id
            for question_id, question in self.request.questions.items()
            if canonical(question.instructions) == instructions
        ]

    def sight(
        self,
        body: Mapping[str, Any],
        text: str,
        kind: str,
        labels: Sequence[str],
        instruction_at: int,
    ) -> Sight:
        """What the prompt ``text`` (the messages of ``body``) shows, for a question of
        ``kind`` answered with ``labels`` by the instruction starting at ``instruction_at``."""
        if self.request is None:
            return Sight(kind, False, (), None)
        got: Received = received_body(body)
        context = self.request.context
        has_context = got.has_text(context) if isinstance(context, str) else got.has_value(context)
        instructions = self._instructions(got, text)
        outcomes = (
            self._outcomes(text, kind, labels, instruction_at) if len(instructions) <= 1 else None
        )
        return Sight(kind, has_context, instructions, outcomes)

    def _instructions(self, got: Received, text: str) -> tuple[str, ...]:
        """The registered instructions the prompt shows, leaving out those seen only inside
        another one (a text inside a JSON instruction) or inside the context."""
        assert self.request is not None
        found: dict[str, list[tuple[int, int]]] = {}
        for question in self.request.questions.values():
            value = question.instructions
            key = canonical(value)
            present = got.has_text(value) if isinstance(value, str) else got.has_value(value)
            if key not in found and present:
                found[key] = _spans_of(text, value)
        context = self.request.context
        around: dict[str, list[tuple[int, int]]] = {
            key: [span for other, spans in found.items() if other != key for span in spans]
            + ([] if key == canonical(context) else _spans_of(text, context))
            for key in found
        }
        shown = [
            key
            for key, spans in found.items()
            if not spans
            or not all(
                any(a <= start and end <= b and (b - a) > (end - start) for a, b in around[key])
                for start, end in spans
            )
        ]
        return tuple(sorted(shown))

    def _outcomes(
        self, text: str, kind: str, labels: Sequence[str], instruction_at: int
    ) -> tuple[tuple[str, ...], ...] | None:
        assert self.request is not None
        candidates = self.parts.get(kind, [])
        known = [part for parts in candidates for part in parts]
        blocks = [self.request.context, *(q.instructions for q in self.request.questions.values())]
        if {canonical(block) for block in blocks} & {canonical(part.value) for part in known}:
            return None  # an outcome written like the context or instructions: ambiguous
        # Text that is not a list of outcomes: the context, the instructions, the answer
        # instruction. Labels there are not labels. Segments run from a label to the next one
        # (or to the answer instruction): text that follows the last outcome only ever makes a
        # pairing unreadable, never wrong.
        excluded: list[tuple[int, int]] = [(instruction_at, len(text))]
        # So is every earlier answer instruction (a worked example's), which may name each
        # label's outcome ("A for billing, B for shipping").
        answers = [found.span() for found in _ANSWER_LINE.finditer(text, 0, instruction_at)]
        excluded += answers
        excluded += _spans_of(text, self.request.context) if self.request.context != "" else []
        for question in self.request.questions.values():
            excluded += _spans_of(text, question.instructions)
        # A label inside a JSON value ("no": ..., "A": ...) is a key of that value, not a label.
        inside_json = [(start, end) for start, end, _ in scan_json(text)]
        markers: list[tuple[int, int, str]] = []
        for label in labels:
            for match in _marker(kind, label).finditer(text):
                if not any(start <= match.start() < end for start, end in excluded + inside_json):
                    markers.append((match.start(), match.end(), label))
        markers.sort()
        stops = sorted(
            {start for start, _, _ in markers} | {instruction_at} | {start for start, _ in answers}
        )
        seen: dict[str, set[str]] = {label: set() for label in labels}
        covered: list[tuple[int, int]] = []
        for _, end, label in markers:
            stop = next((s for s in stops if s >= end), len(text))
            segment = text[end:stop]
            covered.append((end, stop))
            values = [v for _, _, found in scan_json(segment) for v in _walk_json(found)]
            seen[label] |= {part.key for part in known if _found_in(segment, part, values)}
        outcome_sets = [frozenset(part.key for part in parts) for parts in candidates]
        for label in labels:
            keys = seen[label]
            if kind != "boolean" and not keys:
                return None  # a label next to nothing known: the pairing cannot be read
            if keys and not any(keys <= outcome for outcome in outcome_sets):
                return None  # parts of several outcomes next to one label
        if kind == "boolean":
            # Criteria written without a recognisable yes/no label: the pairing is unknown.
            for part in known:
                for start, _ in _spans_of(text, part.value):
                    if not any(a <= start < b for a, b in covered) and not any(
                        a <= start < b for a, b in excluded
                    ):
                        return None
        return tuple(tuple(sorted(seen[label])) for label in labels)
