"""Options using every field type the decision validator knows; seeded fakes fill them all."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import pydantic

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
