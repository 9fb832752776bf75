"""The enclosing-call runtime binding, held in context variables.

Context variables give every asyncio task and every thread its own view: concurrent agents never
see each other's runtime. ``asyncio`` tasks inherit a copy of the context they were created in;
new threads start empty unless started through ``contextvars.copy_context().run``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any

__all__ = [
    "NO_RUNTIME_MESSAGE",
    "bind_runtime",
    "current_agent",
    "current_parent",
    "current_runtime",
    "enter_parent_call",
    "leave_parent_call",
    "no_runtime_message",
    "overriding",
    "set_no_runtime_hint",
]

NO_RUNTIME_MESSAGE = (
    "no runtime available — call this inside an Agent method, or pass runtime= explicitly."
)

_runtime: ContextVar[Any] = ContextVar("opdecide_runtime", default=None)
_override: ContextVar[Any] = ContextVar("opdecide_override", default=None)
_agent: ContextVar[Any] = ContextVar("opdecide_agent", default=None)
_parent: ContextVar[tuple[Any, int] | None] = ContextVar("opdecide_parent_call", default=None)


def current_runtime() -> Any:
    """The runtime bound by the enclosing Agent call (or :func:`~pytest_opdecide.use_runtime`),
    if any: the object that was bound (a :class:`~pytest_opdecide.Runtime`, or an object with
    ``exec``)."""
    return _runtime.get()


def overriding() -> Any:
    """The runtime that replaces the runtimes Agents were built with, if any
    (``use_runtime(rt, override=True)``, or a test's ``runtime`` fixture)."""
    return _override.get()


# What a model call with no runtime is told inside a pytest test (set by the plugin for each
# test, process-wide like the guard); ``None`` outside tests, where the message stays as it is.
_no_runtime_hint: Callable[[], str] | None = None


def set_no_runtime_hint(hint: Callable[[], str] | None) -> Callable[[], str] | None:
    """Set what makes the message of a model call with no runtime (the plugin's, during a
    test: it names the ``runtime`` fixture and the marker); returns the previous one, for the
    caller to restore. ``None``: :data:`NO_RUNTIME_MESSAGE`."""
    global _no_runtime_hint
    previous, _no_runtime_hint = _no_runtime_hint, hint
    return previous


def no_runtime_message() -> str:
    """The message of the ``RuntimeError`` of a model call with no runtime: in a pytest test,
    the plugin's (naming the ``runtime`` fixture and the marker), else
    :data:`NO_RUNTIME_MESSAGE`."""
    hint = _no_runtime_hint
    return NO_RUNTIME_MESSAGE if hint is None else hint()


def current_agent() -> Any:
    """The Agent whose method is running, if any."""
    return _agent.get()


def current_parent(trace: Any) -> int | None:
    """The id of the call, in ``trace``, whose tool or option function is running, if any.

    Links nested calls in the trace. A call made by another runtime is not a parent here:
    ids are only meaningful within one trace.
    """
    found = _parent.get()
    if found is None or found[0] is not trace:
        return None
    return found[1]


@contextlib.contextmanager
def bind_runtime(runtime: Any, *, override: bool = False) -> Iterator[Any]:
    """Bind ``runtime`` for the enclosed code, unchecked (the public, checking form is
    :func:`pytest_opdecide.use_runtime`).

    With ``override``, Agent method calls in the enclosed code use ``runtime`` even when the
    Agent was built with its own (``Agent(runtime=...)``). A plain binding nested inside an
    override changes the runtime of the code that has none of its own, and leaves the override
    in force: an Agent's configured runtime is never reached inside an override.
    """
    token = _runtime.set(runtime)
    override_token = _override.set(runtime) if override else None
    try:
        yield runtime
    finally:
        if override_token is not None:
            _override.reset(override_token)
        _runtime.reset(token)


@contextlib.contextmanager
def bind_agent(agent: Any, runtime: Any) -> Iterator[None]:
    """Bind an agent and its runtime for one method call."""
    runtime_token = _runtime.set(runtime)
    agent_token = _agent.set(agent)
    try:
        yield
    finally:
        _agent.reset(agent_token)
        _runtime.reset(runtime_token)


@contextlib.contextmanager
def parent_call(trace: Any, call_id: int | None) -> Iterator[None]:
    """Mark model calls made in the enclosed code (in ``trace``) as children of ``call_id``."""
    token = enter_parent_call(trace, call_id)
    try:
        yield
    finally:
        leave_parent_call(token)


def enter_parent_call(trace: Any, call_id: int | None) -> Token[tuple[Any, int] | None]:
    """:func:`parent_call` without a context manager (on every invoked option, where the
    generator-based one costs more than the call it wraps): pass what it returns to
    :func:`leave_parent_call` in a ``finally``."""
    return _parent.set(None if call_id is None or trace is None else (trace, call_id))


def leave_parent_call(token: Token[tuple[Any, int] | None]) -> None:
    """End what :func:`enter_parent_call` began."""
    _parent.reset(token)
