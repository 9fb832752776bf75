"""Routing: scripted picks, every option, invalid replies, and the working turn with tools."""

from __future__ import annotations

import pytest
from conftest import HAPPY_CUSTOMER, LOST_PARCEL
from support_desk import HANDLE_CHOICES, ROUTE_OPTIONS, SupportDesk

from fake_runtimes import ScriptedRuntime, every_option, invalid_replies, pick, tool_call
from pytest_opdecide import DecisionError


@pytest.mark.opdecide(script=[pick("refund", amount=24.5, reason="lost")])
def test_a_lost_parcel_is_refunded(runtime, desk):
    assert desk.route(LOST_PARCEL) == {
        "action": "refund",
        "order_id": "A-1002",
        "amount": 24.5,
        "reason": "lost",
        "capped": False,
    }
    assert runtime.last_call.options == ["refund", "escalate", "reply", "close"]
    assert runtime.last_call.tools == []  # a pure decision offers no tools


@pytest.mark.opdecide(script=[pick("refund", amount=500, reason="goodwill", order_id="A-1003")])
def test_the_model_cannot_choose_the_order_or_refund_more_than_it_cost(desk):
    # order_id is filled from the context; the model's value is ignored.
    result = desk.route(LOST_PARCEL)
    assert result["order_id"] == "A-1002"
    assert result["amount"] == 24.5
    assert result["capped"] is True


@pytest.mark.opdecide(script=["Looks fine to me.", pick("close")])
def test_a_reply_without_a_pick_is_re_picked_once(runtime, desk):
    assert desk.route(HAPPY_CUSTOMER) == "CLOSED"
    assert [call.kind for call in runtime.calls] == ["turn", "repick"]
    assert "Problem: Reply contained no parseable JSON" in runtime.calls[1].prompt


@pytest.mark.parametrize("step", every_option(ROUTE_OPTIONS), ids=str)
def test_every_route_option_resolves(step):
    runtime = ScriptedRuntime(step)
    result = SupportDesk(runtime=runtime).route(LOST_PARCEL)
    expected_kind = {"refund": dict, "escalate": dict, "reply": dict, "close": str}
    assert isinstance(result, expected_kind[step.option])
    runtime.assert_complete()


@pytest.mark.parametrize("bad", invalid_replies(ROUTE_OPTIONS), ids=str)
def test_invalid_replies_end_in_a_decision_error(bad):
    runtime = ScriptedRuntime(bad.reply, bad.reply)  # the re-pick is just as bad
    with pytest.raises(DecisionError) as failure:
        SupportDesk(runtime=runtime).route(LOST_PARCEL)
    assert failure.value.kind == bad.kind
    assert failure.value.attempts == 2


@pytest.mark.opdecide(
    script=[
        tool_call("lookup_order", order_id="A-1002"),
        tool_call("refund_policy", reason="lost"),
        pick("refund", amount=24.5, reason="lost"),
    ]
)
def test_handle_looks_the_order_up_then_refunds(runtime, desk):
    result = desk.handle(LOST_PARCEL)
    assert result["action"] == "refund"
    assert result["amount"] == 24.5
    turn, after_lookup, after_policy = runtime.calls
    assert turn.tools == ["lookup_order", "refund_policy"]
    assert turn.options == list(HANDLE_CHOICES)
    assert '"status": "lost in transit"' in after_lookup.prompt
    assert after_policy.prompt.startswith("Up to 100%")
    assert [c.parent for c in runtime.calls] == [None, turn.id, after_lookup.id]
