"""Triage: question decisions answered by a fake provider with scripted distributions."""

from __future__ import annotations

import pytest
from conftest import LOST_PARCEL
from support_desk import SupportDesk

from fake_runtimes import FakeDecisionProvider, choose, probability, score


@pytest.mark.opdecide(
    answers={
        "topic": choose("shipping", 0.9),
        "urgency": score(2.4),
        "needs_human": probability(0.2),
    }
)
async def test_a_lost_parcel_is_an_urgent_shipping_ticket(desk, decision_provider):
    triage = await desk.triage(LOST_PARCEL)
    assert triage.topic == "shipping"
    assert triage.topic_probabilities["shipping"] == pytest.approx(0.9)
    assert sum(triage.topic_probabilities.values()) == pytest.approx(1.0)
    assert triage.urgency == pytest.approx(2.4)
    assert triage.needs_human == pytest.approx(0.2)
    # The ticket reached the provider as structured JSON, not flattened to text.
    (request,) = decision_provider.requests
    assert request.context == LOST_PARCEL


async def test_unscripted_questions_get_stable_seeded_answers():
    first = await SupportDesk(provider=FakeDecisionProvider(seed=7)).triage(LOST_PARCEL)
    again = await SupportDesk(provider=FakeDecisionProvider(seed=7)).triage(LOST_PARCEL)
    assert first == again
    assert first.topic in {"billing", "shipping", "product", "account"}
    assert 0 <= first.urgency <= 3
    assert 0 <= first.needs_human <= 1
