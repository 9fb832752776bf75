"""Benchmarks: each ``bench_*.py`` module defines ``run() -> list[Measurement]``.

``python -m benchmarks`` (or ``make bench``) runs every module, prints one row per measurement
with its baseline measured in the same run, and exits 1 when a target is missed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """One benchmark figure.

    Attributes:
        name: What was measured.
        value: The measured figure.
        unit: The unit of ``value`` (and of ``baseline`` and ``target``).
        target: The limit ``value`` must stay at or below.
        baseline: A comparison figure measured in the same run, if any.
        note: Free text shown next to the row.
    """

    name: str
    value: float
    unit: str
    target: float
    baseline: float | None = None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.value <= self.target


def median_seconds(fn: Callable[[], object], *, repeat: int = 7, number: int = 1) -> float:
    """Median wall time of ``number`` calls of ``fn``, over ``repeat`` rounds, per call."""
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)


def paired_rounds(
    fns: dict[str, Callable[[], object]],
    *,
    rounds: int,
    number: int,
    between: Callable[[], object] | None = None,
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Time several functions round by round, each round one batch of ``number`` calls of
    each, back to back: the median time per call of each, and each round's times.

    A ratio of two of them is best taken as the median of the rounds' own ratios
    (:func:`median_ratio`): batches a few milliseconds apart see the same machine, where the
    medians of long separate runs drift with a shared machine's load. ``between`` runs before
    each round, untimed.
    """
    times: dict[str, list[float]] = {key: [] for key in fns}
    for _ in range(rounds):
        if between is not None:
            between()
        for key, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[key].append((time.perf_counter() - start) / number)
    return {key: statistics.median(value) for key, value in times.items()}, times


def median_ratio(times: dict[str, list[float]], ours: str, theirs: str) -> float:
    """The median, over rounds, of ``ours``'s time over ``theirs``'s in the same round."""
    return statistics.median(a / b for a, b in zip(times[ours], times[theirs], strict=True))
