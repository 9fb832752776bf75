"""Seeded fakes: schema-valid picks of every option, and replies that must fail.

Values are drawn by the decision library's generator of field values
(:func:`pytest_opdecide.options.draw_arguments`), every choice made by a seeded
``random.Random``, so a generated pick is valid by construction (and checked once more before it
is handed out); wrong values come from the same place (``wrong_type_value``,
``disallowed_value``).
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
    FieldSpec,
    Menu,
    Option,
    ParseFailure,
    RandomSource,
    TypeSpec,
    disallowed_value,
    draw_arguments,
    normalize_options,
    parse_reply,
    wrong_type_value,
)

__all__ = ["InvalidReply", "SeededRuntime", "every_option", "invalid_replies", "seeded_pick"]

_ATTEMPTS = 20


def seeded_pick(option: Option, menu: Menu, rng: random.Random) -> Pick:
    """A schema-valid pick of ``option``, checked against the decision validator."""
    failure: ParseFailure | None = None
    for _ in range(_ATTEMPTS):
        pick = Pick(option.name, draw_arguments(option.fields, RandomSource(rng)))
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
    for option, f, value in _field_values(menu, wrong_type_value):
        case = _field_case(menu, rng, "type_mismatch", option, f, value)
        if _fails_as(case, menu):  # a constrained type may call it a value error instead
            out.append(case)
    for option, f, value in _field_values(menu, disallowed_value):
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
        return " ".join(rng.choice(RandomSource.WORDS) for _ in range(8)) + "."
