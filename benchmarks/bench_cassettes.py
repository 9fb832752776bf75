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

Where the replay's extra time goes: most of it is reading the readable YAML (PyYAML's libyaml
binding costs about 1.7 microseconds per YAML event, for some 60 events per interaction); the
rest is opening the cassette (vcrpy patches every HTTP library it knows, for other clients).
The requests themselves cost less than the mock's: the runtime is answered straight from the
loaded cassette, through the cassette layer's httpx transport.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import Measurement
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
        Measurement(
            "replay of a 20-interaction cassette / the same test on httpx.MockTransport",
            ratio,
            "x",
            2.0,
            note=f"replay {replay_ms:.1f} ms, mock transport {mock_ms:.1f} ms per test "
            "(medians of 15 interleaved rounds of 5 tests)",
        )
    ]
