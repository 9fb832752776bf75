"""JSON values: checking, copying and comparing them without losing structure.

The decision spec requires structured context, instructions, option descriptions, levels and
criteria to keep their JSON structure exactly. These helpers accept only real JSON values
(``str``, finite ``int``/``float``, ``bool``, ``None``, ``list`` and ``dict`` with ``str`` keys),
keep key order and never convert one scalar type into another. Text must be writable as UTF-8:
a string holding a lone surrogate (``"\\ud800"``, which Python allows and UTF-8 cannot encode;
JSON text can carry it only as the escape ``\\ud800``, which the providers of this project do
not send) is refused, as a JSON text that repeats a key of one object is.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from pydantic import JsonValue

MAX_DEPTH: Final = 200
"""How deeply JSON values may nest before they are rejected."""


class NonJsonValueError(ValueError):
    """A value that is not JSON, found at ``path`` (e.g. ``context.items[2]``)."""

    def __init__(self, path: str, value: object, reason: str) -> None:
        where = f"{path} is" if path else "value is"
        super().__init__(f"{where} not a JSON value: {reason}")
        self.path = path
        self.value = value
        self.reason = reason


def unwritable_text(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8, or ``None`` when it can.

    Args:
        text: Any string.

    Returns:
        A description naming the first lone surrogate (``"a lone surrogate '\\ud800' at index
        3"``), or ``None``.
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = text[error.start]
        return f"a lone surrogate {bad!r} at index {error.start}, which UTF-8 cannot encode"
    return None


def _describe(value: object) -> str:
    if isinstance(value, float):
        return f"the number {value!r} (JSON numbers are finite)"
    return f"a {type(value).__name__}"


def json_copy(value: object, path: str) -> JsonValue:
    """Return a deep copy of ``value``, checking that it is a JSON value.

    Args:
        value: The value to check and copy.
        path: Where the value sits, used in error messages (``context``, ``options['a']``...);
            empty for "the value itself".

    Returns:
        A copy made of new lists and dicts (same key order) and the same scalars.

    Raises:
        NonJsonValueError: Some part of ``value`` is not JSON (a tuple, a set, bytes, an object,
            a non-string key, a NaN or infinite float) or nests deeper than :data:`MAX_DEPTH`.
    """
    return _copy(value, path, 0)


def _copy(value: object, path: str, depth: int) -> JsonValue:
    if type(value) is str and value.isascii():  # the common case, first and cheapest
        return value
    if depth > MAX_DEPTH:
        raise NonJsonValueError(path, value, f"nested deeper than {MAX_DEPTH} levels")
    # Subclasses (an IntEnum, a StrEnum) are stored as the plain scalar they stand for.
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        problem = unwritable_text(value)
        if problem is not None:
            raise NonJsonValueError(path, value, f"the text holds {problem}")
        return str.__new__(str, value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NonJsonValueError(path, value, _describe(value))
        return float(value)
    if isinstance(value, list):
        return [_copy(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
    if isinstance(value, dict):
        copied: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NonJsonValueError(path, value, f"key {key!r} is not a string")
            problem = unwritable_text(key)
            if problem is not None:
                raise NonJsonValueError(path, value, f"key {key!r} holds {problem}")
            copied[key] = _copy(item, f"{path}[{key!r}]", depth + 1)
        return copied
    raise NonJsonValueError(path, value, _describe(value))


def json_identical(left: object, right: object) -> bool:
    """Whether two JSON values are identical, as their JSON texts would be.

    Stricter than ``==``: ``True`` differs from ``1``, ``1`` differs from ``1.0``, and object keys
    must come in the same order.

    Args:
        left: A JSON value.
        right: Another JSON value.

    Returns:
        ``True`` when both have the same types, values and key order throughout.
    """
    if type(left) is not type(right):
        return False
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            json_identical(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return list(left) == list(right) and all(json_identical(left[k], right[k]) for k in left)
    return left == right


class _RepeatedKeys(dict[str, Any]):
    """A JSON object that repeated some of its keys (only the last value of each is kept)."""

    def __init__(self, pairs: list[tuple[str, Any]], repeated: list[str]) -> None:
        super().__init__(pairs)
        self.repeated = repeated


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    repeated = []
    for key, _ in pairs:
        if key in seen:
            repeated.append(key)
        seen.add(key)
    return _RepeatedKeys(pairs, repeated) if repeated else dict(pairs)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _find_repeated(
    value: object, path: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], list[str]] | None:
    if isinstance(value, _RepeatedKeys):
        return path, value.repeated
    children: list[tuple[str | int, object]] = []
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    for key, child in children:
        found = _find_repeated(child, (*path, key))
        if found is not None:
            return found
    return None


def loads_strictly(
    text: str | bytes | bytearray,
) -> tuple[Any, tuple[tuple[str | int, ...], list[str]] | None]:
    """Parse JSON text, refusing ``NaN``/``Infinity`` and finding repeated keys.

    Python's ``json`` (like most parsers) keeps the last value of a key an object repeats, so
    ``{"a": 1, "a": 2}`` silently loses a value. This reports it instead.

    Args:
        text: JSON text.

    Returns:
        The parsed value, and the path to the first object that repeats keys with those keys
        (``(("questions", "q", "options"), ["a"])``), or ``None`` when no key repeats.

    Raises:
        ValueError: The text is not JSON (``json.JSONDecodeError``), or holds a non-finite
            number.
    """
    data = json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_reject_constant)
    return data, _find_repeated(data, ())
