"""Properties over generated tickets, seeded model picks and the strategies of the toolkit."""

from __future__ import annotations

import pytest
from conftest import LOST_PARCEL
from hypothesis import given, settings
from hypothesis import strategies as st
from support_desk import ROUTE_OPTIONS, SupportDesk

from fake_runtimes import ScriptedRuntime, SeededRuntime, fake_context
from pytest_opdecide import DecisionError, strategies


@settings(max_examples=40, deadline=None)
@given(ticket_seed=st.integers(0, 10_000), model_seed=st.integers(0, 10_000))
def test_any_ticket_and_any_valid_pick_routes_somewhere(ticket_seed, model_seed):
    ticket = fake_context("support_ticket", seed=ticket_seed)
    order_id = ticket.get("order_id", "")
    result = SupportDesk(runtime=SeededRuntime(model_seed)).route(
        {
            "order_id": order_id,
            "subject": ticket["subject"],
            "body": ticket["body"],
        }
    )
    if isinstance(result, dict):
        assert result.get("action") in {"refund", "escalate"} or result.get("decision") == "reply"
        if result.get("action") == "refund":
            assert result["order_id"] == order_id
            assert result["amount"] >= 0
    else:
        assert result == "CLOSED"


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_valid_reply_resolves_and_any_invalid_one_fails_cleanly(data):
    valid = data.draw(strategies.valid_replies(ROUTE_OPTIONS), label="valid reply")
    result = SupportDesk(runtime=ScriptedRuntime(valid.text)).route(LOST_PARCEL)
    assert result == "CLOSED" or isinstance(result, dict)

    invalid = data.draw(strategies.invalid_replies(ROUTE_OPTIONS), label="invalid reply")
    runtime = ScriptedRuntime(invalid.reply, invalid.reply)
    with pytest.raises(DecisionError) as failure:
        SupportDesk(runtime=runtime).route(LOST_PARCEL)
    assert failure.value.kind == invalid.kind
