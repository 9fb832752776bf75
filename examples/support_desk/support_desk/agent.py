"""The support-desk agent.

Three steps, each one a kind of decision a model makes:

1. ``triage`` asks *question decisions* (a question-decision provider answers with full
   probability distributions): how urgent is the ticket (a score), what is it about (a choice),
   does it need a human (a boolean).
2. ``route`` is a *pure next-step decision* (``decision.make``): refund, escalate or reply.
3. ``handle`` is a *working turn* (``agent(..., choices=...)``): the model may look the order up
   and check the refund policy with native tools, then closes with a pick.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pytest_opdecide import Agent, FromContext, Param, agent, decision
from pytest_opdecide.questions import ThreadState, decide

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"item": "kettle", "price": 39.0, "status": "delivered", "days_since": 3},
    "A-1002": {"item": "desk lamp", "price": 24.5, "status": "lost in transit", "days_since": 12},
    "A-1003": {"item": "headphones", "price": 89.0, "status": "shipped", "days_since": 1},
}

TOPICS = {
    "billing": "Charges, invoices, refunds of money already paid.",
    "shipping": "Where a parcel is, delays, lost or damaged deliveries.",
    "product": "How a product works, defects, returns of a working product.",
    "account": "Logins, passwords, personal data.",
}
URGENCY_LEVELS = [
    "Routine: can wait a few days.",
    "Soon: answer within a day.",
    "Urgent: money or a delivery is at stake now.",
    "Critical: safety, legal or a large loss.",
]


def issue_refund(
    amount: Annotated[float, Param("Amount to refund, in EUR")],
    reason: Literal["late", "lost", "damaged", "goodwill"],
    order_id: Annotated[str, FromContext()],
) -> dict[str, Any]:
    """Refund the customer for an order (never more than it cost)."""
    price = float(ORDERS.get(order_id, {}).get("price", 0.0))
    refunded = round(min(amount, price), 2)
    return {
        "action": "refund",
        "order_id": order_id,
        "amount": refunded,
        "reason": reason,
        "capped": refunded < round(amount, 2),
    }


def escalate_to_human(team: Literal["billing", "logistics", "legal"], note: str) -> dict[str, Any]:
    """Hand the ticket to a human team with a short note."""
    return {"action": "escalate", "team": team, "note": note}


ROUTE_OPTIONS: dict[str, Any] = {
    "refund": issue_refund,
    "escalate": escalate_to_human,
    "reply": (
        "Answer the customer directly.",
        {"message": str, "tone": {"type": str, "options": ["formal", "friendly"]}},
    ),
    "close": ("CLOSED", "Nothing left to do."),
}
"""What ``route`` offers: function, schema and value options."""

HANDLE_CHOICES: dict[str, Any] = {
    "refund": issue_refund,
    "escalate": escalate_to_human,
    "close": ("CLOSED", "Nothing left to do."),
}
"""How ``handle`` may close its working turn."""


@dataclass(frozen=True)
class Triage:
    """What triage found out, with the model's probabilities kept."""

    urgency: float
    topic: str
    topic_probabilities: dict[str, float]
    needs_human: float


class SupportDesk(Agent):
    """Triage, route and handle support tickets."""

    method_options: ClassVar[dict[str, dict[str, Any]]] = {
        "lookup_order": {"tool": True},
        "refund_policy": {"tool": True},
    }

    def __init__(self, runtime: Any = None, provider: Any = None, model: str = "") -> None:
        super().__init__(runtime)
        self.provider = provider
        self.model = model

    # --- tools ---------------------------------------------------------------------------------

    def lookup_order(self, order_id: str) -> dict[str, Any]:
        """Look up an order by its id (status, item, price, days since it shipped)."""
        order = ORDERS.get(order_id)
        return {"order_id": order_id, **order} if order else {"error": f"no order {order_id}"}

    def refund_policy(self, reason: Literal["late", "lost", "damaged", "goodwill"]) -> str:
        """Say how much of the price may be refunded for a reason."""
        share = {"late": "20%", "lost": "100%", "damaged": "100%", "goodwill": "10%"}[reason]
        return f"Up to {share} of the price may be refunded when the reason is '{reason}'."

    # --- the three decisions -------------------------------------------------------------------

    async def triage(self, ticket: dict[str, Any]) -> Triage:
        """Score urgency, classify the topic and estimate whether a human is needed."""
        result = await decide(
            ThreadState(),
            {
                "provider": self.provider,
                "model": self.model,
                "context": ticket,
                "questions": {
                    "urgency": {
                        "type": "score",
                        "instructions": "How urgent is this ticket?",
                        "levels": URGENCY_LEVELS,
                    },
                    "topic": {
                        "type": "choice",
                        "instructions": "What is this ticket about?",
                        "options": TOPICS,
                    },
                    "needs_human": {
                        "type": "boolean",
                        "instructions": "Does this ticket need a human to handle it?",
                        "criteria": {
                            "true": "Legal threats, safety, or anything the agent may not do.",
                            "false": "A routine request the agent can settle itself.",
                        },
                    },
                },
            },
        )
        topic = result.answers["topic"]
        urgency = result.answers["urgency"]
        human = result.answers["needs_human"]
        assert topic.type == "choice"
        assert urgency.type == "score"
        assert human.type == "boolean"
        return Triage(urgency.score, topic.choice, dict(topic.probabilities), human.probability)

    def route(self, ticket: dict[str, Any]) -> Any:
        """Pick the next step for a ticket: a pure decision, no tools."""
        return decision.make(
            f"Customer ticket:\n{ticket['subject']}\n{ticket['body']}\n\n"
            "Pick the next step. Reply with the JSON of exactly one option.",
            ROUTE_OPTIONS,
            context={"order_id": ticket.get("order_id", "")},
        )

    def handle(self, ticket: dict[str, Any]) -> Any:
        """Work on a ticket with tools (order lookup, refund policy), then pick how to close."""
        return agent(
            f"Handle this support ticket. Look the order up first.\n"
            f"Order: {ticket.get('order_id', 'unknown')}\n{ticket['subject']}\n{ticket['body']}",
            choices=HANDLE_CHOICES,
            context={"order_id": ticket.get("order_id", "")},
            max_iterations=4,  # a bounded turn: a looping model fails fast, not slowly
        )
