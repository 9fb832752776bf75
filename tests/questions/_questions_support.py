"""Helpers shared by the question-decision tests: requests, real-shaped server replies, a
recording mock backend."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    ScoreQuestion,
)

BASE_URL = "http://decisions.test/v1"
MODEL = "smollm2-135m-instruct"


def make_request(**questions: Any) -> DecisionRequest:
    """A request with the given questions (defaults: one of each type)."""
    if not questions:
        questions = {
            "route": ChoiceQuestion(
                instructions="Which team handles the ticket?",
                options={"billing": "Payments and refunds", "shipping": None, "tech": {"n": 1}},
            ),
            "urgency": ScoreQuestion(
                instructions="How urgent is it?",
                levels=["low", "medium", {"label": "high", "sla_hours": 4}],
            ),
            "refund": BooleanQuestion(
                instructions="Does the customer ask for a refund?",
                criteria=BooleanCriteria(true="They want money back"),
            ),
        }
    return DecisionRequest(
        model=MODEL, context={"ticket": "Charged twice.", "tier": "gold"}, questions=questions
    )


def logprobs_reply(
    top: Sequence[tuple[str, float]],
    *,
    sampled: tuple[str, float] | None = None,
    model: str = MODEL,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat completion in the llama.cpp server's shape, with logprobs of one token."""
    token, logprob = sampled if sampled is not None else top[0]
    reply: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
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
                "finish_reason": "length",
            }
        ],
    }
    reply["usage"] = (
        dict(usage)
        if usage is not None
        else {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}
    )
    return reply


def text_reply(
    text: str, *, model: str = MODEL, usage: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A chat completion without logprobs."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": dict(usage)
        if usage is not None
        else {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132},
    }


def lp(probability: float) -> float:
    """The log-probability of ``probability``."""
    return math.log(probability)


def prompt_of(body: Mapping[str, Any]) -> str:
    """The user prompt of a chat-completions request body (its last user message)."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


Responder = Callable[[dict[str, Any]], Any]


class Backend:
    """An httpx mock backend that records every request and answers with ``respond(body)``.

    ``respond`` returns a dict (sent as JSON with status 200), an ``httpx.Response``, or raises.
    It may be async. ``delay`` seconds of asyncio sleep are added to every request.
    """

    def __init__(self, respond: Responder, *, delay: float = 0.0) -> None:
        self.respond = respond
        self.delay = delay
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content) if request.content else {}
        self.bodies.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            answer = self.respond(body)
            if isinstance(answer, Awaitable):
                answer = await answer
        finally:
            self.in_flight -= 1
        if isinstance(answer, httpx.Response):
            return answer
        return httpx.Response(200, json=answer)

    def sync_handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content) if request.content else {}
        self.bodies.append(body)
        answer = self.respond(body)
        if isinstance(answer, httpx.Response):
            return answer
        return httpx.Response(200, json=answer)

    @property
    def transport(self) -> httpx.MockTransport:
        """An async mock transport for this backend."""
        return httpx.MockTransport(self.handle)


def by_question(replies: Mapping[str, Any]) -> Responder:
    """Answer each request with the reply of the question whose instructions its prompt holds."""

    def respond(body: dict[str, Any]) -> Any:
        prompt = prompt_of(body)
        for needle, reply in replies.items():
            if needle in prompt:
                return reply(body) if callable(reply) else reply
        raise AssertionError(f"no scripted reply matches the prompt:\n{prompt}")

    return respond
