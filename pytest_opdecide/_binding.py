"""The enclosing-call runtime binding, held in context variables.

Context variables give every asyncio task and every thread its own view: concurrent agents never
see each other's runtime. ``asyncio`` tasks inherit a copy of the context they were created in;
new threads start empty unless started through ``contextvars.copy_context().run``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_opdecide._runtime import Runtime

__all__ = [
    "NO_RUNTIME_MESSAGE",
    "current_agent",
    "current_parent",
    "current_runtime",
    "use_runtime",
]

NO_RUNTIME_MESSAGE = (
    "no runtime available — call this inside an Agent method, or pass runtime= explicitly."
)

_runtime: ContextVar[Runtime | None] = ContextVar("opdecide_runtime", default=None)
_agent: ContextVar[Any] = ContextVar("opdecide_agent", default=None)
_parent: ContextVar[int | None] = ContextVar("opdecide_parent_call", default=None)


def current_runtime() -> Runtime | None:
    """The runtime bound by the enclosing Agent call (or :func:`use_runtime`), if any."""
    return _runtime.get()


def current_agent() -> Any:
    """The Agent whose method is running, if any."""
    return _agent.get()


def current_parent() -> int | None:
    """The id of the model call whose tool is running, if any (links nested calls in the trace)."""
    return _parent.get()


@contextlib.contextmanager
def use_runtime(runtime: Runtime | None) -> Iterator[Runtime | None]:
    """Bind ``runtime`` for the enclosed code, as an Agent method call does.

    Example:
        >>> from pytest_opdecide import use_runtime
        >>> with use_runtime(None):
        ...     pass
    """
    token = _runtime.set(runtime)
    try:
        yield runtime
    finally:
        _runtime.reset(token)


@contextlib.contextmanager
def bind_agent(agent: Any, runtime: Runtime | None) -> Iterator[None]:
    """Bind an agent and its runtime for one method call."""
    runtime_token = _runtime.set(runtime)
    agent_token = _agent.set(agent)
    try:
        yield
    finally:
        _agent.reset(agent_token)
        _runtime.reset(runtime_token)


@contextlib.contextmanager
def parent_call(call_id: int | None) -> Iterator[None]:
    """Mark model calls made in the enclosed code as children of ``call_id``."""
    token = _parent.set(call_id)
    try:
        yield
    finally:
        _parent.reset(token)
