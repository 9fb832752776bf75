"""Real recordings from the local model, replayed offline in every run.

The cassettes in ``cassettes/tests/cassettes/test_real_model/`` were recorded from the tiny
real model that ``scripts/local-model`` serves (SmolLM2-135M-Instruct behind llama-cpp-python's
OpenAI-compatible server), through the real components: ``OpenAICompatibleRuntime`` and
``OpenAICompatibleDecisionProvider``. Refresh them with ``make cassettes``, or by hand::

    scripts/local-model start
    OPDECIDE_LIVE_URL=$(scripts/local-model url) .venv/bin/python -m pytest \\
        tests/cassettes/test_real_model.py --opdecide-record=rewrite

The model is weak: these tests assert shapes and invariants, never that an answer is right.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_opdecide import ModelReply, ModelRequest, agent, decision

OPTIONS = {
    "refund": ("REFUND", "Give the customer their money back."),
    "close": ("CLOSE", "Nothing is left to do."),
}
VALUES = {"REFUND", "CLOSE"}
TOOLS_MODEL = "smollm2-135m-instruct-tools"


def refund(amount: float) -> str:
    """Refund the customer."""
    return f"refunded {amount:.2f}"


def pick_schema(options: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema the server's grammar holds the reply to: a pick of one option.

    llama-cpp-python's ``response_format`` with a schema constrains the tokens the model may
    produce, so even a 135M model replies with a well-formed pick.
    """
    return {"type": "json_object", "schema": {"type": "object", **options}}


CALL_ONLY = pick_schema(
    {"properties": {"call": {"type": "string", "enum": ["refund", "close"]}}, "required": ["call"]}
)
CALL_WITH_ARGS = pick_schema(
    {
        "properties": {
            "call": {"type": "string", "enum": ["refund"]},
            "args": {
                "type": "object",
                "properties": {"amount": {"type": "number"}},
                "required": ["amount"],
            },
        },
        "required": ["call", "args"],
    }
)

QUESTIONS = {
    "route": {
        "type": "choice",
        "instructions": "Which team should handle this ticket?",
        "options": {"billing": "Payments and refunds", "shipping": None},
    },
    "urgency": {
        "type": "score",
        "instructions": "How urgent is the ticket?",
        "levels": ["not urgent", "urgent", "critical"],
    },
    "refund": {"type": "boolean", "instructions": "Does the customer want a refund?"},
}
TICKET = {"ticket": "I was charged twice for order 1234. Please give me my money back."}


def assert_distribution(probabilities: dict[str, float]) -> None:
    assert all(0.0 <= p <= 1.0 and math.isfinite(p) for p in probabilities.values())
    assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.opdecide(cassette=True)
def test_decision_make_picks(runtime: Any) -> None:
    runtime.extra_body["response_format"] = CALL_ONLY
    picked = decision.make("The customer was charged twice. Which step comes next?", OPTIONS)
    assert picked in VALUES

    runtime.extra_body["response_format"] = CALL_WITH_ARGS
    refunded = decision.make(
        "Order 1234 was charged twice, 30 EUR each. Refund the extra charge.",
        {"refund": refund, "close": ("CLOSE", "Nothing is left to do.")},
    )
    assert refunded.startswith("refunded ")

    calls = runtime.trace.calls
    assert [call.kind for call in calls] == ["turn", "turn"]
    assert calls[0].options == ["refund", "close"]
    assert all(call.tools == [] for call in calls)  # a pure decision offers no tools
    assert all(call.usage.total_tokens > 0 for call in calls)


@pytest.mark.opdecide(cassette=True, model=TOOLS_MODEL)
def test_agent_turn_with_a_tool_ends_in_a_pick(runtime: Any) -> None:
    looked_up: list[str] = []

    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        looked_up.append(order_id)
        return "Order 1234 was charged twice, 30 EUR each."

    # A structured turn (the default): each reply calls the tool or picks, held to a schema.
    outcome = agent(
        "Look up order 1234, then decide what to do.",
        tools=[lookup_order],
        choices=OPTIONS,
        max_iterations=3,
    )
    assert outcome in VALUES

    calls = runtime.trace.calls
    first = calls[0]
    assert first.kind == "turn"
    assert first.tools == ["lookup_order"]
    assert first.options == ["refund", "close"]
    assert "tools" not in runtime.request_body(first.request)
    assert runtime.request_body(first.request)["response_format"]["schema"]["anyOf"]
    tool_calls = [c for call in calls if call.reply is not None for c in call.reply.tool_calls]
    assert len(looked_up) == len(tool_calls) <= 1  # one tool: one tool round at most
    assert all(call.usage.completion_tokens < 512 for call in calls)  # the turn's bound


@pytest.mark.opdecide(cassette=True)
def test_repick_after_an_invalid_reply(runtime: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first reply is made invalid here, before any model is asked (it picks an option the
    # menu lacks); the re-pick is the real model's, held to the menu's schema: a valid pick.
    asked: list[ModelRequest] = []
    real_call = runtime.call_model

    def first_reply_invalid(request: ModelRequest) -> ModelReply:
        asked.append(request)
        return ModelReply(text='{"call": "wait"}') if len(asked) == 1 else real_call(request)

    monkeypatch.setattr(runtime, "call_model", first_reply_invalid)
    outcome = decision.make(
        "A customer was charged twice for order 1234. Which step comes next?",
        {**OPTIONS, "escalate": ("ESCALATE", "Ask a human to look.")},
    )

    assert outcome in VALUES | {"ESCALATE"}
    calls = runtime.trace.calls
    assert [call.kind for call in calls] == ["turn", "repick"]
    assert calls[1].parent == calls[0].id
    assert calls[1].options == calls[0].options == ["refund", "close", "escalate"]
    assert "Problem: Picked 'wait', which is not an available option." in calls[1].prompt
    assert calls[1].reply.model  # the re-pick's reply came from the server


@pytest.mark.opdecide(cassette=True)
def test_question_decisions_by_token_probabilities(decision_provider: Any) -> None:
    result = decision_provider.decide_sync({"model": "", "context": TICKET, "questions": QUESTIONS})

    route = result.choice("route")
    assert set(route.probabilities) == {"billing", "shipping"}
    assert_distribution(route.probabilities)
    assert route.choice == max(route.probabilities, key=route.probabilities.__getitem__)

    urgency = result.score("urgency")
    assert set(urgency.probabilities) == {"0", "1", "2"}
    assert_distribution(urgency.probabilities)
    expected = sum(int(level) * p for level, p in urgency.probabilities.items())
    assert urgency.score == pytest.approx(expected)

    assert 0.0 <= result.boolean("refund").probability <= 1.0
    for question in QUESTIONS:
        assert result.metadata["questions"][question]["method"] == "logprobs"


@pytest.mark.opdecide(cassette=True)
def test_runtime_and_provider_share_one_cassette(runtime: Any, decision_provider: Any) -> None:
    runtime.extra_body["response_format"] = CALL_ONLY
    assert decision.make("The customer was charged twice. Which step comes next?", OPTIONS) in (
        VALUES
    )
    request = {"model": "", "context": TICKET, "questions": {"refund": QUESTIONS["refund"]}}
    assert 0.0 <= decision_provider.decide_sync(request).boolean("refund").probability <= 1.0


@pytest.mark.opdecide(cassette=True)
def test_streamed_reply(runtime: Any) -> None:
    runtime.stream = True
    runtime.extra_body["response_format"] = CALL_ONLY
    assert decision.make("The customer says thanks, all is well. What now?", OPTIONS) in VALUES
    (call,) = runtime.trace.calls
    assert call.reply is not None
    events = call.reply.raw
    assert isinstance(events, list)
    assert len(events) > 2  # one event per token, replayed one by one
