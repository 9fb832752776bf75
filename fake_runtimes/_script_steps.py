"""Script steps: what a fake model sends back for one call."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from pytest_opdecide import ModelReply, ModelRequest

__all__ = ["ErrorStep", "FakeCall", "Pick", "ToolCallStep", "error", "pick", "tool_call"]


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 step``, ``3 steps``: a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=to_jsonable_python)
"""One encoder for every pick's text: ``json.dumps`` with options builds a new one per call."""


_JSON_LEAVES = frozenset({str, int, float, bool, type(None)})


def _leaf_text(value: Any) -> str | None:
    """A string, number, boolean or ``None`` as the encoder writes it; ``None`` for anything
    else (a subclass included)."""
    kind = type(value)
    if kind is str:
        return _ENCODER.encode(value)  # a string alone is written without building an encoder
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (_INFINITY, -_INFINITY):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if value is None:
        return "null"
    return None


_INFINITY = float("inf")


def _leaves_text(option: Any, args: Any) -> str | None:
    """A pick's JSON text when its arguments are all strings, numbers, booleans or ``None``
    under string names (what ``pick(...)`` is usually given), written piece by piece:
    ``_ENCODER.encode`` of a dict builds a C encoder on every call. The same bytes; ``None``
    for anything else."""
    name = _leaf_text(option)
    if name is None or type(option) is not str or type(args) is not dict:
        return None
    if not args:
        return f'{{"call": {name}}}'
    parts = []
    try:
        for key, value in args.items():
            shown = _leaf_text(value)
            if type(key) is not str or shown is None:
                return None
            parts.append(f"{_ENCODER.encode(key)}: {shown}")
    except ValueError:  # an int too long to write: the encoder says so in its own words
        return None
    return f'{{"call": {name}, "args": {{{", ".join(parts)}}}}}'


def _format_args(args: dict[str, Any]) -> str:
    return "".join(f", {k}={v!r}" for k, v in args.items())


@dataclass(frozen=True)
class Pick:
    """A pick of an option, sent as its canonical JSON (``{"call": ..., "args": {...}}``).

    Attributes:
        option: The option name.
        args: The arguments (omitted from the JSON when empty).
    """

    option: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The canonical JSON text of this pick.

        Values JSON has no type for are written as pydantic writes them: a ``date`` as
        ``"2024-05-01"``, a ``Decimal`` or a ``UUID`` as a string, a ``set`` or a ``tuple``
        as an array, an enum member as its value, a dataclass or a pydantic model as an
        object.
        """
        written = _leaves_text(self.option, self.args)
        if written is not None:
            return written
        payload: dict[str, Any] = {"call": self.option}
        if self.args:
            payload["args"] = self.args
        return _ENCODER.encode(payload)

    def __str__(self) -> str:
        return f"pick({self.option!r}{_format_args(self.args)})"


@dataclass(frozen=True)
class ToolCallStep:
    """A native tool call the fake model asks for.

    Attributes:
        tool: The tool name.
        args: The arguments.
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"tool_call({self.tool!r}{_format_args(self.args)})"


@dataclass(frozen=True)
class ErrorStep:
    """The model call raises ``exception`` (an instance, or a class to instantiate)."""

    exception: BaseException | type[BaseException]

    def __str__(self) -> str:
        return f"error({self.exception!r})"


def pick(option: str, /, **args: Any) -> Pick:
    """Script a pick of ``option`` with ``args``: ``pick("refund", amount=30)``.

    In a strict fake, the call this step answers must offer ``option``, and the arguments
    must be what the option takes: known names, every required one, values of the right type
    (checked as the model's reply would be). To send a pick of an option that was not offered,
    script the raw reply text instead.

    Values JSON has no type for (``date``, ``Decimal``, ``UUID``, sets...) are sent in their
    JSON form, as a model would write them.

    Raises:
        TypeError: ``option`` is not a name, or an argument cannot be written as JSON.
    """
    if not isinstance(option, str) or not option:
        raise TypeError(f"pick() needs an option name, got {option!r}")
    # Made at once, as FakeCall.of is: what the frozen dataclass's __init__ sets, nothing else.
    step = object.__new__(Pick)
    step.__dict__.update(option=option, args=dict(args))
    if _JSON_LEAVES.issuperset(map(type, args.values())):
        return step  # strings, numbers, booleans and None: JSON as they are
    try:
        _ENCODER.encode(args)  # all at once; when it fails, each argument tells which
    except (TypeError, ValueError, PydanticSerializationError, RecursionError):
        pass
    else:
        return step
    for name, value in args.items():
        try:
            _ENCODER.encode(value)
        except (TypeError, ValueError, PydanticSerializationError, RecursionError) as exc:
            raise TypeError(
                f"pick({option!r}): the argument {name}={value!r} cannot be sent as JSON ({exc}); "
                "give a value a model could write"
            ) from None
    return step


def tool_call(tool: str, /, **args: Any) -> ToolCallStep:
    """Script a native tool call: ``tool_call("lookup_order", order_id="A1")``.

    Several tool calls in one reply: script a list, ``[tool_call("a"), tool_call("b")]``.
    """
    if not isinstance(tool, str) or not tool:
        raise TypeError(f"tool_call() needs a tool name, got {tool!r}")
    return ToolCallStep(tool, dict(args))


def error(exception: BaseException | type[BaseException]) -> ErrorStep:
    """Script a failing model call: ``error(TimeoutError("model took too long"))``."""
    if not (
        isinstance(exception, BaseException)
        or (isinstance(exception, type) and issubclass(exception, BaseException))
    ):
        raise TypeError(f"error() needs an exception, got {exception!r}")
    return ErrorStep(exception)


@dataclass(frozen=True)
class FakeCall:
    """The model call a fake is answering, as a callable step or ``FunctionRuntime`` sees it.

    Attributes:
        index: The call's number on this runtime (0, 1, ...).
        kind: ``turn``, ``tool_round`` or ``repick``.
        prompt: The text sent (see ``ModelRequest.prompt``).
        menu: The rendered menu, when the call offers options.
        options: The option names offered.
        tools: The native tool names offered.
        request: The full request.
    """

    index: int
    kind: str
    prompt: str
    menu: str | None
    options: list[str]
    tools: list[str]
    request: ModelRequest = field(repr=False)

    @classmethod
    def of(cls, index: int, request: ModelRequest) -> FakeCall:
        # Made once per model call: the fields set at once, past the frozen dataclass's
        # per-field ``object.__setattr__`` (what its ``__init__`` would set, nothing else).
        call = object.__new__(cls)
        call.__dict__.update(
            index=index,
            kind=request.kind,
            prompt=request.prompt,
            menu=request.menu,
            options=list(request.options),
            tools=[t.name for t in request.tools] if request.tools else [],  # its tool_names
            request=request,
        )
        return call

    @property
    def response_schema(self) -> dict[str, Any] | None:
        """The menu as a JSON schema, when the call offers options (see
        ``ModelRequest.response_schema``)."""
        return self.request.response_schema

    def describe(self) -> str:
        """``call #2 (repick)``."""
        return f"call #{self.index} ({self.kind})"


Step = str | Pick | ToolCallStep | ErrorStep | ModelReply | list[ToolCallStep] | Callable[..., Any]


def describe_step(step: Any) -> str:
    """A short, readable form of a step for failure messages."""
    if isinstance(step, str):
        shown = step if len(step) <= 60 else step[:57] + "..."
        return repr(shown)
    if isinstance(step, list):
        return "[" + ", ".join(describe_step(s) for s in step) + "]"
    if isinstance(step, ModelReply):
        return f"ModelReply(text={describe_step(step.text)}, tool_calls={len(step.tool_calls)})"
    if isinstance(step, Pick | ToolCallStep | ErrorStep):
        return str(step)
    name = getattr(step, "__qualname__", None) or type(step).__name__
    return f"<callable {name}>"


def check_step(step: Any, position: str) -> None:
    """Reject what cannot be a step, when the script is written (not when it runs)."""
    if isinstance(step, str | Pick | ToolCallStep | ErrorStep | ModelReply):
        return
    if isinstance(step, list) and step and all(isinstance(s, ToolCallStep) for s in step):
        return
    if isinstance(step, BaseException) or (
        isinstance(step, type) and issubclass(step, BaseException)
    ):
        # An exception class is callable: without this check it would pass as a callable step.
        shown = step.__name__ if isinstance(step, type) else repr(step)
        raise TypeError(
            f"{position} is the exception {shown}: to make the model call raise it, script "
            f"error({shown})"
        )
    if callable(step):
        return
    if isinstance(step, list | tuple) and step:
        # Most likely the whole script passed as one argument (the marker takes a list).
        raise TypeError(
            f"{position} is a {type(step).__name__} of {len(step)} steps: a list is one step "
            "only when it holds tool_call(...) steps (one reply calling several tools). Give "
            "the steps one by one, ScriptedRuntime(pick(...), pick(...)), or unpack a list, "
            "ScriptedRuntime(*steps)"
        )
    raise TypeError(
        f"{position} is {type(step).__name__} {step!r}: a step is a reply string, pick(...), "
        "tool_call(...) (or a list of them), error(...), a ModelReply, or a callable that "
        "builds one of those from the call"
    )
