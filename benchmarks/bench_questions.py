"""Question decisions: five questions take about one request's latency, not five.

The OpenAI-compatible provider sends one request per question, all at once. Against a mock
transport that answers every request after a fixed 50 ms (an ``asyncio.sleep``, like a server
that handles requests in parallel), the wall time of a 5-question decision is compared with
that of a 1-question decision.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from typing import Any

import httpx

from benchmarks import Measurement, median_seconds
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ScoreQuestion,
    validate_result,
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
        *validation_rows(),
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


# Validating one choice answer of many options (issue 22) ------------------------------------
#
# ``validate_result`` on a request and a result as wire JSON (mappings, as a fake or a test
# builds them), against a plain check of the same rules written here in plain Python on the
# same mappings: the request's (a choice question of at least 2 options, names non-blank and
# distinct once case and surrounding whitespace are ignored, text writable as UTF-8) and the
# result's (the model named, integer usage, one answer of the question's type, a choice among
# the options, probabilities for exactly the options, each finite in [0, 1], their sum 1 within
# what the written decimal places explain). Measured at 1,000, 4,000 and 10,000 options.

VALIDATE_SIZES = (1_000, 4_000, 10_000)
VALIDATE_TARGET = 30.0
GROWTH_TARGET = 1.5


def _choice_case(count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    options = {f"option_{index}": f"What option {index} stands for." for index in range(count)}
    request = {
        "model": "bench-model",
        "context": {"ticket": "Charged twice."},
        "questions": {"route": {"type": "choice", "instructions": "Pick.", "options": options}},
    }
    share = round(1.0 / count, 6)
    probabilities = dict.fromkeys(options, share)
    result = {
        "model": "bench-model",
        "answers": {
            "route": {"type": "choice", "choice": "option_0", "probabilities": probabilities}
        },
        "usage": {"promptTokens": 100, "completionTokens": 1, "totalTokens": 101},
    }
    return request, result


def _writable(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _places(value: float) -> int:
    mantissa, _, exponent = repr(value).partition("e")
    return max(0, len(mantissa.partition(".")[2].rstrip("0")) - int(exponent or 0))


def plain_check(request: dict[str, Any], result: dict[str, Any]) -> None:
    """The rules ``validate_result`` checks on a choice question, in plain Python."""
    if not isinstance(request.get("model"), str) or not isinstance(request["context"], dict):
        raise ValueError("request")
    questions = request["questions"]
    if not isinstance(questions, dict) or not questions:
        raise ValueError("questions")
    answers = result["answers"]
    if not isinstance(result["model"], str) or not result["model"].strip():
        raise ValueError("model")
    for count in result["usage"].values():
        if type(count) is not int or count < 0:
            raise ValueError("usage")
    if answers.keys() != questions.keys():
        raise ValueError("answers")
    for question_id, question in questions.items():
        if not _writable(question_id) or not question_id.strip():
            raise ValueError("question id")
        options = question["options"]
        if len(options) < 2:
            raise ValueError("too few options")
        seen = set()
        for name, description in options.items():
            folded = name.strip().casefold()
            if not folded or folded in seen or not _writable(name):
                raise ValueError("option name")
            seen.add(folded)
            if description is not None and not _writable(description):
                raise ValueError("description")
        answer = answers[question_id]
        if answer["type"] != question["type"] or answer["choice"] not in options:
            raise ValueError("choice")
        probabilities = answer["probabilities"]
        if probabilities.keys() != options.keys():
            raise ValueError("probability keys")
        places = 0
        for probability in probabilities.values():
            if type(probability) is not float or not 0.0 <= probability <= 1.0:
                raise ValueError("probability")
            places = max(places, _places(probability))
        slack = max(1e-3, len(probabilities) * 0.5 * 10.0**-places) if places else 1e-3
        if abs(math.fsum(probabilities.values()) - 1.0) > slack + 1e-9:
            raise ValueError("sum")


def _cpu_seconds(check: Any, request: dict[str, Any], result: dict[str, Any]) -> float:
    """The median CPU time of one call, over 3 calls (CPU time: other processes on a shared
    machine do not count, as they do in wall time)."""
    rounds = []
    for _ in range(3):
        start = time.process_time()
        check(request, result)
        rounds.append(time.process_time() - start)
    return statistics.median(rounds)


def validation_rows() -> list[Measurement]:
    cases = {count: _choice_case(count) for count in VALIDATE_SIZES}
    ours: dict[int, list[float]] = {count: [] for count in VALIDATE_SIZES}
    plain: dict[int, list[float]] = {count: [] for count in VALIDATE_SIZES}
    for _ in range(5):  # interleaved rounds: a busy machine slows both sides of a round alike
        for count, (request, result) in cases.items():
            ours[count].append(_cpu_seconds(validate_result, request, result))
            plain[count].append(_cpu_seconds(plain_check, request, result))
    ratio = {
        count: statistics.median(ours[count]) / statistics.median(plain[count])
        for count in VALIDATE_SIZES
    }
    seconds = {count: statistics.median(ours[count]) for count in VALIDATE_SIZES}
    plain_s = {count: statistics.median(plain[count]) for count in VALIDATE_SIZES}
    small, large = VALIDATE_SIZES[0], VALIDATE_SIZES[-1]
    growth = ", ".join(
        f"{count // 1000}k {seconds[count] * 1e3:.1f} ms (plain {plain_s[count] * 1e3:.2f} ms)"
        for count in VALIDATE_SIZES
    )
    return [
        Measurement(
            "validate_result, one choice answer of 1,000 options / a plain check",
            ratio[small],
            "x",
            VALIDATE_TARGET,
            note=f"validate_result {seconds[small] * 1e3:.2f} ms, "
            f"the plain check {plain_s[small] * 1e3:.2f} ms",
        ),
        Measurement(
            "that ratio at 10,000 options / at 1,000 (1: linear like the plain check)",
            ratio[large] / ratio[small],
            "x",
            GROWTH_TARGET,
            note=growth,
        ),
    ]
