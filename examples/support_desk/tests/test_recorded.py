"""The same agent against a real model, replayed from committed cassettes.

Recorded once against the local model (`scripts/local-model start`, then
`pytest --opdecide-record=rewrite`); every later run replays offline. The model is tiny and
weak: these tests assert what must hold for any model held to the menu's schema (a valid
result, complete distributions), never that its answer is right.
"""

from __future__ import annotations

import pytest
from conftest import LOST_PARCEL


@pytest.mark.opdecide(cassette=True)
def test_route_with_a_real_model(desk, runtime):
    # Structured decisions (the runtime's default): the reply is held to the menu's schema, so
    # the pick is valid, at the first reply or at the re-pick; a DecisionError fails the test.
    result = desk.route(LOST_PARCEL)
    if result == "CLOSED":
        pass
    elif result.get("decision") == "reply":
        assert result["tone"] in ("formal", "friendly")
        assert isinstance(result["message"], str)
    else:
        assert result["action"] in ("refund", "escalate")
    if result != "CLOSED" and result.get("action") == "refund":
        assert result["order_id"] == "A-1002"  # from the context, never from the model
    kinds = [call.kind for call in runtime.calls]
    assert kinds in (["turn"], ["turn", "repick"])
    assert runtime.calls[0].tools == []


@pytest.mark.opdecide(cassette=True, model="smollm2-135m-instruct-tools")
def test_handle_with_real_tool_calls(desk, runtime):
    # A structured turn (the runtime's default): each reply calls a tool or picks, held to a
    # schema, and the tools are offered for as many rounds as there are tools: a valid pick.
    result = desk.handle(LOST_PARCEL)
    assert result == "CLOSED" or result["action"] in ("refund", "escalate")
    if result != "CLOSED" and result["action"] == "refund":
        assert result["order_id"] == "A-1002"  # from the context, never from the model
    first = runtime.calls[0]
    assert first.tools == ["lookup_order", "refund_policy"]
    assert first.options == ["refund", "escalate", "close"]
    for call in runtime.calls[1:]:
        assert call.parent is not None


@pytest.mark.opdecide(cassette=True)
async def test_triage_with_real_token_probabilities(desk):
    triage = await desk.triage(LOST_PARCEL)
    assert triage.topic in triage.topic_probabilities
    assert sum(triage.topic_probabilities.values()) == pytest.approx(1.0, abs=1e-6)
    assert 0.0 <= triage.urgency <= 3.0
    assert 0.0 <= triage.needs_human <= 1.0
