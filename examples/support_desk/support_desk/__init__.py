"""A small support-desk agent: the example project of pytest-opdecide."""

from support_desk.agent import (
    HANDLE_CHOICES,
    ORDERS,
    ROUTE_OPTIONS,
    SupportDesk,
    Triage,
    escalate_to_human,
    issue_refund,
)

__all__ = [
    "HANDLE_CHOICES",
    "ORDERS",
    "ROUTE_OPTIONS",
    "SupportDesk",
    "Triage",
    "escalate_to_human",
    "issue_refund",
]
