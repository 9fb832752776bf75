"""Any runtime: an object with an ``exec`` method, used as a :class:`~pytest_opdecide.Runtime`.

The reference's contract for a runtime is one method: ``exec(content=[...], **kw)`` returning the
reply text. :func:`as_runtime` accepts such an object wherever a runtime is expected and wraps it
in an :class:`ExecRuntime`, which makes one ``exec`` call per model call, as the reference does,
and gives the object everything tests read: ``calls``, ``last_call``, the call trace, snapshots
and recordings.

The wrapping is invisible to the object: it is never modified, a function option's ``runtime``
parameter receives the object itself, and every adapter of one object shares one call trace
(kept as long as the object lives), so ``as_runtime(obj).calls`` lists every call made through
``obj``, however it was passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pytest_opdecide._bounded import drop_oldest
from pytest_opdecide._nextstep._binding import bind_runtime
from pytest_opdecide._nextstep._messages import ModelReply, ModelRequest
from pytest_opdecide._nextstep._response_schema import json_schema_format
from pytest_opdecide._nextstep._runtime import Runtime, awaitable
from pytest_opdecide._nextstep._trace import CallTrace

__all__ = ["ExecRuntime", "as_runtime", "use_runtime", "user_runtime"]

_ASYNC_NAMES = ("exec_async", "async_exec")
"""Async twins of ``exec`` (OpenProgram's runtimes call theirs ``async_exec``)."""


def _described(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"
    return text if len(text) <= 60 else text[:57] + "..."


def not_a_runtime(value: Any, where: str) -> TypeError:
    """The error for something passed as a runtime that is none."""
    hint = ""
    if isinstance(value, type):
        hint = f" A class is not a runtime either: pass an instance, {value.__name__}(...)."
    elif isinstance(value, str):
        hint = (
            " A model name is not a runtime: build one that calls the model, e.g. "
            f"OpenAICompatibleRuntime(base_url, model={value!r}) from pytest_opdecide.runtimes."
        )
    elif inspect.ismethod(value) and value.__name__ in ("exec", *_ASYNC_NAMES):
        owner = type(value.__self__).__name__
        hint = (
            f" This is the bound {value.__name__} method of {owner}: pass the {owner} object "
            f"itself, not its {value.__name__} method."
        )
    elif callable(value):
        hint = (
            " A function is not a runtime: wrap it in an object with an exec method, e.g. a "
            "class with def exec(self, content, **kwargs) that calls it."
        )
    return TypeError(
        f"{where} {type(value).__name__} {_described(value)}, which is not a runtime. A runtime "
        "makes the model calls; there are two ways to get one: subclass "
        "pytest_opdecide.Runtime and implement call_model(request), or pass any object with an "
        "exec(content=[...], **kwargs) method that returns the reply text (async: an async exec, "
        f"exec_async or async_exec), which is wrapped with pytest_opdecide.as_runtime.{hint}"
    )


@dataclass(frozen=True, slots=True)
class _ExecShape:
    """How to call one object's ``exec``: read once from its signature."""

    sync: Callable[..., Any] | None
    async_: Callable[..., Any] | None
    content_keyword: bool
    accepts: frozenset[str]


def _accepted(fn: Callable[..., Any]) -> tuple[bool, frozenset[str]]:
    """Whether ``content`` goes by keyword, and which optional keywords ``fn`` accepts."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no signature to read: send the content alone
        return True, frozenset()
    kinds = inspect.Parameter
    named = {
        name
        for name, p in parameters.items()
        if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
    }
    # A response format goes only to an exec that names the parameter: one that takes
    # **kwargs may hand them to code that does not expect it.
    responds = named & {"response_format"}
    if any(p.kind is kinds.VAR_KEYWORD for p in parameters.values()):
        return True, frozenset({"timeout_s", "model", "tools", *responds})
    if "content" not in named and not any(
        p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD, kinds.VAR_POSITIONAL)
        for p in parameters.values()
    ):
        raise TypeError(
            f"{_qualname(fn)} takes no content: a runtime's exec must accept the content blocks, "
            "as exec(content=[...], **kwargs)"
        )
    return "content" in named, frozenset(named & {"timeout_s", "model", "tools", "response_format"})


def _qualname(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _exec_shape(inner: Any) -> _ExecShape | None:
    """The exec methods of ``inner``, or ``None`` when it has none."""
    sync: Callable[..., Any] | None = None
    async_: Callable[..., Any] | None = None
    exec_ = getattr(inner, "exec", None)
    if callable(exec_):
        if inspect.iscoroutinefunction(exec_):
            async_ = exec_
        else:
            sync = exec_
    if async_ is None:
        for name in _ASYNC_NAMES:
            candidate = getattr(inner, name, None)
            if callable(candidate):
                async_ = candidate
                break
    if sync is None and async_ is None:
        return None
    content_keyword, accepts = _accepted(sync if sync is not None else async_)  # type: ignore[arg-type]
    return _ExecShape(sync, async_, content_keyword, accepts)


@dataclass(slots=True)
class _State:
    """What every adapter of one object shares: its call trace and how to call it."""

    trace: CallTrace
    shape: _ExecShape


# The state of an object lives as long as the object; adapters are made again when needed
# (an adapter holds its object, so a cache of adapters would keep every object alive).
_states: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()
_adapters: weakref.WeakKeyDictionary[Any, weakref.ref[ExecRuntime]] = weakref.WeakKeyDictionary()
# Objects that cannot be weakly referenced: held, a bounded number of them.
_held: dict[int, tuple[Any, _State]] = {}
_HELD_MAX = 256


def _state_of(inner: Any, where: str) -> _State:
    try:
        state = _states.get(inner)
        weak = True
    except TypeError:  # not weakly referenceable, or not hashable
        held = _held.get(id(inner))
        state = held[1] if held is not None and held[0] is inner else None
        weak = False
    if state is not None:
        return state
    shape = _exec_shape(inner)
    if shape is None:
        raise not_a_runtime(inner, where)
    state = _State(CallTrace(), shape)
    if weak:
        _states[inner] = state
    else:
        if len(_held) >= _HELD_MAX:
            drop_oldest(_held, _HELD_MAX)
        _held[id(inner)] = (inner, state)
    return state


class ExecRuntime(Runtime):
    """A runtime made of any object with an ``exec`` method (the reference's contract).

    Each model call is one ``inner.exec(content=[{"type": "text", "text": ...}], ...)``, with
    only the keyword arguments its signature accepts (read once): ``timeout_s`` when the call
    has one, ``model`` when one is asked for, ``tools`` (the functions) when the call offers
    native tools, and ``response_format`` when ``exec`` names that parameter: the caller's
    (``exec(response_format=...)``), else, on a decision call that offers no tools, the menu's
    JSON schema as an OpenAI-style ``{"type": "json_schema", "json_schema": {"name":
    "decision", "schema": ...}}`` (structured decisions; ``structured_decisions="never"``
    turns that off). ``exec`` returns the reply text. Everything else is the base class's, as for
    every runtime: the decision menu and finish instruction of ``exec(choices=...)``, re-picks,
    and the call trace, so ``calls``, ``last_call``, snapshots and recordings work unchanged.

    You rarely build one: every API that takes a runtime wraps such an object for you. Use
    :func:`as_runtime` to read its trace. Every adapter of one object shares its trace.

    The async API awaits an ``async def exec``, ``exec_async`` or ``async_exec``; a sync
    ``exec`` runs in a worker thread there. On the sync API, an object with only an async exec
    is run with ``asyncio.run`` when no event loop is running.

    Args:
        inner: The object that makes the model calls.
        structured_decisions: ``"auto"`` (the default): an ``exec`` that names a
            ``response_format`` parameter gets the menu's schema on decision calls.
            ``"never"``: it gets only the caller's. There is no fallback as in
            ``OpenAICompatibleRuntime``: the object's errors are its own, so use ``"never"``
            when its backend refuses the schema.

    Raises:
        TypeError: ``inner`` has no ``exec`` (nor an async twin), or its ``exec`` takes no
            content.
        ValueError: ``structured_decisions`` is neither ``"auto"`` nor ``"never"``.

    Example:
        >>> from pytest_opdecide import ExecRuntime, decision
        >>> class Echo:
        ...     def exec(self, content, timeout_s=None):
        ...         return '{"call": "done"}'
        >>> runtime = ExecRuntime(Echo())
        >>> decision.make("Finished?", {"done": "DONE", "more": "MORE"}, runtime=runtime)
        'DONE'
        >>> runtime.last_call.options
        ['done', 'more']
    """

    inner: Any
    """The object whose ``exec`` makes the model calls."""

    structured_decisions: Literal["auto", "never"]
    """Whether an ``exec`` that takes ``response_format`` gets the menu's schema."""

    def __init__(
        self, inner: Any, *, structured_decisions: Literal["auto", "never"] = "auto"
    ) -> None:
        if structured_decisions not in ("auto", "never"):
            raise ValueError(
                "structured_decisions of an ExecRuntime must be 'auto' or 'never', got "
                f"{structured_decisions!r}"
            )
        if isinstance(inner, ExecRuntime):
            inner = inner.inner
        state = _state_of(inner, "ExecRuntime() got")
        super().__init__()
        self.inner = inner
        self.trace = state.trace
        self.structured_decisions = structured_decisions
        self._opdecide_shape = state.shape

    def __repr__(self) -> str:
        return f"ExecRuntime({self.inner!r})"

    def _opdecide_injected(self) -> Any:
        return self.inner

    def _opdecide_arguments(self, request: ModelRequest) -> tuple[tuple[Any, ...], dict[str, Any]]:
        shape = self._opdecide_shape
        content = [dict(block) for block in request.blocks]
        kwargs: dict[str, Any] = {}
        if request.timeout_s is not None and "timeout_s" in shape.accepts:
            kwargs["timeout_s"] = request.timeout_s
        if request.model is not None and "model" in shape.accepts:
            kwargs["model"] = request.model
        if request.tools:
            if "tools" not in shape.accepts:
                raise TypeError(
                    f"{type(self.inner).__name__}.exec takes no tools, but this call offers "
                    f"the tools {request.tool_names}: pass toolset='none' (or no tools) to "
                    "this call, or use a runtime whose exec takes tools=[...]"
                )
            kwargs["tools"] = [spec.function for spec in request.tools]
        if "response_format" in shape.accepts:
            if request.response_format is not None:
                kwargs["response_format"] = request.response_format
            elif self.structured_decisions == "auto" and not request.tools:
                schema = request.response_schema
                if schema is not None:
                    kwargs["response_format"] = json_schema_format(schema)
        if shape.content_keyword:
            kwargs["content"] = content
            return (), kwargs
        return (content,), kwargs

    def _opdecide_reply(self, result: Any) -> ModelReply:
        if isinstance(result, str):
            return ModelReply(text=result)
        raise TypeError(
            f"{type(self.inner).__name__}.exec returned {type(result).__name__} "
            f"{_described(result)}: a runtime's exec must return the model's reply as a str"
        )

    def call_model(self, request: ModelRequest) -> ModelReply:
        shape = self._opdecide_shape
        if shape.sync is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self.call_model_async(request))
            raise RuntimeError(
                f"{type(self.inner).__name__} has only an async exec and an event loop is "
                "running: use the async API (decision.make_async, agent_async, exec_async)"
            )
        args, kwargs = self._opdecide_arguments(request)
        result = shape.sync(*args, **kwargs)
        if awaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(
                f"{type(self.inner).__name__}.exec returned an awaitable on the sync path: use "
                "the async API (decision.make_async, agent_async, exec_async)"
            )
        return self._opdecide_reply(result)

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        shape = self._opdecide_shape
        args, kwargs = self._opdecide_arguments(request)
        if shape.async_ is not None:
            result = shape.async_(*args, **kwargs)
        else:
            assert shape.sync is not None
            result = await asyncio.to_thread(shape.sync, *args, **kwargs)
        if awaitable(result):
            result = await result
        return self._opdecide_reply(result)


_DRIVEN: set[type] = set()
"""Runtime classes driven through their own model call (found once per class)."""


def _runtime_base(kind: type) -> Any:
    """The ``Runtime`` class among ``kind``'s bases, or ``None``.

    Found by its marker rather than by ``isinstance``: a test suite that runs pytest in-process
    (pytester) imports this package's modules again, and a runtime made by one import is still
    a runtime for the other.
    """
    for base in kind.__mro__:
        if "__opdecide_runtime__" in base.__dict__:
            return base
    return None


def _driven(kind: type) -> bool:
    """Whether a class is a runtime driven through its own model call: a ``Runtime`` that
    implements one, or keeps ``Runtime.exec`` (a class with an ``exec`` of its own and no model
    call inherits from another runtime base too: it is driven through that ``exec``)."""
    base = _runtime_base(kind)
    return base is not None and (
        kind.exec is base.exec  # type: ignore[attr-defined]
        or kind.call_model is not base.call_model  # type: ignore[attr-defined]
        or kind.call_model_async is not base.call_model_async  # type: ignore[attr-defined]
    )


def as_runtime(runtime: Any, *, where: str = "runtime= got") -> Runtime:
    """``runtime`` as a :class:`~pytest_opdecide.Runtime`, wrapping an object with ``exec``.

    A ``Runtime`` that implements a model call is returned as is. Any other object with an
    ``exec`` method (or an async twin) is wrapped in an :class:`ExecRuntime`; the same adapter
    comes back while one is in use, and every adapter of the object shares its call trace. So
    does a ``Runtime`` subclass that implements no model call but an ``exec`` of its own (a
    class that also inherits from another runtime base).

    Args:
        runtime: The runtime, or an object with ``exec``.
        where: What the error message says got the value (``"runtime= got"``).

    Raises:
        TypeError: ``runtime`` is no runtime: the message says what a runtime is.

    Example:
        >>> from pytest_opdecide import as_runtime, decision
        >>> class Reference:
        ...     def exec(self, content, timeout_s=None):
        ...         return '{"call": "more"}'
        >>> model = Reference()
        >>> decision.make("Finished?", {"done": "DONE", "more": "MORE"}, runtime=model)
        'MORE'
        >>> as_runtime(model).last_call.reply.text
        '{"call": "more"}'
    """
    kind = type(runtime)
    if kind in _DRIVEN:
        return runtime  # type: ignore[no-any-return]
    if _driven(kind):
        _DRIVEN.add(kind)
        return runtime  # type: ignore[no-any-return]
    if isinstance(runtime, type):  # a class has exec too, unbound: it cannot be called
        raise not_a_runtime(runtime, where)
    try:
        ref = _adapters.get(runtime)
    except TypeError:
        ref = None
    adapter = ref() if ref is not None else None
    if adapter is not None:
        return adapter
    _state_of(runtime, where)  # raises, naming the argument, when it is no runtime
    adapter = ExecRuntime(runtime)
    with contextlib.suppress(TypeError):  # an object that cannot be weakly referenced
        _adapters[runtime] = weakref.ref(adapter)
    return adapter


def user_runtime(runtime: Runtime) -> Any:
    """The object a runtime stands for: an adapter's own object, else the runtime itself."""
    return runtime._opdecide_injected()


@contextlib.contextmanager
def use_runtime(runtime: Any, *, override: bool = False) -> Iterator[Any]:
    """Bind ``runtime`` for the enclosed code, as an Agent method call does.

    Args:
        runtime: A :class:`~pytest_opdecide.Runtime`, any object with an ``exec`` method (see
            :func:`as_runtime`), or ``None`` to unbind.
        override: Also replace the runtimes Agents were built with (``Agent(runtime=...)``):
            every Agent method call in the block, configured or not, uses ``runtime`` (as a
            test's ``runtime`` fixture does). Without it, an Agent with a runtime of its own
            keeps using that one.

    Raises:
        TypeError: ``runtime`` is no runtime, or ``override=True`` came without one.

    Example:
        >>> from pytest_opdecide import use_runtime
        >>> with use_runtime(None):
        ...     pass
    """
    if override is not True and override is not False:
        raise TypeError(f"use_runtime(override=...) must be True or False, got {override!r}")
    if runtime is not None:
        as_runtime(runtime, where="use_runtime() got")  # refuse a non-runtime now
    elif override:
        raise TypeError(
            "use_runtime(None, override=True) has nothing to override with: pass the runtime "
            "every Agent should use, e.g. use_runtime(ScriptedRuntime(...), override=True)"
        )
    with bind_runtime(runtime, override=override):
        yield runtime
