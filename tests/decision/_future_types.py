"""Option functions whose annotations are strings (``from __future__ import annotations``).

The reference checks nothing for such modules; the library resolves them with
``typing.get_type_hints`` and validates them like real annotations.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Literal, NotRequired, Optional, Required, TypedDict

import pydantic

from pytest_opdecide import FromContext, Param, Runtime


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


class Labelled(TypedDict):
    x: int
    label: NotRequired[str]


class PartlyRequired(TypedDict, total=False):
    x: Required[int]
    label: str


class User(pydantic.BaseModel):
    name: str
    age: int = 0


@dataclasses.dataclass
class Box:
    w: int
    h: float = 1.0


def scalars(count: int, ratio: float, name: str, flag: bool) -> tuple[int, float, str, bool]:
    """Scalars, annotated as strings."""
    return (count, ratio, name, flag)


def typed(
    maybe: Optional[int],  # noqa: UP045 - the spelling under test
    either: int | str,
    mode: Literal["fast", "slow"],
    color: Color,
    ids: list[int],
    scores: dict[str, float],
) -> dict[str, object]:
    """Typing constructs, annotated as strings."""
    return {
        "maybe": maybe,
        "either": either,
        "mode": mode,
        "color": color,
        "ids": ids,
        "scores": scores,
    }


def structured(point: Point, user: User, box: Box) -> tuple[Point, User, Box]:
    """Structured types, annotated as strings."""
    return (point, user, box)


def labelled(item: Labelled) -> Labelled:
    return item


def total_false(item: PartlyRequired) -> PartlyRequired:
    return item


def hidden(
    n: int,
    runtime: Runtime,
    order_id: Annotated[str, FromContext()],
    team: Annotated[str, Param("Team to page", options=("ops", "billing"))] = "ops",
) -> tuple[int, Runtime, str, str]:
    """Hidden and described parameters, annotated as strings."""
    return (n, runtime, order_id, team)


def unresolvable(thing: NoSuchType) -> object:  # type: ignore[name-defined]  # noqa: F821
    """An annotation naming nothing: refused when the menu is built."""
    return thing


def partly(n: int, thing: NoSuchType) -> tuple[int, object]:  # type: ignore[name-defined]  # noqa: F821
    """One annotation resolves, one names nothing: refused, naming the second."""
    return (n, thing)
