"""The Runtime base class: one model turn per subclass, everything else shared.

A subclass implements a single model call (:meth:`Runtime.call_model` or
:meth:`Runtime.call_model_async`). The base class owns the rest, identically for every runtime,
real or fake: content blocks, the decision menu and finish instruction of ``exec(choices=...)``,
the native tool loop, re-picks and the call trace.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pytest_opdecide._nextstep._binding import (
    current_agent,
    current_parent,
    enter_parent_call,
    leave_parent_call,
)
from pytest_opdecide._nextstep._content import content_blocks
from pytest_opdecide._nextstep._decision_errors import ToolLoopError
from pytest_opdecide._nextstep._field_types import json_dumps
from pytest_opdecide._nextstep._messages import (
    Message,
    ModelReply,
    ModelRequest,
    ToolCall,
    ToolSpec,
)
from pytest_opdecide._nextstep._option_forms import callable_name
from pytest_opdecide._nextstep._options import Option, _function_option, normalize_options
from pytest_opdecide._nextstep._procedure import (
    DECISION_FINISH_INSTRUCTION,
    call_args,
    check_context,
    check_sync_callables,
    function_kwargs,
    resolve_procedure,
    text_block,
)
from pytest_opdecide._nextstep._steps import InvokeStep, ModelStep, Procedure, Raised
from pytest_opdecide._nextstep._trace import CallRecord, CallTrace, ToolFailure
from pytest_opdecide._nextstep._validation import ParseFailure

__all__ = ["TOOL_ERRORS", "Runtime", "ToolErrors", "drive", "drive_async"]

ToolErrors = Literal["report", "raise"]
"""What a turn does when a tool raises (see ``tool_errors`` of :meth:`Runtime.exec`)."""

TOOL_ERRORS: tuple[ToolErrors, ...] = ("report", "raise")
"""What a turn does when a tool raises: ``report`` the exception to the model as the tool's
result and go on (the default), or ``raise`` it out of the turn."""


def _as_reply(reply: Any) -> ModelReply:
    if isinstance(reply, ModelReply):
        return reply
    # A runtime that returns bare text (or something stranger) still gets a trace record; the
    # decision parser turns whatever it is into a pick or a DecisionError.
    return ModelReply(text=reply)


_NEVER_AWAITABLE = frozenset({str, int, float, bool, type(None), dict, list, tuple, ModelReply})
"""What most options and tools return: told apart from an awaitable by its type alone (the test
of ``inspect.isawaitable`` reaches ``collections.abc.Awaitable``'s check on every step)."""


def awaitable(value: Any) -> bool:
    """``inspect.isawaitable(value)``, answered by the type alone for plain results."""
    return type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value)


def drive(procedure: Procedure[Any], runtime: Runtime | None) -> Any:
    """Run a procedure synchronously."""
    try:
        sent: Any = None
        while True:
            try:
                step = procedure.send(sent)
            except StopIteration as stop:
                return stop.value
            if isinstance(step, ModelStep):
                assert runtime is not None
                sent = runtime._opdecide_call(step)
            else:
                token = enter_parent_call(runtime and runtime.trace, step.parent)
                try:
                    sent = step.function(*step.args, **step.kwargs)
                except Exception as error:
                    if not step.catch:
                        raise
                    sent = Raised(error)
                finally:
                    leave_parent_call(token)
                if awaitable(sent):
                    if inspect.iscoroutine(sent):
                        sent.close()
                    raise TypeError(
                        f"{_describe(step.function)} returned an awaitable on the sync path; "
                        "use the async API (exec_async, decision.make_async, agent_async)"
                    )
    finally:
        procedure.close()


async def drive_async(procedure: Procedure[Any], runtime: Runtime | None) -> Any:
    """Run a procedure on the event loop, awaiting async runtimes, tools and options."""
    try:
        sent: Any = None
        while True:
            try:
                step = procedure.send(sent)
            except StopIteration as stop:
                return stop.value
            if isinstance(step, ModelStep):
                assert runtime is not None
                sent = await runtime._opdecide_call_async(step)
            else:
                token = enter_parent_call(runtime and runtime.trace, step.parent)
                try:
                    sent = step.function(*step.args, **step.kwargs)
                    if awaitable(sent):
                        sent = await sent
                except Exception as error:
                    if not step.catch:
                        raise
                    sent = Raised(error)
                finally:
                    leave_parent_call(token)
    finally:
        procedure.close()


def _describe(fn: Callable[..., Any]) -> str:
    return repr(getattr(fn, "__qualname__", fn))


class Runtime:
    """Base class of every runtime: subclass it and implement one model call.

    Implement :meth:`call_model` (blocking) or :meth:`call_model_async` (asyncio), or both.
    Everything else (the tool loop, decisions, re-picks, the trace) is shared.

    Args:
        model: The default model name sent with each request.
        tools: The ``"default"`` toolset: functions offered as native tools by ``exec`` when
            neither ``tools`` nor ``toolset`` is given.
        toolsets: More named toolsets, selected with ``exec(toolset="name")``.

    Example:
        >>> from pytest_opdecide import Runtime, ModelReply
        >>> class Echo(Runtime):
        ...     def call_model(self, request):
        ...         return ModelReply(text=request.prompt.upper())
        >>> Echo().exec("hello")
        'HELLO'
    """

    __opdecide_runtime__: ClassVar[bool] = True

    tool_errors: ToolErrors = "report"
    """What a turn does when a tool raises (``exec(tool_errors=...)`` overrides it for one
    turn): ``"report"`` the exception to the model as the tool's result, or ``"raise"`` it."""

    if not TYPE_CHECKING:  # invisible to mypy, which would take every attribute for valid

        def __getattr__(self, name: str) -> Any:
            # Reached only when normal lookup fails. A class that inherits from this one and
            # from another runtime base whose __init__ does not call super().__init__() (as
            # OpenProgram's Runtime does not) never ran ours: its state is made on first use.
            if name == "trace":
                value: Any = CallTrace()
            elif name == "toolsets":
                value = {"default": []}
            elif name == "model":
                value = None
            else:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            setattr(self, name, value)
            return value

    def __init__(
        self,
        *,
        model: str | None = None,
        tools: Iterable[Callable[..., Any]] = (),
        toolsets: Mapping[str, Iterable[Callable[..., Any]]] | None = None,
    ) -> None:
        self.model = model
        self.trace = CallTrace()
        self.toolsets: dict[str, list[Callable[..., Any]]] = {"default": list(tools)}
        for name, members in (toolsets or {}).items():
            if name == "none":
                raise ValueError("'none' is reserved: it means no tools")
            self.toolsets[name] = list(members)

    # --- the trace, as tests read it --------------------------------------------------------

    @property
    def calls(self) -> list[CallRecord]:
        """Every model call made, in order (``.prompt``, ``.menu``, ``.options``, ``.tools``,
        ``.kind``, ``.reply``, ``.parent``): the same for fake and real runtimes."""
        return self.trace.calls

    @property
    def last_call(self) -> CallRecord:
        """The most recent model call.

        Raises:
            AssertionError: No call was made yet.
        """
        calls = self.trace.calls
        if not calls:
            raise AssertionError(f"{type(self).__name__} received no model call yet")
        return calls[-1]

    def _opdecide_injected(self) -> Any:
        """What a function option's ``runtime`` parameter receives: this runtime."""
        return self

    # --- what subclasses implement -------------------------------------------------------------

    def call_model(self, request: ModelRequest) -> ModelReply:
        """Make one model call and return its reply (blocking).

        The default runs :meth:`call_model_async` when only that one is implemented.
        """
        if type(self).call_model_async is not Runtime.call_model_async:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self.call_model_async(request))
            raise RuntimeError(
                f"{type(self).__name__} implements only call_model_async and an event loop is "
                "running: use the async API (exec_async, decision.make_async, agent_async)"
            )
        raise NotImplementedError(
            f"{type(self).__name__} must implement call_model(request) or call_model_async(request)"
        )

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        """Make one model call and return its reply (asyncio).

        The default runs :meth:`call_model` in a worker thread.
        """
        if type(self).call_model is Runtime.call_model:
            raise NotImplementedError(
                f"{type(self).__name__} must implement call_model(request) or "
                "call_model_async(request)"
            )
        return await asyncio.to_thread(self.call_model, request)

    # --- recording -----------------------------------------------------------------------------

    def _opdecide_record(
        self,
        step: ModelStep,
        call_id: int,
        start: float,
        reply: ModelReply | None,
        error: BaseException | None,
    ) -> CallRecord:
        record = CallRecord(
            call_id,
            step.request.kind,
            step.parent,
            step.request,
            reply,
            error,
            time.perf_counter() - start,
        )
        self.trace.add(record)
        return record

    def _opdecide_call(self, step: ModelStep) -> CallRecord:
        call_id = self.trace.next_id()
        start = time.perf_counter()
        try:
            reply = self.call_model(step.request)
        except BaseException as exc:
            self._opdecide_record(step, call_id, start, None, exc)
            raise
        if type(reply) is not ModelReply:
            reply = _as_reply(reply)
        request = step.request  # recorded inline: this is every decision's hot path
        record = CallRecord(
            call_id, request.kind, step.parent, request, reply, None, time.perf_counter() - start
        )
        self.trace.add(record)
        return record

    async def _opdecide_call_async(self, step: ModelStep) -> CallRecord:
        call_id = self.trace.next_id()
        start = time.perf_counter()
        try:
            reply = _as_reply(await self.call_model_async(step.request))
        except BaseException as exc:
            self._opdecide_record(step, call_id, start, None, exc)
            raise
        return self._opdecide_record(step, call_id, start, reply, None)

    # --- exec ----------------------------------------------------------------------------------

    def exec(
        self,
        content: str | Sequence[Any],
        *,
        tools: Iterable[Callable[..., Any] | ToolSpec] | None = None,
        toolset: str | None = None,
        choices: Any = None,
        context: Mapping[str, Any] | None = None,
        response_format: Any = None,
        model: str | None = None,
        max_iterations: int = 20,
        timeout_s: float | None = None,
        tool_errors: ToolErrors | None = None,
    ) -> Any:
        """Run one turn: the model works (with native tools), then replies.

        Args:
            content: A string or a list of content blocks (``{"type": "text", "text": ...}``).
            tools: Functions (or :class:`ToolSpec`) offered as native tools.
            toolset: A registered toolset name; ``"none"`` offers no tools. With neither
                ``tools`` nor ``toolset``, the ``"default"`` toolset (plus the tool methods of
                the Agent whose method is running) is offered.
            choices: Options (dict or list form). When given, the finish instruction and the
                menu are appended as an extra text block, and the turn's final reply is resolved
                as a decision (one re-pick on a bad reply).
            context: Values for context parameters of function options.
            response_format: Passed to the model call; a pydantic model class also validates
                the reply text (JSON) into an instance.
            model: Overrides the runtime's default model for this turn.
            max_iterations: The most model calls one turn may make in its tool loop.
            timeout_s: A time limit passed with each model call.
            tool_errors: What happens when a tool raises an ``Exception``: ``"report"`` sends
                ``"Error: {type}: {text}"`` back to the model as the tool's result and the turn
                goes on (as OpenProgram's agent loop does; the call's record lists it in
                ``tool_failures``); ``"raise"`` lets the exception out of the turn. Default:
                the runtime's :attr:`tool_errors` (``"report"``).

        Returns:
            The reply text, the validated ``response_format`` instance, or (with ``choices``)
            the resolved decision: a picked function's return value, a value option's value, or
            ``{"decision": name, **fields}`` for a schema option.

        Raises:
            DecisionError: With ``choices``: no valid pick after the re-pick.
            ToolLoopError: The model still asked for tools after ``max_iterations`` calls.
        """
        procedure = self._opdecide_exec_procedure(
            content,
            tools,
            toolset,
            choices,
            context,
            response_format,
            model,
            max_iterations,
            timeout_s,
            tool_errors,
            sync=True,
        )
        return drive(procedure, self)

    async def exec_async(
        self,
        content: str | Sequence[Any],
        *,
        tools: Iterable[Callable[..., Any] | ToolSpec] | None = None,
        toolset: str | None = None,
        choices: Any = None,
        context: Mapping[str, Any] | None = None,
        response_format: Any = None,
        model: str | None = None,
        max_iterations: int = 20,
        timeout_s: float | None = None,
        tool_errors: ToolErrors | None = None,
    ) -> Any:
        """The asyncio twin of :meth:`exec`: async tools and function options are awaited."""
        procedure = self._opdecide_exec_procedure(
            content,
            tools,
            toolset,
            choices,
            context,
            response_format,
            model,
            max_iterations,
            timeout_s,
            tool_errors,
            sync=False,
        )
        return await drive_async(procedure, self)

    def _opdecide_exec_procedure(
        self,
        content: Any,
        tools: Iterable[Callable[..., Any] | ToolSpec] | None,
        toolset: str | None,
        choices: Any,
        context: Mapping[str, Any] | None,
        response_format: Any,
        model: str | None,
        max_iterations: int,
        timeout_s: float | None,
        tool_errors: ToolErrors | None,
        *,
        sync: bool,
    ) -> Procedure[Any]:
        # Everything that can be checked is checked here, before the first model call.
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
            raise TypeError(f"max_iterations must be an int >= 1, got {max_iterations!r}")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        if tool_errors is None:
            tool_errors = self.tool_errors
            where = f"{type(self).__name__}.tool_errors"
        else:
            where = "tool_errors"
        if tool_errors not in TOOL_ERRORS:
            raise ValueError(
                f"{where} must be 'report' (a tool's exception goes back to the model as its "
                f"result) or 'raise' (it ends the turn), got {tool_errors!r}"
            )
        blocks = content_blocks(content)
        menu = None
        if choices is not None:
            menu = normalize_options(choices)
            check_context(menu, context)
            if sync:
                check_sync_callables(menu, "exec")
            blocks = (*blocks, text_block(DECISION_FINISH_INSTRUCTION + menu.text))
        offered = self._opdecide_tools(tools, toolset)
        return self._opdecide_turn(
            blocks,
            offered,
            menu,
            context,
            response_format,
            model or self.model,
            max_iterations,
            timeout_s,
            tool_errors == "report",
        )

    def _opdecide_turn(
        self,
        blocks: tuple[Mapping[str, Any], ...],
        offered: dict[str, tuple[ToolSpec, Option]],
        menu: Any,
        context: Mapping[str, Any] | None,
        response_format: Any,
        model: str | None,
        max_iterations: int,
        timeout_s: float | None,
        report_errors: bool = True,
    ) -> Procedure[Any]:
        specs = tuple(spec for spec, _ in offered.values())
        messages: list[Message] = [Message("user", blocks)]
        parent = current_parent(self.trace)
        kind: Any = "turn"
        for iteration in range(1, max_iterations + 1):
            request = ModelRequest(
                kind,
                tuple(messages),
                specs,
                model,
                response_format,
                timeout_s,
                None if menu is None else menu.text,
                () if menu is None else menu.names,
                menu,
            )
            record: CallRecord = yield ModelStep(request, parent)
            assert record.reply is not None
            reply: ModelReply = record.reply
            if not reply.tool_calls:
                break
            if iteration == max_iterations:
                # The model still wants tools, but no call is left to read their results.
                raise ToolLoopError(
                    f"the model still asked for tools after max_iterations={max_iterations} "
                    "model calls; raise max_iterations, or check what the tools return"
                )
            said = (text_block(reply.text),) if isinstance(reply.text, str) and reply.text else ()
            messages.append(Message("assistant", said, tool_calls=tuple(reply.tool_calls)))
            for call in reply.tool_calls:
                result = yield from self._opdecide_run_tool(
                    call, offered, record, context, report_errors
                )
                messages.append(
                    Message("tool", (text_block(result),), tool_call_id=call.id, name=call.name)
                )
            parent, kind = record.id, "tool_round"
        if menu is not None:
            return (
                yield from resolve_procedure(
                    reply.text,
                    menu,
                    context=context,
                    max_retries=1,
                    runtime=self._opdecide_injected(),
                    parent=record.id,
                    model=model,
                    timeout_s=timeout_s,
                )
            )
        if isinstance(response_format, type) and hasattr(response_format, "model_validate_json"):
            return response_format.model_validate_json(reply.text)
        return reply.text

    # --- tools ---------------------------------------------------------------------------------

    def _opdecide_tools(
        self, tools: Iterable[Callable[..., Any] | ToolSpec] | None, toolset: str | None
    ) -> dict[str, tuple[ToolSpec, Option]]:
        chosen: list[Callable[..., Any] | ToolSpec] = []
        if toolset == "none":
            if tools:
                raise ValueError(
                    "toolset='none' offers no tools, but tools=[...] were given: drop one of them"
                )
        elif toolset is None and tools is not None:
            pass
        elif toolset is None or toolset == "default":
            chosen.extend(self.toolsets.get("default", ()))
            agent = current_agent()
            if agent is not None and hasattr(agent, "opdecide_tools"):
                chosen.extend(agent.opdecide_tools())
        elif toolset in self.toolsets:
            chosen.extend(self.toolsets[toolset])
        else:
            names = sorted({"none", "default", *self.toolsets})
            raise ValueError(f"Unknown toolset {toolset!r}; registered toolsets: {names}")
        if tools is not None:
            if isinstance(tools, str | bytes) or not isinstance(tools, Iterable):
                raise TypeError(f"tools must be a list of functions, got {type(tools).__name__}")
            chosen.extend(tools)
        offered: dict[str, tuple[ToolSpec, Option]] = {}
        for tool in chosen:
            spec, option = tool_spec(tool)
            if spec.name in offered and offered[spec.name][0].function is not spec.function:
                raise ValueError(f"Two different tools are named {spec.name!r}")
            offered[spec.name] = (spec, option)
        return offered

    def _opdecide_run_tool(
        self,
        call: ToolCall,
        offered: dict[str, tuple[ToolSpec, Option]],
        record: CallRecord,
        context: Mapping[str, Any] | None,
        report_errors: bool = True,
    ) -> Procedure[str]:
        """Run one tool call; model mistakes (and, with ``report_errors``, the tool's own
        exceptions) are reported back to the model as the result."""
        entry = offered.get(call.name) if isinstance(call.name, str) else None
        if entry is None:
            return f"Error: unknown tool {call.name!r}. Available tools: {sorted(offered)}"
        spec, option = entry
        args: Any = call.arguments
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return f"Error: the arguments of {call.name!r} are not valid JSON: {args[:200]!r}"
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            kind = type(args).__name__
            return f"Error: the arguments of {call.name!r} must be an object, got {kind}"
        try:
            kwargs = function_kwargs(option, args, context, self._opdecide_injected(), label="Tool")
        except ParseFailure as failure:
            return f"Error: {failure.message}"
        positional, kw = call_args(option, kwargs)
        result = yield InvokeStep(spec.function, positional, kw, record.id, report_errors)
        if type(result) is Raised:
            error = result.error
            text = _error_text(error)
            record.tool_failures = (*record.tool_failures, ToolFailure(call, error, text))
            return text
        if isinstance(result, str):
            return result
        try:
            return json_dumps(result)
        except (TypeError, ValueError):
            return str(result)


_ERROR_TEXT_LIMIT = 2000
"""The most characters of an exception's text a tool's error result carries."""


def _error_text(error: Exception) -> str:
    """A failed tool's result as the model reads it: ``Error: {type}: {text}``."""
    try:
        text = str(error)
    except Exception:  # an exception whose __str__ fails still gets reported
        text = ""
    if len(text) > _ERROR_TEXT_LIMIT:
        text = text[:_ERROR_TEXT_LIMIT] + "..."
    name = type(error).__name__
    return f"Error: {name}: {text}" if text else f"Error: {name}"


def tool_spec(tool: Callable[..., Any] | ToolSpec) -> tuple[ToolSpec, Option]:
    """The native tool definition of a function (its name, docstring and argument schema)."""
    if isinstance(tool, ToolSpec):
        return tool, _function_option(tool.name, tool.function, tool.description)
    if not callable(tool):
        raise TypeError(f"A tool must be a function, got {type(tool).__name__}")
    name = callable_name(tool)
    option = _function_option(name, tool, None)
    parameters: dict[str, Any] = (
        option.validator.json_schema()
        if option.validator is not None
        else {"type": "object", "properties": {}, "required": []}
    )
    return ToolSpec(name, option.description, parameters, tool), option
