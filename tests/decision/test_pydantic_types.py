"""Every parameter type through pydantic, in strict mode for JSON input.

An ISO string becomes a ``date``, a ``UUID`` or a ``Decimal`` as JSON allows, an array a
``set`` or a ``tuple``, but ``"42"`` is not an ``int``. Each type is rendered, validated,
converted and refused here, with the messages the model reads.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import re
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from pytest_opdecide import DecisionError, FromContext, decision
from pytest_opdecide._nextstep._options import normalize_options

from .test_properties import JSON_VALUES, PROPERTY_SETTINGS


class Cabin(enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


class Passenger(TypedDict):
    name: str
    age: int


@dataclasses.dataclass
class Leg:
    origin: str
    when: datetime.date
    stops: int = 0


class Traveller(pydantic.BaseModel):
    name: str
    born: datetime.date
    seat: Literal["aisle", "window"] = "aisle"


def book(
    day: datetime.date,
    at: datetime.datetime,
    boarding: datetime.time,
    layover: datetime.timedelta,
    fare: decimal.Decimal,
    ref: uuid.UUID,
    seats: set[str],
    frozen: frozenset[int],
    pair: tuple[int, str],
    many: tuple[int, ...],
    where: pathlib.Path,
    count: Annotated[int, Field(ge=1, le=9)],
    cabin: Cabin,
    meal: Literal["veg", "fish"],
    passenger: Passenger,
    leg: Leg,
    traveller: Traveller,
    either: int | datetime.date,
    maybe: datetime.date | None,
    legs: list[Leg],
    by_day: dict[str, list[datetime.date]],
) -> dict[str, Any]:
    """Book a trip."""
    return dict(locals())


GOOD: dict[str, Any] = {
    "day": "2024-05-01",
    "at": "2024-05-01T10:30:00",
    "boarding": "09:45:00",
    "layover": "PT1H30M",
    "fare": "129.90",
    "ref": "12345678-1234-5678-1234-567812345678",
    "seats": ["12A", "12B", "12A"],
    "frozen": [3, 1],
    "pair": [1, "x"],
    "many": [1, 2, 3],
    "where": "/srv/tickets/a.pdf",
    "count": 2,
    "cabin": "business",
    "meal": "veg",
    "passenger": {"name": "Ada", "age": 36, "extra": "dropped"},
    "leg": {"origin": "OSL", "when": "2024-05-02"},
    "traveller": {"name": "Ada", "born": "1815-12-10"},
    "either": "2024-05-03",
    "maybe": None,
    "legs": [{"origin": "OSL", "when": "2024-05-02", "stops": 1}],
    "by_day": {"mon": ["2024-05-06"]},
}

CONVERTED: dict[str, Any] = {
    "day": datetime.date(2024, 5, 1),
    "at": datetime.datetime(2024, 5, 1, 10, 30),
    "boarding": datetime.time(9, 45),
    "layover": datetime.timedelta(hours=1, minutes=30),
    "fare": decimal.Decimal("129.90"),
    "ref": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "seats": {"12A", "12B"},
    "frozen": frozenset({1, 3}),
    "pair": (1, "x"),
    "many": (1, 2, 3),
    "where": pathlib.Path("/srv/tickets/a.pdf"),
    "count": 2,
    "cabin": Cabin.BUSINESS,
    "meal": "veg",
    "passenger": {"name": "Ada", "age": 36},
    "leg": Leg("OSL", datetime.date(2024, 5, 2)),
    "traveller": Traveller(name="Ada", born=datetime.date(1815, 12, 10)),
    "either": datetime.date(2024, 5, 3),
    "maybe": None,
    "legs": [Leg("OSL", datetime.date(2024, 5, 2), 1)],
    "by_day": {"mon": [datetime.date(2024, 5, 6)]},
}

OPTIONS = {"book": book}


def reply(**args: Any) -> str:
    return json.dumps({"call": "book", "args": {**GOOD, **args}})


def failure(**args: Any) -> tuple[str, str]:
    with pytest.raises(DecisionError) as caught:
        decision.resolve_decision(reply(**args), OPTIONS, max_retries=0)
    return caught.value.kind, caught.value.message


def test_the_menu_shows_each_type_by_name_and_a_placeholder_with_its_format() -> None:
    text = decision.render_options(OPTIONS)
    assert text.splitlines()[0] == (
        "book(day: date, at: datetime, boarding: time, layover: timedelta, fare: Decimal, "
        "ref: UUID, seats: set, frozen: frozenset, pair: tuple, many: tuple, where: Path, "
        "count: int, cabin: str, meal: str, passenger: Passenger, leg: Leg, traveller: "
        "Traveller, either: int | date, maybe: date | None, legs: list, by_day: dict)"
    )
    # Numbers and booleans are slots, written bare (<int>): quoted here to read as JSON.
    line = re.sub(r"<(int|float|bool)>", r'"<\1>"', text.splitlines()[-1].strip())
    call = json.loads(line[len("Call: ") :])
    assert call == {
        "call": "book",
        "args": {
            "day": "<date YYYY-MM-DD>",
            "at": "<datetime YYYY-MM-DDTHH:MM:SS>",
            "boarding": "<time HH:MM:SS>",
            "layover": "<duration ISO 8601, e.g. P1DT2H30M>",
            "fare": "<decimal>",
            "ref": "<uuid>",
            "seats": ["<str>"],
            "frozen": ["<int>"],
            "pair": ["<int>", "<str>"],
            "many": ["<int>"],
            "where": "<path>",
            "count": "<int>",
            "cabin": "<str>",
            "meal": "<str>",
            "passenger": {"name": "<str>", "age": "<int>"},
            "leg": {"origin": "<str>", "when": "<date YYYY-MM-DD>", "stops": "<int>"},
            "traveller": {"name": "<str>", "born": "<date YYYY-MM-DD>", "seat": "<str>"},
            "either": "<int>",
            "maybe": "<date YYYY-MM-DD>",
            "legs": [{"origin": "<str>", "when": "<date YYYY-MM-DD>", "stops": "<int>"}],
            "by_day": {},
        },
    }
    assert '    cabin (options: "economy", "business")\n' in text
    assert '    meal (options: "veg", "fish")\n' in text


def test_every_type_is_converted_for_the_function() -> None:
    assert decision.resolve_decision(reply(), OPTIONS) == CONVERTED


@pytest.mark.parametrize(
    ("field", "value", "kind", "message"),
    [
        ("day", 42, "type_mismatch", "Field 'day' must be date, got int (42)"),
        (
            "day",
            "May 1st",
            "type_mismatch",
            "Field 'day' must be date, got str ('May 1st'): Input should be a valid date in the "
            "format YYYY-MM-DD, input is too short",
        ),
        ("day", 1714521600, "type_mismatch", "Field 'day' must be date, got int (1714521600)"),
        (
            "at",
            "2024-05-01",
            "type_mismatch",
            "Field 'at' must be datetime, got str ('2024-05-01'): Input should be a valid "
            "datetime, invalid datetime separator, expected `T`, `t`, `_` or space",
        ),
        ("boarding", 3600, "type_mismatch", "Field 'boarding' must be time, got int (3600)"),
        ("layover", [1], "type_mismatch", "Field 'layover' must be timedelta, got list"),
        (
            "fare",
            "twelve",
            "type_mismatch",
            "Field 'fare' must be Decimal, got str ('twelve'): Input should be a valid decimal",
        ),
        ("ref", 7, "type_mismatch", "Field 'ref' must be UUID, got int (7)"),
        ("seats", "12A", "type_mismatch", "Field 'seats' must be a list, got str"),
        ("seats", [1], "type_mismatch", "Field 'seats[0]' must be str, got int (1)"),
        ("pair", [1, 2], "type_mismatch", "Field 'pair[1]' must be str, got int (2)"),
        ("many", [1, "2"], "type_mismatch", "Field 'many[1]' must be int, got str ('2')"),
        ("where", 5, "type_mismatch", "Field 'where' must be Path, got int (5)"),
        ("count", "2", "type_mismatch", "Field 'count' must be int, got str ('2')"),
        ("count", 0, "invalid_value", "Field 'count' must be greater than or equal to 1, got 0"),
        ("count", 10, "invalid_value", "Field 'count' must be less than or equal to 9, got 10"),
        (
            "cabin",
            "first",
            "enum_violation",
            "Field 'cabin' must be one of ['economy', 'business'], got 'first'",
        ),
        ("cabin", 1, "type_mismatch", "Field 'cabin' must be str, got int (1)"),
        (
            "meal",
            "beef",
            "enum_violation",
            "Field 'meal' must be one of ['veg', 'fish'], got 'beef'",
        ),
        (
            "passenger",
            {"name": "Ada"},
            "missing_required",
            "Field 'passenger' is missing nested field 'age'",
        ),
        (
            "passenger",
            {"name": "Ada", "age": "36"},
            "type_mismatch",
            "Field 'passenger.age' must be int, got str ('36')",
        ),
        (
            "leg",
            {"origin": "OSL"},
            "missing_required",
            "Field 'leg' is missing nested field 'when'",
        ),
        (
            "leg",
            {"origin": "OSL", "when": 5},
            "type_mismatch",
            "Field 'leg.when' must be date, got int (5)",
        ),
        ("leg", "OSL", "type_mismatch", "Field 'leg' must be an object, got str"),
        (
            "traveller",
            {"name": "Ada", "born": "1815-12-10", "seat": "floor"},
            "enum_violation",
            "Field 'traveller.seat' must be one of ['aisle', 'window'], got 'floor'",
        ),
        ("either", [1], "type_mismatch", "Field 'either' must be int | date, got list"),
        # Text for an int | date: the date's problem is the one worth reading.
        (
            "either",
            "soon",
            "type_mismatch",
            "Field 'either' must be date, got str ('soon'): Input should be a valid date in "
            "the format YYYY-MM-DD, input is too short",
        ),
        (
            "maybe",
            "soon",
            "type_mismatch",
            "Field 'maybe' must be date | None, got str ('soon'): Input should be a valid date "
            "in the format YYYY-MM-DD, input is too short",
        ),
        (
            "legs",
            [{"origin": "OSL", "when": "2024-05-02", "stops": "1"}],
            "type_mismatch",
            "Field 'legs[0].stops' must be int, got str ('1')",
        ),
        (
            "by_day",
            {"mon": ["monday"]},
            "type_mismatch",
            "Field 'by_day.mon[0]' must be date, got str ('monday'): Input should be a valid "
            "date in the format YYYY-MM-DD, input is too short",
        ),
    ],
)
def test_each_type_refuses_what_json_strictness_refuses(
    field: str, value: Any, kind: str, message: str
) -> None:
    assert failure(**{field: value}) == (kind, message)


def test_missing_arguments_are_listed_in_the_reference_words() -> None:
    args = {k: v for k, v in GOOD.items() if k not in ("day", "fare")}
    with pytest.raises(DecisionError) as caught:
        decision.resolve_decision(
            json.dumps({"call": "book", "args": args}), OPTIONS, max_retries=0
        )
    assert (caught.value.kind, caught.value.message) == (
        "missing_required",
        "Call 'book' is missing required arguments: ['day', 'fare']",
    )


class TestStrictForJsonInput:
    """Numbers and strings never cross over; JSON's own forms of other types are taken."""

    @pytest.mark.parametrize(
        ("annotation", "sent", "kind"),
        [
            (int, "42", "type_mismatch"),
            (int, 42.0, "type_mismatch"),
            (int, True, "type_mismatch"),
            (float, "4.2", "type_mismatch"),
            (str, 42, "type_mismatch"),
            (bool, "true", "type_mismatch"),
            (bool, 1, "type_mismatch"),
            (datetime.date, 1714521600, "type_mismatch"),
            (datetime.date, "2024-05-01T00:00:00", "type_mismatch"),
            (datetime.time, 3600, "type_mismatch"),
            (uuid.UUID, 1234, "type_mismatch"),
            (pathlib.Path, 5, "type_mismatch"),
            (set[int], "1,2", "type_mismatch"),
            (tuple[int, int], [1, 2, 3], "invalid_value"),
        ],
    )
    def test_refused(self, annotation: Any, sent: Any, kind: str) -> None:
        def f(x: Any) -> Any:
            return x

        f.__annotations__ = {"x": annotation}
        with pytest.raises(DecisionError) as caught:
            decision.resolve_decision(
                json.dumps({"call": "f", "args": {"x": sent}}), {"f": f}, max_retries=0
            )
        assert caught.value.kind == kind

    @pytest.mark.parametrize(
        ("annotation", "sent", "received"),
        [
            (float, 4, 4.0),
            (datetime.date, "2024-05-01", datetime.date(2024, 5, 1)),
            (datetime.timedelta, "P1D", datetime.timedelta(days=1)),
            (decimal.Decimal, "1.10", decimal.Decimal("1.10")),
            (decimal.Decimal, 2, decimal.Decimal(2)),
            (
                uuid.UUID,
                "12345678123456781234567812345678",
                uuid.UUID(int=0x12345678123456781234567812345678),
            ),
            (frozenset[str], ["a", "a"], frozenset({"a"})),
            (tuple[str, ...], [], ()),
            (bytes, "abc", b"abc"),
        ],
    )
    def test_taken_and_converted(self, annotation: Any, sent: Any, received: Any) -> None:
        def f(x: Any) -> Any:
            return x

        f.__annotations__ = {"x": annotation}
        result = decision.resolve_decision(json.dumps({"call": "f", "args": {"x": sent}}), {"f": f})
        assert result == received
        assert type(result) is type(received)


class TestPythonObjectsInADictReply:
    """A pick given as a dict (not text) may hold the Python objects JSON cannot carry."""

    def test_objects_of_the_right_type_are_taken(self) -> None:
        def f(day: datetime.date, seats: set[int]) -> Any:
            return (day, seats)

        pick = {"call": "f", "args": {"day": datetime.date(2024, 5, 1), "seats": {1, 2}}}
        assert decision.resolve_decision(pick, {"f": f}) == (datetime.date(2024, 5, 1), {1, 2})

    def test_their_json_forms_too_but_never_a_number_as_text(self) -> None:
        def f(day: datetime.date, n: int) -> Any:
            return (day, n)

        assert decision.resolve_decision(
            {"call": "f", "args": {"day": "2024-05-01", "n": 1}}, {"f": f}
        ) == (datetime.date(2024, 5, 1), 1)
        with pytest.raises(DecisionError, match=r"Field 'n' must be int, got str \('1'\)"):
            decision.resolve_decision(
                {"call": "f", "args": {"day": "2024-05-01", "n": "1"}}, {"f": f}, max_retries=0
            )


class TestRefusedWhenTheMenuIsBuilt:
    def test_a_class_pydantic_cannot_validate(self) -> None:
        def f(x: Widget) -> None:
            pass

        with pytest.raises(TypeError) as info:
            decision.render_options({"f": f})
        assert str(info.value) == (
            "Option 'f', parameter 'x': Widget cannot be checked (Unable to generate "
            "pydantic-core schema for <class 'decision.test_pydantic_types.Widget'>). Annotate "
            "the parameter with a type pydantic validates from JSON (str, int, date, Decimal, a "
            "TypedDict, a pydantic model...), with Any to take any value unchecked, or fill it "
            "from context=: Annotated[Widget, FromContext()]"
        )

    def test_a_type_no_json_value_can_fill(self) -> None:
        def f(x: Callable[[int], int]) -> None:
            pass

        with pytest.raises(TypeError) as info:
            decision.make("?", {"f": f}, runtime=object())
        assert str(info.value) == (
            "Option 'f', parameter 'x': Callable cannot be checked (Cannot generate a "
            "JsonSchema for core_schema.CallableSchema). Annotate the parameter with a type "
            "pydantic validates from JSON (str, int, date, Decimal, a TypedDict, a pydantic "
            "model...), with Any to take any value unchecked, or fill it from context=: "
            "Annotated[Callable, FromContext()]"
        )

    def test_inside_a_schema(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.render_options({"o": ("D.", {"w": Widget})})
        assert str(info.value) == (
            "Schema field 'w' has the type Widget, which cannot be checked (Unable to generate "
            "pydantic-core schema for <class 'decision.test_pydantic_types.Widget'>): use a "
            "type pydantic validates from JSON (str, int, date, Decimal, a TypedDict, a pydantic "
            "model...), or Any to take any value unchecked"
        )

    def test_the_fixes_it_names_work(self) -> None:
        def any_value(x: Any) -> Any:
            return x

        def from_context(x: Annotated[Widget, FromContext()]) -> Any:
            return x

        widget = Widget()
        assert decision.resolve_decision('{"call": "f", "args": {"x": [1]}}', {"f": any_value}) == [
            1
        ]
        assert (
            decision.resolve_decision('{"call": "f"}', {"f": from_context}, context={"x": widget})
            is widget
        )

    def test_hidden_parameters_are_never_checked(self) -> None:
        def f(runtime: Widget, w: Annotated[Widget, FromContext()]) -> str:
            return "ran"

        assert decision.resolve_decision('{"call": "f"}', {"f": f}, context={"w": 1}) == "ran"


class Widget:
    """A class pydantic knows nothing about."""


class TestCopiedPlaceholders:
    def test_a_copied_str_placeholder_is_refused_with_its_own_message(self) -> None:
        def greet(name: str) -> str:
            return name

        with pytest.raises(DecisionError) as caught:
            decision.resolve_decision(
                '{"call": "greet", "args": {"name": "<str>"}}', {"greet": greet}, max_retries=0
            )
        assert (caught.value.kind, caught.value.message) == (
            "invalid_value",
            "Field 'name' is \"<str>\", the placeholder copied from the Call: example; send a "
            "real value instead",
        )

    def test_a_copied_format_placeholder_is_named_before_the_format_problem(self) -> None:
        assert failure(day="<date YYYY-MM-DD>") == (
            "invalid_value",
            "Field 'day' is \"<date YYYY-MM-DD>\", the placeholder copied from the Call: "
            "example; send a real value instead",
        )

    def test_deep_in_a_schema_and_escaped_in_json(self) -> None:
        options = {"plan": ("Plan.", {"steps": [{"action": str}]})}
        reply = '{"call": "plan", "args": {"steps": [{"action": "go"}, {"action": "\\u003cstr>"}]}}'
        with pytest.raises(DecisionError) as caught:
            decision.resolve_decision(reply, options, max_retries=0)
        assert caught.value.message.startswith("Field 'steps[1].action' is \"<str>\", the ")

    def test_the_model_re_picks(self) -> None:
        from fake_runtimes import ScriptedRuntime

        def greet(name: str) -> str:
            return f"hello {name}"

        runtime = ScriptedRuntime(
            '{"call": "greet", "args": {"name": "<str>"}}',
            '{"call": "greet", "args": {"name": "ada"}}',
        )
        assert decision.make("Greet.", {"greet": greet}, runtime=runtime) == "hello ada"
        assert "Problem: Field 'name' is \"<str>\", the placeholder" in runtime.calls[1].prompt

    def test_an_allowed_value_that_looks_like_one_is_taken(self) -> None:
        def f(tag: Literal["<str>", "other"]) -> str:
            return tag

        assert decision.resolve_decision('{"call": "f", "args": {"tag": "<str>"}}', {"f": f}) == (
            "<str>"
        )

    def test_other_angle_brackets_are_real_values(self) -> None:
        def f(html: str) -> str:
            return html

        assert decision.resolve_decision('{"call": "f", "args": {"html": "<b>"}}', {"f": f}) == (
            "<b>"
        )


class TestEachOptionHasOneValidator:
    def test_built_once_and_shared_by_every_menu_offering_the_function(self) -> None:
        first = normalize_options({"book": book}).by_name["book"].validator
        again = normalize_options([book, "wait"]).by_name["book"].validator
        assert first is not None
        assert first is again

    def test_its_arguments_have_a_json_schema(self) -> None:
        validator = normalize_options({"book": book}).by_name["book"].validator
        assert validator is not None
        schema = validator.json_schema()
        assert schema["type"] == "object"
        assert schema["required"][:3] == ["day", "at", "boarding"]
        assert schema["properties"]["day"] == {"format": "date", "type": "string"}
        assert schema["properties"]["cabin"] == {"type": "string", "enum": ["economy", "business"]}

    def test_schema_options_too(self) -> None:
        options = {"plan": ("Plan.", {"steps": [{"action": str}], "why": str})}
        validator = normalize_options(options).by_name["plan"].validator
        assert validator is not None
        assert validator.json_schema() == {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"action": {"type": "string"}},
                        "required": ["action"],
                    },
                },
                "why": {"type": "string"},
            },
            "required": ["steps", "why"],
        }


NATIVE = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list_int": list[int],
    "dict_float": dict[str, float],
    "optional": int | None,
    "union": int | str,
    "literal": Literal["a", 1, True],
    "enum": Cabin,
    "typed": Passenger,
    "constrained": Annotated[int, Field(ge=0)],
    "model": pydantic.create_model("Flat", a=(int, ...), b=(str, "x")),
}


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_types_validated_as_parsed_are_exactly_those_json_mode_agrees_on(name: str) -> None:
    def f(x: Any) -> Any:
        return x

    f.__annotations__ = {"x": NATIVE[name]}
    validator = normalize_options({"f": f}).by_name["f"].validator
    assert validator is not None
    assert validator.native


@given(data=st.data())
@PROPERTY_SETTINGS
def test_validating_as_parsed_gives_what_json_mode_gives(data: st.DataObject) -> None:
    """For the types validated without the round trip through JSON text, pydantic's Python mode
    accepts exactly what its JSON mode accepts, and returns the same values."""
    name = data.draw(st.sampled_from(sorted(NATIVE)))

    def f(x: Any) -> Any:
        return x

    f.__annotations__ = {"x": NATIVE[name]}
    validator = normalize_options({"f": f}).by_name["f"].validator
    assert validator is not None
    value = data.draw(JSON_VALUES)
    args = {"x": value}
    as_parsed: Any
    through_json: Any
    try:
        as_parsed = validator._python(args, strict=True)
    except pydantic.ValidationError as exc:
        as_parsed = ("refused", [e["type"] for e in exc.errors()])
    try:
        through_json = validator._json(json.dumps(args), strict=True)
    except pydantic.ValidationError as exc:
        through_json = ("refused", [e["type"] for e in exc.errors()])
    assert repr(as_parsed) == repr(through_json)


@pytest.mark.parametrize(
    "annotation",
    [datetime.date, decimal.Decimal, uuid.UUID, pathlib.Path, set[int], tuple[int], Leg],
)
def test_types_whose_python_form_differs_go_through_json_text(annotation: Any) -> None:
    def f(x: Any) -> Any:
        return x

    f.__annotations__ = {"x": annotation}
    validator = normalize_options({"f": f}).by_name["f"].validator
    assert validator is not None
    assert not validator.native


class Address(pydantic.BaseModel):
    city: str


class Customer(pydantic.BaseModel):
    name: str
    address: Address


def test_model_definitions_are_gathered_at_the_root_of_the_arguments_schema() -> None:
    def f(customer: Customer, others: list[Customer]) -> None:
        pass

    validator = normalize_options({"f": f}).by_name["f"].validator
    assert validator is not None
    schema = validator.json_schema()
    assert list(schema["$defs"]) == ["Address"]
    address = {"$ref": "#/$defs/Address"}
    assert schema["properties"]["customer"]["properties"]["address"] == address
    assert schema["properties"]["others"]["items"]["properties"]["address"] == address
    assert '"$defs":' not in json.dumps(schema["properties"])
