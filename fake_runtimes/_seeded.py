"""Seeded fakes: schema-valid picks of every option, and replies that must fail.

Values are generated from the same field types the decision library validates with, so a
generated pick is valid by construction (and checked once more before it is handed out).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fake_runtimes._script_steps import FakeCall, Pick
from fake_runtimes._scripted import FakeRuntime
from pytest_opdecide import ModelReply, ModelRequest
from pytest_opdecide.options import (
    ChoiceSpec,
    DictSpec,
    FieldSpec,
    ListSpec,
    Menu,
    ModelSpec,
    NoneSpec,
    ObjectSpec,
    Option,
    ParseFailure,
    PydanticSpec,
    ScalarSpec,
    SequenceSpec,
    TypeSpec,
    UnionSpec,
    UnknownSpec,
    normalize_options,
    parse_reply,
)

__all__ = ["InvalidReply", "SeededRuntime", "every_option", "invalid_replies", "seeded_pick"]

_WORDS = (
    "order", "refund", "invoice", "parcel", "account", "delay", "billing", "support",
    "shipping", "return", "warranty", "upgrade", "login", "password", "receipt", "coupon",
)  # fmt: skip
_ATTEMPTS = 20


def example_value(spec: TypeSpec, rng: random.Random, depth: int = 0) -> Any:
    """A JSON value that ``spec`` accepts, drawn from ``rng``."""
    if depth > 8:
        return None if isinstance(spec, UnionSpec | UnknownSpec | NoneSpec) else _minimal(spec)
    if isinstance(spec, ChoiceSpec):
        return rng.choice(spec.choices or (None,))
    if isinstance(spec, ScalarSpec):
        t = spec.pytype
        if t is str:
            return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
        if t is bool:
            return rng.random() < 0.5
        if t is int:
            return rng.randint(0, 100)
        if t is float:
            return round(rng.uniform(0, 100), 2)
        if t is list:
            return [rng.choice(_WORDS)] if rng.random() < 0.5 else []
        return {"note": rng.choice(_WORDS)} if rng.random() < 0.5 else {}
    if isinstance(spec, ListSpec):
        return [example_value(spec.item, rng, depth + 1) for _ in range(rng.randint(1, 3))]
    if isinstance(spec, SequenceSpec):
        if not spec.variadic:
            return [example_value(item, rng, depth + 1) for item in spec.items]
        values: list[Any] = []
        for _ in range(rng.randint(1, 3)):
            value = example_value(spec.items[0], rng, depth + 1)
            if spec.kind == "tuple" or value not in values:  # a set's items are distinct
                values.append(value)
        return values
    if isinstance(spec, PydanticSpec):
        return spec.example(rng)
    if isinstance(spec, DictSpec):
        return {rng.choice(_WORDS): example_value(spec.value, rng, depth + 1)}
    if isinstance(spec, ObjectSpec):
        return _example_fields(spec.fields, rng, depth)
    if isinstance(spec, ModelSpec):
        return _example_fields(spec.shape.fields, rng, depth)
    if isinstance(spec, UnionSpec):
        return example_value(rng.choice(spec.members), rng, depth + 1)
    if isinstance(spec, NoneSpec):
        return None
    return rng.choice(_WORDS)  # unknown types accept anything


def _minimal(spec: TypeSpec) -> Any:
    if isinstance(spec, ObjectSpec):
        return {f.name: _minimal(f.type) for f in spec.fields if f.required}
    if isinstance(spec, ModelSpec):
        return _minimal(spec.shape)
    if isinstance(spec, ChoiceSpec):
        return (spec.choices or (None,))[0]
    if isinstance(spec, PydanticSpec):
        return spec.example(random.Random(0))
    return spec.placeholder()


def _example_fields(fields: Iterable[FieldSpec], rng: random.Random, depth: int) -> dict[str, Any]:
    # Optional fields are filled half of the time, so that code paths using them get exercised.
    return {
        f.name: example_value(f.type, rng, depth + 1)
        for f in fields
        if f.required or rng.random() < 0.5
    }


def _option_args(option: Option, rng: random.Random) -> dict[str, Any]:
    return _example_fields(option.fields, rng, 0)


def seeded_pick(option: Option, menu: Menu, rng: random.Random) -> Pick:
    """A schema-valid pick of ``option``, checked against the decision validator."""
    failure: ParseFailure | None = None
    for _ in range(_ATTEMPTS):
        pick = Pick(option.name, _option_args(option, rng))
        try:
            parse_reply(pick.text, menu, _AnyContext())
        except ParseFailure as exc:
            failure = exc
            continue
        return pick
    raise ValueError(
        f"Cannot generate valid arguments for option {option.name!r} in {_ATTEMPTS} tries "
        f"(last problem: {failure.message if failure else '?'}); script its pick by hand"
    )


class _AnyContext(dict[str, Any]):
    """A context that has every key, so context parameters never block generation."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> Any:
        return None


def every_option(options: Any, *, seed: int = 0) -> list[Pick]:
    """One schema-valid scripted pick per option, for ``pytest.mark.parametrize``.

    Example:
        ``@pytest.mark.parametrize("step", every_option(OPTIONS), ids=str)`` then
        ``ScriptedRuntime(step)`` in the test.
    """
    menu = normalize_options(options)
    rng = random.Random(f"every_option:{seed}")
    return [seeded_pick(option, menu, rng) for option in menu.options]


@dataclass(frozen=True)
class InvalidReply:
    """A reply that must end in ``DecisionError`` (with no re-pick).

    Attributes:
        kind: The ``DecisionError.kind`` it produces.
        reply: The reply text.
        description: What is wrong with it.
        option: The option whose field is wrong (``None`` for the kinds about the whole pick).
        field: That field.
    """

    kind: str
    reply: str
    description: str
    option: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        """The kind, and the field it is about: ``type_mismatch:book.day``."""
        if self.field is None:
            return self.kind
        return f"{self.kind}:{self.option}.{self.field}"


_WRONG_VALUES = (
    (12345, {"integer", "number"}),
    ("not a number", {"string"}),
    ({"not": "a list"}, {"object"}),
    (["not", "an", "object"], {"array"}),
)
"""Wrong values, with the JSON types they are."""


def _json_types(schema: Any, defs: Any, depth: int = 0) -> set[str]:
    """The JSON types a JSON schema accepts (every one, when it cannot tell)."""
    everything = {"integer", "number", "string", "object", "array", "boolean", "null"}
    if not isinstance(schema, dict) or depth > 8:
        return everything
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _json_types(defs.get(ref[len("#/$defs/") :]), defs, depth + 1)
    members = schema.get("anyOf") or schema.get("oneOf")
    if members:
        return set().union(*(_json_types(m, defs, depth + 1) for m in members))
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind, "number"} if kind == "integer" else {kind}
    if "properties" in schema:
        return {"object"}
    return everything


def _wrong_value(spec: TypeSpec) -> Any | None:
    """A value of the wrong JSON type for ``spec``, or None when every type is accepted."""
    if isinstance(spec, ChoiceSpec):
        return _wrong_value(spec.base)
    if isinstance(spec, ScalarSpec):
        return {str: 12345, int: "not a number", float: "not a number", bool: "yes",
                list: {"not": "a list"}, dict: "not an object"}[spec.pytype]  # fmt: skip
    if isinstance(spec, ListSpec | SequenceSpec):
        return {"not": "a list"}
    if isinstance(spec, ObjectSpec | ModelSpec | DictSpec):
        return "not an object"
    if isinstance(spec, UnknownSpec):
        return None
    # A value of another JSON type than the type's own: a type error, not a broken constraint.
    schema = spec.json_schema()
    accepted = _json_types(schema, schema.get("$defs", {}))
    return next(
        (
            value
            for value, kinds in _WRONG_VALUES
            if not kinds & accepted and not spec.accepts(value)
        ),
        None,
    )


def _outside(spec: ChoiceSpec) -> Any | None:
    choices = spec.choices or ()
    if all(isinstance(c, str) for c in choices):
        candidate = "not_an_allowed_value"
        while candidate in choices:
            candidate += "_"
        return candidate
    if all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
        return max(choices) + 1
    return None


def invalid_replies(options: Any, *, seed: int = 0) -> list[InvalidReply]:
    """Replies that must each end in ``DecisionError``: each kind the options allow.

    Kinds: ``no_action`` (no JSON), ``unknown_call`` (a made-up option), ``bad_args`` (args not
    an object); ``missing_required`` (the first option with a required field, without it);
    ``type_mismatch``, one per field of every option whose type a value can miss (a ``date``
    sent as a number, an ``int`` as text...); and ``enum_violation`` (the first field with
    allowed values, sent another). Each reply is checked against the decision validator before
    it is returned.
    """
    menu = normalize_options(options)
    rng = random.Random(f"invalid_replies:{seed}")
    first = menu.options[0]
    unknown = "made_up_option"
    while unknown in menu.by_name:
        unknown += "_"
    out = [
        InvalidReply("no_action", "I am not sure which option fits best here.", "no JSON pick"),
        InvalidReply("unknown_call", json.dumps({"call": unknown}), "an option not offered"),
        InvalidReply(
            "bad_args", json.dumps({"call": first.name, "args": [1, 2]}), "args not an object"
        ),
    ]
    for option in menu.options:
        required = [f for f in option.fields if f.required]
        if required:
            args = seeded_pick(option, menu, rng).args
            args.pop(required[0].name, None)
            out.append(
                InvalidReply(
                    "missing_required",
                    json.dumps({"call": option.name, "args": args}),
                    f"{option.name} without {required[0].name!r}",
                    option.name,
                    required[0].name,
                )
            )
            break
    for option, f, value in _field_values(menu, _wrong_value):
        case = _field_case(menu, rng, "type_mismatch", option, f, value)
        if _fails_as(case, menu):  # a constrained type may call it a value error instead
            out.append(case)
    for option, f, value in _field_values(
        menu, lambda spec: _outside(spec) if isinstance(spec, ChoiceSpec) else None
    ):
        out.append(_field_case(menu, rng, "enum_violation", option, f, value))
        break
    for case in out:
        if not _fails_as(case, menu):  # pragma: no cover - a bug in this generator
            raise AssertionError(f"{case} does not fail as {case.kind}")
    return out


def _fails_as(case: InvalidReply, menu: Menu) -> bool:
    try:
        parse_reply(case.reply, menu, _AnyContext())
    except ParseFailure as failure:
        return failure.kind == case.kind
    return False


def _field_values(
    menu: Menu, bad: Callable[[TypeSpec], Any | None]
) -> Iterator[tuple[Option, FieldSpec, Any]]:
    for option in menu.options:
        for f in option.fields:
            value = bad(f.type)
            if value is not None:
                yield option, f, value


def _field_case(
    menu: Menu, rng: random.Random, kind: str, option: Option, f: FieldSpec, value: Any
) -> InvalidReply:
    args = seeded_pick(option, menu, rng).args
    args[f.name] = value
    return InvalidReply(
        kind,
        json.dumps({"call": option.name, "args": args}),
        f"{option.name}.{f.name} = {value!r}",
        option.name,
        f.name,
    )


class SeededRuntime(FakeRuntime):
    """A fake model that picks an offered option by seed, with schema-valid arguments.

    The same seed gives the same picks, in every process. A call that offers no options gets a
    short seeded text reply.

    Args:
        seed: The seed.
        model: The model name reported in replies.
        tools: The ``"default"`` toolset.
        toolsets: More named toolsets.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        super().__init__(strict=True, model=model, tools=tools, toolsets=toolsets)
        self.seed = seed

    def call_model(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        return self._reply(self._step, call, f"seed {self.seed}")

    def _step(self, call: FakeCall) -> Any:
        rng = random.Random(f"seeded:{self.seed}:{call.index}")
        menu = call.request.choices
        if isinstance(menu, Menu):
            return seeded_pick(rng.choice(menu.options), menu, rng)
        return " ".join(rng.choice(_WORDS) for _ in range(8)) + "."
