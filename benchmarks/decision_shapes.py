"""The menus real code builds, as the seed writes them: literals inside the method that decides.

Each shape is ``(name, build, pick)``: ``build(ticket)`` returns a new options dict on every
call, as a method does; ``pick`` is the reply's pick (a ``fake_runtimes.pick``'s arguments).
"""

from __future__ import annotations

from typing import Any

Build = Any


def _closures(ticket: str) -> dict[str, Any]:
    def lookup(order_id: str, verbose: bool = False) -> dict[str, Any]:
        """Look up an order by id."""
        return {"order_id": order_id, "ticket": ticket}

    def refund(amount: float, reason: str) -> str:
        """Refund the customer."""
        return f"refunded {amount}: {reason}"

    def escalate(note: str) -> str:
        """Hand the ticket to a human."""
        return f"escalated {ticket}"

    def reply(text: str) -> str:
        """Answer the customer."""
        return text

    def close() -> str:
        """Close the ticket."""
        return "closed"

    def tag(label: str, weight: int = 1) -> str:
        """Tag the ticket."""
        return label

    def wait(hours: int) -> str:
        """Wait before acting."""
        return f"wait {hours}"

    def merge(other: str) -> str:
        """Merge with another ticket."""
        return other

    return {
        "lookup": lookup,
        "refund": refund,
        "escalate": escalate,
        "reply": reply,
        "close": close,
        "tag": tag,
        "wait": wait,
        "merge": merge,
    }


def lookup_order(order_id: str, verbose: bool = False) -> dict[str, Any]:
    """Look up an order by id."""
    return {"order_id": order_id}


def issue_refund(amount: float, reason: str) -> str:
    """Refund the customer."""
    return f"refunded {amount}"


def reply_to(text: str) -> str:
    """Answer the customer."""
    return text


def _described(ticket: str) -> dict[str, Any]:
    return {
        "lookup": (lookup_order, f"Look up the order of ticket {ticket}."),
        "refund": (issue_refund, f"Refund the customer of ticket {ticket}."),
        "reply": (reply_to, f"Answer the customer of ticket {ticket}."),
        "close": ("CLOSED", f"Close ticket {ticket}."),
        "escalate": ("ESCALATED", f"Hand ticket {ticket} to a human."),
        "wait": ("WAITING", f"Wait for the customer of ticket {ticket}."),
        "spam": ("SPAM", f"Ticket {ticket} is spam."),
        "duplicate": ("DUPLICATE", f"Ticket {ticket} repeats another."),
        "reopen": ("REOPENED", f"Reopen ticket {ticket}."),
        "ask": ("ASKED", f"Ask the customer of ticket {ticket} a question."),
    }


def _schemas(ticket: str) -> dict[str, Any]:
    return {
        "plan": (
            "Return a structured plan.",
            {
                "steps": [
                    {
                        "action": str,
                        "target": str,
                        "priority": {"type": str, "options": ["low", "high"]},
                    }
                ],
                "rationale": str,
            },
        ),
        "classify": ("Classify the ticket.", {"category": str, "urgency": int}),
        "summarise": ("Summarise the ticket.", {"summary": str, "words": int}),
        "route": ("Route to a team.", {"team": {"type": str, "options": ["ops", "billing"]}}),
        "close": ("CLOSED", "Nothing left to do."),
        "wait": "WAITING",
    }


def _per_item(ticket: str) -> dict[str, Any]:
    # An option per document of the ticket, named after it: the names are new on every call.
    menu: dict[str, Any] = {"refund": issue_refund}
    for n in range(9):
        menu[f"open_{ticket.replace('-', '_')}_{n}"] = (
            f"DOC-{n}",
            f"Open document {n} of ticket {ticket}.",
        )
    return menu


def _many(count: int) -> Build:
    names = [f"option_{n}" for n in range(count)]

    def build(ticket: str) -> dict[str, Any]:
        menu: dict[str, Any] = {"refund": issue_refund}
        for name in names[1:]:
            menu[name] = (name.upper(), f"Pick {name} for this ticket.")
        return menu

    return build


SHAPES: list[tuple[str, Build, tuple[str, dict[str, Any]]]] = [
    ("8 closures defined per call", _closures, ("refund", {"amount": 3.5, "reason": "late"})),
    (
        "10 options, descriptions with the ticket id",
        _described,
        ("refund", {"amount": 3.5, "reason": "late"}),
    ),
    (
        "6 options, 4 schemas",
        _schemas,
        (
            "plan",
            {
                "steps": [{"action": "backup", "target": "db", "priority": "high"}],
                "rationale": "Back up first.",
            },
        ),
    ),
    (
        "10 options named after the ticket's documents (new names every call)",
        _per_item,
        ("refund", {"amount": 3.5, "reason": "late"}),
    ),
    ("2 options", _many(2), ("refund", {"amount": 3.5, "reason": "late"})),
    ("100 options", _many(100), ("refund", {"amount": 3.5, "reason": "late"})),
    ("1,000 options", _many(1000), ("refund", {"amount": 3.5, "reason": "late"})),
]
