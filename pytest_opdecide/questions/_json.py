"""JSON values: checking, copying and comparing them without losing structure.

The decision spec requires structured context, instructions, option descriptions, levels and
criteria to keep their JSON structure exactly. These helpers accept only real JSON values
(``str``, finite ``int``/``float``, ``bool``, ``None``, ``list`` and ``dict`` with ``str`` keys),
keep key order and never convert one scalar type into another.
"""

from __future__ import annotations

import math
from typing import Final

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
