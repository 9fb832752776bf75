"""Every attempt to reach the network, seen in one place before anything is sent.

Two parts of the project need to see connections before they happen: the plugin's real-call
guard (``_guard``), which refuses the ones a test must not make, and the conformance suite's
network watcher (``conformance._network``), which records and refuses every way out of a
provider's transport override. Both register a *checker* here; this module is the one place
that hooks the ways out:

- ``socket.socket.connect`` and ``connect_ex`` (IPv4 and IPv6 only; Unix sockets are local),
  for every library;
- the real transports of both HTTP stacks, ``httpx`` and ``httpx2`` (``HTTPTransport`` and
  ``AsyncHTTPTransport``), so that a request is seen with its URL before its host name is even
  looked up; a transport that never leaves the process (``MockTransport``) is never involved;
- ``socket.getaddrinfo``, only while a checker asks for name lookups or a refusal is held.

A checker is called with an :class:`Attempt` and refuses it by raising; the most recently
registered checker is asked first. With no checker registered nothing is hooked at all.

A request through httpx's transport while another mock has replaced httpcore's senders (respx,
see :mod:`._real_methods`) may never reach the network: that mock answers it below the
transport. Its refusal is then *held*: the request goes on, and the refusal is raised at its
first name lookup or connection, with the request's URL; a request the mock answers is left
alone. (A connection kept alive from before is not seen again: the mock's pass-through routes
can reuse one.)

The hooks are put back as each test starts (:func:`refresh`): other tools patch
``socket.connect`` too and may restore what *they* saw, and an HTTP stack imported after the
hooks went in (or imported anew by a pytest run inside a test) gets them then.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from pytest_opdecide._http._real_methods import core_replaced_by, own_code, replaced_by

__all__ = [
    "HTTP_STACKS",
    "Attempt",
    "Checker",
    "httpx_replaced_by",
    "in_model_call",
    "model_call",
    "refresh",
    "register",
    "unhooked",
    "unregister",
]

HTTP_STACKS = ("httpx", "httpx2")
"""The HTTP client packages whose real transports are hooked (each once it is imported)."""

_MARK = "__opdecide_network__"


@dataclass(frozen=True)
class Attempt:
    """One attempt to reach the network, seen before anything is sent.

    Attributes:
        kind: ``"request"`` (an HTTP request through a real transport), ``"connect"`` (a
            socket connection) or ``"resolve"`` (a name lookup).
        host: The host name or address, as the caller gave it (no IPv6 brackets).
        port: The port, when known (a request's URL port or its scheme's default).
        target: How messages name the attempt: ``"GET http://host/v1/models"``,
            ``"connect 10.0.0.1:443"``, ``"resolve api.example.com"``.
        model_call: Made while one of this project's real runtimes or providers sends a model
            call (see :func:`model_call`).
        request: For ``"request"``: the HTTP request object of its stack.
        stack: For ``"request"``: the HTTP stack's module (``httpx`` or ``httpx2``), whose
            exception types a checker may raise.
    """

    kind: Literal["request", "connect", "resolve"]
    host: str
    port: int | None
    target: str
    model_call: bool = False
    request: Any = None
    stack: ModuleType | None = None


Checker = Callable[[Attempt], None]
"""Inspects an :class:`Attempt`; raises to refuse it, returns to let it through."""

_model_call: ContextVar[bool] = ContextVar("opdecide_model_call", default=False)


@contextlib.contextmanager
def model_call() -> Iterator[None]:
    """Mark the network attempts made inside the block as a model call of this project.

    The project's real runtimes and providers send every model call inside it, so that the
    guard can tell their calls from other traffic of a test. The mark follows the context:
    asyncio tasks and worker threads started through ``asyncio.to_thread`` inherit it.
    """
    token = _model_call.set(True)
    try:
        yield
    finally:
        _model_call.reset(token)


def in_model_call() -> bool:
    """Whether the running code is inside :func:`model_call`."""
    return _model_call.get()


_lock = threading.RLock()
_checkers: list[tuple[Checker, bool]] = []
"""Registered checkers and whether each wants name lookups, oldest first."""
_originals: dict[tuple[Any, str], Any] = {}
"""What each hooked attribute held before the hook went in, by (owner, name)."""


def register(checker: Checker, *, lookups: bool = False) -> None:
    """Start calling ``checker`` for every attempt (name lookups too if ``lookups``).

    Registering the same checker twice needs two :func:`unregister` calls.
    """
    with _lock:
        _checkers.append((checker, lookups))
        _hook()


def unregister(checker: Checker) -> None:
    """Stop calling ``checker``; the hooks go when no checker needs them any more."""
    with _lock:
        for index in range(len(_checkers) - 1, -1, -1):
            if _checkers[index][0] is checker:
                del _checkers[index]
                break
        _hook()


def refresh() -> None:
    """Put back any hook that is missing, and hook an HTTP stack imported since (called before
    every test: when nothing changed, it only compares what each hooked attribute holds)."""
    placed = _placed
    if placed is not None and placed == _holding():
        return  # every test's case: read without the lock (a stale read only hooks again)
    with _lock:
        if _placed is None or _placed != _holding():
            _hook()


def _check(attempt: Attempt) -> None:
    with _lock:
        checkers = [checker for checker, lookups in reversed(_checkers)]
    for checker in checkers:
        checker(attempt)


def _check_lookup(attempt: Attempt) -> None:
    with _lock:
        checkers = [checker for checker, lookups in reversed(_checkers) if lookups]
    for checker in checkers:
        checker(attempt)


def unhooked(owner: Any, name: str) -> Any:
    """``owner.name`` as it is beneath this module's hook (as it is, when not hooked)."""
    with _lock:
        current = getattr(owner, name)
        if getattr(current, _MARK, False):
            return _originals.get((owner, name), current)
        return current


def httpx_replaced_by(*, ignoring: ModuleType | None = None) -> str | None:
    """The module whose function replaces httpx's real transports' sending methods now
    (``pytest_httpx`` while its ``httpx_mock`` fixture is set up), or ``None``.

    A replacement whose code lives in the package ``ignoring`` does not count (vcrpy's, while
    a cassette is open: its wrappers keep httpx's names, so they are told by where their code
    lives)."""
    stack = sys.modules.get("httpx")
    if stack is None:
        return None
    for owner, name in (
        (stack.HTTPTransport, "handle_request"),
        (stack.AsyncHTTPTransport, "handle_async_request"),
    ):
        function = unhooked(owner, name)
        if own_code(function, stack) or (ignoring is not None and own_code(function, ignoring)):
            continue
        return replaced_by(function)
    return None


# --- refusals held until a request reaches the network -----------------------------------------

_held: ContextVar[BaseException | None] = ContextVar("opdecide_held_refusal", default=None)
_held_hosts: dict[str, list[BaseException]] = {}
"""Held refusals by host name: asyncio looks names up in a worker thread, outside the context."""


@contextlib.contextmanager
def _held_until_sent(attempt: Attempt) -> Iterator[None]:
    """Check ``attempt``; a refusal is held for the request's lookups and connections."""
    refusal: Exception | None = None
    try:
        _check(attempt)
    except Exception as error:  # held, not raised: the request may never reach the network
        refusal = error
    if refusal is None:
        yield
        return
    host = attempt.host.lower()
    token = _held.set(refusal)
    with _lock:
        _held_hosts.setdefault(host, []).append(refusal)
        _hook_lookups()  # hooked while a refusal is held
    try:
        yield
    finally:
        _held.reset(token)
        with _lock:
            held = _held_hosts.get(host, [])
            if refusal in held:
                held.remove(refusal)
            if not held:
                _held_hosts.pop(host, None)
            _hook_lookups()


def _raise_held(host: str | None = None) -> None:
    refusal = _held.get()
    if refusal is None and host is not None:
        with _lock:
            held = _held_hosts.get(host.lower())
            refusal = held[-1] if held else None
    if refusal is not None:
        raise refusal


def _below_a_mock(stack: ModuleType) -> bool:
    """Whether another mock may answer requests below ``stack``'s transport (respx)."""
    return stack.__name__ == "httpx" and core_replaced_by() is not None


# --- the hooks ---------------------------------------------------------------------------------


def _address(address: Any) -> tuple[str, int | None]:
    if isinstance(address, tuple) and address:
        port = address[1] if len(address) > 1 and isinstance(address[1], int) else None
        return str(address[0]), port
    return str(address), None


def _connect_hook(original: Any) -> Any:
    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            _raise_held()
            host, port = _address(address)
            shown = f"{host}:{port}" if isinstance(address, tuple) and len(address) > 1 else host
            _check(Attempt("connect", host, port, f"connect {shown}", in_model_call()))
        return original(sock, address)

    return connect


def _getaddrinfo_hook(original: Any) -> Any:
    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        _raise_held(name)
        port = args[0] if args else kwargs.get("port")
        number = port if isinstance(port, int) else None
        _check_lookup(Attempt("resolve", name, number, f"resolve {name}", in_model_call()))
        return original(host, *args, **kwargs)

    return getaddrinfo


def _request_attempt(stack: ModuleType, request: Any) -> Attempt:
    url = request.url
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return Attempt(
        "request",
        str(url.host),
        port,
        f"{request.method} {url}",
        in_model_call(),
        request=request,
        stack=stack,
    )


def _sync_send_hook(stack: ModuleType) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        def handle_request(transport: Any, request: Any) -> Any:
            attempt = _request_attempt(stack, request)
            if _below_a_mock(stack):
                with _held_until_sent(attempt):
                    return original(transport, request)
            _check(attempt)
            return original(transport, request)

        return handle_request

    return make


def _async_send_hook(stack: ModuleType) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        async def handle_async_request(transport: Any, request: Any) -> Any:
            attempt = _request_attempt(stack, request)
            if _below_a_mock(stack):
                with _held_until_sent(attempt):
                    return await original(transport, request)
            _check(attempt)
            return await original(transport, request)

        return handle_async_request

    return make


def _wanted() -> list[tuple[Any, str, Callable[[Any], Any]]]:
    """The attributes to hook now, with the function that makes each hook."""
    if not _checkers:
        return []
    wanted: list[tuple[Any, str, Callable[[Any], Any]]] = [
        (socket.socket, "connect", _connect_hook),
        (socket.socket, "connect_ex", _connect_hook),
    ]
    if _held_hosts or any(lookups for _, lookups in _checkers):
        wanted.append((socket, "getaddrinfo", _getaddrinfo_hook))
    for name in HTTP_STACKS:
        stack = sys.modules.get(name)
        if stack is None:
            continue
        for owner, method, make in (
            (getattr(stack, "HTTPTransport", None), "handle_request", _sync_send_hook(stack)),
            (
                getattr(stack, "AsyncHTTPTransport", None),
                "handle_async_request",
                _async_send_hook(stack),
            ),
        ):
            if owner is not None:
                wanted.append((owner, method, make))
    return wanted


def _hook_lookups() -> None:
    """Hook or unhook name lookups alone, as held refusals and checkers want them (called with
    the lock held, mid-request: the other hooks are left as they are)."""
    key = (socket, "getaddrinfo")
    if _held_hosts or any(lookups for _, lookups in _checkers):
        current = socket.getaddrinfo
        if not getattr(current, _MARK, False):
            _originals[key] = current
            hooked = _getaddrinfo_hook(current)
            setattr(hooked, _MARK, True)
            socket.getaddrinfo = hooked
    elif key in _originals:
        socket.getaddrinfo = _originals.pop(key)


_STACK_METHODS = (
    ("HTTPTransport", "handle_request"),
    ("AsyncHTTPTransport", "handle_async_request"),
)
_placed: tuple[Any, ...] | None = None
"""What :func:`_holding` gave right after the last :func:`_hook`: while it gives the same, every
hook is in place and no stack was imported since."""


def _holding() -> tuple[Any, ...]:
    """What the hooked attributes hold now, and which HTTP stacks are loaded (and with which
    transport classes): everything :func:`_wanted` depends on, without building its hooks."""
    lookups = bool(_held_hosts)
    if not lookups:
        for _, wanted in _checkers:  # a loop, not any(): this runs before every test
            if wanted:
                lookups = True
                break
    held: list[Any] = [len(_checkers), lookups, socket.socket.connect, socket.socket.connect_ex]
    if lookups:
        held.append(socket.getaddrinfo)
    for name in HTTP_STACKS:
        stack = sys.modules.get(name)
        held.append(stack)
        if stack is not None:
            for owner_name, method in _STACK_METHODS:
                owner = getattr(stack, owner_name, None)
                held += (owner, getattr(owner, method, None))
    return tuple(held)


def _hook() -> None:
    """Make the hooked attributes exactly the wanted ones (called with the lock held)."""
    global _placed
    wanted = _wanted()
    keys = {(owner, name) for owner, name, _ in wanted}
    for owner, name, make in wanted:
        current = getattr(owner, name)
        if not getattr(current, _MARK, False):
            _originals[(owner, name)] = current
            hooked = make(current)
            setattr(hooked, _MARK, True)
            setattr(owner, name, hooked)
    for key in [key for key in _originals if key not in keys]:
        owner, name = key
        setattr(owner, name, _originals.pop(key))
    _placed = _holding()
