"""A transport that reaches the server whatever another HTTP mock has replaced.

While a cassette records, this package's runtimes and providers must talk to the real model
server, and other mocks of the test would answer them first: pytest-httpx replaces
``httpx.HTTPTransport``'s sending methods, respx those of httpcore's pools and connections (see
:mod:`._real_methods`). :class:`DirectTransport` is built on httpcore's public API (a connection
pool, its connections, ``httpcore.Request``) and sends through the sending methods httpcore
itself defines: they are kept when this module is first imported, which the plugin makes happen
before a cassette test's fixtures run, and checked to be httpcore's own then. If one was
already replaced, the transport refuses to send (:class:`ReplacedSender`) instead of asking the
replacement: a mock's answer is never taken for the server's.

Each request gets a pool of its own, closed once the response is read whole (as vcrpy reads the
responses it records): no connection outlives the call, so the transport belongs to no event
loop and needs no closing. httpx's timeouts and its ``trace`` request extension pass through to
httpcore as httpx passes them, so the runtime's time limit (:mod:`._deadline`) follows the call
as it does on httpx's own transport; httpcore's errors come out as httpx's. Proxies from the
environment are not used.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import Iterator
from typing import Any, NoReturn

import httpcore
import httpx

from pytest_opdecide._http._real_methods import own_code, replaced_by
from pytest_opdecide._http._replay_routing import ReplayTransport

__all__ = ["DirectTransport", "ReplacedSender"]


class ReplacedSender(RuntimeError):
    """httpcore's own sending method was already replaced when it had to be kept."""


def _kept(owner: type, name: str) -> Any:
    """``owner.name`` if it is httpcore's own, else a function that refuses to send."""
    function = getattr(owner, name)
    if own_code(function, httpcore):
        return function
    message = (
        f"pytest-opdecide cannot record past the HTTP mock of {replaced_by(function)}: it had "
        f"already replaced httpcore's {owner.__name__}.{name} when the cassette layer was "
        "loaded, so the model's requests would be answered by that mock, not by the server. "
        "Start that mock inside the test (a fixture, a decorator or a with block), not when a "
        "module is imported."
    )

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise ReplacedSender(message)

    return refuse


class _Connection(httpcore.HTTPConnection):
    handle_request = _kept(httpcore.HTTPConnection, "handle_request")


class _Pool(httpcore.ConnectionPool):
    handle_request = _kept(httpcore.ConnectionPool, "handle_request")

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__(ssl_context=context)
        self.context = context

    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        return _Connection(origin=origin, ssl_context=self.context)


class _AsyncConnection(httpcore.AsyncHTTPConnection):
    handle_async_request = _kept(httpcore.AsyncHTTPConnection, "handle_async_request")


class _AsyncPool(httpcore.AsyncConnectionPool):
    handle_async_request = _kept(httpcore.AsyncConnectionPool, "handle_async_request")

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__(ssl_context=context)
        self.context = context

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return _AsyncConnection(origin=origin, ssl_context=self.context)


@functools.cache
def _context() -> ssl.SSLContext:
    """httpx's default SSL context, built once (loading the CA bundle takes tens of ms)."""
    return httpx.create_ssl_context()


def _core_request(request: httpx.Request, content: Any) -> httpcore.Request:
    url = request.url
    return httpcore.Request(
        method=request.method,
        url=httpcore.URL(
            scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
        ),
        headers=request.headers.raw,
        content=content,
        extensions=request.extensions,
    )


def _response(core: httpcore.Response, content: bytes) -> httpx.Response:
    # The connection is closed by now: its stream is not handed on.
    extensions = {k: v for k, v in core.extensions.items() if k != "network_stream"}
    return httpx.Response(
        core.status, headers=core.headers, stream=httpx.ByteStream(content), extensions=extensions
    )


@contextlib.contextmanager
def _as_httpx_errors(request: httpx.Request) -> Iterator[None]:
    """httpcore's errors as the httpx errors of the same name (as httpx's transport maps them)."""
    try:
        yield
    except Exception as error:
        for kind in type(error).__mro__:
            if kind.__module__.startswith("httpcore"):
                mapped = getattr(httpx, kind.__name__, None)
                if isinstance(mapped, type) and issubclass(mapped, httpx.TransportError):
                    raise mapped(str(error), request=request) from error
        raise


class DirectTransport(ReplayTransport):
    """Sends each request straight to its server (sync and async; see the module's docstring).

    :meth:`exchange` and :meth:`aexchange` also give the response's body as it came (encoded
    as the server sent it), which the cassette layer records.
    """

    def exchange(self, request: httpx.Request) -> tuple[httpx.Response, bytes]:
        """The server's response to ``request``, read whole, and its body as it came."""
        with _as_httpx_errors(request), _Pool(_context()) as pool:
            core = pool.handle_request(_core_request(request, request.stream))
            try:
                content = core.read()
            finally:
                core.close()
        return _response(core, content), content

    async def aexchange(self, request: httpx.Request) -> tuple[httpx.Response, bytes]:
        """:meth:`exchange` for async clients."""
        with _as_httpx_errors(request):
            async with _AsyncPool(_context()) as pool:
                core = await pool.handle_async_request(_core_request(request, request.stream))
                try:
                    content = await core.aread()
                finally:
                    await core.aclose()
        return _response(core, content), content

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """The server's response to ``request``."""
        return self.exchange(request)[0]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The server's response to ``request`` (async clients)."""
        return (await self.aexchange(request))[0]
