"""Memory a long-lived runtime keeps, outside a test (issue 22).

Production code makes decisions for days through one runtime. Outside a test (no
``PYTEST_CURRENT_TEST``), a runtime's trace keeps its most recent
:data:`~pytest_opdecide._nextstep._trace.DEFAULT_KEEP` calls (1,000; ``runtime.trace.keep``
asks for more, ``None`` for every call); nothing else grows with the number of calls.

Measured here with :mod:`tracemalloc`: 30,000 decisions of a 100-option menu built anew on every
call (the seed's dict literal), each prompt 2 KB with the call's own ticket id, through one
``FunctionRuntime`` (a user's fake, its default settings). The memory held after 3,000 decisions
(well past the bound) and after 30,000 is taken, each after a full garbage collection; the
figure is what decisions 3,001 to 30,000 added, per decision. The anchor, measured the same way
in the same run: the reference's per-call work
(:func:`~benchmarks.decision_anchors.reference_make`), which keeps nothing. Target: at most 16
bytes per decision above the anchor's (bounded: a memory that grew with every call would add the
size of a call record, some kilobytes, each time). The note gives what the bounded trace holds.
"""

from __future__ import annotations

import gc
import itertools
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

from benchmarks import Measurement
from benchmarks.decision_anchors import reference_make
from benchmarks.decision_shapes import SHAPES
from fake_runtimes import FunctionRuntime, pick
from pytest_opdecide import decision

DECISIONS = 30_000
WARM = 3_000
TARGET_BYTES = 16.0
PROMPT = "Ticket {ticket}: " + "the customer writes that the parcel arrived late and damaged. " * 32


def _held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _growth(one: Callable[[], object]) -> tuple[float, int, int]:
    """Bytes added per decision between decision ``WARM`` and ``DECISIONS``, and the memory
    held before the first decision and after the last."""
    tracemalloc.start()
    try:
        start = _held()
        for _ in range(WARM):
            one()
        warm = _held()
        for _ in range(DECISIONS - WARM):
            one()
        end = _held()
    finally:
        tracemalloc.stop()
    return (end - warm) / (DECISIONS - WARM), start, end


def run() -> list[Measurement]:
    title, build, (name, args) = next(shape for shape in SHAPES if shape[0] == "100 options")
    runtime = FunctionRuntime(lambda call: pick(name, **args))
    assert runtime.trace.keep == 1000  # outside a test
    text = f"I pick this.\n```json\n{json.dumps({'call': name, 'args': args})}\n```\n"
    tickets = itertools.count()

    def ours() -> Any:
        ticket = f"T-{next(tickets)}"
        return decision.make(PROMPT.format(ticket=ticket), build(ticket), runtime=runtime)

    def reference() -> Any:
        ticket = f"T-{next(tickets)}"
        return reference_make(PROMPT.format(ticket=ticket), build(ticket), lambda prompt: text)

    if ours() != reference():  # a fast wrong answer is no figure
        raise AssertionError("the anchor resolves the pick differently")
    theirs, _, _ = _growth(reference)
    per, start, end = _growth(ours)
    kept = len(runtime.trace)
    return [
        Measurement(
            f"memory one runtime keeps, decisions {WARM + 1:,} to {DECISIONS:,} of a {title} "
            "menu, 2 KB prompts (bytes per decision, above the reference's)",
            per - theirs,
            "B",
            TARGET_BYTES,
            baseline=theirs,
            note=(
                f"ours {per:+.1f} B, reference {theirs:+.1f} B per decision; after {DECISIONS:,} "
                f"decisions the runtime's trace holds {kept:,} calls and the process "
                f"{(end - start) / 1e6:.1f} MB more than before the first"
            ),
        )
    ]
