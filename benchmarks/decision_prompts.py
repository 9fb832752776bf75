"""The measurement set of ``benchmarks/live_decisions.py``: decision prompts with their menus.

Twenty-four decisions from as many domains, as code under test would write them: menus of 2 to
8 options mixing function options (typed parameters: ``str``, ``int``, ``float``, ``bool``,
``Literal``, enums, ``date``, ``Decimal``, lists, a ``TypedDict``, a pydantic model, optional
parameters with defaults), value options and schema options. Each prompt tells the model to
pick, as ``decision.make`` requires. The functions only report what they were called with.

Nothing here judges whether a pick is *right*: the set measures whether a real model's reply
parses into a valid pick, and how long that takes.
"""

from __future__ import annotations

import datetime
import decimal
import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

import pydantic
from pydantic import Field

from pytest_opdecide import Param

__all__ = ["PROMPTS", "Decision"]


@dataclass(frozen=True)
class Decision:
    """One decision of the set.

    Attributes:
        name: A short id.
        domain: What kind of program asks.
        prompt: The prompt ``decision.make`` sends before the menu.
        options: The menu (dict form).
    """

    name: str
    domain: str
    prompt: str
    options: dict[str, Any]


def _called(name: str, **args: Any) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{name}({shown})"


# --- support desk --------------------------------------------------------------------------


def issue_refund(amount: float, reason: Literal["late", "lost", "damaged", "duplicate"]) -> str:
    """Refund the customer for an order.

    Args:
        amount: Amount to refund, in EUR.
        reason: Why the refund is given.
    """
    return _called("issue_refund", amount=amount, reason=reason)


def escalate(team: Literal["billing", "shipping", "legal"], note: str) -> str:
    """Hand the ticket to a human team."""
    return _called("escalate", team=team, note=note)


# --- travel --------------------------------------------------------------------------------


class Cabin(enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


def book_flight(origin: str, destination: str, day: datetime.date, cabin: Cabin) -> str:
    """Book a flight.

    Args:
        origin: IATA code of the departure airport.
        destination: IATA code of the arrival airport.
        day: The day of the flight.
        cabin: The cabin class.
    """
    return _called("book_flight", origin=origin, destination=destination, day=day, cabin=cabin)


def search_hotels(city: str, nights: int, max_price: float | None = None) -> str:
    """Search hotels in a city."""
    return _called("search_hotels", city=city, nights=nights, max_price=max_price)


# --- operations ----------------------------------------------------------------------------


def restart_service(service: str, graceful: bool = True) -> str:
    """Restart a service."""
    return _called("restart_service", service=service, graceful=graceful)


def scale_service(service: str, replicas: Annotated[int, Field(ge=1, le=20)]) -> str:
    """Change the number of replicas of a service."""
    return _called("scale_service", service=service, replicas=replicas)


def page_oncall(
    severity: Annotated[int, Param("1 = critical, 3 = minor", options=[1, 2, 3])],
) -> str:
    """Page the on-call engineer."""
    return _called("page_oncall", severity=severity)


def rollback(service: str, version: str) -> str:
    """Roll a service back to an earlier version."""
    return _called("rollback", service=service, version=version)


# --- shop ----------------------------------------------------------------------------------


class Address(TypedDict):
    street: str
    city: str
    postcode: str


def ship_order(order_id: str, address: Address, express: bool = False) -> str:
    """Ship an order to an address."""
    return _called("ship_order", order_id=order_id, address=address, express=express)


def apply_discount(order_id: str, percent: Annotated[int, Field(ge=1, le=50)]) -> str:
    """Apply a discount to an order."""
    return _called("apply_discount", order_id=order_id, percent=percent)


# --- finance -------------------------------------------------------------------------------


def transfer(amount: decimal.Decimal, to_account: str, reference: str = "") -> str:
    """Transfer money to another account."""
    return _called("transfer", amount=amount, to_account=to_account, reference=reference)


def flag_transaction(transaction_id: str, reason: str) -> str:
    """Flag a transaction for review."""
    return _called("flag_transaction", transaction_id=transaction_id, reason=reason)


# --- calendar and home ---------------------------------------------------------------------


def schedule_meeting(title: str, day: datetime.date, attendees: list[str]) -> str:
    """Put a meeting in the calendar."""
    return _called("schedule_meeting", title=title, day=day, attendees=attendees)


def set_thermostat(room: str, celsius: float) -> str:
    """Set a room's thermostat."""
    return _called("set_thermostat", room=room, celsius=celsius)


def switch_lights(room: str, on: bool) -> str:
    """Switch a room's lights on or off."""
    return _called("switch_lights", room=room, on=on)


# --- people --------------------------------------------------------------------------------


class Candidate(pydantic.BaseModel):
    name: str
    years_experience: int


def invite_to_interview(candidate: Candidate, day: datetime.date) -> str:
    """Invite a candidate to an interview."""
    return _called("invite_to_interview", candidate=candidate, day=day)


def approve_leave(employee: str, days: int) -> str:
    """Approve a leave request."""
    return _called("approve_leave", employee=employee, days=days)


# --- content and code ----------------------------------------------------------------------


def remove_post(post_id: str, rule: Literal["spam", "harassment", "off_topic"]) -> str:
    """Remove a post that breaks a rule."""
    return _called("remove_post", post_id=post_id, rule=rule)


def request_changes(file: str, line: int, comment: str) -> str:
    """Ask for a change in a pull request."""
    return _called("request_changes", file=file, line=line, comment=comment)


def run_tests(path: str, verbose: bool = False) -> str:
    """Run the test suite under a path."""
    return _called("run_tests", path=path, verbose=verbose)


# --- logistics, food, library, games -------------------------------------------------------


def reroute_truck(truck_id: str, via: list[str]) -> str:
    """Send a truck through other cities."""
    return _called("reroute_truck", truck_id=truck_id, via=via)


def reserve_table(guests: int, time: str, name: str) -> str:
    """Reserve a table at the restaurant.

    Args:
        guests: How many people.
        time: The time, e.g. 19:30.
        name: The name of the booking.
    """
    return _called("reserve_table", guests=guests, time=time, name=name)


def renew_loan(member_id: str, weeks: int = 2) -> str:
    """Renew a library loan."""
    return _called("renew_loan", member_id=member_id, weeks=weeks)


def attack(target: str, weapon: Literal["sword", "bow"]) -> str:
    """Attack a target."""
    return _called("attack", target=target, weapon=weapon)


def say(line: str) -> str:
    """Say something to the player."""
    return _called("say", line=line)


PLAN = {"steps": [{"action": str, "owner": str}], "deadline": str}
"""A schema option's fields: a list of steps and a deadline."""


PROMPTS: list[Decision] = [
    Decision(
        "double_charge",
        "support desk",
        "A customer writes: 'I was charged twice for order A-1002, 30 EUR each time.' "
        "Decide what to do next and pick one option.",
        {
            "issue_refund": issue_refund,
            "escalate": escalate,
            "close": ("CLOSED", "Nothing is left to do."),
        },
    ),
    Decision(
        "thanks",
        "support desk",
        "The customer replies: 'All sorted, thank you!' Pick what happens to the ticket.",
        {"close": ("CLOSED", "Nothing is left to do."), "wait": ("WAITING", "Wait for a reply.")},
    ),
    Decision(
        "flight",
        "travel",
        "The traveller wants to fly from Berlin (BER) to Lisbon (LIS) on 2025-06-14, economy. "
        "Pick the next step.",
        {
            "book_flight": book_flight,
            "search_hotels": search_hotels,
            "ask": ("ASK", "Ask the traveller for missing details."),
        },
    ),
    Decision(
        "hotel",
        "travel",
        "The traveller needs a hotel in Porto for 3 nights, at most 120 EUR a night. "
        "Pick one option.",
        {
            "search_hotels": search_hotels,
            "book_flight": book_flight,
            "done": ("DONE", "Nothing to book."),
        },
    ),
    Decision(
        "memory_leak",
        "operations",
        "Alert: the service 'checkout' uses 95% of its memory and keeps growing since the last "
        "deploy (version 4.2.0; the one before was 4.1.3). Pick the next action.",
        {
            "restart_service": restart_service,
            "scale_service": scale_service,
            "rollback": rollback,
            "page_oncall": page_oncall,
            "ignore": ("IGNORED", "The alert needs no action."),
        },
    ),
    Decision(
        "traffic_spike",
        "operations",
        "Traffic on the 'search' service doubled in ten minutes; latency is rising but there are "
        "no errors. Pick one action.",
        {
            "scale_service": scale_service,
            "restart_service": restart_service,
            "page_oncall": page_oncall,
            "ignore": ("IGNORED", "The alert needs no action."),
        },
    ),
    Decision(
        "incident_plan",
        "operations",
        "The database failed over twice tonight. Pick an option; if you plan, give steps with "
        "an owner each and a deadline.",
        {
            "plan": ("Write a plan to follow up.", PLAN),
            "page_oncall": page_oncall,
            "ignore": ("IGNORED", "Nothing to follow up."),
        },
    ),
    Decision(
        "ship",
        "shop",
        "Order 5531 is paid. The customer lives at 12 Rose Street, Leeds, LS1 4AB and paid for "
        "express delivery. Pick the next step.",
        {
            "ship_order": ship_order,
            "apply_discount": apply_discount,
            "hold": ("HELD", "Hold the order for a manual check."),
        },
    ),
    Decision(
        "coupon",
        "shop",
        "Customer 88 complains that order 7310 arrived late and asks for a 10 percent discount. "
        "Pick one option.",
        {
            "apply_discount": apply_discount,
            "ship_order": ship_order,
            "refuse": ("REFUSED", "Politely refuse."),
            "escalate": escalate,
        },
    ),
    Decision(
        "rent",
        "finance",
        "Pay this month's rent: 950.00 EUR to account DE44 5001 0517 5407 3249 31, reference "
        "'rent June'. Pick one option.",
        {
            "transfer": transfer,
            "flag_transaction": flag_transaction,
            "wait": ("WAITING", "Wait for the owner's confirmation."),
        },
    ),
    Decision(
        "fraud",
        "finance",
        "Transaction T-99812 is a 4,000 EUR card payment in a country the customer never "
        "visited, at 3 a.m. Pick the next step.",
        {
            "flag_transaction": flag_transaction,
            "transfer": transfer,
            "allow": ("ALLOWED", "The payment looks normal."),
        },
    ),
    Decision(
        "standup",
        "calendar",
        "Set up the weekly planning meeting with Ana and Kwame on 2025-06-16. Pick an option.",
        {
            "schedule_meeting": schedule_meeting,
            "skip": ("SKIPPED", "No meeting is needed."),
        },
    ),
    Decision(
        "cold_room",
        "smart home",
        "It is 16 degrees in the bedroom and the user says it is too cold. Pick one action.",
        {
            "set_thermostat": set_thermostat,
            "switch_lights": switch_lights,
            "nothing": ("NOTHING", "Do nothing."),
        },
    ),
    Decision(
        "bedtime",
        "smart home",
        "The user says good night from the living room. Pick one action.",
        {
            "switch_lights": switch_lights,
            "set_thermostat": set_thermostat,
            "nothing": ("NOTHING", "Do nothing."),
        },
    ),
    Decision(
        "candidate",
        "hiring",
        "Maria Lopez has 6 years of Python experience and passed the screening. Invite her or "
        "not: pick one option.",
        {
            "invite_to_interview": invite_to_interview,
            "reject": ("REJECTED", "Send a polite rejection."),
            "hold": ("ON_HOLD", "Keep the application on hold."),
        },
    ),
    Decision(
        "leave",
        "people",
        "Tom asks for 5 days of leave next month; his team is fully staffed. Pick one option.",
        {
            "approve_leave": approve_leave,
            "decline": ("DECLINED", "Decline the request."),
        },
    ),
    Decision(
        "spam_post",
        "moderation",
        "Post P-311 says: 'BUY CHEAP WATCHES NOW!!! click here'. Pick one moderation action.",
        {
            "remove_post": remove_post,
            "keep": ("KEPT", "The post breaks no rule."),
            "warn": ("WARNED", "Warn the author."),
        },
    ),
    Decision(
        "review",
        "code review",
        "In the pull request, src/app.py line 42 divides by a user-given count that can be "
        "zero. Pick one option.",
        {
            "request_changes": request_changes,
            "approve": ("APPROVED", "Approve the pull request."),
            "run_tests": run_tests,
        },
    ),
    Decision(
        "ci",
        "code review",
        "A contributor says the tests in tests/unit fail on their machine. Pick the next step.",
        {
            "run_tests": run_tests,
            "request_changes": request_changes,
            "approve": ("APPROVED", "Approve as is."),
            "close": ("CLOSED", "Close the report."),
        },
    ),
    Decision(
        "road_closed",
        "logistics",
        "Truck TR-7 is heading to Munich but the A9 is closed; it could go via Nuremberg and "
        "Regensburg. Pick one option.",
        {
            "reroute_truck": reroute_truck,
            "wait": ("WAITING", "Wait until the road opens."),
            "plan": ("Write a plan for the delay.", PLAN),
        },
    ),
    Decision(
        "dinner",
        "restaurant",
        "A caller wants a table for 4 people at 19:30 tonight, under the name Schmidt. Pick one "
        "option.",
        {
            "reserve_table": reserve_table,
            "full": ("FULLY_BOOKED", "Tell the caller there is no table."),
            "waitlist": ("WAITLIST", "Put the caller on the waiting list."),
        },
    ),
    Decision(
        "library",
        "library",
        "Member M-204 asks to keep their book two more weeks; nobody else reserved it. Pick one "
        "option.",
        {
            "renew_loan": renew_loan,
            "refuse": ("REFUSED", "The loan cannot be renewed."),
        },
    ),
    Decision(
        "goblin",
        "game",
        "A goblin blocks the bridge and draws its knife. You are a knight with a sword and a "
        "bow. Pick your move.",
        {
            "attack": attack,
            "say": say,
            "flee": ("FLED", "Run away."),
            "wait": ("WAITED", "Wait and watch."),
        },
    ),
    Decision(
        "triage_board",
        "project management",
        "Eight new bug reports came in overnight, two of them about the login page. Pick one "
        "option for the board.",
        {
            "plan": ("Write a plan for the bugs.", PLAN),
            "page_oncall": page_oncall,
            "schedule_meeting": schedule_meeting,
            "escalate": escalate,
            "ignore": ("IGNORED", "Leave the board as is."),
            "close": ("CLOSED", "Close the reports as duplicates."),
            "wait": ("WAITING", "Wait for more reports."),
            "run_tests": run_tests,
        },
    ),
]
