"""The enclosing-call runtime binding, held in context variables.

Context variables give every asyncio task and every thread its own view: concurrent agents never
see each other's runtime. ``asyncio`` tasks inherit a copy of the context they were created in;
new threads start empty unless started through ``contextvars.copy_context().run``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = [
    "NO_RUNTIME_MESSAGE",
    "bind_runtime",
    "current_agent",
    "current_parent",
    "current_runtime",
]

NO_RUNTIME_MESSAGE = (
    "no runtime available — call this inside an Agent method, or pass runtime= explicitly."
)

_runtime: ContextVar[Any] = ContextVar("opdecide_runtime", default=None)
_agent: ContextVar[Any] = ContextVar("opdecide_agent", default=None)
_parent: ContextVar[tuple[Any, int] | None] = ContextVar("opdecide_parent_call", default=None)


def current_runtime() -> Any:
    """The runtime bound by the enclosing Agent call (or :func:`~pytest_opdecide.use_runtime`),
    if any: the object that was bound (a :class:`~pytest_opdecide.Runtime`, or an object with
    ``exec``)."""
    return _runtime.get()


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
def bind_runtime(runtime: Any) -> Iterator[Any]:
    """Bind ``runtime`` for the enclosed code, unchecked (the public, checking form is
    :func:`pytest_opdecide.use_runtime`)."""
    token = _runtime.set(runtime)
    try:
        yield runtime
    finally:
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
    token = _parent.set(None if call_id is None or trace is None else (trace, call_id))
    try:
        yield
    finally:
        _parent.reset(token)
