"""Replaying a 20-interaction cassette against the same test on an httpx mock transport (issue 6).

The test: a support-ticket flow of 20 ``decision.make`` calls through an
``OpenAICompatibleRuntime`` (a prompt with a customer message, a 4-option menu, a pick).

* Baseline: the runtime's transport is an ``httpx.MockTransport`` that answers each request
  with the completion the server gave: the cheapest way to test the same code offline.
* Measured: the runtime with httpx's real transport, inside ``use_cassette(path)`` replaying
  the cassette that recorded those 20 interactions. Each run loads the file, matches every
  request, replays, and checks that every interaction was played: the whole cost a cassette
  test pays. The cache of parsed request bodies is emptied before each run, as if each run
  were another test with another cassette (the bodies of one test never come back in the next).

Target: the replay at most 2x the baseline (median per test, both measured in this run).

Reading adversarial cassettes (:func:`loading_rows`): anchors of anchors, one long value
repeated by aliases, nesting past the loader's depth, a mapping of many keys with one given
twice, each read at 200 KB and 1.6 MB next to a plain cassette of the same size (the baseline,
in the same run). Targets: at most 4x the plain file's time, and that ratio growing at most 2x
between the two sizes (it stays flat when reading is linear in the size).

Where the replay's extra time goes: most of it is reading the readable YAML (PyYAML's libyaml
binding costs about 1.7 microseconds per YAML event, for some 60 events per interaction); the
rest is opening the cassette (vcrpy patches every HTTP library it knows, for other clients).
The requests themselves cost less than the mock's: the runtime is answered straight from the
loaded cassette, through the cassette layer's httpx transport.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import Measurement, median_seconds
from pytest_opdecide import decision
from pytest_opdecide._cassettes._cassette import use_cassette
from pytest_opdecide._cassettes._matching import forget_parsed_bodies
from pytest_opdecide.plugin._real_components import default_runtime
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

BASE_URL = "http://127.0.0.1:8765/v1"
MODEL = "smollm2-135m-instruct"
CALLS = 20
OPTIONS: dict[str, Any] = {
    "refund": ("REFUND", "Give the customer their money back."),
    "replace": ("REPLACE", "Send a replacement item."),
    "escalate": ("ESCALATE", "Ask a human to look at the ticket."),
    "close": ("CLOSE", "Nothing is left to do."),
}
PICKS = ["refund", "replace", "escalate", "close"]


def prompt(number: int) -> str:
    return (
        f"Ticket {number}. The customer writes:\n"
        f"  Hello, my order A{1000 + number} arrived damaged and I was charged twice.\n"
        "  I would like this sorted out quickly, thank you.\n"
        "Decide the next step for this ticket."
    )


def completion(number: int) -> dict[str, Any]:
    """A chat completion as the local model's server sends it."""
    pick = PICKS[number % len(PICKS)]
    return {
        "id": f"chatcmpl-{number:08d}",
        "object": "chat.completion",
        "created": 1796000000 + number,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": json.dumps({"call": pick})},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 160, "completion_tokens": 7, "total_tokens": 167},
    }


def handler(request: httpx.Request) -> httpx.Response:
    text = json.loads(request.content)["messages"][0]["content"]
    number = int(text.split(".", 1)[0].removeprefix("Ticket "))
    return httpx.Response(200, json=completion(number))


def flow(runtime: OpenAICompatibleRuntime) -> list[Any]:
    """The test body: 20 decisions."""
    return [decision.make(prompt(n), OPTIONS, runtime=runtime) for n in range(CALLS)]


EXPECTED = [OPTIONS[PICKS[n % len(PICKS)]][0] for n in range(CALLS)]


def against_mock_transport() -> None:
    with OpenAICompatibleRuntime(
        BASE_URL, model=MODEL, transport=httpx.MockTransport(handler)
    ) as runtime:
        assert flow(runtime) == EXPECTED


def against_cassette(path: Path) -> None:
    forget_parsed_bodies()  # nothing parsed by an earlier run helps this one
    # The runtime a cassette test gets from the plugin's ``runtime`` fixture.
    runtime = default_runtime(BASE_URL, MODEL)
    assert isinstance(runtime, OpenAICompatibleRuntime)
    with use_cassette(path), runtime:
        assert flow(runtime) == EXPECTED


def record(path: Path) -> None:
    """Record the cassette once (vcrpy records what passes through the mock transport)."""
    with use_cassette(path, record="once"):
        against_mock_transport()
    text = path.read_text(encoding="utf-8")
    assert text.count("- request:") == CALLS, "the cassette must hold 20 interactions"


def _seconds(fn: Any, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def run() -> list[Measurement]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench_cassettes" / "test_flow.yaml"
        record(path)
        for _ in range(3):  # warm up both paths (imports, caches of the decision library)
            against_mock_transport()
            against_cassette(path)
        # Interleaved rounds: a busy machine slows both sides of a round alike, so the ratio
        # of each round is steadier than the ratio of two separately measured medians.
        mocks, replays, ratios = [], [], []
        for _ in range(15):
            mock = _seconds(against_mock_transport, 5)
            replay = _seconds(lambda: against_cassette(path), 5)
            mocks.append(mock)
            replays.append(replay)
            ratios.append(replay / mock)
    mock_ms = statistics.median(mocks) * 1e3
    replay_ms = statistics.median(replays) * 1e3
    ratio = statistics.median(ratios)
    return [
        *loading_rows(),
        Measurement(
            "replay of a 20-interaction cassette / the same test on httpx.MockTransport",
            ratio,
            "x",
            2.0,
            note=f"replay {replay_ms:.1f} ms, mock transport {mock_ms:.1f} ms per test "
            "(medians of 15 interleaved rounds of 5 tests)",
        ),
    ]


# Loading adversarial cassettes (issue 19) ---------------------------------------------------
#
# A cassette is untrusted input: whatever its shape, reading it costs at most linear time in
# its size (the loader's bound: see pytest_opdecide/_cassettes/_yaml_loader.py). Each shape is
# read at two sizes, eight times apart, next to a plain cassette of the same size (the
# baseline, measured in the same run): the figure is how much faster than the plain file's its
# time grows, worst shape first. Linear growth keeps it near 1; a shape that expands (aliases
# of aliases, one long value repeated) would grow by its expansion, thousands of times more.


def _plain_cassette(size: int) -> str:
    """A cassette as the library writes it, of about ``size`` characters."""
    from pytest_opdecide._cassettes._yaml_format import ReadableYaml

    def stored(number: int) -> dict[str, Any]:
        body = json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": prompt(number)}]}
        )
        return {
            "request": {
                "method": "POST",
                "uri": f"{BASE_URL}/chat/completions",
                "body": body,
                "headers": {"content-type": ["application/json"]},
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"string": json.dumps(completion(number))},
            },
        }

    one = len(ReadableYaml.serialize({"interactions": [stored(0)]}))
    count = max(1, size // one)
    return ReadableYaml.serialize({"interactions": [stored(n) for n in range(count)]})


def _wrapped(body_lines: list[str]) -> str:
    head = [
        "interactions:",
        "- request:",
        "    method: POST",
        f"    uri: {BASE_URL}",
        "    body:",
        "      json:",
    ]
    tail = [
        "  response:",
        "    status: {code: 200, message: OK}",
        "    body: {string: ''}",
        "version: 1",
    ]
    return "\n".join(head + body_lines + tail) + "\n"


def _nested_anchors(size: int) -> str:
    """Anchors of anchors, ten aliases a level, level after level, to ``size``."""
    lines = ["        l0: &l0 [xxxxxxxxxxxxxxxx]"]
    while sum(len(line) for line in lines) < size:
        level = len(lines)
        lines.append(f"        l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    return _wrapped(lines)


def _one_value_repeated(size: int) -> str:
    """A long text under one anchor, then aliases of it to ``size``."""
    lines = ["        first: &long " + "y" * 2000, "        again:"]
    lines += ["        - *long"] * ((size - 2000) // 16)
    return _wrapped(lines)


def _deep(size: int) -> str:
    """Mappings nested past the loader's depth, again and again to ``size``."""
    block = "".join(" " * (8 + level) + "k:\n" for level in range(120))
    return _wrapped([f"        n{index}:\n{block.rstrip()}" for index in range(size // len(block))])


def _many_keys(size: int) -> str:
    """One mapping of many keys (the last given twice)."""
    lines = [f"        key{index}: value" for index in range(size // 24)]
    return _wrapped([*lines, lines[0]])


ADVERSARIAL = {
    "nested anchors": _nested_anchors,
    "one value repeated": _one_value_repeated,
    "deep nesting": _deep,
    "many keys, one twice": _many_keys,
}


def _read_seconds(path: Path) -> float:
    from pytest_opdecide._cassettes._file import CassetteCorrupt, read_interactions

    def read() -> None:
        with contextlib.suppress(CassetteCorrupt):
            read_interactions(path)

    return median_seconds(read, repeat=3)


def loading_rows() -> list[Measurement]:
    """Each adversarial shape at two sizes, next to a plain cassette of the same size."""
    small, large = 200_000, 1_600_000
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        files: dict[tuple[str, int], Path] = {}
        for shape, make in {"plain": _plain_cassette, **ADVERSARIAL}.items():
            for size in (small, large):
                path = folder / f"{shape.replace(' ', '_').replace(',', '')}-{size}.yaml"
                path.write_text(make(size), encoding="utf-8")
                files[shape, size] = path
        # Interleaved rounds: a busy machine slows a round's files alike.
        rounds: dict[tuple[str, int], list[float]] = {key: [] for key in files}
        for _ in range(5):
            for key, path in files.items():
                rounds[key].append(_read_seconds(path))
    seconds = {key: statistics.median(values) for key, values in rounds.items()}
    against_plain = {
        (shape, size): seconds[shape, size] / seconds["plain", size]
        for shape in ADVERSARIAL
        for size in (small, large)
    }
    growth = {
        shape: against_plain[shape, large] / against_plain[shape, small] for shape in ADVERSARIAL
    }
    worst_growth = max(growth, key=lambda shape: growth[shape])
    worst_cost = max(ADVERSARIAL, key=lambda shape: against_plain[shape, large])
    plain_ms = seconds["plain", large] * 1e3
    return [
        Measurement(
            "reading an adversarial cassette / a plain one of the same size (1.6 MB)",
            against_plain[worst_cost, large],
            "x",
            4.0,
            note=f"worst: {worst_cost}; "
            + ", ".join(f"{shape} {against_plain[shape, large]:.2f}" for shape in ADVERSARIAL)
            + f"; plain {plain_ms:.0f} ms",
        ),
        Measurement(
            "that ratio at 1.6 MB / at 200 KB (1: time grows linearly with the size)",
            growth[worst_growth],
            "x",
            2.0,
            note=f"worst: {worst_growth}; "
            + ", ".join(f"{shape} {value:.2f}" for shape, value in growth.items()),
        ),
    ]
