"""Options using every field type the decision validator knows; seeded fakes fill them all."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict

import pydantic
from pydantic import Field

from pytest_opdecide import FromContext, Param, Runtime


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(TypedDict):
    street: str
    zip_code: int


@dataclasses.dataclass
class LineItem:
    sku: str
    quantity: int = 1


class Customer(pydantic.BaseModel):
    name: str
    tier: Literal["free", "pro"] = "free"
    email: str | None = None


def update_ticket(
    title: str,
    count: int,
    ratio: float,
    urgent: bool,
    tags: list,  # type: ignore[type-arg]
    extra: dict,  # type: ignore[type-arg]
    kind: Literal["bug", "question"],
    color: Color,
    priority: Priority,
    assignee: Optional[str],  # noqa: UP045 - the typing spelling is part of what is tested
    ref: int | str,
    address: Address,
    item: LineItem,
    customer: Customer,
    items: list[LineItem],
    counts: dict[str, int],
    team: Annotated[str, Param("Team to page", options=("ops", "billing"))],
    note: str = "",
    limit: int | None = None,
    ticket_id: Annotated[str, FromContext()] = "T-0",
    runtime: Runtime | None = None,
) -> dict[str, Any]:
    """Update the ticket."""
    return dict(locals())


TYPED_OPTIONS: dict[str, Any] = {
    "update_ticket": update_ticket,
    "plan": (
        "Return a plan.",
        {"steps": [{"action": str, "target": str}], "rationale": str},
    ),
    "classify": (
        "Classify the message.",
        {
            "label": {"type": str, "options": ["spam", "ham"]},
            "score": {"type": int, "description": "1-3", "options": [1, 2, 3]},
            "evidence": {"items": {"quote": str, "line": int}},
            "meta": {"fields": {"source": str, "lang": {"type": str, "options": ["en", "fr"]}}},
        },
    ),
    "done": ("DONE", "Pick when finished."),
}
"""Four options: a function with every annotation, a nested schema, meta-specs, a value."""


class Cabin(enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


@dataclasses.dataclass
class Leg:
    origin: str
    when: datetime.date


class Traveller(pydantic.BaseModel):
    name: str
    born: datetime.date


def book(
    day: datetime.date,
    at: datetime.datetime,
    boarding: datetime.time,
    layover: datetime.timedelta,
    fare: decimal.Decimal,
    ref: uuid.UUID,
    seats: set[str],
    codes: frozenset[int],
    pair: tuple[int, str],
    many: tuple[datetime.date, ...],
    where: pathlib.Path,
    count: Annotated[int, Field(ge=1, le=9)],
    cabin: Cabin,
    leg: Leg,
    traveller: Traveller,
    either: int | datetime.date,
    maybe: datetime.date | None = None,
    legs: list[Leg] | None = None,
) -> dict[str, Any]:
    """Book a trip."""
    return dict(locals())


BOOKING_OPTIONS: dict[str, Any] = {
    "book": book,
    "hold": ("Hold the seats.", {"until": datetime.date, "fare": decimal.Decimal}),
    "cancel": ("CANCELLED", "Cancel the trip."),
}
"""Options whose fields pydantic converts: dates, decimals, UUIDs, sets, tuples, constraints."""
