"""Bounded caches drop their oldest entries in bulk, never one walk per insertion."""

from __future__ import annotations

from pytest_opdecide._bounded import drop_oldest


def _filled(limit: int) -> dict[int, int]:
    cache: dict[int, int] = {}
    for key in range(limit):
        cache[key] = key
    return cache


def test_a_full_cache_loses_its_oldest_quarter_in_order() -> None:
    cache = _filled(8)
    drop_oldest(cache, 8)
    assert list(cache) == [2, 3, 4, 5, 6, 7]


def test_a_tiny_cache_loses_at_least_one_entry() -> None:
    cache = _filled(2)
    drop_oldest(cache, 2)
    assert list(cache) == [1]


def test_a_cache_used_as_callers_use_it_stays_bounded_and_keeps_the_newest() -> None:
    limit = 64
    cache: dict[int, int] = {}
    for key in range(10 * limit):
        if len(cache) >= limit:
            drop_oldest(cache, limit)
        cache[key] = key
        assert len(cache) <= limit
    assert list(cache) == list(range(10 * limit - len(cache), 10 * limit))
    assert len(cache) > limit * 3 // 4
