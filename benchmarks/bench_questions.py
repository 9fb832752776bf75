"""Question decisions: five questions take about one request's latency, not five.

The OpenAI-compatible provider sends one request per question, all at once. Against a mock
transport that answers every request after a fixed 50 ms (an ``asyncio.sleep``, like a server
that handles requests in parallel), the wall time of a 5-question decision is compared with
that of a 1-question decision.
"""

from __future__ import annotations

import asyncio
import math

import httpx

from benchmarks import Measurement, median_seconds
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ScoreQuestion,
)

LATENCY_S = 0.05
TARGET_RATIO = 1.5


def _reply() -> dict[str, object]:
    top = [("A", math.log(0.6)), ("yes", math.log(0.2)), ("1", math.log(0.1)), ("B", math.log(0.1))]
    token, logprob = top[0]
    return {
        "model": "bench-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": token},
                "logprobs": {
                    "content": [
                        {
                            "token": token,
                            "logprob": logprob,
                            "bytes": None,
                            "top_logprobs": [
                                {"token": t, "logprob": lp, "bytes": None} for t, lp in top
                            ],
                        }
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
    }


async def _handler(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(LATENCY_S)
    return httpx.Response(200, json=_reply())


def _request(count: int) -> DecisionRequest:
    kinds: list[DecisionQuestion] = [
        ChoiceQuestion(instructions="Which team?", options={"billing": None, "tech": None}),
        ScoreQuestion(instructions="How urgent?", levels=["low", "mid", "high"]),
        BooleanQuestion(instructions="Refund asked?"),
    ]
    return DecisionRequest(
        model="bench-model",
        context={"ticket": "Charged twice."},
        questions={f"q{i}": kinds[i % len(kinds)] for i in range(count)},
    )


def run() -> list[Measurement]:
    provider = OpenAICompatibleDecisionProvider(
        base_url="http://bench.test/v1", transport=httpx.MockTransport(_handler)
    )
    one, five = _request(1), _request(5)

    def decide(request: DecisionRequest) -> None:
        result = asyncio.run(provider.decide(request))
        assert len(result.answers) == len(request.questions)

    one_s = median_seconds(lambda: decide(one), repeat=7)
    five_s = median_seconds(lambda: decide(five), repeat=7)
    return [
        Measurement(
            name="questions: 5-question / 1-question wall time",
            value=five_s / one_s,
            unit="x",
            target=TARGET_RATIO,
            note=f"5 questions {five_s * 1000:.1f} ms, 1 question {one_s * 1000:.1f} ms "
            f"({LATENCY_S * 1000:.0f} ms per request)",
        ),
        Measurement(
            name="questions: 5-question decision wall time",
            value=five_s,
            unit="s",
            target=one_s * TARGET_RATIO,
            baseline=one_s,
            note=f"baseline: the 1-question decision; target: {TARGET_RATIO:g} x baseline",
        ),
    ]
