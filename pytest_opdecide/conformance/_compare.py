"""Comparing what a provider reports with what the conformance backend answered, per question.

A reported probability is *as computed* when it is the backend's value, or that value rounded
to the decimal places the provider states (any places from 1 to 6 when it states none). When
an answer is not as computed, the served prompts say why: the answer is the one the backend
gave for another question (answers swapped), or for a prompt that showed this question other
than as asked (which part, next to which label), or the backend's values paired with other
outcomes; otherwise the values were changed after they were computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_opdecide.conformance._failures import ConformanceRule
from pytest_opdecide.conformance._reading import Registry, Sight, expected_sight
from pytest_opdecide.questions import (
    BooleanAnswer,
    ChoiceAnswer,
    DecisionQuestion,
    DecisionRequest,
    ScoreAnswer,
)

__all__ = ["AS_COMPUTED_EPSILON", "Mismatch", "as_computed", "find_mismatch", "reported_values"]

AS_COMPUTED_EPSILON: Final = 1e-6
"""How far a reported probability may be from the backend's value without any rounding
(room for float arithmetic, float32 included)."""


def as_computed(reported: float, expected: float, decimals: int | None = None) -> bool:
    """Whether ``reported`` is ``expected``, or ``expected`` rounded to ``decimals`` places
    (to any number of places from 1 to 6 when ``decimals`` is ``None``)."""
    if abs(reported - expected) <= AS_COMPUTED_EPSILON:
        return True
    for digits in range(1, 7) if decimals is None else (decimals,):
        scale = 10**digits
        whole = reported * scale
        if abs(whole - round(whole)) <= 1e-6 and abs(reported - expected) <= 0.5 / scale + 1e-9:
            return True
    return False


def reported_values(answer: Any) -> dict[str, float] | None:
    """Outcome -> probability of an answer (``"true"`` for a boolean's P(true))."""
    if isinstance(answer, BooleanAnswer):
        return {"true": answer.probability}
    if isinstance(answer, ChoiceAnswer | ScoreAnswer):
        return dict(answer.probabilities)
    return None


def _matches(
    reported: Mapping[str, float], expected: Mapping[str, float], decimals: int | None
) -> bool:
    return all(
        key in expected and as_computed(value, expected[key], decimals)
        for key, value in reported.items()
    )


@dataclass(frozen=True)
class Mismatch:
    """Why a reported answer is not the backend's answer to its question.

    Attributes:
        rule: ``answer.per_question`` or ``probability.as_computed``.
        detail: What was found, for the failure message.
    """

    rule: ConformanceRule
    detail: str


def _sight_differences(
    registry: Registry, question_id: str, shown: Sight, wanted: Sight
) -> list[str]:
    found: list[str] = []
    if not shown.context:
        found.append("the prompt did not carry the request's context")
    if shown.instructions != wanted.instructions:
        others = [
            other
            for instructions in shown.instructions
            for other in registry.questions_with_instructions(instructions)
            if other != question_id
        ]
        if others:
            found.append(
                "the prompt showed the instructions of question"
                f"{'s' if len(others) > 1 else ''} {', '.join(repr(o) for o in others)}"
            )
        if wanted.instructions[0] not in shown.instructions:
            found.append("the prompt did not show this question's instructions")
    if shown.outcomes is not None and wanted.outcomes is not None:
        for index, (got, want) in enumerate(zip(shown.outcomes, wanted.outcomes, strict=False)):
            if set(got) == set(want):
                continue
            label = _label(shown.kind, index)
            own = f" of question {question_id!r}"
            missing = [registry.describe(key).removesuffix(own) for key in want if key not in got]
            extra = [registry.describe(key).removesuffix(own) for key in got if key not in want]
            if extra:
                what = f"next to label {label!r} the prompt showed {'; '.join(extra)}"
                if missing:
                    what += f", where {'; '.join(missing)} belongs"
            else:
                what = f"next to label {label!r} the prompt did not show {'; '.join(missing)}"
            found.append(what)
    return found


def _label(kind: str, index: int) -> str:
    if kind == "choice":
        return chr(ord("A") + index)
    if kind == "score":
        return str(index)
    return ("yes", "no")[index]


def find_mismatch(
    *,
    question_id: str,
    question: DecisionQuestion,
    reported: Mapping[str, float],
    expected: Mapping[str, float],
    request: DecisionRequest,
    backend: Any,
    served_from: int,
    decimals: int | None,
) -> Mismatch | None:
    """Why ``reported`` is not ``expected`` (``None`` when it is, as computed).

    Args:
        question_id: The question.
        question: The question asked.
        reported: What the provider reported (outcome -> probability).
        expected: The backend's answer to the question asked as it was.
        request: The request the question was part of.
        backend: The backend (its ``served`` prompts and ``registry`` are read when it has them).
        served_from: Only prompts served from this index on are about ``request``.
        decimals: The decimal places the provider states it rounds to, or ``None``.
    """
    if _matches(reported, expected, decimals):
        return None
    expected_of = getattr(backend, "expected_answer", None)
    for other_id, other in request.questions.items():
        if other_id == question_id or other.type != question.type or expected_of is None:
            continue
        theirs = expected_of(other)
        if (
            theirs is not None
            and set(theirs) == set(expected)
            and _matches(reported, theirs, decimals)
        ):
            return Mismatch(
                ConformanceRule.PER_QUESTION,
                f"it is the backend's answer to question {other_id!r}: the answers of two "
                "questions were swapped, or that question's prompt was sent for this one",
            )
    served: Sequence[Any] = list(getattr(backend, "served", ()))[served_from:]
    registry = getattr(backend, "registry", None)
    keys = list(expected)
    wanted = expected_sight(question)
    for prompt in served:
        if prompt.sight.kind != question.type or len(prompt.weights) != len(keys):
            continue
        by_label = dict(zip(keys, prompt.weights, strict=True))
        if _matches(reported, by_label, decimals) and isinstance(registry, Registry):
            differences = _sight_differences(registry, question_id, prompt.sight, wanted)
            if differences:
                return Mismatch(
                    ConformanceRule.PER_QUESTION,
                    "it is the backend's answer to a prompt that did not show this question as "
                    "asked: " + "; ".join(differences),
                )
    for prompt in served:
        if prompt.sight != wanted or len(prompt.weights) != len(keys) or len(keys) < 2:
            continue
        labels_for = _pairing(reported, keys, prompt.weights, decimals)
        if labels_for:
            return Mismatch(
                ConformanceRule.PER_QUESTION,
                "the probabilities are the backend's, paired with other outcomes: "
                + "; ".join(
                    f"{key!r} got the probability of label {_label(question.type, index)!r}"
                    for key, index in labels_for
                ),
            )
    return Mismatch(
        ConformanceRule.AS_COMPUTED,
        "the probabilities are neither the backend's answer nor a rounding of it: they were "
        "changed after they were computed (renormalised after rounding, or mass lost or "
        "invented)",
    )


def _pairing(
    reported: Mapping[str, float],
    keys: Sequence[str],
    weights: Sequence[float],
    decimals: int | None,
) -> list[tuple[str, int]]:
    """Outcomes reported with another label's probability, when every reported value is one
    of the served ones; empty otherwise."""
    moved: list[tuple[str, int]] = []
    for position, key in enumerate(keys):
        if key not in reported:
            continue  # a boolean reports P(true) only
        value = reported[key]
        if as_computed(value, weights[position], decimals):
            continue
        others = [i for i, weight in enumerate(weights) if as_computed(value, weight, decimals)]
        if len(others) != 1:
            return []
        moved.append((key, others[0]))
    return moved
