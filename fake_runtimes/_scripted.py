"""Scripted and function-driven fake runtimes.

They subclass the real :class:`~pytest_opdecide.Runtime` and implement only the model call, so
the tool loop, choices, re-picks and the call trace behave exactly as in production.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import operator
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fake_runtimes._closest import closest
from fake_runtimes._recorded import recorded_steps
from fake_runtimes._script_errors import ScriptExhausted, ScriptMismatch, UnusedSteps
from fake_runtimes._script_steps import (
    ErrorStep,
    FakeCall,
    Pick,
    ToolCallStep,
    check_step,
    describe_step,
    plural,
)
from pytest_opdecide import (
    ModelReply,
    ModelRequest,
    Runtime,
    ToolCall,
    Usage,
)
from pytest_opdecide.options import ParseFailure, parse_reply

__all__ = ["FakeRuntime", "FunctionRuntime", "ScriptedRuntime"]


def _tokens(text: str) -> int:
    # A plausible, deterministic count: about four characters a token.
    return max(1, (len(text) + 3) // 4) if text else 0


_SET_USAGE = tuple(getattr(Usage, f.name).__set__ for f in dataclasses.fields(Usage))
_SET_REPLY = tuple(getattr(ModelReply, f.name).__set__ for f in dataclasses.fields(ModelReply))


def _made_usage(prompt: int, completion: int, total: int) -> Usage:
    """``Usage(prompt, completion, total)``, made at once: each slot set directly, past the
    frozen dataclass's ``object.__setattr__`` per field (a fake makes one per call)."""
    made: Usage = object.__new__(Usage)
    s_prompt, s_completion, s_total = _SET_USAGE
    s_prompt(made, prompt)
    s_completion(made, completion)
    s_total(made, total)
    return made


def _made_reply(
    text: str, tool_calls: tuple[ToolCall, ...], usage: Usage, model: str | None, raw: Any
) -> ModelReply:
    """``ModelReply(text, tool_calls, usage, model, raw)``, made at once (see
    :func:`_made_usage`)."""
    made: ModelReply = object.__new__(ModelReply)
    s_text, s_tool_calls, s_usage, s_model, s_raw = _SET_REPLY
    s_text(made, text)
    s_tool_calls(made, tool_calls)
    s_usage(made, usage)
    s_model(made, model)
    s_raw(made, raw)
    return made


def _usage(
    request: ModelRequest,
    text: str,
    tool_calls: tuple[ToolCall, ...],
    prompt: str | None = None,
) -> Usage:
    """Plausible token counts of a call and its reply (``prompt``: the request's prompt, when
    the caller has read it already: a decision's one user message is not read twice)."""
    messages = request.messages
    if len(messages) == 1:
        only = messages[0]
        sent = len(prompt) if prompt is not None and only.role == "user" else len(only.text)
    else:
        sent = sum(len(m.text) for m in messages)
    tokens = max(1, (sent + 3) // 4)
    completion = _tokens(text)
    if tool_calls:
        completion += sum(
            _tokens(
                json.dumps(dict(c.arguments) if isinstance(c.arguments, Mapping) else c.arguments)
            )
            + 2
            for c in tool_calls
        )
    return _made_usage(tokens, completion, tokens + completion)


_STEP_TYPES = (ModelReply, Pick, ToolCallStep, ErrorStep)
"""The steps that are objects, not callables that build a step (a tuple: ``isinstance`` with a
tuple is quicker than with a union)."""


class FakeRuntime(Runtime):
    """Common machinery of the fakes: turning a step into a reply, strictly.

    Args:
        strict: Check scripted picks and tool calls against what each call offered.
        model: The model name reported in replies.
        tools: The ``"default"`` toolset (see :class:`~pytest_opdecide.Runtime`).
        toolsets: More named toolsets.
    """

    def __init__(
        self,
        *,
        strict: bool = True,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        super().__init__(model=model, tools=tools, toolsets=toolsets)
        self.strict = strict
        self._lock = threading.Lock()
        self._count = 0
        self._tool_ids = 0

    def _next_call(self, request: ModelRequest) -> FakeCall:
        with self._lock:
            index = self._count
            self._count += 1
        return FakeCall.of(index, request)

    def _reply(self, step: Any, call: FakeCall, position: str) -> ModelReply:
        """Turn one step into the reply for ``call``; ``position`` names the step in messages."""
        if callable(step) and not isinstance(step, _STEP_TYPES):
            built = step(call)
            if type(built) is not Pick and inspect.isawaitable(built):
                if inspect.iscoroutine(built):
                    built.close()
                raise TypeError(
                    f"{position} is an async callable; use the async API (exec_async, "
                    "decision.make_async) so that it can be awaited"
                )
            return self._built(built, call, position)
        return self._built(step, call, position)

    def _built(self, step: Any, call: FakeCall, position: str) -> ModelReply:
        if type(step) is Pick:  # the usual step, first
            return self._picked(step, call, position)
        if callable(step) and not isinstance(step, _STEP_TYPES):
            raise TypeError(f"{position} built another callable; build a step instead")
        check_step(step, position)
        request = call.request
        if isinstance(step, ErrorStep):
            exc = step.exception
            raise exc() if isinstance(exc, type) else exc
        if isinstance(step, ModelReply):
            return step
        if isinstance(step, str):
            return ModelReply(text=step, usage=_usage(request, step, ()), model=self.model)
        if isinstance(step, Pick):
            return self._picked(step, call, position)
        steps = step if isinstance(step, list) else [step]
        calls = []
        for s in steps:
            if self.strict:
                self._check_tool(s, call, position)
            with self._lock:
                self._tool_ids += 1
                call_id = f"call_{self._tool_ids}"
            calls.append(ToolCall(s.tool, dict(s.args), call_id))
        made = tuple(calls)
        return ModelReply(
            text="", tool_calls=made, usage=_usage(request, "", made), model=self.model
        )

    def _picked(self, step: Pick, call: FakeCall, position: str) -> ModelReply:
        text = step.text
        if self.strict:
            self._check_pick(step, call, position, text)
        usage = _usage(call.request, text, (), call.prompt)
        return _made_reply(text, (), usage, self.model, None)

    def _check_pick(self, step: Pick, call: FakeCall, position: str, text: str) -> None:
        """A scripted pick must pick an offered option with arguments it takes (``text``: the
        pick's JSON, as it is sent)."""
        if step.option not in call.options:
            head = f"{type(self).__name__}: {position} picks {step.option!r}"
            offered = f"options {call.options}" if call.options else "no options"
            close = closest(step.option, call.options, cutoff=0.6)
            if close is not None:  # a typo: the raw text is not what the test meant
                raise ScriptMismatch(
                    f"{head}, but {call.describe()} offered {offered}. Did you mean {close!r}?"
                )
            raise ScriptMismatch(
                f"{head}, but {call.describe()} offered {offered}.\n"
                "To send a pick of an option that was not offered, script the raw reply text "
                f"instead: {text!r}"
            )
        menu = call.request.choices
        option = getattr(menu, "by_name", {}).get(step.option)
        if option is not None:
            _check_arguments(self, position, step, text, option, menu, call)

    def _check_tool(self, step: ToolCallStep, call: FakeCall, position: str) -> None:
        if step.tool in call.tools:
            return
        offered = f"tools {call.tools}" if call.tools else "no tools"
        raise ScriptMismatch(
            f"{type(self).__name__}: {position} calls tool {step.tool!r}, but {call.describe()} "
            f"offered {offered}.\n"
            "Offer the tool to the call (tools=[...] or a toolset), or script a reply that "
            "does not call it."
        )


class _EveryKey(dict[str, Any]):
    """A context that has every key: scripted picks are checked without the caller's context."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> Any:
        return None


def _takes(option: Any) -> str:
    """What an option takes, for messages: ``name: str, seats: int = 1``."""
    parts = []
    for f in option.fields:
        part = f"{f.name}: {f.type.label}"
        if f.type.choices is not None:
            part += f" (one of {list(f.type.choices)!r})"
        if not f.required:
            part += " (optional)" if f.default is inspect.Parameter.empty else f" = {f.default!r}"
        parts.append(part)
    return ", ".join(parts) if parts else "no arguments"


# Picks found valid, by their text and what their option checks them with: the option's fields,
# hidden parameters and validator, each the very object (kept here, so that no other object can
# take its id). Normalised options share these objects across calls for as long as the option
# reads the same (a closure defined per call, a description with per-call text, a menu built
# anew), so a script's pick repeated call after call is checked once; a changed option has new
# ones and is checked again. Bounded: the oldest verdict goes first.
_accepted: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_ACCEPTED_MAX = 512


def _check_arguments(
    runtime: FakeRuntime,
    position: str,
    step: Pick,
    text: str,
    option: Any,
    menu: Any,
    call: FakeCall,
) -> None:
    what = (option.kind, option.fields, option.hidden, option.validator)
    key = (text, *map(id, what))
    kept = _accepted.get(key)
    if kept is not None and all(map(operator.is_, kept, what)):
        return
    _check_arguments_now(runtime, position, step, text, option, menu, call)
    if len(_accepted) >= _ACCEPTED_MAX:
        # All at once: dropping the oldest entry on each insertion walks past every slot a
        # dict leaves empty at its front (see pytest_opdecide's bounded caches).
        _accepted.clear()
    _accepted[key] = what


def _check_arguments_now(
    runtime: FakeRuntime,
    position: str,
    step: Pick,
    text: str,
    option: Any,
    menu: Any,
    call: FakeCall,
) -> None:
    head = f"{type(runtime).__name__}: {position} picks {step.option!r}"
    visible = [f.name for f in option.fields]
    known = {*visible, *(f.name for f in option.hidden)}  # a forged hidden value is allowed
    unknown = [name for name in step.args if name not in known]
    if unknown:
        takes = f"{option.name!r} takes: {_takes(option)}."
        name = unknown[0]
        close = closest(name, visible, cutoff=0.6)
        hint = "" if close is None else f" (did you mean {close!r}?)"
        fix = (
            "Rename or remove the argument in the step."
            if visible
            else f"Remove the arguments from the step: pick({option.name!r})."
        )
        raise ScriptMismatch(
            f"{head} with the argument {name!r}, which {option.name!r} does not take{hint}.\n"
            f"{takes}\n{fix}"
        )
    try:
        # As decision.make reads the pick once (no re-pick, no runtime), any context key given.
        parse_reply(text, menu, _EveryKey())
    except ParseFailure as error:
        takes = f"{option.name!r} takes: {_takes(option)}."
        if error.kind == "missing_required":
            missing = [f.name for f in option.fields if f.required and f.name not in step.args]
            if missing:
                listed = ", ".join(repr(m) for m in missing)
                plural_s = "s" if len(missing) > 1 else ""
                add = ", ".join(f"{m}=..." for m in missing)
                raise ScriptMismatch(
                    f"{head} without the required argument{plural_s} {listed}.\n{takes}\n"
                    f"Add {add} to the step."
                ) from None
        field = _field_of(error.message, visible)
        raise ScriptMismatch(
            f"{head}, but {call.describe()} would refuse it: {error.message}.\n{takes}\n"
            + (
                f"Give {field} a value the option accepts in the step."
                if field
                else "Change the step's arguments to what the option accepts."
            )
        ) from None


def _field_of(message: str, names: list[str]) -> str | None:
    """The argument a validation message is about (``Field 'steps[0].x' ...`` -> ``steps``)."""
    if message.startswith("Field '"):
        path = message[len("Field '") :].split("'", 1)[0]
        for name in names:
            if path == name or path.startswith((f"{name}.", f"{name}[")):
                return name
    return None


class ScriptedRuntime(FakeRuntime):
    """A fake model that replies with scripted steps, in order, strictly.

    A step is a reply string; ``pick(name, **args)``; ``tool_call(name, **args)`` (or a list
    of them, for several calls in one reply); ``error(exc)``; a ``ModelReply``; or a callable
    that builds one of those from the :class:`FakeCall` it answers.

    Strict by default: a call after the last step raises :class:`ScriptExhausted`; a scripted
    pick or tool call naming an option or tool that the call did not offer raises
    :class:`ScriptMismatch`; :meth:`assert_complete` fails on steps never used (the pytest
    fixture calls it at teardown).

    Example:
        >>> from fake_runtimes import ScriptedRuntime, pick
        >>> from pytest_opdecide import decision
        >>> runtime = ScriptedRuntime(pick("done"))
        >>> decision.make("Finished?", {"done": "DONE", "more": "MORE"}, runtime=runtime)
        'DONE'
        >>> runtime.last_call.options
        ['done', 'more']
    """

    def __init__(
        self,
        *steps: Any,
        strict: bool = True,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        super().__init__(strict=strict, model=model, tools=tools, toolsets=toolsets)
        for i, step in enumerate(steps):
            check_step(step, f"step {i}")
        self.steps: list[Any] = list(steps)
        self._used: list[FakeCall] = []

    @classmethod
    def from_recording(
        cls,
        path: str | os.PathLike[str],
        *,
        strict: bool = True,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> ScriptedRuntime:
        """A scripted fake replaying a ``RecordingRuntime`` file, one step per recorded call.

        Each step (a :class:`~pytest_opdecide.recording.RecordedReply`, editable) checks that
        its call offers the recorded options and tools, then sends the recorded reply; tool
        calls are sent as ``tool_call`` steps. Strict: a call beyond the recording fails, and
        unused steps fail :meth:`assert_complete`.

        Raises:
            FileNotFoundError: No file at ``path``.
            ValueError: The file is not a recording, or is truncated.
        """
        steps = recorded_steps(path, strict=strict)
        return cls(*steps, strict=strict, model=model, tools=tools, toolsets=toolsets)

    def add(self, *steps: Any) -> ScriptedRuntime:
        """Append more steps; returns the runtime."""
        for i, step in enumerate(steps, start=len(self.steps)):
            check_step(step, f"step {i}")
        with self._lock:
            self.steps.extend(steps)
        return self

    @property
    def remaining(self) -> list[Any]:
        """Steps not used yet."""
        return self.steps[len(self._used) :]

    def call_model(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        with self._lock:
            index = len(self._used)
            if index >= len(self.steps):
                exhausted = True
            else:
                exhausted = False
                self._used.append(call)
        if exhausted:
            raise ScriptExhausted(self._exhausted_message(call))
        return self._reply(self.steps[index], call, f"step {index}")

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        with self._lock:
            index = len(self._used)
            exhausted = index >= len(self.steps)
            if not exhausted:
                self._used.append(call)
        if exhausted:
            raise ScriptExhausted(self._exhausted_message(call))
        step = self.steps[index]
        if callable(step) and not isinstance(step, _STEP_TYPES):
            built = step(call)
            if inspect.isawaitable(built):
                built = await built
            return self._built(built, call, f"step {index}")
        return self._built(step, call, f"step {index}")

    def _script_listing(self) -> str:
        lines = []
        for i, step in enumerate(self.steps):
            used = f"  -> {self._used[i].describe()}" if i < len(self._used) else "  (unused)"
            lines.append(f"  {i}. {describe_step(step)}{used}")
        return "\n".join(lines) if lines else "  (no steps)"

    def _exhausted_message(self, call: FakeCall) -> str:
        prompt = call.prompt
        if call.menu and call.menu in prompt:  # the options are listed below: show the rest
            prompt = prompt[: prompt.index(call.menu)].rstrip()
        head = prompt if len(prompt) <= 200 else prompt[:200] + "..."
        options = f"options {call.options}" if call.options else "no options"
        tools = f"tools {call.tools}" if call.tools else "no tools"
        return (
            f"{type(self).__name__} ran out of steps: {call.describe()} is not scripted.\n"
            f"It offered {options} and {tools}.\n"
            f"Prompt head: {head!r}\n"
            f"Scripted ({plural(len(self.steps), 'step')}):\n{self._script_listing()}\n"
            "Add a step for this call, or find out why the code made one more model call."
        )

    def assert_complete(self) -> None:
        """Fail if any scripted step was never used.

        Raises:
            UnusedSteps: Naming each unused step.
        """
        unused = self.remaining
        if not unused:
            return
        start = len(self._used)
        listing = "\n".join(
            f"  {i}. {describe_step(step)}" for i, step in enumerate(unused, start=start)
        )
        raise UnusedSteps(
            f"{type(self).__name__}: "
            f"{plural(len(unused), 'scripted step was', 'scripted steps were')} never used:\n"
            f"{listing}\nThe code made {plural(len(self._used), 'model call')}; remove the unused "
            "steps, or find out why the code stopped early."
        )


class FunctionRuntime(FakeRuntime):
    """A fake model whose reply a function builds from each call: ``fn(call) -> step``.

    ``fn`` receives a :class:`FakeCall` (prompt, menu, options, tools, kind, request) and
    returns a step, as :class:`ScriptedRuntime` takes them; an async ``fn`` works on the async
    path.

    Example:
        >>> from fake_runtimes import FunctionRuntime, pick
        >>> from pytest_opdecide import decision
        >>> runtime = FunctionRuntime(lambda call: pick(call.options[-1]))
        >>> decision.make("Pick.", ["a", "b"], runtime=runtime)
        'b'
    """

    def __init__(
        self,
        fn: Callable[[FakeCall], Any],
        *,
        strict: bool = True,
        model: str | None = "fake-model",
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionRuntime needs a function, got {type(fn).__name__}")
        super().__init__(strict=strict, model=model, tools=tools, toolsets=toolsets)
        self.fn = fn

    def call_model(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        return self._reply(self.fn, call, "the function's step")

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        call = self._next_call(request)
        built = self.fn(call)
        if inspect.isawaitable(built):
            built = await built
        return self._built(built, call, "the function's step")
