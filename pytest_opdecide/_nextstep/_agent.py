"""``Agent`` classes and the ``agent()`` entry point.

Every public method call of an ``Agent`` subclass binds a runtime for its duration: an override
(a test's ``runtime`` fixture, ``use_runtime(rt, override=True)``), else the Agent's own
(``Agent(runtime=...)``), else the caller's. Plain, ``async``, generator and async-generator
methods alike: a generator keeps the runtime of its call for every resume. ``decision.make`` and
``agent()`` inside the method then need no runtime argument.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from pytest_opdecide._nextstep._adapter import as_runtime
from pytest_opdecide._nextstep._binding import (
    bind_agent,
    current_runtime,
    no_runtime_message,
    overriding,
)
from pytest_opdecide._nextstep._messages import ToolSpec
from pytest_opdecide._nextstep._runtime import Runtime, ToolErrors

__all__ = ["Agent", "agent", "agent_async"]

F = TypeVar("F", bound=Callable[..., Any])

_METHOD_OPTION_KEYS = frozenset({"tool"})


def _bound_runtime(agent: Agent) -> Any:
    """The runtime of one method call: an override (the test's runtime, or
    ``use_runtime(rt, override=True)``), else the Agent's own, else the caller's."""
    configured = agent.runtime
    if configured is None:
        return current_runtime()
    override = overriding()
    return configured if override is None else override


def _drive_generator(agent: Agent, runtime: Any, inner: Generator[Any, Any, Any]) -> Any:
    """Run ``inner`` with the method's binding around each resume, none while it is paused."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        with bind_agent(agent, runtime):
            try:
                item = inner.send(sent) if thrown is None else inner.throw(thrown)
            except StopIteration as stop:
                return stop.value
        sent, thrown = None, None
        try:
            sent = yield item
        except GeneratorExit:
            with bind_agent(agent, runtime):
                inner.close()
            raise
        except BaseException as exc:  # thrown in by the caller: into the method's generator
            thrown = exc


async def _drive_async_generator(
    agent: Agent, runtime: Any, inner: AsyncGenerator[Any, Any]
) -> AsyncGenerator[Any, Any]:
    """The async-generator twin of :func:`_drive_generator`."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        with bind_agent(agent, runtime):
            try:
                if thrown is None:
                    item = await inner.asend(sent)
                else:
                    item = await inner.athrow(thrown)
            except StopAsyncIteration:
                return
        sent, thrown = None, None
        try:
            sent = yield item
        except GeneratorExit:
            with bind_agent(agent, runtime):
                await inner.aclose()
            raise
        except BaseException as exc:
            thrown = exc


def _bind_method(fn: F) -> F:
    # The runtime is chosen when the method is called, for every kind of method: a generator
    # keeps it for each resume, whatever its consumer has bound since.
    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        def async_gen_bound(self: Agent, *args: Any, **kwargs: Any) -> Any:
            return _drive_async_generator(self, _bound_runtime(self), fn(self, *args, **kwargs))

        async_gen_bound.__opdecide_bound__ = True  # type: ignore[attr-defined]
        return async_gen_bound  # type: ignore[return-value]

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_bound(self: Agent, *args: Any, **kwargs: Any) -> Any:
            return _drive_generator(self, _bound_runtime(self), fn(self, *args, **kwargs))

        gen_bound.__opdecide_bound__ = True  # type: ignore[attr-defined]
        return gen_bound  # type: ignore[return-value]

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_bound(self: Agent, *args: Any, **kwargs: Any) -> Any:
            with bind_agent(self, _bound_runtime(self)):
                return await fn(self, *args, **kwargs)

        async_bound.__opdecide_bound__ = True  # type: ignore[attr-defined]
        return async_bound  # type: ignore[return-value]

    @functools.wraps(fn)
    def bound(self: Agent, *args: Any, **kwargs: Any) -> Any:
        with bind_agent(self, _bound_runtime(self)):
            return fn(self, *args, **kwargs)

    bound.__opdecide_bound__ = True  # type: ignore[attr-defined]
    return bound  # type: ignore[return-value]


class Agent:
    """Base class of agents: each public method call binds a runtime for its duration.

    Args:
        runtime: The runtime this agent's methods use: a :class:`Runtime`, or any object with
            an ``exec`` method (see :func:`as_runtime`). Without one, a method uses the runtime
            of its caller (an enclosing Agent call, or ``use_runtime``, or the pytest fixture).

    Raises:
        TypeError: ``runtime`` is no runtime.

    Attributes:
        method_options: Per-method options, e.g. ``{"lookup": {"tool": True}}``: a method with
            ``tool`` set is offered as a native tool by ``agent()`` calls made inside this
            agent's methods (with the default toolset), and any method can be a decision option.

    Example:
        >>> from pytest_opdecide import Agent, decision
        >>> class Router(Agent):
        ...     def route(self, msg: str) -> str:
        ...         return decision.make(f"Route: {msg}", {"done": "DONE", "more": "MORE"})
    """

    method_options: ClassVar[dict[str, dict[str, Any]]] = {}
    runtime: Any = None

    def __init__(self, runtime: Any = None) -> None:
        if runtime is not None:
            as_runtime(runtime, where="Agent(runtime=...) got")  # refuse a non-runtime now
            self.runtime = runtime

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, value in list(vars(cls).items()):
            public = not name.startswith("_") or name == "__call__"
            if not public or not inspect.isfunction(value):
                continue
            if getattr(value, "__opdecide_bound__", False):
                continue
            setattr(cls, name, _bind_method(value))
        for name, opts in cls.method_options.items():
            if not callable(getattr(cls, name, None)):
                raise TypeError(
                    f"{cls.__name__}.method_options names {name!r}, which is not a method"
                )
            unknown = set(opts) - _METHOD_OPTION_KEYS
            if unknown:
                raise TypeError(
                    f"{cls.__name__}.method_options[{name!r}] has unknown keys {sorted(unknown)}; "
                    f"known: {sorted(_METHOD_OPTION_KEYS)}"
                )

    def opdecide_tools(self) -> list[Callable[..., Any]]:
        """The bound methods marked ``{"tool": True}`` in ``method_options``."""
        return [
            getattr(self, name)
            for name, opts in type(self).method_options.items()
            if opts.get("tool")
        ]


def _runtime_for(runtime: Any) -> Runtime:
    chosen = runtime if runtime is not None else current_runtime()
    if chosen is None:
        raise RuntimeError(no_runtime_message())
    return as_runtime(chosen)


def agent(
    prompt: str | Sequence[Any],
    *,
    choices: Any = None,
    tools: Iterable[Callable[..., Any] | ToolSpec] | None = None,
    toolset: str | None = None,
    context: Mapping[str, Any] | None = None,
    response_format: Any = None,
    model: str | None = None,
    max_iterations: int = 20,
    timeout_s: float | None = None,
    tool_errors: ToolErrors | None = None,
    runtime: Any = None,
) -> Any:
    """Run a full working turn on the enclosing call's runtime; decide last with ``choices``.

    Without ``choices`` it returns the reply text. With ``choices`` the model works first (tools,
    reasoning) and closes with a JSON pick, which is resolved and returned as is: a picked
    function's return value, a value option's value, or ``{"decision": name, **fields}``.
    Arguments are those of :meth:`Runtime.exec`; ``runtime`` overrides the bound runtime.

    Raises:
        RuntimeError: No runtime is bound and none was passed.
        DecisionError: With ``choices``: no valid pick after the re-pick.
    """
    return _runtime_for(runtime).exec(
        prompt,
        tools=tools,
        toolset=toolset,
        choices=choices,
        context=context,
        response_format=response_format,
        model=model,
        max_iterations=max_iterations,
        timeout_s=timeout_s,
        tool_errors=tool_errors,
    )


async def agent_async(
    prompt: str | Sequence[Any],
    *,
    choices: Any = None,
    tools: Iterable[Callable[..., Any] | ToolSpec] | None = None,
    toolset: str | None = None,
    context: Mapping[str, Any] | None = None,
    response_format: Any = None,
    model: str | None = None,
    max_iterations: int = 20,
    timeout_s: float | None = None,
    tool_errors: ToolErrors | None = None,
    runtime: Any = None,
) -> Any:
    """The asyncio twin of :func:`agent`."""
    return await _runtime_for(runtime).exec_async(
        prompt,
        tools=tools,
        toolset=toolset,
        choices=choices,
        context=context,
        response_format=response_format,
        model=model,
        max_iterations=max_iterations,
        timeout_s=timeout_s,
        tool_errors=tool_errors,
    )
