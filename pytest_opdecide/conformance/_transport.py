"""The transport override the provider checks inject: it records every request, forwards it to
the backend, and can stand in for a failing or slow backend.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import httpx

from pytest_opdecide.conformance._network_watch import allow_network

__all__ = ["RecordedRequest", "RecordingTransport"]

HOLD_LIMIT_S: Final = 30.0
"""The longest a held request waits for :meth:`RecordingTransport.release`."""

Failure = Callable[[httpx.Request], httpx.Response]
"""What a failing backend does with a request: answer it, or raise an httpx error."""
Rewrite = Callable[[Any], Any]
"""What is done to a JSON response body before the provider sees it: the body to send on."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request that went through the transport override, and what came back.

    Attributes:
        method: The HTTP method.
        url: The full URL.
        headers: The request headers (names in lower case).
        content: The request body.
        json: The body parsed as JSON, or ``None`` when it is not JSON.
        status: The status of the response, or ``None`` when the exchange raised.
        response_json: The response body parsed as JSON, or ``None``.
    """

    method: str
    url: str
    headers: dict[str, str]
    content: bytes
    json: Any
    status: int | None
    response_json: Any


def _parse(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


def _forwarded(response: httpx.Response, content: bytes, request: httpx.Request) -> httpx.Response:
    # The body was read (and decoded) here: it goes on without its transfer encoding.
    headers = httpx.Headers(response.headers)
    for name in ("content-encoding", "content-length", "transfer-encoding"):
        headers.pop(name, None)
    return httpx.Response(response.status_code, headers=headers, content=content, request=request)


def _copy(request: httpx.Request, content: bytes) -> httpx.Request:
    # A request of its own for the backend: its stream has been read here already.
    return httpx.Request(request.method, request.url, headers=request.headers, content=content)


class RecordingTransport(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """A transport that records what a provider sends and forwards it to a backend.

    It is both a sync and an async httpx transport, so a provider may use it with an
    ``httpx.Client`` or an ``httpx.AsyncClient``. The backend may be any httpx transport (an
    ``httpx.MockTransport`` answering in-process, typically).

    Args:
        backend: The transport that answers the requests.

    Attributes:
        backend: The transport that answers.
        arrived: Set when a request arrives while :meth:`hold` is active.
    """

    def __init__(self, backend: httpx.AsyncBaseTransport | httpx.BaseTransport) -> None:
        if not isinstance(backend, httpx.AsyncBaseTransport | httpx.BaseTransport):
            raise TypeError(
                "the backend must be an httpx transport (e.g. httpx.MockTransport(handler)), "
                f"got {type(backend).__name__}"
            )
        self.backend = backend
        self.arrived = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._failure: Failure | None = None
        self._rewrite: Rewrite | None = None
        self._holding = False
        self._released = threading.Event()

    # --- what was sent -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request recorded since the last :meth:`clear`, in order of arrival."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    # --- how the backend behaves ---------------------------------------------------------------

    @property
    def is_failing(self) -> bool:
        """Whether a :meth:`failing` block is active."""
        return self._failure is not None

    @contextmanager
    def failing(self, failure: Failure) -> Iterator[None]:
        """Answer every request with ``failure(request)`` (never reaching the backend)."""
        self._failure = failure
        try:
            yield
        finally:
            self._failure = None

    @contextmanager
    def rewriting(self, rewrite: Rewrite) -> Iterator[None]:
        """Pass every JSON response body through ``rewrite(body)`` (which returns the body to
        send on) before the provider sees it; what is recorded is what the provider got."""
        self._rewrite = rewrite
        try:
            yield
        finally:
            self._rewrite = None

    def _rewritten(self, raw: bytes) -> bytes:
        rewrite = self._rewrite
        if rewrite is None:
            return raw
        body = _parse(raw)
        if body is None:
            return raw
        return json.dumps(rewrite(body)).encode()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Keep requests waiting (before the backend sees them) until :meth:`release`.

        :attr:`arrived` is set when the first one arrives. Leaving the block releases them.
        """
        self.arrived.clear()
        self._released.clear()
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            self._released.set()

    def release(self) -> None:
        """Let held requests go on to the backend."""
        self._released.set()

    # --- the transport -------------------------------------------------------------------------

    def _record(
        self,
        request: httpx.Request,
        content: bytes,
        response: httpx.Response | None,
        response_content: bytes,
    ) -> None:
        recorded = RecordedRequest(
            request.method,
            str(request.url),
            {name.lower(): value for name, value in request.headers.items()},
            content,
            _parse(content),
            None if response is None else response.status_code,
            _parse(response_content),
        )
        with self._lock:
            self._requests.append(recorded)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        content = request.read()
        if self._holding:
            self.arrived.set()
            self._released.wait(HOLD_LIMIT_S)
        response: httpx.Response | None = None
        try:
            if self._failure is not None:
                response = self._failure(request)
            else:
                with allow_network():
                    response = self._send_sync(_copy(request, content))
            raw = self._rewritten(response.read())
        except BaseException:
            self._record(request, content, None, b"")
            raise
        self._record(request, content, response, raw)
        return _forwarded(response, raw, request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        if self._holding:
            self.arrived.set()
            deadline = time.monotonic() + HOLD_LIMIT_S
            # Polling: the release comes from any thread (a threading.Event), and the wait must
            # stay cancellable, since an aborted call is cancelled right here.
            while not self._released.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
        response: httpx.Response | None = None
        try:
            if self._failure is not None:
                response = self._failure(request)
            else:
                with allow_network():
                    response = await self._send_async(_copy(request, content))
            raw = self._rewritten(await response.aread())
        except BaseException:
            self._record(request, content, None, b"")
            raise
        self._record(request, content, response, raw)
        return _forwarded(response, raw, request)

    def _send_sync(self, request: httpx.Request) -> httpx.Response:
        if isinstance(self.backend, httpx.BaseTransport):
            return self.backend.handle_request(request)
        backend = self.backend

        async def send() -> httpx.Response:
            response = await backend.handle_async_request(request)
            await response.aread()
            return response

        return asyncio.run(send())

    async def _send_async(self, request: httpx.Request) -> httpx.Response:
        if isinstance(self.backend, httpx.AsyncBaseTransport):
            return await self.backend.handle_async_request(request)
        backend = self.backend

        def send() -> httpx.Response:
            response = backend.handle_request(request)
            response.read()
            return response

        return await asyncio.to_thread(send)

    def __repr__(self) -> str:
        return f"RecordingTransport(backend={type(self.backend).__name__}, requests={len(self)})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._requests)
