"""The measurement set of ``benchmarks/live_agents.py``: agent turns with tools and choices.

Twelve ``agent(prompt, choices=..., tools=[...])`` turns from as many programs: each offers one
to three tools (typed parameters, text among them) and a menu of two to four options (value
options, function options with arguments, a schema option). The tools return fixed text; the
options only report what they were called with.

Nothing here judges whether a pick is *right*: the set measures whether a real model's turn ends
in a valid pick, and how long that takes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["AGENT_TURNS", "AgentTurn"]


@dataclass(frozen=True)
class AgentTurn:
    """One agent turn of the set.

    Attributes:
        name: A short id.
        prompt: The prompt of the turn (the finish instruction and the menu are appended).
        tools: The tools offered.
        choices: The menu (dict form).
    """

    name: str
    prompt: str
    tools: tuple[Callable[..., Any], ...]
    choices: dict[str, Any]


def _called(name: str, **args: Any) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{name}({shown})"


# --- tools ---------------------------------------------------------------------------------


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"Order {order_id}: charged twice, 30 EUR each, delivered yesterday."


def customer_history(email: str) -> str:
    """Read a customer's past tickets."""
    return f"{email}: 2 earlier tickets, both about late deliveries."


def weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"{city}: heavy rain, 9 C, wind 60 km/h."


def service_status(service: str) -> str:
    """Read a service's health checks."""
    return f"{service}: 3 of 5 replicas failing health checks since 10:02."


def recent_deploys(service: str, limit: int) -> str:
    """List a service's most recent deploys."""
    return f"{service}: v2.4.1 deployed at 09:58, v2.4.0 two days ago."


def stock_level(sku: str) -> str:
    """How many items of a product are in stock."""
    return f"{sku}: 0 in stock, next delivery in 6 days."


def read_invoice(invoice_id: str) -> str:
    """Read an invoice."""
    return f"Invoice {invoice_id}: 1,250 EUR, due 14 days ago, unpaid."


def search_docs(query: str) -> str:
    """Search the product documentation."""
    return f"Top result for {query!r}: 'Resetting your password' (Settings > Account)."


def account_flags(user_id: str) -> str:
    """Read the risk flags of a user account."""
    return f"{user_id}: 14 failed logins in 5 minutes from 3 countries."


def room_availability(hotel: str, nights: int) -> str:
    """Check a hotel's free rooms."""
    return f"{hotel}: 2 rooms free for {nights} nights, 140 EUR a night."


def suite_results(suite: str) -> str:
    """Read the last run of a test suite."""
    return f"{suite}: 2 of 410 tests failed (test_login, test_logout), flaky last week."


def translate(text: str, language: str) -> str:
    """Translate a text."""
    return f"[{language}] {text}"


# --- options -------------------------------------------------------------------------------


def issue_refund(amount: float, reason: Literal["duplicate", "late", "damaged"]) -> str:
    """Refund the customer."""
    return _called("issue_refund", amount=amount, reason=reason)


def reply_to_customer(message: str) -> str:
    """Send the customer a message."""
    return _called("reply_to_customer", message=message)


def rollback(service: str, version: str) -> str:
    """Roll a service back to an earlier version."""
    return _called("rollback", service=service, version=version)


def reorder(sku: str, quantity: int) -> str:
    """Order more stock from the supplier."""
    return _called("reorder", sku=sku, quantity=quantity)


def send_reminder(invoice_id: str, tone: Literal["friendly", "firm"]) -> str:
    """Remind the customer to pay."""
    return _called("send_reminder", invoice_id=invoice_id, tone=tone)


def lock_account(user_id: str, hours: int) -> str:
    """Lock an account for a while."""
    return _called("lock_account", user_id=user_id, hours=hours)


def book_room(hotel: str, nights: int) -> str:
    """Book a hotel room."""
    return _called("book_room", hotel=hotel, nights=nights)


def rerun_suite(suite: str) -> str:
    """Run a test suite again."""
    return _called("rerun_suite", suite=suite)


AGENT_TURNS: list[AgentTurn] = [
    AgentTurn(
        "double_charge",
        "A customer writes: 'Order 1234 was charged twice.' Look into it, then decide.",
        (lookup_order,),
        {
            "refund": issue_refund,
            "close": ("CLOSE", "Nothing is left to do."),
        },
    ),
    AgentTurn(
        "repeat_customer",
        "ana@example.com complains that her parcel is late again. Check her history, then act.",
        (customer_history, lookup_order),
        {
            "reply": reply_to_customer,
            "escalate": ("ESCALATE", "Hand the ticket to a human."),
            "close": ("CLOSE", "Nothing is left to do."),
        },
    ),
    AgentTurn(
        "picnic",
        "We planned a picnic in Lyon today. Check the weather, then decide.",
        (weather,),
        {
            "go": ("GO", "Have the picnic as planned."),
            "postpone": ("POSTPONE", "Move it to another day."),
        },
    ),
    AgentTurn(
        "failing_service",
        "The checkout service is alerting. Find out what is wrong, then act.",
        (service_status, recent_deploys),
        {
            "rollback": rollback,
            "page": ("PAGE", "Wake up the on-call engineer."),
            "wait": ("WAIT", "It will recover on its own."),
        },
    ),
    AgentTurn(
        "out_of_stock",
        "A shopper asks when the blue kettle (SKU K-220) is back. Check stock, then decide.",
        (stock_level,),
        {
            "reorder": reorder,
            "notify": ("NOTIFY", "Tell the shopper we will email them."),
            "discontinue": ("DISCONTINUE", "Stop selling the product."),
        },
    ),
    AgentTurn(
        "overdue_invoice",
        "Invoice INV-77 may be overdue. Read it, then decide what to do.",
        (read_invoice,),
        {
            "remind": send_reminder,
            "collect": ("COLLECT", "Hand it to the collection agency."),
            "ignore": ("IGNORE", "It is not overdue."),
        },
    ),
    AgentTurn(
        "password_help",
        "A user asks how to reset their password. Search the docs, then answer.",
        (search_docs,),
        {
            "answer": reply_to_customer,
            "handoff": ("HANDOFF", "Pass the question to support staff."),
        },
    ),
    AgentTurn(
        "suspicious_logins",
        "User u-981 has odd login activity. Check the account, then decide.",
        (account_flags,),
        {
            "lock": lock_account,
            "allow": ("ALLOW", "Nothing suspicious."),
            "review": ("REVIEW", "Ask the security team to review."),
        },
    ),
    AgentTurn(
        "hotel_booking",
        "Book two nights at Hotel Miramar if a room is free; otherwise say so.",
        (room_availability,),
        {
            "book": book_room,
            "none_free": ("NONE_FREE", "No room is free."),
        },
    ),
    AgentTurn(
        "red_build",
        "The nightly build of suite 'api' is red. Look at the results, then decide.",
        (suite_results,),
        {
            "rerun": rerun_suite,
            "block_release": ("BLOCK", "Stop the release until it is fixed."),
            "ignore": ("IGNORE", "The failures do not matter."),
        },
    ),
    AgentTurn(
        "german_customer",
        "A customer wrote in German about a late delivery of order 88. Look it up and reply.",
        (lookup_order, translate),
        {
            "reply": reply_to_customer,
            "escalate": ("ESCALATE", "Hand the ticket to a human."),
        },
    ),
    AgentTurn(
        "triage_plan",
        "Checkout is failing for some users. Investigate, then file a plan.",
        (service_status, recent_deploys, suite_results),
        {
            "plan": (
                "File a plan of next steps.",
                {"summary": str, "steps": [str]},
            ),
            "page": ("PAGE", "Wake up the on-call engineer."),
        },
    ),
]
