"""Properties over generated tickets and seeded model picks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support_desk import SupportDesk

from fake_runtimes import SeededRuntime, fake_context


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
