"""Writing cassettes: the recording writer against plain vcrpy's, and scrubbing's growth (issue 22).

Recording (:func:`~pytest_opdecide._cassettes._file.write_cassette`: scrub every interaction,
write the readable YAML, run the text net over it, read it back to check that replay accepts
it, replace the file) against plain vcrpy writing the same traffic (its filesystem persister
and YAML serializer, through their documented interfaces), both measured in this run on:

* 20 interactions whose prompts are 250 KB each;
* one streamed reply of 1 MB (11,500 server-sent events of content, stored as one block);
* one streamed tool call of 1 MB (7,000 events, each a piece of the call's arguments: JSON
  held in a string, so every quote escaped);
* one streamed reply of 1 MB with log-probabilities (5,000 events, each with its token's
  log-probability and a counter: numbers that change from event to event);
* one streamed reply of 1 MB of a reasoning model (11,000 events: its reasoning, then its
  reply, each phase of its own shape);
* 400 small interactions.

Target: at most 2x plain vcrpy's writer on each.

Scrubbing (:meth:`Scrubber.interactions`) of 100, 400 and 1,600 interactions of 2 KB, each
with its own key in a header and in its JSON body (so that the secrets searched for grow with
the cassette): the time per interaction at 1,600 against that at 100. Target: at most 2x (1:
linear in the cassette's size).

Times are CPU times (``time.process_time``): other processes on a shared machine do not count.
"""

from __future__ import annotations

import copy
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vcr.persisters.filesystem import FilesystemPersister
from vcr.request import Request
from vcr.serializers import yamlserializer

from benchmarks import Measurement
from pytest_opdecide._cassettes._file import write_cassette
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._http._secrets import Secrets

WRITE_TARGET = 2.0
GROWTH_TARGET = 2.0
SCRUB_SIZES = (100, 400, 1_600)
URI = "http://127.0.0.1:8765/v1/chat/completions"
Pair = tuple[dict[str, Any], dict[str, Any]]


def _prompt(number: int, size: int) -> str:
    line = f"Ticket {number}: the customer writes that order A{number} arrived damaged.\n"
    return (line * (size // len(line) + 1))[:size]


def _events(size: int, delta: Callable[[int, int], Any], *first: Any) -> bytes:
    """A stream of ``size`` bytes (about): the ``first`` events, then ``delta(index, total)``
    (the event's number, the bytes before it) for each further one, then ``[DONE]``."""
    events = [f"data: {json.dumps(event)}\n\n" for event in first]
    total, index = 0, 0
    while total < size:
        event = f"data: {json.dumps(delta(index, total))}\n\n"
        events.append(event)
        total += len(event)
        index += 1
    return ("".join(events) + "data: [DONE]\n\n").encode()


def _chunk(delta: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", **more, "choices": [{"index": 0, "delta": delta}]}


def _stream(size: int) -> bytes:
    return _events(size, lambda index, _: _chunk({"content": f"w{index} "}))


def _tool_call_stream(size: int) -> bytes:
    def delta(index: int, _: int) -> dict[str, Any]:
        piece = f'{{"k{index}": "v"'  # what a model streams: the arguments, piece by piece
        return _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})

    return _events(size, delta)


def _scored_stream(size: int) -> bytes:
    def delta(index: int, _: int) -> dict[str, Any]:
        event = _chunk({"content": f"w{index} "}, created=1796182570 + index // 50)
        logprobs = {"content": [{"token": f"w{index} ", "logprob": -index / 997}]}
        event["choices"][0]["logprobs"] = logprobs
        return event

    return _events(size, delta)


def _reasoning_stream(size: int) -> bytes:
    def delta(index: int, total: int) -> dict[str, Any]:
        field = "reasoning_content" if total < size // 2 else "content"
        return _chunk({field: f"w{index} "})

    return _events(size, delta, _chunk({"role": "assistant"}))


def _pair(number: int, prompt_size: int, stream_size: int = 0, key: str = "") -> Pair:
    fields: dict[str, Any] = {
        "model": "smollm2-135m-instruct",
        "messages": [{"role": "user", "content": _prompt(number, prompt_size)}],
        "temperature": 0,
    }
    if key:
        fields["api_key"] = key
    headers = {"content-type": ["application/json"]}
    if key:
        headers["authorization"] = [f"Bearer {key}"]
    if stream_size:
        content, kind = _stream(stream_size), "text/event-stream"
    else:
        reply = {"id": f"c{number}", "choices": [{"index": 0, "message": {"content": "ok"}}]}
        content, kind = json.dumps(reply).encode(), "application/json"
    request = {
        "method": "POST",
        "uri": URI,
        "body": json.dumps(fields).encode(),
        "headers": headers,
    }
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": [kind]},
        "body": {"string": content},
    }
    return request, response


def _streaming(pair: Pair, stream: Callable[[int], bytes]) -> Pair:
    """``pair`` with a 1 MB response of ``stream``."""
    pair[1]["body"]["string"] = stream(1_000_000)
    return pair


def _ours(path: Path, pairs: list[Pair]) -> None:
    write_cassette(path, pairs, scrubber=Scrubber(secrets=Secrets()))


def _plain_vcrpy(path: Path, pairs: list[Pair]) -> None:
    requests = [
        Request(r["method"], r["uri"], r["body"], {k: v[0] for k, v in r["headers"].items()})
        for r, _ in pairs
    ]
    responses = [response for _, response in pairs]
    FilesystemPersister.save_cassette(
        str(path), {"requests": requests, "responses": responses}, yamlserializer
    )


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def writing_rows() -> list[Measurement]:
    cases = {
        "20 interactions of 250 KB prompts": [_pair(n, 250_000) for n in range(20)],
        "a 1 MB streamed reply": [_pair(0, 2_000, stream_size=1_000_000)],
        "a 1 MB streamed tool call": [
            _streaming(_pair(0, 2_000, stream_size=1_000_000), _tool_call_stream)
        ],
        "a 1 MB streamed reply with log-probabilities": [
            _streaming(_pair(0, 2_000, stream_size=1_000_000), _scored_stream)
        ],
        "a 1 MB streamed reply of a reasoning model": [
            _streaming(_pair(0, 2_000, stream_size=1_000_000), _reasoning_stream)
        ],
        "400 small interactions": [_pair(n, 500) for n in range(400)],
    }
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for label, pairs in cases.items():
            ours, plain = [], []
            for _ in range(3):  # interleaved rounds
                plain.append(_cpu(lambda: _plain_vcrpy(folder / "plain.yaml", pairs)))  # noqa: B023
                ours.append(_cpu(lambda: _ours(folder / "ours.yaml", pairs)))  # noqa: B023
            ours_s, plain_s = statistics.median(ours), statistics.median(plain)
            rows.append(
                Measurement(
                    f"recording {label} / plain vcrpy's writer",
                    ours_s / plain_s,
                    "x",
                    WRITE_TARGET,
                    note=f"write_cassette {ours_s * 1e3:.0f} ms, vcrpy {plain_s * 1e3:.0f} ms",
                )
            )
    return rows


def scrubbing_rows() -> list[Measurement]:
    cases = {
        count: [_pair(n, 2_000, key=f"sk-proj-{n:06d}abcdefghijklmnop") for n in range(count)]
        for count in SCRUB_SIZES
    }
    per: dict[int, list[float]] = {count: [] for count in SCRUB_SIZES}
    for _ in range(3):
        for count, pairs in cases.items():
            copied = copy.deepcopy(pairs)
            scrubber = Scrubber(secrets=Secrets())
            per[count].append(_cpu(lambda: scrubber.interactions(copied)) / count)  # noqa: B023
            assert b"abcdefghijklmnop" not in copied[-1][0]["body"]
    seconds = {count: statistics.median(values) for count, values in per.items()}
    small, large = SCRUB_SIZES[0], SCRUB_SIZES[-1]
    return [
        Measurement(
            "scrubbing: time per interaction at 1,600 interactions / at 100 (1: linear)",
            seconds[large] / seconds[small],
            "x",
            GROWTH_TARGET,
            note="per interaction: "
            + ", ".join(f"{count:,} {seconds[count] * 1e6:.0f} us" for count in SCRUB_SIZES)
            + " (each with its own key: the secrets grow with the cassette)",
        )
    ]


def run() -> list[Measurement]:
    return [*writing_rows(), *scrubbing_rows()]
