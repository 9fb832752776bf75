"""Replay matching: a cassette's requests looked up in order, against a dict index (issue 22).

A cassette of N interactions (N = 1,000, 4,000 and 16,000), each a chat-completions request
with its own prompt; the test sends the same N requests in the cassette's order, and each is
answered by :meth:`Tape.take` (what the replay transport calls), from reading the tape's
interactions to the last answer.

* Baseline: a plain ``dict`` from (method, URL, body) to the response, built and looked up in
  the same run: the least any lookup can cost.
* Measured, as sent while recording: the same bytes (the usual case).
* Measured, by content: each body written again with its keys in another order and a volatile
  ``metadata.request_id`` that differs, ignored with ``volatile``: every request is parsed
  and found by what matching compares.

Times are CPU times (``time.process_time``, the garbage collector off as in ``timeit``): on a
shared machine, other processes slow wall time by more than any growth measured here. Targets:
16,000 requests in order within 50x the dict index; the time per request at 16,000 at most 2x
that at 1,000 (constant time per request: it stays near 1) for both kinds.
"""

from __future__ import annotations

import contextlib
import gc
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import Measurement
from pytest_opdecide._cassettes._matching import forget_parsed_bodies
from pytest_opdecide._cassettes._tape import Interaction, Tape

SIZES = (1_000, 4_000, 16_000)
TARGET_RATIO = 50.0
GROWTH_TARGET = 2.0
URI = "http://127.0.0.1:8765/v1/chat/completions"


def _body(number: int, *, reordered: bool = False) -> bytes:
    message = {"role": "user", "content": f"Ticket {number}: my order arrived damaged."}
    fields: dict[str, Any] = {
        "model": "smollm2-135m-instruct",
        "messages": [message],
        "temperature": 0,
        "metadata": {"request_id": f"req-{number}-{'b' if reordered else 'a'}"},
    }
    if reordered:
        fields = dict(reversed(fields.items()))
    return json.dumps(fields).encode()


def _interactions(count: int) -> list[Interaction]:
    return [
        Interaction(
            method="POST",
            uri=URI,
            body=_body(number),
            request_headers={"content-type": ["application/json"]},
            status=200,
            reason="OK",
            response_headers={"content-type": ["application/json"]},
            content=b'{"choices": []}',
        )
        for number in range(count)
    ]


@contextlib.contextmanager
def _timed(spent: list[float]) -> Iterator[None]:
    """CPU time of the block, with the garbage collector off (as ``timeit`` does: when it runs
    depends on everything else the process holds, not on the block)."""
    gc.collect()
    gc.disable()
    start = time.process_time()
    try:
        yield
    finally:
        spent.append(time.process_time() - start)
        gc.enable()


def _replay(
    interactions: list[Interaction], bodies: list[bytes], volatile: tuple[str, ...]
) -> float:
    forget_parsed_bodies()
    spent: list[float] = []
    with _timed(spent):
        tape = Tape(Path("bench.yaml"), interactions, volatile=volatile)
        for body in bodies:
            assert tape.take("POST", URI, body) is not None
    assert tape.all_played
    return spent[0]


def _dict_index(interactions: list[Interaction], bodies: list[bytes]) -> float:
    spent: list[float] = []
    with _timed(spent):
        index = {(stored.method, stored.uri, stored.body): stored for stored in interactions}
        for body in bodies:
            assert index[("POST", URI, body)] is not None
    return spent[0]


def run() -> list[Measurement]:
    cases = {}
    for count in SIZES:
        interactions = _interactions(count)
        same = [bytes(stored.body or b"") for stored in interactions]  # new objects, same bytes
        content = [_body(number, reordered=True) for number in range(count)]
        cases[count] = (interactions, same, content)
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(5):  # interleaved rounds: a busy machine slows a round's figures alike
        for count, (interactions, same, content) in cases.items():
            times.setdefault(("dict", count), []).append(_dict_index(interactions, same))
            times.setdefault(("same", count), []).append(_replay(interactions, same, ()))
            times.setdefault(("content", count), []).append(
                _replay(interactions, content, ("metadata.request_id",))
            )
    per_request = {key: statistics.median(values) / key[1] for key, values in times.items()}
    large, small = SIZES[-1], SIZES[0]

    def growth(kind: str) -> str:
        return ", ".join(
            f"{count // 1000}k {per_request[kind, count] * 1e6:.2f} us" for count in SIZES
        )

    return [
        Measurement(
            "replay matching, 16,000 requests in order / a dict index",
            per_request["same", large] / per_request["dict", large],
            "x",
            TARGET_RATIO,
            note=f"per request: {growth('same')}; dict index {growth('dict')}",
        ),
        Measurement(
            "per-request time at 16,000 interactions / at 1,000, same bytes (1: constant)",
            per_request["same", large] / per_request["same", small],
            "x",
            GROWTH_TARGET,
        ),
        Measurement(
            "per-request time at 16,000 / at 1,000, matched by content (1: constant)",
            per_request["content", large] / per_request["content", small],
            "x",
            GROWTH_TARGET,
            note=f"per request: {growth('content')} (each body parsed)",
        ),
    ]
