"""A time limit on a whole blocking HTTP call: no server can hold one past it.

httpx's timeouts bound each network operation on its own: a read waits at most ``read``
seconds, and the next read starts the clock again. A server that sends one byte every 0.3 s
never trips a read timeout of 2 s, and holds the call for as long as it likes. An asyncio call
is bounded as a whole by ``asyncio.timeout``; a thread blocked in a read has nothing of the
kind, so :class:`CallDeadline` ends it from outside. At the deadline a watchdog thread shuts
the call's socket down (both ways): the blocked read returns at once, httpx raises a transport
error, and the caller reports the time limit instead (:attr:`CallDeadline.passed`). Whatever
reads the reply (the caller, or vcrpy recording it inside the transport), it is stopped.

Which socket a call uses is learnt through httpx's documented extensions: the ``trace``
request extension reports each new connection (``connection.connect_tcp`` and
``connection.start_tls``), and a response's ``network_stream`` extension the connection that
answered. A call on a kept-alive connection is told which one only once the server has sent the
headers; before that, for a client whose every request carries the extension
(:class:`ClientSockets`), the watchdog shuts down every socket of the client that no other call
in flight may be using: they are idle, or the call's own, and the connection pool replaces an
idle connection that was shut down (it reads as closed) without failing a request. While another
call of the client is in the same state, it waits (a few hundredths of a second at a time) until
that one's connection is known or its own deadline has passed too.

A transport without sockets (``httpx.MockTransport``) is the caller's own code: there the
caller checks :attr:`CallDeadline.passed` between the chunks it reads.

The same trace events tell which phase the call was in when its time ran out
(:attr:`CallDeadline.phase`), whichever timer ended it: an asyncio call uses the deadline for
that alone.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self

__all__ = ["CallDeadline", "ClientSockets"]

_CONNECTED = frozenset(
    {
        "connection.connect_tcp.complete",
        "connection.connect_unix_socket.complete",
        "connection.start_tls.complete",
    }
)
"""The trace events whose ``return_value`` is the network stream of a new connection."""

_PHASES = {
    "connection.connect_tcp.started": "connect",
    "connection.connect_unix_socket.started": "connect",
    "connection.start_tls.started": "connect",
    "http11.send_request_headers.started": "write",
    "http11.send_request_body.started": "write",
    "http2.send_request_headers.started": "write",
    "http2.send_request_body.started": "write",
    "http11.receive_response_headers.started": "read",
    "http11.receive_response_body.started": "read",
    "http2.receive_response_headers.started": "read",
    "http2.receive_response_body.started": "read",
}
"""The trace events that start each phase, named as httpx's timeouts are."""

_RETRY_S = 0.05
"""How soon the watchdog looks again when it cannot yet tell which socket a call uses."""


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways, from any thread: a read blocked on it returns at once.

    The plain socket's ``shutdown``, even for a TLS socket: ``SSLSocket.shutdown`` drops its
    TLS state first, under the feet of the thread that is reading.
    """
    with contextlib.suppress(OSError, ValueError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread that calls each armed callback at its time.

    A callback returns ``None`` when it is done, or the time to be called again.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], float | None]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, when: float, callback: Callable[[], float | None]) -> None:
        """Call ``callback`` at ``when`` (a ``time.monotonic()`` time)."""
        with self._condition:
            heapq.heappush(self._heap, (when, next(self._order), callback))
            if self._thread is None or not self._thread.is_alive():  # none yet, or forked
                self._thread = threading.Thread(
                    target=self._run, name="opdecide-call-deadlines", daemon=True
                )
                self._thread.start()
            self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._condition.wait(wait)
                _, _, callback = heapq.heappop(self._heap)
            try:
                again = callback()
            except Exception:  # never the end of the thread that every deadline needs
                again = None
            if again is not None:
                self.arm(again, callback)


_WATCHDOG = _Watchdog()


class ClientSockets:
    """The sockets of one httpx client, and its calls in flight.

    Only for a client whose every request goes through a :class:`CallDeadline` (the runtime's
    own): a call that cannot yet tell its socket may then shut down those that no other call
    uses. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._calls: set[CallDeadline] = set()

    def _unused(self, call: CallDeadline) -> list[socket.socket] | None:
        """The sockets ``call`` may shut down: all but those of the other live calls; ``None``
        while another live call could be using any of them."""
        with self._lock:
            others = [c for c in self._calls if c is not call and not c.expired]
            if any(other.socket is None for other in others):
                return None
            busy = {id(other.socket) for other in others}
            return [sock for sock in self._sockets if id(sock) not in busy]


class CallDeadline:
    """The time limit of one blocking call, enforced from outside (see the module docstring).

    Use it as a context manager around the call, and send every request of the call with
    :attr:`extensions`; give it each response with :meth:`answered`.

    Args:
        limit: The time limit of the whole call in seconds, or ``None`` for none.
        client: The sockets of the client the call goes through, when every request of that
            client carries the extensions (the runtime's own client); ``None`` for a client
            of the caller's (only the call's own socket is then ever shut down).
    """

    def __init__(self, limit: float | None, client: ClientSockets | None = None) -> None:
        self.limit = limit
        self._end = None if limit is None else time.monotonic() + limit
        self._client = client
        self.socket: socket.socket | None = None
        """The socket the call uses, once known."""
        self.expired = False
        """The watchdog found the deadline passed while the call was still going on."""
        self.phase = ""
        """The phase the call is in, as httpx's timeouts name them (``"connect"``,
        ``"write"``, ``"read"``), from the trace events; ``""`` before the first (or through a
        transport that sends none)."""
        self._open = False
        self._lock = threading.Lock()

    @property
    def passed(self) -> bool:
        """Whether the time limit has run out."""
        return self.expired or (self._end is not None and time.monotonic() >= self._end)

    @property
    def extensions(self) -> dict[str, Any]:
        """The request extensions that tell the deadline each new connection of the call, and
        each phase it enters."""
        return {"trace": self._trace}

    @property
    def async_extensions(self) -> dict[str, Any]:
        """The same for an async client (phases only: ``asyncio.timeout`` ends the call)."""
        return {"trace": self._async_trace}

    def _trace(self, name: str, info: Mapping[str, Any]) -> None:
        self.phase = _PHASES.get(name, self.phase)
        if name in _CONNECTED:
            self._use(info.get("return_value"))

    async def _async_trace(self, name: str, info: Mapping[str, Any]) -> None:
        self.phase = _PHASES.get(name, self.phase)

    def answered(self, response: Any) -> None:
        """Learn the socket of the connection that answered (``network_stream``)."""
        extensions = getattr(response, "extensions", None)
        if isinstance(extensions, Mapping):
            self._use(extensions.get("network_stream"))

    def _use(self, stream: Any) -> None:
        get_extra_info = getattr(stream, "get_extra_info", None)
        sock = get_extra_info("socket") if callable(get_extra_info) else None
        if not isinstance(sock, socket.socket):
            return
        if self._client is not None:
            with self._client._lock:
                self._client._sockets.add(sock)
                self.socket = sock
        else:
            self.socket = sock
        with self._lock:
            late = self.expired and self._open
        if late:  # connected after the deadline: no read may start on it
            _shut(sock)

    def __enter__(self) -> Self:
        if self._end is not None:
            self._open = True
            if self._client is not None:
                with self._client._lock:
                    self._client._calls.add(self)
            _WATCHDOG.arm(self._end, self._fire)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            self._open = False
        if self._client is not None:
            with self._client._lock:
                self._client._calls.discard(self)
        self.socket = None

    def _fire(self) -> float | None:
        """The watchdog's callback at the deadline; the time to look again, or ``None``."""
        with self._lock:
            if not self._open:
                return None
            self.expired = True
        sock = self.socket
        if sock is not None:
            _shut(sock)
            return None
        if self._client is None:
            return None  # shut down when answered() tells the socket (see _use)
        unused = self._client._unused(self)
        if unused is None:
            return time.monotonic() + _RETRY_S
        for idle_or_ours in unused:
            _shut(idle_or_ours)
        return None if self.socket is not None else time.monotonic() + _RETRY_S
