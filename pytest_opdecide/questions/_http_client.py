"""An ``httpx.AsyncClient`` that sends every request through a provider's transport override.

The override may be an async transport (``httpx.MockTransport``, ``httpx.AsyncHTTPTransport``),
a sync transport, an ``httpx.AsyncClient`` or an ``httpx.Client``. Sync ones run in a worker
thread. Overrides belong to the caller: they are never closed here. When an override is given,
environment proxy settings are ignored, so that no request can bypass it. While a cassette
is in use, its transport answers every request instead, or records those that would go to the
network through httpx's own transport (see :mod:`pytest_opdecide._http._replay_routing`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from pytest_opdecide._http._replay_routing import replay_transport
from pytest_opdecide.questions._provider import HttpTransportOverride

_KEPT_EXTENSIONS = ("http_version", "reason_phrase")


def bounded(timeout_ms: float) -> asyncio.Timeout:
    """The time limit of one request as a whole (``async with``): connecting, sending and all of
    the answer. httpx's own timeouts bound each read alone, and a server that sends a byte at a
    time would never trip them. Leaving the block late raises ``TimeoutError`` (check the
    manager's ``expired()``)."""
    return asyncio.timeout(timeout_ms / 1000)


def took_too_long(timeout_ms: float, error: BaseException) -> str:
    """How a request that ran out of time is described in a message."""
    which = "" if isinstance(error, TimeoutError) else f" ({type(error).__name__})"
    return (
        f"timed out: it took longer than {timeout_ms:g} ms in all{which}. The provider's "
        "timeout bounds each request as a whole (connecting, sending and all of the answer): "
        "raise it (timeout=..., in milliseconds) or check that the server is not overloaded."
    )


def _detached(response: httpx.Response, request: httpx.Request) -> httpx.Response:
    """A copy of a sync response with its body in memory, for the async client."""
    headers = httpx.Headers(response.headers)
    if response.is_stream_consumed:
        # Already read (e.g. built with content= by a mock handler): the body is decoded.
        body = response.content
        for name in ("content-encoding", "content-length"):
            headers.pop(name, None)
    else:
        # The raw, still encoded body with its headers: the async client decodes it once.
        body = b"".join(response.iter_raw())
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=body,
        request=request,
        extensions={k: v for k, v in response.extensions.items() if k in _KEPT_EXTENSIONS},
    )


class _BorrowedTransport(httpx.AsyncBaseTransport):
    """Uses the caller's async transport without closing it."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)


class _SyncTransport(httpx.AsyncBaseTransport):
    """Runs the caller's sync transport in a worker thread."""

    def __init__(self, transport: httpx.BaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()

        def send() -> httpx.Response:
            sync_request = httpx.Request(
                request.method, request.url, headers=request.headers, content=body
            )
            response = self._transport.handle_request(sync_request)
            try:
                return _detached(response, request)
            finally:
                response.close()

        return await asyncio.to_thread(send)


class _SyncClientTransport(httpx.AsyncBaseTransport):
    """Sends through the caller's sync client (its headers, auth and transport apply)."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()

        def send() -> httpx.Response:
            sync_request = self._client.build_request(
                request.method, request.url, headers=request.headers, content=body
            )
            response = self._client.send(sync_request, stream=True)
            try:
                return _detached(response, request)
            finally:
                response.close()

        return await asyncio.to_thread(send)


@asynccontextmanager
async def open_client(
    override: HttpTransportOverride | None, *, timeout_seconds: float
) -> AsyncIterator[httpx.AsyncClient]:
    """An async client for one decision, sending through ``override`` when given.

    Args:
        override: The provider's transport override, or ``None`` for the network.
        timeout_seconds: The timeout of each request.

    Yields:
        The client (the caller's own ``AsyncClient`` when that is the override).
    """
    replaying = replay_transport(override)
    if replaying is not None:  # a cassette in use: it answers or records the request
        async with httpx.AsyncClient(
            transport=replaying, timeout=httpx.Timeout(timeout_seconds)
        ) as client:
            yield client
        return
    if isinstance(override, httpx.AsyncClient):
        yield override
        return
    transport: httpx.AsyncBaseTransport | None
    if isinstance(override, httpx.Client):
        transport = _SyncClientTransport(override)
    elif isinstance(override, httpx.AsyncBaseTransport):
        transport = _BorrowedTransport(override)
    elif isinstance(override, httpx.BaseTransport):
        transport = _SyncTransport(override)
    else:
        transport = None
    async with httpx.AsyncClient(
        transport=transport,
        timeout=httpx.Timeout(timeout_seconds),
        trust_env=transport is None,
    ) as client:
        yield client
