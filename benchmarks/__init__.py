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
