"""A server on 127.0.0.1 that answers chat completions one byte at a time (raw sockets).

:class:`TrickleServer` reads each request (keep-alive: several on one connection) and answers it
as its script says, in turn (the last entry repeats):

* ``"whole"``: a complete JSON chat completion at once;
* ``"body"``: the headers at once, then a JSON completion one byte every ``delay`` seconds;
* ``"stream"``: the headers at once, then server-sent events one byte every ``delay`` seconds;
* ``"headers"``: the status line and headers themselves one byte every ``delay`` seconds.

No read of the client's ever waits ``delay``: only a limit on the whole call can stop it. The
server stops trickling when the client goes away or the server stops, and counts the requests it
read (:attr:`TrickleServer.requests`) and the connections opened
(:attr:`TrickleServer.connections`).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

__all__ = ["TrickleServer"]

_COMPLETION = {
    "id": "chatcmpl-slow",
    "object": "chat.completion",
    "model": "slow-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello, " + "slowly " * 40},
            "finish_reason": "stop",
        }
    ],
}


def _events() -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
        for word in ["Hello, ", *["slowly "] * 40]
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    text = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return text.encode()


class TrickleServer:
    """The server (see the module docstring); a context manager.

    Args:
        script: How to answer each request in turn (the last entry repeats).
        delay: Seconds between two bytes of a trickled answer.
    """

    def __init__(self, *script: str, delay: float = 0.3) -> None:
        self.script = list(script) or ["body"]
        self.delay = delay
        self.requests = 0
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()

    @property
    def connections(self) -> int:
        """How many connections clients opened."""
        with self._lock:
            return len(self._connections)

    @property
    def url(self) -> str:
        assert self._listener is not None, "the server is not started"
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> TrickleServer:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in list(self._threads):
            thread.join(timeout=5)
        with self._lock:
            for connection in self._connections:
                connection.close()
        if self._listener is not None:
            self._listener.close()

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            self._spawn(self._serve, connection)

    def _read_request(self, connection: socket.socket, pending: bytes) -> bytes | None:
        """Read one request; what came after it, or ``None`` when the client went away."""
        while b"\r\n\r\n" not in pending:
            data = self._receive(connection)
            if data is None:
                return None
            pending += data
        head, _, rest = pending.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            data = self._receive(connection)
            if data is None:
                return None
            rest += data
        return rest[length:]

    def _receive(self, connection: socket.socket) -> bytes | None:
        connection.settimeout(0.05)
        while not self._stop.is_set():
            try:
                data = connection.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return None
            return data or None
        return None

    def _serve(self, connection: socket.socket) -> None:
        pending = b""
        while not self._stop.is_set():
            rest = self._read_request(connection, pending)
            if rest is None:
                return
            pending = rest
            with self._lock:
                how = self.script[min(self.requests, len(self.script) - 1)]
                self.requests += 1
            if not self._answer(connection, how):
                return

    def _answer(self, connection: socket.socket, how: str) -> bool:
        """Send one answer; whether the connection is still usable."""
        if how == "stream":
            body, kind = _events(), "text/event-stream"
        else:
            body, kind = json.dumps(_COMPLETION).encode(), "application/json"
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        try:
            if how == "whole":
                connection.sendall(head + body)
                return True
            if how == "headers":
                return self._trickle(connection, head + body)
            connection.sendall(head)
            return self._trickle(connection, body)
        except OSError:
            return False

    def _trickle(self, connection: socket.socket, data: bytes) -> bool:
        for index in range(len(data)):
            if self._stop.wait(self.delay):
                return False
            try:
                connection.sendall(data[index : index + 1])
            except OSError:
                return False
        return True

    def wait_for_requests(self, count: int, within: float = 5.0) -> None:
        """Wait until ``count`` requests were read."""
        end = time.monotonic() + within
        while self.requests < count and time.monotonic() < end:
            time.sleep(0.01)
