"""Every field type has its value generator, shared by the seeded fakes and the strategies.

The field types are found by walking ``TypeSpec.__subclasses__()``, so a new one cannot be
forgotten: it fails here until :data:`EXAMPLES` has fields of it and
``pytest_opdecide/_nextstep/_values.py`` a generator and a wrong value for it. For each type,
what the fakes and the strategies draw passes the validator ``decision.make`` uses
(``parse_reply``), and a type the generator does not know is an error that names it, never a
value of some other type.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import random
import uuid
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings

from fake_runtimes import SeededRuntime, every_option, invalid_replies
from pytest_opdecide import decision, strategies
from pytest_opdecide.options import (
    Menu,
    ParseFailure,
    RandomSource,
    TypeSpec,
    UnknownSpec,
    draw_value,
    normalize_options,
    parse_reply,
    wrong_type_value,
)


class Tier(enum.Enum):
    FREE = "free"
    PRO = "pro"


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Slot:
    day: datetime.date
    seats: int = 1


class Contact(pydantic.BaseModel):
    name: str
    email: str | None = None


EXAMPLES: dict[str, dict[str, Any]] = {
    "ScalarSpec": {
        "text": str,
        "count": int,
        "ratio": float,
        "flag": bool,
        "items": list,
        "entries": dict,
    },
    "ChoiceSpec": {
        "kind": Literal["bug", "question"],
        "tier": Tier,
        "team": {"type": str, "options": ["ops", "billing"]},
        "level": {"type": int, "options": [1, 2, 3]},
    },
    "ListSpec": {"tags": list[str], "steps": [{"action": str, "due": int}]},
    "SequenceSpec": {
        "seats": set[str],
        "codes": frozenset[int],
        "pair": tuple[int, str],
        "days": tuple[datetime.date, ...],
    },
    "DictSpec": {"counts": dict[str, int], "flags": dict[str, bool | None]},
    "ObjectSpec": {"point": Point, "address": {"street": str, "zip_code": int}},
    "ModelSpec": {"slot": Slot, "contact": Contact},
    "PydanticSpec": {
        "day": datetime.date,
        "at": datetime.datetime,
        "ref": uuid.UUID,
        "fare": decimal.Decimal,
        "size": Annotated[int, pydantic.Field(ge=1, le=9)],
    },
    "UnionSpec": {"either": int | str, "maybe": datetime.date | None},
    "NoneSpec": {"nothing": type(None)},
    "UnknownSpec": {"anything": Any},
}
"""Schema fields of every field type, by the name of the type each field has."""

SEEDS = range(20)


def field_types() -> set[type[TypeSpec]]:
    """Every subclass of ``TypeSpec`` the package defines, at any depth."""
    found: set[type[TypeSpec]] = set()
    pending = [TypeSpec]
    while pending:
        for subclass in pending.pop().__subclasses__():
            if subclass.__module__.startswith("pytest_opdecide.") and subclass not in found:
                found.add(subclass)
                pending.append(subclass)
    return found


def options_of(name: str) -> dict[str, Any]:
    return {"fill": ("Fill in every field.", EXAMPLES[name])}


def test_every_field_type_has_examples() -> None:
    assert sorted(EXAMPLES) == sorted(t.__name__ for t in field_types()), (
        "a new field type: give it fields in EXAMPLES, and a generator and a wrong value in "
        "pytest_opdecide/_nextstep/_values.py"
    )


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_examples_are_fields_of_their_type(name: str) -> None:
    (option,) = normalize_options(options_of(name)).options
    assert {type(f.type).__name__ for f in option.fields} == {name}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_seeded_fakes_draw_values_the_validator_accepts(name: str) -> None:
    options = options_of(name)
    menu = normalize_options(options)
    for seed in SEEDS:
        (step,) = every_option(options, seed=seed)
        option, args = parse_reply(step.text, menu)
        assert option.name == "fill"
        assert set(args) == set(EXAMPLES[name])
        runtime = SeededRuntime(seed)
        decision.make("Fill it in.", options, runtime=runtime, max_retries=0)
        assert [call.kind for call in runtime.calls] == ["turn"]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_strategies_draw_values_the_validator_accepts(name: str) -> None:
    options = options_of(name)
    menu = normalize_options(options)

    @settings(max_examples=25, deadline=None, database=None)
    @given(strategies.valid_replies(options))
    def check(reply: strategies.ValidReply) -> None:
        option, _ = parse_reply(reply.text, menu)
        assert option.name == reply.option == "fill"

    check()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_field_that_a_value_can_miss_gets_a_wrongly_typed_reply(name: str) -> None:
    options = options_of(name)
    menu = normalize_options(options)
    (option,) = menu.options
    cases = invalid_replies(options)
    mistyped = {case.field for case in cases if case.kind == "type_mismatch"}
    assert mistyped == {f.name for f in option.fields if not isinstance(f.type, UnknownSpec)}
    for case in cases:
        with pytest.raises(ParseFailure) as caught:
            parse_reply(case.reply, menu)
        assert caught.value.kind == case.kind, case


class Mystery(TypeSpec):
    """A field type the generator has never heard of."""

    label = "mystery"


def with_a_mystery_field() -> Menu:
    """A menu whose one option has a field of the type :class:`Mystery`."""
    menu = normalize_options({"fill": ("Fill it in.", {"thing": str})})
    (option,) = menu.options
    thing = dataclasses.replace(option.fields[0], type=Mystery())
    strange = dataclasses.replace(option, fields=(thing,))
    return dataclasses.replace(menu, options=(strange,), by_name={"fill": strange})


def test_a_field_type_without_a_generator_is_an_error_that_names_it() -> None:
    with pytest.raises(TypeError, match=r"^Cannot draw a value of the field type Mystery "):
        draw_value(Mystery(), RandomSource(random.Random(0)))
    with pytest.raises(TypeError, match=r"^Cannot make a wrongly typed value .* Mystery "):
        wrong_type_value(Mystery())


def test_the_fakes_refuse_a_field_type_without_a_generator() -> None:
    menu = with_a_mystery_field()
    with pytest.raises(TypeError, match="field type Mystery"):
        every_option(menu)
    with pytest.raises(TypeError, match="field type Mystery"):
        invalid_replies(menu)


def test_the_strategies_refuse_a_field_type_without_a_generator() -> None:
    @settings(max_examples=1, database=None, suppress_health_check=list(HealthCheck))
    @given(strategies.valid_replies(with_a_mystery_field()))
    def draw(reply: strategies.ValidReply) -> None:
        raise AssertionError(f"drew {reply} for a field type without a generator")

    with pytest.raises(TypeError, match="field type Mystery"):
        draw()


def nested_lists(depth: int) -> Any:
    notation: Any = int
    for _ in range(depth):
        notation = [notation]
    return notation


def nesting(value: Any) -> int:
    """How many lists deep a value goes: ``[]`` is 1, ``[[]]`` and ``[[], [[]]]`` 2 and 3."""
    if not isinstance(value, list):
        return 0
    return 1 + max((nesting(item) for item in value), default=0)


def test_values_nested_deeper_than_the_limits_are_the_smallest_their_types_allow() -> None:
    # Twelve lists deep: lists get items down to the eighth level; a list deeper is empty.
    options = {"deep": ("Go deep.", {"grid": nested_lists(12)})}
    menu = normalize_options(options)
    for seed in SEEDS:
        (step,) = every_option(options, seed=seed)
        parse_reply(step.text, menu)
        assert nesting(step.args["grid"]) == 9
