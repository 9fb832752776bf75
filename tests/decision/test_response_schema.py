"""The menu as a JSON schema (structured decisions): its shape, the subset it keeps to, and that
every decision call carries it, built once per menu."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import re
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from pydantic import Field

from fake_runtimes import ScriptedRuntime, pick
from pytest_opdecide import FromContext, Param, Runtime, agent, decision
from pytest_opdecide._nextstep._options import normalize_options
from pytest_opdecide._nextstep._response_schema import (
    ANY_TYPES,
    MAX_TEXT_LENGTH,
    NOT_A_PLACEHOLDER,
    portable_schema,
    text_pattern,
)

ANY = {"type": list(ANY_TYPES)}
TEXT = {"type": "string", "maxLength": MAX_TEXT_LENGTH, "pattern": text_pattern()}
"""A free text field: one line of at most MAX_TEXT_LENGTH characters that cannot start like a
placeholder of the menu."""


def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"


CANONICAL = {
    "greet": greet,
    "done": ("CONVERSATION_OVER", "Pick when the chat is over."),
    "emit_plan": (
        "Return a structured plan.",
        {"steps": [{"action": str, "target": str}], "rationale": str},
    ),
}


def branch(name: str, args: dict[str, Any] | None = None, *, required: bool = True) -> Any:
    properties: dict[str, Any] = {"call": {"type": "string", "enum": [name]}}
    if args is not None:
        properties["args"] = args
    return {
        "type": "object",
        "properties": properties,
        "required": ["call", "args"] if args is not None and required else ["call"],
        "additionalProperties": False,
    }


def closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def args_of(options: Any, name: str) -> Any:
    schema = decision.response_schema(options)
    branches = schema.get("anyOf", [schema])
    for found in branches:
        if found["properties"]["call"]["enum"] == [name]:
            return found["properties"].get("args")
    raise AssertionError(f"no branch for {name}")


def test_the_canonical_menu() -> None:
    assert decision.response_schema(CANONICAL) == {
        "anyOf": [
            branch("greet", closed({"name": TEXT}, ["name"])),
            branch("done"),
            branch(
                "emit_plan",
                closed(
                    {
                        "steps": {
                            "type": "array",
                            "items": closed(
                                {"action": TEXT, "target": TEXT},
                                ["action", "target"],
                            ),
                        },
                        "rationale": TEXT,
                    },
                    ["steps", "rationale"],
                ),
            ),
        ]
    }


def test_a_menu_of_one_option_is_its_branch() -> None:
    assert decision.response_schema({"done": "DONE"}) == branch("done")
    assert decision.response_schema([greet]) == branch("greet", closed({"name": TEXT}, ["name"]))


def lookup(order: str, limit: int = 5, *, verbose: bool = False) -> str:
    return order


def optional_only(limit: int = 5) -> int:
    return limit


def hidden_only(
    ticket: Annotated[str, FromContext()], runtime: Runtime | None = None
) -> str:  # pragma: no cover - never called
    return ticket


def test_required_as_the_option_requires() -> None:
    options = {
        "lookup": lookup,
        "optional_only": optional_only,
        "hidden_only": hidden_only,
        "plan": ("Plan.", {"goal": str}),
        "stop": ("STOP", "Stop."),
    }
    schema = decision.response_schema(options)
    assert schema["anyOf"] == [
        branch(
            "lookup",
            closed(
                {
                    "order": TEXT,
                    "limit": {"type": "integer"},
                    "verbose": {"type": "boolean"},
                },
                ["order"],
            ),
        ),
        # Every argument optional: "args" may be left out, as a pick without args is valid.
        branch("optional_only", closed({"limit": {"type": "integer"}}, []), required=False),
        # Context and runtime parameters are never the model's to fill.
        branch("hidden_only"),
        branch("plan", closed({"goal": TEXT}, ["goal"])),
        branch("stop"),
    ]


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


class Loose(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    name: str


class Node(pydantic.BaseModel):
    name: str
    children: list[Node] = []


def typed(
    day: datetime.date,
    at: datetime.datetime,
    boarding: datetime.time,
    layover: datetime.timedelta,
    fare: decimal.Decimal,
    ref: uuid.UUID,
    v4: pydantic.UUID4,
    where: pathlib.Path,
    seats: set[str],
    pair: tuple[int, str],
    count: Annotated[int, Field(ge=1, le=9)],
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}$", min_length=3, max_length=3)],
    kind: Literal["bug", "question"],
    fixed: Literal["only"],
    cabin: Cabin,
    passenger: Passenger,
    leg: Leg,
    loose: Loose,
    tree: Node,
    anything: Any,
    untyped,
    maybe: datetime.date | None = None,
    either: int | str = 0,
) -> None:
    """Every kind of field."""


def test_field_types_in_the_portable_subset() -> None:
    args = args_of({"typed": typed, "done": "DONE"}, "typed")
    properties = args["properties"]
    assert properties["day"] == {"type": "string", "format": "date"}
    # date-time and time formats require a UTC offset: left out, the menu shows the format.
    assert properties["at"] == TEXT
    assert properties["boarding"] == TEXT
    assert properties["layover"] == TEXT
    assert properties["fare"] == {"anyOf": [{"type": "number"}, TEXT]}
    assert properties["ref"] == {"type": "string", "format": "uuid"}
    assert properties["v4"] == {"type": "string", "format": "uuid"}
    assert properties["where"] == TEXT
    assert properties["seats"] == {
        "type": "array",
        "uniqueItems": True,
        "items": TEXT,
    }
    assert properties["pair"] == {
        "type": "array",
        "minItems": 2,
        "maxItems": 2,
        "prefixItems": [{"type": "integer"}, TEXT],
    }
    # A small range also lists its values: llama-cpp-python's grammar ignores the bounds.
    assert properties["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 9,
        "enum": [1, 2, 3, 4, 5, 6, 7, 8, 9],
    }
    # The option's pattern is left out (every server has its own regex subset), ours put in.
    assert properties["code"] == {
        "type": "string",
        "minLength": 3,
        "maxLength": 3,
        "pattern": text_pattern(3, 3),
    }
    assert properties["kind"] == {"type": "string", "enum": ["bug", "question"]}
    assert properties["fixed"] == {"type": "string", "enum": ["only"]}
    assert properties["cabin"] == {"type": "string", "enum": ["economy", "business"]}
    assert properties["passenger"] == closed(
        {"name": TEXT, "age": {"type": "integer"}}, ["name", "age"]
    )
    assert properties["leg"] == closed(
        {"origin": TEXT, "when": {"type": "string", "format": "date"}},
        ["origin", "when"],
    )
    # A model that takes extra keys says so; others are closed.
    assert properties["loose"] == {
        "type": "object",
        "properties": {"name": TEXT},
        "required": ["name"],
        "additionalProperties": True,
    }
    assert properties["anything"] == ANY
    assert properties["untyped"] == ANY
    assert properties["maybe"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]
    }
    assert properties["either"] == {"anyOf": [{"type": "integer"}, TEXT]}
    assert args["required"] == [name for name in properties if name not in ("maybe", "either")]
    assert args["additionalProperties"] is False


def test_recursive_models_are_defined_once_at_the_root() -> None:
    schema = decision.response_schema({"typed": typed, "done": "DONE"})
    assert args_of({"typed": typed, "done": "DONE"}, "typed")["properties"]["tree"] == {
        "$ref": "#/$defs/Node"
    }
    assert schema["$defs"] == {
        "Node": closed(
            {
                "name": TEXT,
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            ["name"],
        )
    }


def first_node(root: Node) -> str:
    return root.name


def make_other_node() -> type[pydantic.BaseModel]:
    class Node(pydantic.BaseModel):  # the same name, another model
        label: int
        next: Node | None = None

    return Node


OtherNode = make_other_node()


def other_node(root: OtherNode) -> str:  # type: ignore[valid-type]
    return "x"


def test_two_definitions_of_one_name_are_kept_apart() -> None:
    schema = decision.response_schema({"first": first_node, "other": other_node})
    assert set(schema["$defs"]) == {"Node", "Node_2"}
    assert schema["anyOf"][0]["properties"]["args"]["properties"]["root"] == {
        "$ref": "#/$defs/Node"
    }
    assert schema["anyOf"][1]["properties"]["args"]["properties"]["root"] == {
        "$ref": "#/$defs/Node_2"
    }
    assert schema["$defs"]["Node_2"]["properties"]["next"] == {
        "anyOf": [{"$ref": "#/$defs/Node_2"}, {"type": "null"}]
    }
    assert schema["$defs"]["Node_2"]["properties"]["label"] == {"type": "integer"}


def keywords(schema: Any) -> Iterator[str]:
    """Every keyword used in a schema (never the names of properties or definitions)."""
    if isinstance(schema, list):
        for item in schema:
            yield from keywords(item)
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        yield key
        if key in ("properties", "$defs"):
            for sub in value.values():
                yield from keywords(sub)
        elif key in ("items", "additionalProperties", "anyOf", "allOf", "prefixItems"):
            yield from keywords(value)


PORTABLE = {
    "type",
    "enum",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",  # only ours: text_pattern()
}


def test_only_portable_keywords() -> None:
    schema = decision.response_schema({"typed": typed, **CANONICAL})
    used = set(keywords(schema))
    assert used <= PORTABLE, used - PORTABLE
    # Neither oneOf (OpenAI refuses it) nor const (single-value enums instead).
    assert not used & {"oneOf", "const", "title", "description", "default"}
    patterns = {found["pattern"] for found in every_object_with("pattern", schema)}
    assert patterns == {text_pattern(), text_pattern(3, 3)}


def every_object_with(key: str, schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if isinstance(schema.get(key), str):
            yield schema
        for value in schema.values():
            yield from every_object_with(key, value)
    elif isinstance(schema, list):
        for item in schema:
            yield from every_object_with(key, item)


def every_object(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from every_object(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from every_object(item)


def test_every_object_with_properties_says_whether_it_takes_more() -> None:
    schema = decision.response_schema({"typed": typed, **CANONICAL})
    objects = list(every_object(schema))
    assert len(objects) > 10
    assert all("additionalProperties" in found for found in objects)


@pytest.mark.parametrize(
    ("given", "portable"),
    [
        ({}, ANY),
        ({"description": "anything"}, ANY),
        ({"const": 3}, {"enum": [3]}),
        (
            {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            {"anyOf": [{"type": "integer"}, TEXT]},
        ),
        ({"allOf": [{"$ref": "#/$defs/X"}], "description": "d"}, {"$ref": "#/$defs/X"}),
        (
            {"type": "array", "items": [{"type": "integer"}]},
            {"type": "array", "prefixItems": [{"type": "integer"}]},
        ),
        ({"type": "string", "format": "email"}, TEXT),
        ({"type": "string", "format": "uuid4"}, {"type": "string", "format": "uuid"}),
        (
            {"type": "object", "properties": {"title": {"type": "string", "title": "Title"}}},
            {
                "type": "object",
                "properties": {"title": TEXT},
                "additionalProperties": False,
            },
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"type": "object", "additionalProperties": {"type": "integer"}},
        ),
        ({"enum": [datetime.date(2024, 5, 1)]}, {"enum": ["2024-05-01"]}),
        ({"enum": [object()], "type": "string"}, TEXT),
        ({"not": {"type": "null"}}, ANY),
        ({"type": "integer", "minimum": True}, {"type": "integer"}),
        ({"type": "string", "pattern": "^(?!x).*$"}, TEXT),
        (
            {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4},
            {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4, "enum": [1, 2, 3]},
        ),
        (
            {"type": "integer", "minimum": 0, "maximum": 100},
            {"type": "integer", "minimum": 0, "maximum": 100},
        ),
        ({"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 1}),
        (
            {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 5},
            {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 5},
        ),
    ],
)
def test_portable_schema(given: Any, portable: Any) -> None:
    assert portable_schema(given) == portable


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("", True),
        ("A-1002", True),
        ("Maria López", True),
        ("a <b> c", True),
        ("<str>", False),
        ("<date YYYY-MM-DD>", False),
        ("<str", False),
        ('say "hi"', False),
        ("back\\slash", False),
        ("two\nlines", False),
    ],
)
def test_free_text_may_not_start_like_a_placeholder(text: str, allowed: bool) -> None:
    assert bool(re.fullmatch(NOT_A_PLACEHOLDER, text)) is allowed
    assert bool(re.fullmatch(text_pattern(), text)) is allowed


@pytest.mark.parametrize(("low", "high"), [(0, 1), (0, 8), (1, 1), (3, 5), (0, MAX_TEXT_LENGTH)])
def test_free_text_is_bounded_in_the_pattern_itself(low: int, high: int) -> None:
    # llama.cpp's converter reads the pattern and ignores maxLength beside it.
    pattern = text_pattern(low, high)
    assert re.fullmatch(pattern, "a" * high)
    assert not re.fullmatch(pattern, "a" * (high + 1))
    assert re.fullmatch(pattern, "a" * low)
    assert bool(re.fullmatch(pattern, "")) is (low == 0)


def bounded_note(note: Annotated[str, Param("What to say", max_length=40)]) -> str:
    return note


class Ticket(pydantic.BaseModel):
    title: str = Field(max_length=12)
    body: str


def every_string(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "string":
            yield schema
        for value in schema.values():
            yield from every_string(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from every_string(value)


def test_every_text_field_of_the_schema_has_a_length_bound() -> None:
    from benchmarks.decision_prompts import PROMPTS

    for item in PROMPTS:
        for found in every_string(decision.response_schema(item.options)):
            bounded = "enum" in found or "format" in found or found.get("maxLength")
            assert bounded, (item.name, found)


def test_a_length_bound_is_settable_per_field() -> None:
    schema = decision.response_schema(
        {"note": bounded_note, "file": ("File a ticket.", {"ticket": Ticket, "tag": str})}
    )
    note, ticket = (b["properties"]["args"] for b in schema["anyOf"])
    assert note["properties"]["note"]["maxLength"] == 40
    assert note["properties"]["note"]["pattern"] == text_pattern(0, 40)
    assert ticket["properties"]["tag"]["maxLength"] == MAX_TEXT_LENGTH
    definition = ticket["properties"]["ticket"]["properties"]
    assert definition["title"]["pattern"] == text_pattern(0, 12)
    assert definition["body"]["maxLength"] == MAX_TEXT_LENGTH


def test_param_max_length_is_validated() -> None:
    runtime = ScriptedRuntime(
        json.dumps({"call": "note", "args": {"note": "x" * 41}}), pick("note", note="short")
    )
    assert decision.make("Say it.", {"note": bounded_note}, runtime=runtime) == "short"
    repick = runtime.calls[1].prompt
    assert "Field 'note' is invalid: String should have at most 40 characters" in repick
    with pytest.raises(ValueError, match="max_length"):
        Param(max_length=0)
    with pytest.raises(TypeError, match="max_length"):
        Param(max_length="40")  # type: ignore[arg-type]

    def count(n: Annotated[int, Param(max_length=3)]) -> int:
        return n

    with pytest.raises(TypeError, match=r"bounds a text or a list, but the parameter is int"):
        decision.render_options({"count": count})

    def maybe(note: Annotated[str | None, Param(max_length=3)] = None) -> Any:
        return note

    assert "maybe(note: str | None)" in decision.render_options({"maybe": maybe})


def test_the_schema_is_built_once_per_menu_and_kept_with_it() -> None:
    options = {"greet": greet, "done": "DONE"}
    menu = normalize_options(options)
    assert menu.schema_json == []  # nothing is built until asked for
    first = menu.response_schema()
    assert len(menu.schema_json) == 1
    text = menu.schema_json[0]
    first["anyOf"].clear()  # a copy: changing it changes nothing for the next call
    assert menu.response_schema() == decision.response_schema(options)
    assert menu.schema_json == [text]
    assert menu.schema_json[0] is text


def test_a_menu_found_again_with_other_values_shares_its_schema() -> None:
    def options(value: object) -> dict[str, Any]:
        return {"greet": greet, "done": (value, "Finished.")}

    first = normalize_options(options(["a"]))
    first.response_schema()
    again = normalize_options(options(["b"]))
    assert again is not first
    assert again.by_name["done"].value == ["b"]
    assert again.schema_json is first.schema_json


def test_the_menu_text_is_unchanged() -> None:
    assert decision.render_options(CANONICAL).startswith(
        'greet(name: str)\n    Greet someone by name.\n    name\n    Call: {"call": "greet", '
    )


# --- carried by every decision call ------------------------------------------------------------


def test_decision_make_and_its_repick_carry_the_schema() -> None:
    runtime = ScriptedRuntime("no pick here", pick("greet", name="ada"))
    assert decision.make("Pick.", CANONICAL, runtime=runtime) == "hello ada"
    turn, repick = runtime.calls
    assert turn.kind == "turn"
    assert repick.kind == "repick"
    assert turn.response_schema == decision.response_schema(CANONICAL)
    assert repick.response_schema == decision.response_schema(CANONICAL)
    assert turn.request.response_schema == turn.response_schema


def test_each_round_of_an_exec_with_choices_carries_it() -> None:
    def look(order: str) -> str:
        """Look an order up."""
        return "found"

    from fake_runtimes import tool_call

    runtime = ScriptedRuntime(tool_call("look", order="A1"), pick("done"))
    assert agent("Work, then pick.", choices=CANONICAL, tools=[look], runtime=runtime) == (
        "CONVERSATION_OVER"
    )
    first, second = runtime.calls
    assert first.tools == ["look"]
    assert first.response_schema == second.response_schema == decision.response_schema(CANONICAL)


def test_a_call_without_options_has_none() -> None:
    runtime = ScriptedRuntime("hi")
    assert runtime.exec("Hello") == "hi"
    assert runtime.last_call.response_schema is None
    assert runtime.last_call.request.response_schema is None


def test_callable_steps_see_it() -> None:
    seen: list[Any] = []

    def step(call: Any) -> str:
        seen.append(call.response_schema)
        return json.dumps({"call": "done"})

    runtime = ScriptedRuntime(step)
    decision.make("Pick.", CANONICAL, runtime=runtime)
    assert seen == [decision.response_schema(CANONICAL)]


@pytest.mark.parametrize(
    ("text", "allowed"),
    [("str", False), ("Str", False), ("STR", False), ("sty", True), ("st", True), ("strs", True)],
)
def test_free_text_may_not_be_a_placeholder_without_its_brackets(text: str, allowed: bool) -> None:
    # What a grammar that forbids "<" leaves of a copied "<str>": the model wrote it twice.
    assert bool(re.fullmatch(text_pattern(), text)) is allowed
    assert bool(re.fullmatch(text_pattern(3, 3), text)) is (allowed and len(text) == 3)
