"""The fast check of a pick's arguments agrees with field-by-field validation.

For arguments parsed from JSON, ``fast_validator`` (pydantic-core) must accept exactly what
validating each field accepts, and return the very same values (types included); on anything it
refuses, field validation runs and explains. These properties hold it to that.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from typing import Any, Literal, Optional, TypedDict, Union

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_opdecide import DecisionError, decision
from pytest_opdecide._decision import _schema_kwargs, function_kwargs
from pytest_opdecide._options import Option
from pytest_opdecide._schema import (
    FieldSpec,
    ParseFailure,
    fast_validator,
    object_from_notation,
    spec_from_annotation,
)

from ._support import FixedRuntime
from .test_properties import JSON_VALUES, PROPERTY_SETTINGS, SCHEMAS

# What JSON makes beyond the usual: numbers past a float's range (1e400 parses as inf, a long
# integer as an int no float can hold), and the edges of int and float.
EXTREME_NUMBERS = st.sampled_from(
    [10**400, -(10**400), 2**63, 2**1023, 1e308, math.inf, -math.inf, 0, -0.0, 1.0, True, False]
)
ANY_JSON = st.one_of(JSON_VALUES, EXTREME_NUMBERS)


def as_json(value: Any) -> Any:
    """``value`` as a JSON reply brings it: exactly what ``json.loads`` makes."""
    return json.loads(json.dumps(value))


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, dict keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def by_fields(fields: tuple[FieldSpec, ...], args: Any, *, all_required: bool) -> Any:
    """The decision code's own field-by-field validation: what runs without the fast check
    (schema options need every field, function options their required ones)."""
    if not isinstance(args, dict):
        raise ParseFailure("bad_args", "not an object")  # refused before, by parse_once
    if all_required:
        return _schema_kwargs(Option("o", "schema", "", fields), args)
    return function_kwargs(Option("o", "function", "", fields), args, None, None)


def check_agrees(fields: tuple[FieldSpec, ...], args: Any, *, all_required: bool) -> None:
    check = fast_validator(fields, all_required=all_required)
    try:
        expected = by_fields(fields, args, all_required=all_required)
    except ParseFailure:
        expected = ParseFailure
    if check is None:
        return
    try:
        got = check(args)
    except Exception:
        got = ParseFailure
    if expected is ParseFailure or got is ParseFailure:
        assert got is expected, f"fast check {got!r}, field validation {expected!r}"
    else:
        assert same(got, expected), f"fast check {got!r}, field validation {expected!r}"


def perturbed(data: st.DataObject, value: Any) -> Any:
    """``value`` with one node somewhere inside replaced by any JSON value."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: perturbed(data, value[key])}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], perturbed(data, value[index]), *value[index + 1 :]]
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {k: v for k, v in value.items() if k != key}  # a field left out
    return data.draw(ANY_JSON)


@PROPERTY_SETTINGS
@given(schema=SCHEMAS, data=st.data())
def test_schema_options_agree_with_field_validation(schema: Any, data: st.DataObject) -> None:
    fields = object_from_notation(schema.notation).fields
    valid = as_json(data.draw(schema.values))
    check_agrees(fields, valid, all_required=True)
    check_agrees(fields, as_json(perturbed(data, valid)), all_required=True)
    check_agrees(fields, as_json(data.draw(ANY_JSON)), all_required=True)


class Colour(enum.Enum):
    RED = "red"


class Point(TypedDict):
    x: int


@dataclass
class Box:
    size: float


class Model(pydantic.BaseModel):
    name: str


ANNOTATIONS: list[Any] = [
    str,
    int,
    float,
    bool,
    list,
    dict,
    Any,
    None,
    list[int],
    list[list[str]],
    dict[str, float],
    Optional[str],  # noqa: UP045 - the spelling under test
    int | float,
    float | int,
    Union[bool, int, str],  # noqa: UP007 - the spelling under test
    Literal["fast", "slow"],
    Literal[1, 2],
    Literal["a"] | None,
    Colour,
    Point,
    Box,
    Model,
    list[Point],
]


@PROPERTY_SETTINGS
@given(
    kinds=st.lists(st.tuples(st.sampled_from(ANNOTATIONS), st.booleans()), max_size=4),
    data=st.data(),
)
def test_function_parameters_agree_with_field_validation(
    kinds: list[tuple[Any, bool]], data: st.DataObject
) -> None:
    fields = tuple(
        FieldSpec(f"p{i}", spec_from_annotation(tp), required=required)
        for i, (tp, required) in enumerate(kinds)
    )
    args = {
        f.name: data.draw(st.one_of(ANY_JSON, st.sampled_from(["fast", "red", {"x": 1}])))
        for f in fields
        if data.draw(st.booleans())
    }
    check_agrees(fields, as_json(args), all_required=False)
    check_agrees(fields, as_json(perturbed(data, args)), all_required=False)


GRID_VALUES: list[Any] = [
    *("", "fast", "red", "a", "1"),
    *(0, 1, 2, -1, 10**400, True, False),
    *(0.0, 1.0, 1.5, -0.0, 1e308, math.inf),
    None,
    *([], [1], [1.0], ["a"], [[1]], [["a"]], [{"x": 1}], [True]),
    *({}, {"x": 1}, {"x": 1.0}, {"x": True}, {"name": "a"}, {"size": 1}, {"a": 1.5}),
]


@pytest.mark.parametrize("annotation", ANNOTATIONS, ids=repr)
def test_every_type_against_a_grid_of_values(annotation: Any) -> None:
    fields = (FieldSpec("p", spec_from_annotation(annotation)),)
    for value in GRID_VALUES:
        check_agrees(fields, as_json({"p": value}), all_required=True)


def fields_of(*annotations: Any) -> tuple[FieldSpec, ...]:
    return tuple(FieldSpec(f"p{i}", spec_from_annotation(tp)) for i, tp in enumerate(annotations))


@pytest.mark.parametrize(
    "annotation",
    [Colour, Box, Model, Literal[1, 2], list[Box], Optional[Colour]],  # noqa: UP045
    ids=["enum", "dataclass", "pydantic", "int-literal", "list-of-dataclass", "optional-enum"],
)
def test_types_that_convert_or_compare_numbers_keep_to_field_validation(annotation: Any) -> None:
    assert fast_validator(fields_of(str, annotation), all_required=False) is None


@pytest.mark.parametrize(
    "annotation",
    [Any, Point, list[Point], dict[str, float], Literal["fast", "slow"] | None, int | float],
    ids=["any", "typeddict", "list-of-typeddict", "dict", "optional-literal", "union"],
)
def test_types_checked_fast(annotation: Any) -> None:
    assert fast_validator(fields_of(str, annotation), all_required=False) is not None


def test_the_check_is_compiled_once_per_fields_tuple() -> None:
    fields = fields_of(str, list[int])
    first = fast_validator(fields, all_required=True)
    assert first is not None
    assert fast_validator(fields, all_required=True) is first
    assert fast_validator(fields_of(str, list[int]), all_required=True) is not first


def test_only_the_named_fields_come_out_in_their_order() -> None:
    fields = fields_of(int, str)
    check = fast_validator(fields, all_required=True)
    assert check is not None
    out = check({"p1": "b", "extra": 1, "p0": 2})
    assert list(out.items()) == [("p0", 2), ("p1", "b")]


def test_an_integer_too_large_for_a_float_is_a_retryable_error_not_a_crash() -> None:
    def pay(amount: float) -> float:
        return amount

    huge = "9" * 400
    runtime = FixedRuntime(
        f'{{"call": "pay", "args": {{"amount": {huge}}}}}', '{"call": "pay", "args": {"amount": 2}}'
    )
    assert decision.make("Pay.", {"pay": pay}, runtime=runtime) == 2.0
    repick = runtime.requests[1].prompt
    assert "Field 'amount' must be float, got int (999" in repick
    assert "), too large for a float" in repick

    with pytest.raises(DecisionError, match="too large for a float"):
        decision.make(
            "Pay.",
            {"pay": pay},
            runtime=FixedRuntime(f'{{"call": "pay", "args": {{"amount": {huge}}}}}'),
            max_retries=0,
        )


def test_a_pick_given_as_a_dict_keeps_its_objects() -> None:
    # Not parsed from text: the values are the caller's own objects, and field validation
    # keeps them as they are (the fast check would turn a str subclass into a str).
    class Name(str):
        pass

    def greet(name: str) -> str:
        return name

    name = Name("Ada")
    got = decision.resolve_decision({"call": "greet", "args": {"name": name}}, {"greet": greet})
    assert got is name
