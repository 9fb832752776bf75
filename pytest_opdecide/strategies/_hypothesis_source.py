"""The value generator's choices made by Hypothesis: values of option fields that shrink and replay.

:class:`HypothesisSource` is a :class:`~pytest_opdecide.options.ValueSource` over the ``draw``
function of a composite strategy (or of ``st.data()``): the decision library's generator of
field values (:func:`~pytest_opdecide.options.draw_value`) makes each of its choices as one
draw, so a failing example shrinks choice by choice (fewer items, smaller numbers, optional
fields left out) and replays from Hypothesis's database. A value its type refuses (a constraint
beyond the generator) rejects the example, as a ``filter`` would.

What it draws is wider than the seeded fakes' (:data:`LIMITS`): integers to a million either
way, any finite number to a billion (or an integer, which a ``float`` field takes too), any
text as well as realistic words, empty lists and dicts, any JSON where any is accepted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import assume
from hypothesis import strategies as st

from pytest_opdecide.options import ValueLimits
from pytest_opdecide.strategies._realistic import json_values, realistic_text

__all__ = ["LIMITS", "HypothesisSource"]

T = TypeVar("T")

LIMITS = ValueLimits(
    integers=(-(10**6), 10**6), reals=(-1e9, 1e9), items=(0, 3), entries=(0, 3), depth=8
)
"""What the strategies draw for the types that set no bounds."""

_COIN = st.booleans()
_KEYS = st.text(max_size=8)
_FREE: dict[str, st.SearchStrategy[Any]] = {
    "any": json_values(max_leaves=4),
    "array": st.lists(json_values(max_leaves=4), max_size=3),
    "object": st.dictionaries(_KEYS, json_values(max_leaves=4), max_size=3),
}


@functools.cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=low, max_value=high)


@functools.cache
def _reals(low: float, high: float) -> st.SearchStrategy[float]:
    floats = st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)
    first, last = math.ceil(low), math.floor(high)
    if first > last:
        return floats
    return st.one_of(floats, st.integers(min_value=first, max_value=last))


@functools.cache
def _texts(min_length: int, max_length: int | None) -> st.SearchStrategy[str]:
    if min_length == 0 and max_length is None:
        return st.one_of(realistic_text("word"), st.text(max_size=30))
    most = min_length + 30 if max_length is None else max(min_length, max_length)
    return st.text(min_size=min_length, max_size=most)


class HypothesisSource:
    """The choices of the value generator, each drawn with ``draw``.

    Args:
        draw: The ``draw`` of a composite strategy, or ``data.draw`` of ``st.data()``.
    """

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw

    @property
    def limits(self) -> ValueLimits:
        """:data:`LIMITS`."""
        return LIMITS

    def integer(self, low: int, high: int) -> int:
        """An integer from ``low`` to ``high``; shrinks towards zero, or ``low``."""
        drawn: int = self._draw(_integers(low, high))
        return drawn

    def bits(self, count: int) -> int:
        """An integer below ``2 ** count``."""
        drawn: int = self._draw(_integers(0, 2**count - 1))
        return drawn

    def real(self, low: float, high: float) -> float:
        """A finite number from ``low`` to ``high``, or an integer in that range."""
        drawn: float = self._draw(_reals(low, high))
        return drawn

    def coin(self) -> bool:
        """A boolean; shrinks to ``False``."""
        drawn: bool = self._draw(_COIN)
        return drawn

    def pick(self, values: Sequence[T]) -> T:
        """One of ``values``; shrinks towards the first."""
        drawn: T = self._draw(st.sampled_from(values))
        return drawn

    def text(self, min_length: int = 0, max_length: int | None = None) -> str:
        """A realistic word or any text (up to 30 characters), or any text of the lengths asked."""
        drawn: str = self._draw(_texts(min_length, max_length))
        return drawn

    def key(self) -> str:
        """Any text of up to 8 characters."""
        drawn: str = self._draw(_KEYS)
        return drawn

    def free_json(self, kind: str) -> Any:
        """Any JSON value; a list of up to 3, or an object of up to 3 entries, of them."""
        return self._draw(_FREE[kind])

    def unaccepted(self, value: Any) -> Any:
        """Reject the example: Hypothesis draws another, as after a failed ``filter``."""
        assume(False)
        return value  # not reached: assume(False) raises
