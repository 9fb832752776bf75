"""Real type checking (improvement 3): typing constructs, structured types, string annotations."""

import dataclasses
import enum
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict, Union

import pydantic
import pytest

from pytest_opdecide import DecisionError, Param, decision

from . import _future_types as future
from ._support import FixedRuntime, filled_call, pick


def resolve(fn: Any, **args: Any) -> Any:
    return decision.resolve_decision(pick("f", **args), {"f": fn}, max_retries=0)


def error_of(fn: Any, **args: Any) -> DecisionError:
    with pytest.raises(DecisionError) as info:
        resolve(fn, **args)
    return info.value


def identity(**kwargs: Any) -> Any:
    return kwargs


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(TypedDict):
    x: int
    y: int


class Partial(TypedDict, total=False):
    x: Required[int]
    label: str


class WithOptional(TypedDict):
    x: int
    label: NotRequired[str]


class User(pydantic.BaseModel):
    name: str
    age: int = 0


@dataclasses.dataclass
class Box:
    w: int
    h: float = 1.0


class TestOptionalAndUnions:
    def test_optional(self) -> None:
        def f(n: Optional[int]) -> Any:  # noqa: UP045 - the spelling under test
            return n

        assert decision.render_options({"f": f}) == (
            'f(n: int | None)\n    n\n    Call: {"call": "f", "args": {"n": <int>}}\n'
        )
        assert resolve(f, n=None) is None
        assert resolve(f, n=3) == 3
        error = error_of(f, n="3")
        assert (error.kind, error.message) == (
            "type_mismatch",
            "Field 'n' must be int | None, got str ('3')",
        )

    def test_pipe_none(self) -> None:
        def f(n: int | None = None) -> Any:
            return n

        assert resolve(f) is None
        assert resolve(f, n=None) is None
        assert resolve(f, n=2) == 2
        assert error_of(f, n=True).message == "Field 'n' must be int | None, got bool"

    def test_union(self) -> None:
        def f(v: Union[int, str]) -> Any:  # noqa: UP007 - the spelling under test
            return v

        assert resolve(f, v=1) == 1
        assert resolve(f, v="a") == "a"
        assert error_of(f, v=[1]).message == "Field 'v' must be int | str, got list"

    def test_union_of_float_and_str_converts_ints(self) -> None:
        def f(v: float | str) -> Any:
            return v

        result = resolve(f, v=2)
        assert result == 2.0
        assert type(result) is float

    def test_optional_list_reports_the_deep_failure(self) -> None:
        def f(v: list[int] | None) -> Any:
            return v

        assert error_of(f, v=[1, "x"]).message == "Field 'v[1]' must be int, got str ('x')"


class TestLiteralAndEnum:
    def test_literal_strings_are_rendered_and_validated_as_options(self) -> None:
        def f(mode: Literal["fast", "slow"]) -> Any:
            return mode

        assert decision.render_options({"f": f}) == (
            "f(mode: str)\n"
            '    mode (options: "fast", "slow")\n'
            '    Call: {"call": "f", "args": {"mode": "<str>"}}\n'
        )
        assert resolve(f, mode="slow") == "slow"
        error = error_of(f, mode="medium")
        assert (error.kind, error.message) == (
            "enum_violation",
            "Field 'mode' must be one of ['fast', 'slow'], got 'medium'",
        )

    def test_literal_ints_are_shown_as_the_json_the_validator_takes(self) -> None:
        def f(n: Literal[1, 2, 3]) -> Any:
            return n

        menu = decision.render_options({"f": f})
        assert "    n (options: 1, 2, 3)\n" in menu
        assert '"args": {"n": 1}' in menu  # an allowed value, not 0
        assert resolve(f, n=2) == 2
        assert error_of(f, n="2").kind == "type_mismatch"
        assert error_of(f, n=4).message == "Field 'n' must be one of [1, 2, 3], got 4"

    def test_literal_int_rejects_true(self) -> None:
        def f(n: Literal[1]) -> Any:
            return n

        assert error_of(f, n=True).kind == "type_mismatch"

    def test_literal_of_mixed_types(self) -> None:
        def f(v: Literal["a", 1]) -> Any:
            return v

        assert resolve(f, v="a") == "a"
        assert resolve(f, v=1) == 1
        assert error_of(f, v="1").kind == "enum_violation"

    def test_enum_is_rendered_by_value_and_passed_as_a_member(self) -> None:
        def f(color: Color) -> Any:
            return color

        assert decision.render_options({"f": f}) == (
            "f(color: str)\n"
            '    color (options: "red", "blue")\n'
            '    Call: {"call": "f", "args": {"color": "<str>"}}\n'
        )
        assert resolve(f, color="blue") is Color.BLUE
        error = error_of(f, color="green")
        assert error.message == "Field 'color' must be one of ['red', 'blue'], got 'green'"
        assert error_of(f, color="RED").kind == "enum_violation"

    def test_int_enum(self) -> None:
        def f(level: Level) -> Any:
            return level

        assert "    level (options: 1, 2)\n" in decision.render_options({"f": f})
        assert resolve(f, level=2) is Level.HIGH
        assert error_of(f, level=True).kind == "type_mismatch"
        assert error_of(f, level=3).kind == "enum_violation"

    def test_optional_literal_and_enum_still_render_their_options(self) -> None:
        def f(mode: Literal["a", "b"] | None = None, color: Color | None = None) -> Any:
            return mode

        text = decision.render_options({"f": f})
        assert '    mode (options: "a", "b")' in text
        assert '    color (options: "red", "blue")' in text
        assert error_of(f, mode="c").kind == "enum_violation"

    def test_literal_with_a_param_description(self) -> None:
        def f(mode: Annotated[Literal["x", "y"], Param("Mode.")]) -> Any:
            return mode

        assert '    mode: Mode. (options: "x", "y")\n' in decision.render_options({"f": f})

    def test_literal_in_schema_notation(self) -> None:
        options = {"o": ("D.", {"mode": Literal["a", "b"]})}
        assert '    mode (options: "a", "b")\n' in decision.render_options(options)
        assert decision.resolve_decision(pick("o", mode="b"), options) == {
            "decision": "o",
            "mode": "b",
        }


class TestContainers:
    def test_list_of_t(self) -> None:
        def f(ids: list[int]) -> Any:
            return ids

        assert decision.render_options({"f": f}) == (
            'f(ids: list)\n    ids\n    Call: {"call": "f", "args": {"ids": [<int>]}}\n'
        )
        assert resolve(f, ids=[1, 2]) == [1, 2]
        assert error_of(f, ids=[1, "2"]).message == "Field 'ids[1]' must be int, got str ('2')"
        assert error_of(f, ids="12").kind == "type_mismatch"

    def test_dict_of_str_to_t(self) -> None:
        def f(scores: dict[str, float]) -> Any:
            return scores

        assert decision.render_options({"f": f}) == (
            'f(scores: dict)\n    scores\n    Call: {"call": "f", "args": {"scores": {}}}\n'
        )
        assert resolve(f, scores={"a": 1, "b": 0.5}) == {"a": 1.0, "b": 0.5}
        assert (
            error_of(f, scores={"a": "x"}).message
            == "Field 'scores.a' must be float, got str ('x')"
        )
        assert error_of(f, scores=[1]).message == "Field 'scores' must be an object, got list"

    def test_list_of_typed_dicts(self) -> None:
        def f(points: list[Point]) -> Any:
            return points

        assert decision.render_options({"f": f}) == (
            "f(points: list)\n"
            "    points\n"
            '    Call: {"call": "f", "args": {"points": [{"x": <int>, "y": <int>}]}}\n'
        )
        assert (
            error_of(f, points=[{"x": 1}]).message
            == "Field 'points[0]' is missing nested field 'y'"
        )

    def test_list_and_dict_in_schema_notation(self) -> None:
        options = {"o": ("D.", {"ids": list[int], "scores": dict[str, int]})}
        with pytest.raises(DecisionError) as info:
            decision.parse_args(pick("o", ids=[1], scores={"a": "b"}), options, max_retries=0)
        assert info.value.message == "Field 'scores.a' must be int, got str ('b')"


class TestStructuredTypes:
    def test_typed_dict_is_validated_and_passed_as_a_dict(self) -> None:
        def f(point: Point) -> Any:
            return point

        assert decision.render_options({"f": f}) == (
            "f(point: Point)\n"
            "    point\n"
            '    Call: {"call": "f", "args": {"point": {"x": <int>, "y": <int>}}}\n'
        )
        assert resolve(f, point={"x": 1, "y": 2, "z": 3}) == {"x": 1, "y": 2}
        assert error_of(f, point={"x": 1}).message == "Field 'point' is missing nested field 'y'"
        assert error_of(f, point={"x": 1, "y": "2"}).message == (
            "Field 'point.y' must be int, got str ('2')"
        )

    def test_typed_dict_total_false_with_required(self) -> None:
        def f(item: Partial) -> Any:
            return item

        assert resolve(f, item={"x": 1}) == {"x": 1}
        assert error_of(f, item={}).message == "Field 'item' is missing nested field 'x'"
        assert error_of(f, item={"x": 1, "label": 5}).message == (
            "Field 'item.label' must be str, got int (5)"
        )

    def test_typed_dict_required_field_is_type_checked(self) -> None:
        def f(item: Partial) -> Any:
            return item

        assert '"item": {"x": <int>, "label": "<str>"}' in decision.render_options({"f": f})
        assert error_of(f, item={"x": "1"}).message == "Field 'item.x' must be int, got str ('1')"

    def test_typed_dict_not_required_field_is_type_checked(self) -> None:
        def f(item: WithOptional) -> Any:
            return item

        assert '"item": {"x": <int>, "label": "<str>"}' in decision.render_options({"f": f})
        assert resolve(f, item={"x": 1}) == {"x": 1}
        assert error_of(f, item={"x": 1, "label": 5}).message == (
            "Field 'item.label' must be str, got int (5)"
        )

    def test_pydantic_model_is_validated_and_passed_as_an_instance(self) -> None:
        def f(user: User) -> Any:
            return user

        assert decision.render_options({"f": f}) == (
            "f(user: User)\n"
            "    user\n"
            '    Call: {"call": "f", "args": {"user": {"name": "<str>", "age": <int>}}}\n'
        )
        result = resolve(f, user={"name": "ada"})
        assert result == User(name="ada", age=0)
        assert isinstance(result, User)
        error = error_of(f, user={"age": 3})
        assert (error.kind, error.message) == (
            "missing_required",
            "Field 'user' is missing nested field 'name'",
        )
        error = error_of(f, user={"name": "ada", "age": "old"})
        assert (error.kind, error.message) == (
            "type_mismatch",
            "Field 'user.age' must be int, got str ('old')",
        )
        assert error_of(f, user="ada").kind == "type_mismatch"

    def test_pydantic_error_paths_use_the_reference_format(self) -> None:
        class Tagged(pydantic.BaseModel):
            tags: list[int]

        def f(user: Tagged) -> Any:
            return user

        assert error_of(f, user={"tags": ["x"]}).message.startswith("Field 'user.tags[0]' ")

    def test_dataclass_is_validated_and_passed_as_an_instance(self) -> None:
        def f(box: Box) -> Any:
            return box

        assert decision.render_options({"f": f}) == (
            "f(box: Box)\n    box\n"
            '    Call: {"call": "f", "args": {"box": {"w": <int>, "h": <float>}}}\n'
        )
        assert resolve(f, box={"w": 2}) == Box(w=2, h=1.0)
        assert resolve(f, box={"w": 2, "h": 3}) == Box(w=2, h=3.0)
        assert error_of(f, box={"h": 1.0}).message == "Field 'box' is missing nested field 'w'"
        assert error_of(f, box={"w": "2"}).message == "Field 'box.w' must be int, got str ('2')"

    def test_annotated_plain_metadata_is_ignored(self) -> None:
        def f(n: Annotated[int, "just a note"]) -> Any:
            return n

        assert decision.render_options({"f": f}).startswith("f(n: int)\n")
        assert error_of(f, n="x").kind == "type_mismatch"

    def test_a_set_is_rendered_by_name_and_validated_into_a_set(self) -> None:
        def f(tags: set[int], anything: Any) -> Any:
            return (tags, anything)

        assert decision.render_options({"f": f}) == (
            "f(tags: set, anything: any)\n"
            "    tags\n"
            "    anything\n"
            '    Call: {"call": "f", "args": {"tags": [<int>], "anything": null}}\n'
        )
        assert resolve(f, tags=[1, 1], anything={"a": [None]}) == ({1}, {"a": [None]})
        assert error_of(f, tags=["1"], anything=None).message == (
            "Field 'tags[0]' must be int, got str ('1')"
        )

    def test_unannotated_parameter_is_accepted_as_is(self) -> None:
        def f(x):  # type: ignore[no-untyped-def]
            return x

        assert resolve(f, x=[1, {"a": None}]) == [1, {"a": None}]


class TestStringAnnotations:
    """The same checks on a module with ``from __future__ import annotations``."""

    def test_scalars_render_and_validate(self) -> None:
        assert decision.render_options({"f": future.scalars}) == (
            "f(count: int, ratio: float, name: str, flag: bool)\n"
            "    Scalars, annotated as strings.\n"
            "    count\n"
            "    ratio\n"
            "    name\n"
            "    flag\n"
            '    Call: {"call": "f", "args": {"count": <int>, "ratio": <float>, "name": "<str>",'
            ' "flag": <bool>}}\n'
        )
        assert resolve(future.scalars, count=1, ratio=2, name="n", flag=True) == (1, 2.0, "n", True)
        assert error_of(future.scalars, count="1", ratio=2, name="n", flag=True).message == (
            "Field 'count' must be int, got str ('1')"
        )
        assert error_of(future.scalars, count=1, ratio=2, name="n", flag=1).message == (
            "Field 'flag' must be bool, got int (1)"
        )

    def test_typing_constructs(self) -> None:
        assert decision.render_options({"f": future.typed}) == (
            "f(maybe: int | None, either: int | str, mode: str, color: str, ids: list,"
            " scores: dict)\n"
            "    Typing constructs, annotated as strings.\n"
            "    maybe\n"
            "    either\n"
            '    mode (options: "fast", "slow")\n'
            '    color (options: "red", "blue")\n'
            "    ids\n"
            "    scores\n"
            '    Call: {"call": "f", "args": {"maybe": <int>, "either": <int>, "mode": "<str>",'
            ' "color": "<str>", "ids": [<int>], "scores": {}}}\n'
        )
        good = {
            "maybe": None,
            "either": "x",
            "mode": "fast",
            "color": "red",
            "ids": [1],
            "scores": {"a": 1},
        }
        assert resolve(future.typed, **good) == {
            **good,
            "color": future.Color.RED,
            "scores": {"a": 1.0},
        }
        for field, bad, kind in [
            ("maybe", "1", "type_mismatch"),
            ("either", [], "type_mismatch"),
            ("mode", "medium", "enum_violation"),
            ("color", "green", "enum_violation"),
            ("ids", ["1"], "type_mismatch"),
            ("scores", {"a": "1"}, "type_mismatch"),
        ]:
            assert error_of(future.typed, **{**good, field: bad}).kind == kind, field

    def test_structured_types(self) -> None:
        assert decision.render_options({"f": future.structured}) == (
            "f(point: Point, user: User, box: Box)\n"
            "    Structured types, annotated as strings.\n"
            "    point\n"
            "    user\n"
            "    box\n"
            '    Call: {"call": "f", "args": {"point": {"x": <int>, "y": <int>}, "user": '
            '{"name": "<str>", "age": <int>}, "box": {"w": <int>, "h": <float>}}}\n'
        )
        point, user, box = resolve(
            future.structured, point={"x": 1, "y": 2}, user={"name": "a"}, box={"w": 1}
        )
        assert point == {"x": 1, "y": 2}
        assert isinstance(user, future.User)
        assert box == future.Box(w=1)
        assert error_of(
            future.structured, point={"x": 1, "y": "2"}, user={"name": "a"}, box={"w": 1}
        ).message == ("Field 'point.y' must be int, got str ('2')")

    def test_typed_dict_not_required_key_may_be_omitted(self) -> None:
        assert resolve(future.labelled, item={"x": 1}) == {"x": 1}

    def test_typed_dict_required_key_in_a_total_false_dict_is_required(self) -> None:
        assert error_of(future.total_false, item={}).message == (
            "Field 'item' is missing nested field 'x'"
        )

    def test_hidden_and_described_parameters(self) -> None:
        assert decision.render_options({"f": future.hidden}) == (
            "f(n: int, team: str)\n"
            "    Hidden and described parameters, annotated as strings.\n"
            "    n\n"
            '    team: Team to page (options: "ops", "billing")\n'
            '    Call: {"call": "f", "args": {"n": <int>, "team": "<str>"}}\n'
        )
        rt = FixedRuntime(pick("f", n=1, team="billing", order_id="model's", runtime="x"))
        result = decision.make(
            "Pick.", {"f": future.hidden}, runtime=rt, context={"order_id": "A1"}
        )
        assert result == (1, rt, "A1", "billing")

    def test_unresolvable_annotation_is_refused_when_the_menu_is_built(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.render_options({"f": future.unresolvable})
        assert str(info.value) == (
            "Option 'f', parameter 'thing': NoSuchType cannot be checked (the annotation "
            "'NoSuchType' names nothing that can be resolved here). Annotate the parameter with "
            "a type pydantic validates from JSON (str, int, date, Decimal, a TypedDict, a "
            "pydantic model...), with Any to take any value unchecked, or fill it from "
            "context=: Annotated[NoSuchType, FromContext()]"
        )

    def test_one_unresolvable_annotation_is_named_among_resolved_ones(self) -> None:
        with pytest.raises(TypeError, match=r"^Option 'f', parameter 'thing': NoSuchType "):
            decision.render_options({"f": future.partly})


def test_schema_json_round_trip_of_every_placeholder() -> None:
    """Every rendered ``Call:`` line is valid JSON that picks its option, once its slots
    (``<int>``) hold values."""
    options = {
        "typed": future.typed,
        "structured": future.structured,
        "plan": ("D.", {"steps": [{"a": str}], "m": {"type": int, "options": [0, 1]}}),
    }
    text = decision.render_options(options)
    calls = [line.strip()[len("Call: ") :] for line in text.splitlines() if "Call: " in line]
    assert len(calls) == 3
    assert '"m": 0' in calls[2]  # an allowed value is shown as itself, never as a slot
    for call in calls:
        action = filled_call(call)
        assert action["call"] in options
