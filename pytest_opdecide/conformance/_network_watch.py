"""Catching I/O that does not go through the transport override.

While :func:`watch_network` is active, every attempt to reach the network (a DNS lookup, a
socket connection, a request through the real transports of httpx or httpx2) is recorded and
refused. The conformance checks run provider code inside it: a provider that builds its own
client instead of using the transport it was given, or that calls its server while being
constructed, shows up here, and no request of a conformance run ever leaves the machine.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from pytest_opdecide._http import _network as network
from pytest_opdecide._http._network import Attempt

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


def _refuse(attempt: Attempt) -> None:
    """The checker registered while a block is active: record and refuse every attempt."""
    if not _blocked(attempt.target):
        return
    reason = f"{BLOCKED} ({attempt.target})"
    if attempt.kind == "resolve":
        raise socket.gaierror(socket.EAI_NONAME, reason)
    if attempt.kind == "request" and attempt.stack is not None:
        error: Exception = attempt.stack.ConnectError(
            f"{BLOCKED} ({attempt.request.url})", request=attempt.request
        )
        raise error
    raise ConnectionRefusedError(reason)


@contextmanager
def watch_network() -> Iterator[NetworkAttempts]:
    """Record and refuse every network attempt made inside the block (in any thread).

    Nested blocks share one checker of the project's network hooks
    (``pytest_opdecide._http._network``, which the real-call guard uses too); each block sees the
    attempts made while it is active.

    Yields:
        The attempts, filled in as they happen.
    """
    attempts = NetworkAttempts()
    with _lock:
        if not _active:
            network.register(_refuse, lookups=True)
        _active.append(attempts)
    try:
        yield attempts
    finally:
        with _lock:
            _active.remove(attempts)
            if not _active:
                network.unregister(_refuse)
