"""Did the structure of a request reach the backend? Finding JSON values in what was sent.

A provider may send a structured context as a JSON field of its request body, or write it into a
prompt as JSON text (indented or not). Either way the value can be found again: every object and
array of the body is a candidate, and so is every JSON object or array written inside a string of
the body. A value counts as delivered when an identical one (same types, same key order, see
:func:`~pytest_opdecide.questions._json.json_identical`) is among the candidates. A context turned
into ``str(context)``, ``key: value`` lines or any other text is not JSON any more, and is not
found.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._transport import RecordedRequest
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    ScoreQuestion,
)
from pytest_opdecide.questions._json import json_identical

__all__ = ["Received", "check_structure", "received", "received_body", "scan_json"]

_MAX_DEPTH: Final = 6
_FIX: Final = (
    "write structured values into what you send as JSON (json.dumps, any indentation, key "
    "order kept), or send them as JSON fields; never as str()/repr() or reformatted text, and "
    "never drop them"
)


@dataclass
class Received:
    """Everything the backend received, broken down for searching.

    Attributes:
        values: Every JSON object and array found (body nodes and JSON written in strings).
        texts: Every string (and object key) found, with its whitespace collapsed.
    """

    values: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def has_value(self, value: Any) -> bool:
        """Whether an identical JSON value was received."""
        return any(json_identical(candidate, value) for candidate in self.values)

    def has_text(self, text: str) -> bool:
        """Whether ``text`` (whitespace collapsed, or JSON-escaped) appears in a received string."""
        wanted = _collapse(text)
        if not wanted:
            return True
        forms = {
            wanted,
            _collapse(json.dumps(text)[1:-1]),
            _collapse(json.dumps(text, ensure_ascii=False)[1:-1]),
        }
        return any(form in haystack for haystack in self.texts for form in forms)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _walk(value: Any, into: Received, depth: int) -> None:
    if isinstance(value, dict):
        into.values.append(value)
        for key, item in value.items():
            into.texts.append(_collapse(key))  # option names may be sent as object keys
            _walk(item, into, depth)
    elif isinstance(value, list):
        into.values.append(value)
        for item in value:
            _walk(item, into, depth)
    elif isinstance(value, str):
        into.texts.append(_collapse(value))
        if depth < _MAX_DEPTH:
            for embedded in _embedded_json(value):
                _walk(embedded, into, depth + 1)


def scan_json(text: str) -> Iterator[tuple[int, int, Any]]:
    """Every JSON object or array written in ``text`` (outermost ones), with where it is.

    Yields:
        ``(start, end, value)`` for each, in order.
    """
    decoder = json.JSONDecoder()
    position = 0
    length = len(text)
    while position < length:
        brace = text.find("{", position)
        bracket = text.find("[", position)
        starts = [index for index in (brace, bracket) if index != -1]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        yield start, end, value
        position = end


def _embedded_json(text: str) -> Iterator[Any]:
    """Every JSON object or array written in ``text`` (outermost ones; their parts are walked)."""
    for _, _, value in scan_json(text):
        yield value


def received_body(body: Any) -> Received:
    """Break down one request body (parsed JSON, or text)."""
    into = Received()
    _walk(body, into, 0)
    return into


def received(requests: Sequence[RecordedRequest]) -> Received:
    """Break down what the backend received."""
    into = Received()
    for request in requests:
        if request.json is not None:
            _walk(request.json, into, 0)
        else:
            _walk(request.content.decode("utf-8", "replace"), into, 0)
    return into


def _has(got: Received, value: Any) -> bool:
    return got.has_text(value) if isinstance(value, str) else got.has_value(value)


def _check(got: Received, value: Any, what: str, question: str | None) -> None:
    if isinstance(value, str):
        if not got.has_text(value):
            fail(
                ConformanceRule.STRUCTURE,
                f"{what} did not reach the backend (the text was not found in any request)",
                question=question,
                value=value,
                fix=_FIX,
            )
        return
    if not got.has_value(value):
        fail(
            ConformanceRule.STRUCTURE,
            f"{what} did not reach the backend as JSON with its structure intact (flattened to "
            "text, re-typed, re-ordered or dropped)",
            question=question,
            value=value,
            fix=_FIX,
        )


def _parts(question: Any) -> list[tuple[str, Any]]:
    """What a question is made of, besides its instructions: ``(what, value)`` pairs."""
    parts: list[tuple[str, Any]] = []
    if isinstance(question, ChoiceQuestion):
        for name, description in question.options.items():
            parts.append((f"the name of option {name!r}", name))
            if description is not None:
                parts.append((f"the description of option {name!r}", description))
    elif isinstance(question, ScoreQuestion):
        parts += [(f"level {index}", level) for index, level in enumerate(question.levels)]
    elif isinstance(question, BooleanQuestion) and question.criteria is not None:
        for side in ("true", "false"):
            value = getattr(question.criteria, side)
            if value is not None:
                parts.append((f"criteria.{side}", value))
    return parts


def check_structure(request: DecisionRequest, requests: Sequence[RecordedRequest]) -> None:
    """Fail unless every part of ``request`` reached the backend with its structure, each
    question's parts in a request that asks it (one carrying its instructions), and the context
    in every request that asks a question.

    Raises:
        ConformanceError: Naming the question and the part that is missing, reshaped, or sent
            only in a request about something else.
    """
    got = received(requests)
    _check(got, request.context, "the context", None)
    each = [received([sent]) for sent in requests]
    asking: dict[int, str] = {}
    for question_id, question in request.questions.items():
        _check(got, question.instructions, "the instructions", question_id)
        parts = _parts(question)
        for what, value in parts:
            _check(got, value, what, question_id)
        holders = [i for i, one in enumerate(each) if _has(one, question.instructions)]
        for index in holders:
            asking.setdefault(index, question_id)
        if holders and not any(all(_has(each[i], value) for _, value in parts) for i in holders):
            best = max(holders, key=lambda i: sum(_has(each[i], value) for _, value in parts))
            what = next(what for what, value in parts if not _has(each[best], value))
            fail(
                ConformanceRule.STRUCTURE,
                f"{what} is not in the request that asks this question (the one carrying its "
                "instructions): it was sent with another question, or not with this one",
                question=question_id,
                value=[f"{r.method} {r.url}" for r in (requests[i] for i in holders)],
                fix="send each question with all of its own parts (options, levels, criteria) "
                "in the request that asks it",
            )
    for index, question_id in sorted(asking.items()):
        if not _has(each[index], request.context):
            fail(
                ConformanceRule.STRUCTURE,
                f"the context is not in request {index + 1} of {len(requests)} (the one asking "
                "this question): every request that asks a question must carry the context",
                question=question_id,
                value=f"{requests[index].method} {requests[index].url}",
                fix="send the request's context with every request, not only the first",
            )
