"""Generated values honour every constraint a menu can express, on the first draw.

Bounds on one side only, exclusive bounds, ``multiple_of``, lengths, literals, enums, nested
models with their own ``Field`` constraints, recursive models: each drawn value is checked by
the validator ``decision.make`` uses (``parse_reply``), and it must pass the first time (no
retries hide a generator that misses). A constraint the generator cannot write for (a regex
``pattern``) is refused at once with a message.
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
import random
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_runtimes import SeededRuntime, every_option
from pytest_opdecide import decision
from pytest_opdecide.options import (
    CannotGenerate,
    RandomSource,
    draw_arguments,
    normalize_options,
    parse_reply,
)


class Plan(enum.Enum):
    FREE = "free"
    PRO = "pro"


class Line(pydantic.BaseModel):
    qty: int = pydantic.Field(ge=1, le=5)
    sku: str = pydantic.Field(min_length=3, max_length=6)
    price: float = pydantic.Field(gt=0, lt=0.5)


class Tree(pydantic.BaseModel):
    label: str
    children: list[Tree] = []


class Chain(pydantic.BaseModel):
    value: int = pydantic.Field(lt=-5)
    next: Chain | None


@dataclasses.dataclass
class Folder:
    name: str
    folders: list[Folder]


class Window(TypedDict):
    start: Annotated[int, pydantic.Field(ge=-10, lt=-5)]
    plan: Plan


def first_draw_is_valid(options: Any, seed: int) -> None:
    """Every option's first drawn arguments pass the decision validator."""
    menu = normalize_options(options)
    rng = random.Random(seed)
    for option in menu.options:
        args = draw_arguments(option.fields, RandomSource(rng))
        reply = decision_reply(option.name, args)
        parse_reply(reply, menu, {})  # raises ParseFailure on an invalid pick


def decision_reply(name: str, args: dict[str, Any]) -> str:
    return pydantic.TypeAdapter(dict[str, Any]).dump_json({"call": name, "args": args}).decode()


# --- the bounds the issue names ------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation",
    [
        Annotated[float, pydantic.Field(lt=0.5)],
        Annotated[int, pydantic.Field(lt=-5)],
        Annotated[int, pydantic.Field(le=-5)],
        Annotated[float, pydantic.Field(lt=-5.0)],
        Annotated[float, pydantic.Field(gt=1, lt=2)],
        Annotated[int, pydantic.Field(gt=1, lt=3)],
        Annotated[float, pydantic.Field(ge=1000)],
        Annotated[int, pydantic.Field(gt=500)],
        Annotated[int, pydantic.Field(multiple_of=7, lt=-100)],
        Annotated[float, pydantic.Field(multiple_of=0.1, gt=0, lt=1)],
        Annotated[decimal.Decimal, pydantic.Field(lt=0, ge=-1)],
        Annotated[str, pydantic.Field(min_length=40)],
        Annotated[list[Annotated[int, pydantic.Field(lt=0)]], pydantic.Field(min_length=4)],
        Line,
        list[Line],
        Tree,
        Chain,
        Folder,
        Window,
        Literal["a", "b"] | None,
    ],
    ids=repr,
)
@pytest.mark.parametrize("seed", range(5))
def test_every_option_and_seeded_runs_fill_them(annotation: Any, seed: int) -> None:
    def act(value):  # type: ignore[no-untyped-def]
        return value

    act.__annotations__ = {"value": annotation}
    first_draw_is_valid([act], seed)
    (step,) = every_option([act], seed=seed)
    assert step.option == "act"
    fake = SeededRuntime(seed)
    decision.make("Go.", [act], runtime=fake)
    assert [call.kind for call in fake.calls] == ["turn"]  # no re-pick: the pick was valid


class Sku(pydantic.BaseModel):
    code: str = pydantic.Field(pattern=r"^[A-Z]{3}$")


def test_a_pattern_is_refused_at_once() -> None:
    def order(sku: Sku) -> str:
        return sku.code

    with pytest.raises(CannotGenerate) as caught:
        every_option([order])
    assert caught.value.path == "sku.code"
    assert caught.value.option == "order"
    assert "must match the pattern '^[A-Z]{3}$'" in str(caught.value)
    assert str(caught.value).endswith("script its pick by hand")


Seats = Annotated[int, pydantic.Field(gt=3, lt=4)]


def test_an_empty_range_is_refused_at_once() -> None:
    def book(seats: Seats) -> int:
        return seats

    with pytest.raises(CannotGenerate, match=r"'seats' must be an integer in \(3, 4\)"):
        every_option([book])


# --- random constraint combinations --------------------------------------------------------------


@st.composite
def integer_fields(draw: st.DrawFn) -> Any:
    step = draw(st.none() | st.integers(1, 9))
    witness = draw(st.integers(-(10**6), 10**6)) * (step or 1)
    kwargs: dict[str, Any] = {}
    if step is not None:
        kwargs["multiple_of"] = step
    below, above = draw(st.integers(0, 300)), draw(st.integers(0, 300))
    lower = draw(st.sampled_from(["", "ge", "gt"]))
    upper = draw(st.sampled_from(["", "le", "lt"]))
    if lower:
        kwargs[lower] = witness - below - (1 if lower == "gt" else 0)
    if upper:
        kwargs[upper] = witness + above + (1 if upper == "lt" else 0)
    return Annotated[int, pydantic.Field(**kwargs)]


@st.composite
def float_fields(draw: st.DrawFn) -> Any:
    step = draw(st.none() | st.sampled_from([0.5, 0.25, 0.1, 2.5, 0.01]))
    witness = draw(st.integers(-(10**4), 10**4)) * (step or 0.01)
    kwargs: dict[str, Any] = {}
    if step is not None:
        kwargs["multiple_of"] = step
    gap = st.floats(0, 1000, allow_nan=False)
    lower = draw(st.sampled_from(["", "ge", "gt"]))
    upper = draw(st.sampled_from(["", "le", "lt"]))
    if lower:
        kwargs[lower] = witness - draw(gap) - (1e-3 if lower == "gt" else 0)
    if upper:
        kwargs[upper] = witness + draw(gap) + (1e-3 if upper == "lt" else 0)
    return Annotated[float, pydantic.Field(**kwargs)]


@st.composite
def text_fields(draw: st.DrawFn) -> Any:
    low = draw(st.none() | st.integers(0, 60))
    high = draw(st.none() | st.integers(low or 0, 80))
    kwargs = {k: v for k, v in (("min_length", low), ("max_length", high)) if v is not None}
    return Annotated[str, pydantic.Field(**kwargs)]


@st.composite
def list_fields(draw: st.DrawFn, items: st.SearchStrategy[Any]) -> Any:
    low = draw(st.none() | st.integers(0, 5))
    high = draw(st.none() | st.integers(max(low or 0, 1), 6))
    kwargs = {k: v for k, v in (("min_length", low), ("max_length", high)) if v is not None}
    return Annotated[list[draw(items)], pydantic.Field(**kwargs)]  # type: ignore[misc]


SCALARS = (
    integer_fields()
    | float_fields()
    | text_fields()
    | st.sampled_from([bool, Plan, Literal[1, 2, 3], Literal["x", "y"], decimal.Decimal])
)


@st.composite
def model_fields(draw: st.DrawFn) -> Any:
    names = draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True))
    fields = {name: (draw(SCALARS | list_fields(SCALARS)), ...) for name in names}
    return pydantic.create_model("Drawn", **fields)  # type: ignore[call-overload]


FIELDS = SCALARS | list_fields(SCALARS) | model_fields() | list_fields(model_fields())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(annotations=st.lists(FIELDS, min_size=1, max_size=3), seed=st.integers(0, 2**32))
def test_random_constraint_combinations_are_valid_on_the_first_draw(
    annotations: list[Any], seed: int
) -> None:
    def act(**kwargs):  # type: ignore[no-untyped-def]
        return kwargs

    schema = {f"f{i}": annotation for i, annotation in enumerate(annotations)}
    first_draw_is_valid({"act": ("Act.", schema)}, seed)


@pytest.mark.parametrize(
    "field",
    [
        # 0.30000000000000004 / 0.1 is 3.0000000000000004: its ceiling missed 3 * 0.1 itself.
        pydantic.Field(ge=3 * 0.1, le=3 * 0.1, multiple_of=0.1),
        # 127 * 0.1 is 12.700000000000001: rounded to 12.7, it fell below the bound.
        pydantic.Field(ge=127 * 0.1, le=20, multiple_of=0.1),
        pydantic.Field(gt=7 * 0.1, lt=0.95, multiple_of=0.1),
    ],
    ids=["a-single-multiple", "rounding-crosses-the-bound", "open-bounds"],
)
@pytest.mark.parametrize("seed", range(5))
def test_multiples_on_a_bound_the_floats_round_past(field: Any, seed: int) -> None:
    first_draw_is_valid({"act": ("Act.", {"x": Annotated[float, field]})}, seed)
