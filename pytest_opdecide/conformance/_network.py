"""Catching I/O that does not go through the transport override.

While :func:`watch_network` is active, every attempt to reach the network (a DNS lookup, a socket
connection, a request through httpx's real transports) is recorded and refused. The conformance
checks run provider code inside it: a provider that builds its own client instead of using the
transport it was given, or that calls its server while being constructed, shows up here, and no
request of a conformance run ever leaves the machine.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NetworkAttempts", "allow_network", "watch_network"]

BLOCKED = (
    "blocked by the pytest-opdecide conformance suite: only the transport override may be used"
)


@dataclass
class NetworkAttempts:
    """What tried to reach the network while :func:`watch_network` was active.

    Attributes:
        targets: A description of each attempt (``"GET http://host/v1/models"``,
            ``"connect 10.0.0.1:443"``, ``"resolve api.example.com"``), in order.
    """

    targets: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, target: str) -> None:
        with self._lock:
            self.targets.append(target)

    def __bool__(self) -> bool:
        return bool(self.targets)


_active: list[NetworkAttempts] = []
_lock = threading.Lock()
_allowed: ContextVar[bool] = ContextVar("opdecide_conformance_network_allowed", default=False)


@contextmanager
def allow_network() -> Iterator[None]:
    """Let the code inside the block reach the network (the backend behind the override).

    The recording transport forwards each request to the user's backend inside this block, so
    that a backend that is a real local server (rather than an ``httpx.MockTransport``) works.
    The permission follows the context: tasks and worker threads started inside inherit it.
    """
    token = _allowed.set(True)
    try:
        yield
    finally:
        _allowed.reset(token)


def _blocked(target: str) -> bool:
    """Record an attempt; whether it must be refused."""
    if _allowed.get():
        return False
    for attempts in list(_active):
        attempts.add(target)
    return True


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _patches() -> list[tuple[Any, str, Callable[[Any], Any]]]:
    def connect(original: Any) -> Any:
        def patched(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and _blocked(
                f"connect {_address(address)}"
            ):
                raise ConnectionRefusedError(f"{BLOCKED} (connect {_address(address)})")
            return original(sock, address)

        return patched

    def getaddrinfo(original: Any) -> Any:
        def patched(host: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            if _blocked(f"resolve {name}"):
                raise socket.gaierror(socket.EAI_NONAME, f"{BLOCKED} (resolve {name})")
            return original(host, *args, **kwargs)

        return patched

    patches: list[tuple[Any, str, Callable[[Any], Any]]] = [
        (socket.socket, "connect", connect),
        (socket.socket, "connect_ex", connect),
        (socket, "getaddrinfo", getaddrinfo),
    ]
    httpx = sys.modules.get("httpx")
    if httpx is not None:

        def sync_send(original: Any) -> Any:
            def patched(transport: Any, request: Any) -> Any:
                if _blocked(f"{request.method} {request.url}"):
                    raise httpx.ConnectError(f"{BLOCKED} ({request.url})", request=request)
                return original(transport, request)

            return patched

        def async_send(original: Any) -> Any:
            async def patched(transport: Any, request: Any) -> Any:
                if _blocked(f"{request.method} {request.url}"):
                    raise httpx.ConnectError(f"{BLOCKED} ({request.url})", request=request)
                return await original(transport, request)

            return patched

        patches.append((httpx.HTTPTransport, "handle_request", sync_send))
        patches.append((httpx.AsyncHTTPTransport, "handle_async_request", async_send))
    return patches


_saved: list[tuple[Any, str, Any]] = []


@contextmanager
def watch_network() -> Iterator[NetworkAttempts]:
    """Record and refuse every network attempt made inside the block (in any thread).

    Nested blocks share the patches; each sees the attempts made while it is active.

    Yields:
        The attempts, filled in as they happen.
    """
    attempts = NetworkAttempts()
    with _lock:
        if not _active:
            for owner, name, make in _patches():
                original = getattr(owner, name)
                _saved.append((owner, name, original))
                setattr(owner, name, make(original))
        _active.append(attempts)
    try:
        yield attempts
    finally:
        with _lock:
            _active.remove(attempts)
            if not _active:
                for owner, name, original in reversed(_saved):
                    setattr(owner, name, original)
                _saved.clear()
