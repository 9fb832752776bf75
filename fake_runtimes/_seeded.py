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

from fake_runtimes._script_steps import FakeCall, Pick, ToolCallStep
from fake_runtimes._scripted import FakeRuntime
from pytest_opdecide import ModelReply, ModelRequest, ToolSpec
from pytest_opdecide.options import (
    CannotGenerate,
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

__all__ = [
    "InvalidReply",
    "SeededRuntime",
    "every_option",
    "every_tool_call",
    "invalid_replies",
    "seeded_pick",
]

_ATTEMPTS = 20


def seeded_pick(option: Option, menu: Menu, rng: random.Random) -> Pick:
    """A schema-valid pick of ``option``, checked against the decision validator."""
    failure: ParseFailure | None = None
    for _ in range(_ATTEMPTS):
        try:
            args = draw_arguments(option.fields, RandomSource(rng))
        except CannotGenerate as exc:
            raise exc.of_option(option.name) from None
        pick = Pick(option.name, args)
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


def _tool_menu(tools: Iterable[Callable[..., Any] | ToolSpec]) -> Menu:
    """The tools as function options, by the names the model calls them by."""
    named: dict[str, Callable[..., Any]] = {}
    for tool in tools:
        if isinstance(tool, ToolSpec):
            named[tool.name] = tool.function
        elif callable(tool):
            name = getattr(tool, "__name__", None)
            if not isinstance(name, str) or not name or name == "<lambda>":
                raise TypeError(
                    f"Tool {tool!r} has no usable __name__ to call it by: give a named function "
                    "or a ToolSpec"
                )
            named[name] = tool
        else:
            raise TypeError(f"A tool must be a function or a ToolSpec, got {type(tool).__name__}")
    if not named:
        raise ValueError("every_tool_call() needs at least one tool")
    return normalize_options(named)


def _tool_calls(menu: Menu, names: Iterable[str], rng: random.Random) -> list[ToolCallStep]:
    calls = []
    for name in names:
        option = menu.by_name[name]
        calls.append(ToolCallStep(name, seeded_pick(option, menu, rng).args))
    return calls


def every_tool_call(
    tools: Iterable[Callable[..., Any] | ToolSpec], *, seed: int = 0
) -> list[ToolCallStep]:
    """One scripted tool call per tool, with generated valid arguments, as :func:`every_option`
    makes one pick per option.

    Script them to run every tool of a turn before its closing pick:
    ``ScriptedRuntime(every_tool_call(TOOLS), pick("done"))`` (a list is one reply calling them
    all), or parametrize over them, one tool per test. The same seed gives the same arguments.

    Args:
        tools: The tools (functions, or :class:`~pytest_opdecide.ToolSpec`), as offered to
            ``agent(tools=...)``.
        seed: The seed of the arguments.

    Raises:
        TypeError: A tool is no function, or has no name to call it by.
        ValueError: No tool was given, or a tool's arguments cannot be generated (the
            message names the field; script that call by hand).
    """
    menu = _tool_menu(tools)
    rng = random.Random(f"every_tool_call:{seed}")
    return _tool_calls(menu, menu.names, rng)


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
    short seeded text reply. Before its closing reply, a turn that offers native tools calls
    every one of them once, with generated valid arguments (as pydantic-ai's ``TestModel``
    does), so that seeded runs exercise the tools too.

    Args:
        seed: The seed.
        call_tools: Which offered tools each turn calls: ``"all"`` (the default), a list of
            tool names (those of them the turn offers, in the turn's order), or ``()`` for
            none.
        tool_rounds: How many rounds of tool calls a turn makes before its closing reply
            (each round calls every chosen tool once, in one reply); ``0`` calls none.
        model: The model name reported in replies.
        tools: The ``"default"`` toolset.
        toolsets: More named toolsets.

    Raises:
        TypeError: ``call_tools`` or ``tool_rounds`` is of the wrong kind.
        ValueError: ``tool_rounds`` is negative.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        call_tools: Iterable[str] | str = "all",
        tool_rounds: int = 1,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        super().__init__(strict=True, model=model, tools=tools, toolsets=toolsets)
        self.seed = seed
        if isinstance(call_tools, str):
            if call_tools != "all":
                raise TypeError(
                    f"SeededRuntime(call_tools=...) takes 'all' or a list of tool names, got "
                    f"{call_tools!r}; for one tool write call_tools=[{call_tools!r}]"
                )
            self.call_tools: tuple[str, ...] | None = None
        else:
            names = tuple(call_tools)
            if not all(isinstance(n, str) and n for n in names):
                raise TypeError(
                    f"SeededRuntime(call_tools=...) takes tool names, got {list(names)!r}"
                )
            self.call_tools = names
        if isinstance(tool_rounds, bool) or not isinstance(tool_rounds, int):
            raise TypeError(f"SeededRuntime(tool_rounds=...) must be an int, got {tool_rounds!r}")
        if tool_rounds < 0:
            raise ValueError(f"SeededRuntime(tool_rounds=...) must be 0 or more, got {tool_rounds}")
        self.tool_rounds = tool_rounds

    def call_model(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        return self._reply(self._step, call, f"seed {self.seed}")

    def _chosen_tools(self, request: ModelRequest) -> list[str]:
        offered = request.tool_names
        if self.call_tools is None:
            return offered
        return [name for name in offered if name in self.call_tools]

    def _step(self, call: FakeCall) -> Any:
        rng = random.Random(f"seeded:{self.seed}:{call.index}")
        request = call.request
        if request.tools and request.kind != "repick":
            rounds_done = sum(1 for m in request.messages if m.role == "assistant" and m.tool_calls)
            chosen = self._chosen_tools(request) if rounds_done < self.tool_rounds else []
            if chosen:
                menu = _tool_menu(request.tools)
                return _tool_calls(menu, chosen, rng)
        menu = request.choices
        if isinstance(menu, Menu):
            return seeded_pick(rng.choice(menu.options), menu, rng)
        return " ".join(rng.choice(RandomSource.WORDS) for _ in range(8)) + "."
