"""Shared tickets and the agent under test."""

from __future__ import annotations

from typing import Any

import pytest
from support_desk import SupportDesk

LOST_PARCEL: dict[str, Any] = {
    "order_id": "A-1002",
    "subject": "My lamp never arrived",
    "body": "I ordered a desk lamp twelve days ago and the tracking says lost. I want my money.",
}
HAPPY_CUSTOMER: dict[str, Any] = {
    "order_id": "A-1001",
    "subject": "Thanks!",
    "body": "The kettle arrived and works great. No action needed.",
}


@pytest.fixture
def desk(runtime: Any, decision_provider: Any) -> SupportDesk:
    """The agent, with no runtime of its own: it uses the test's `runtime` fixture, which the
    plugin binds for the test (scripted by the marker, or real for cassette tests)."""
    return SupportDesk(provider=decision_provider)
