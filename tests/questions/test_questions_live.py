"""Opt-in tests against the local real model server (see docs/questions.md).

Run with ``OPDECIDE_LIVE_URL=http://127.0.0.1:PORT/v1`` (the server of
``scripts/`` / local-model-server notes). The model is tiny: these tests check shapes and
invariants, never that an answer is right.
"""

from __future__ import annotations

import os

import httpx
import pytest

from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    OpenAICompatibleDecisionProvider,
    ProviderError,
    ScoreQuestion,
    validate_result,
)

LIVE_URL = os.environ.get("OPDECIDE_LIVE_URL", "")

pytestmark = [
    pytest.mark.opdecide_live,
    pytest.mark.skipif(not LIVE_URL, reason="set OPDECIDE_LIVE_URL to the local model server"),
]


@pytest.fixture
async def live_provider() -> OpenAICompatibleDecisionProvider:
    provider = OpenAICompatibleDecisionProvider(base_url=LIVE_URL, timeout=120_000)
    models = await provider.get_models()
    assert models, f"the server at {LIVE_URL} lists no model"
    provider.model = os.environ.get("OPDECIDE_LIVE_MODEL") or models[0].id
    return provider


def live_request() -> DecisionRequest:
    return DecisionRequest(
        model="",
        context={"ticket": "I was charged twice for order 1234.", "customer": {"tier": "gold"}},
        questions={
            "route": ChoiceQuestion(
                instructions="Which team should handle this ticket?",
                options={
                    "billing": "Payments and refunds",
                    "shipping": None,
                    "tech": {"areas": ["app"]},
                },
            ),
            "urgency": ScoreQuestion(
                instructions="How urgent is this ticket?",
                levels=["not urgent", "somewhat urgent", {"label": "urgent", "sla_hours": 4}],
            ),
            "refund": BooleanQuestion(
                instructions="Does the customer want money back?",
                criteria=BooleanCriteria(true="They ask for a refund"),
            ),
        },
    )


async def test_token_probabilities_from_the_real_server(
    live_provider: OpenAICompatibleDecisionProvider,
) -> None:
    request = live_request()
    result = await live_provider.decide(request)
    validate_result(request, result)
    assert result.model
    assert result.usage.prompt_tokens > 0
    for question_id in request.questions:
        meta = result.metadata["questions"][question_id]  # type: ignore[index, call-overload]
        assert meta["method"] == "logprobs"
        assert 0.0 < meta["label_mass"] <= 1.0


async def settle(provider: OpenAICompatibleDecisionProvider) -> None:
    """Bring the server's prompt cache to one known state (llama.cpp reuses the cached prefix
    of the previous prompt, so the same prompt twice in a row can get another reply)."""
    async with httpx.AsyncClient(timeout=120) as client:
        reply = await client.post(
            f"{LIVE_URL.rstrip('/')}/chat/completions",
            json={
                "model": provider.model,
                "messages": [{"role": "user", "content": "Reply with one word: ready."}],
                "max_tokens": 1,
            },
        )
        reply.raise_for_status()


async def test_repeatable_at_temperature_zero(
    live_provider: OpenAICompatibleDecisionProvider,
) -> None:
    # One question at a time, each decision from the same cache state: the same requests in
    # the same order, evaluated from the same state, get the same answers.
    live_provider.max_concurrency = 1
    request = live_request()
    await settle(live_provider)
    first = await live_provider.decide(request)
    await settle(live_provider)
    second = await live_provider.decide(request)
    assert first.answers == second.answers


async def test_the_verbalized_fallback_against_the_real_server(
    live_provider: OpenAICompatibleDecisionProvider,
) -> None:
    live_provider.logprobs = False  # as if the server refused them
    request = DecisionRequest(
        model="",
        context="The sky is blue.",
        questions={"blue": BooleanQuestion(instructions="Is the sky blue?")},
    )
    outcome: DecisionResult | ProviderError
    try:
        outcome = await live_provider.decide(request)
    except ProviderError as error:  # the tiny model may fail to write valid JSON twice
        outcome = error
    if isinstance(outcome, ProviderError):
        assert outcome.code == "unknown"
        assert "unusable twice" in str(outcome)
    else:
        validate_result(request, outcome)
        meta = outcome.metadata["questions"]["blue"]  # type: ignore[index, call-overload]
        assert meta["method"] == "verbalized"
