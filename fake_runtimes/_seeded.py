"""Seeded fakes: schema-valid picks of every option, and replies that must fail.

Values are generated from the same field types the decision library validates with, so a
generated pick is valid by construction (and checked once more before it is handed out).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fake_runtimes._scripted import FakeRuntime
from fake_runtimes._steps import FakeCall, Pick
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
    ScalarSpec,
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
    """

    kind: str
    reply: str
    description: str

    def __str__(self) -> str:
        return self.kind


def _wrong_value(spec: TypeSpec) -> Any | None:
    """A value of the wrong JSON type for ``spec``, or None when every type is accepted."""
    if isinstance(spec, ChoiceSpec):
        return _wrong_value(spec.base)
    if isinstance(spec, ScalarSpec):
        return {str: 12345, int: "not a number", float: "not a number", bool: "yes",
                list: {"not": "a list"}, dict: "not an object"}[spec.pytype]  # fmt: skip
    if isinstance(spec, ListSpec):
        return {"not": "a list"}
    if isinstance(spec, ObjectSpec | ModelSpec | DictSpec):
        return "not an object"
    return None


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
    """Replies that must each end in ``DecisionError``: one per kind the options allow.

    Kinds: ``no_action`` (no JSON), ``unknown_call`` (a made-up option), ``bad_args`` (args not
    an object), ``missing_required``, ``type_mismatch`` and ``enum_violation`` (when some option
    has a required field, a typed field, and allowed values, respectively). Each reply is
    checked against the decision validator before it is returned.
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
                )
            )
            break
    _add_field_case(out, menu, rng, "type_mismatch", _wrong_value)
    _add_field_case(
        out,
        menu,
        rng,
        "enum_violation",
        lambda spec: _outside(spec) if isinstance(spec, ChoiceSpec) else None,
    )
    for case in out:
        try:
            parse_reply(case.reply, menu, _AnyContext())
        except ParseFailure as failure:
            if failure.kind != case.kind:  # pragma: no cover - a bug in this generator
                raise AssertionError(f"{case} produced {failure.kind}: {failure.message}") from None
        else:  # pragma: no cover - a bug in this generator
            raise AssertionError(f"{case} unexpectedly parsed")
    return out


def _add_field_case(
    out: list[InvalidReply],
    menu: Menu,
    rng: random.Random,
    kind: str,
    bad: Callable[[TypeSpec], Any | None],
) -> None:
    for option in menu.options:
        for f in option.fields:
            value = bad(f.type)
            if value is None:
                continue
            args = seeded_pick(option, menu, rng).args
            args[f.name] = value
            out.append(
                InvalidReply(
                    kind,
                    json.dumps({"call": option.name, "args": args}),
                    f"{option.name}.{f.name} = {value!r}",
                )
            )
            return


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
