"""Where this project's own HTTP clients send their requests while a cassette is in use.

The runtimes and providers of this package (``OpenAICompatibleRuntime``,
``OpenAICompatibleDecisionProvider``, anything built on their HTTP layer) ask here before they
send: inside :func:`replaying`, their requests go to the given transport (an httpx transport,
httpx's public transport API) instead of their own. The cassette layer uses it to answer them
straight from the loaded cassette while it replays, event by event for streams, and to record
them past other HTTP mocks while it records; other HTTP clients are replayed by vcrpy.

A replaying transport takes every request. A recording one (:attr:`ReplayTransport.records`)
takes only those a client would send to the network through httpx's own transport
(:func:`to_network`), and only while another HTTP mock has replaced httpx's or httpcore's
sending methods (:func:`another_mock`): a client given another transport (``httpx.MockTransport``,
an ASGI app, a subclass of its own) keeps it, and with no other mock in the way every client
keeps its own transport (its proxies, certificates and kept-alive connections), and vcrpy
records what they send, as for any client.

The transport is held in a context variable: every asyncio task and every thread started with
a copy of the context sees it, and nothing outside the ``with`` block does.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import httpx

from pytest_opdecide._http._network import httpx_replaced_by
from pytest_opdecide._http._real_methods import core_replaced_by

__all__ = [
    "ReplayTransport",
    "another_mock",
    "replay_async_client",
    "replay_client",
    "replay_transport",
    "replaying",
    "to_network",
]


class ReplayTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """A transport for both sync and async httpx clients (as ``httpx.MockTransport`` is)."""

    records = False
    """Whether it records (sends to the server) rather than answers from a cassette."""


def to_network(transport: object) -> bool:
    """Whether a client with ``transport`` (``None``: httpx's default) sends to the network
    through httpx's own transport, the one other mocks replace."""
    return transport is None or type(transport) in (httpx.HTTPTransport, httpx.AsyncHTTPTransport)


def another_mock() -> str | None:
    """The module of another HTTP mock that answers httpx's requests now (pytest-httpx's
    ``httpx_mock``, an active ``respx.mock``), or ``None``; vcrpy's own patches, in place while
    a cassette records, are not one."""
    return httpx_replaced_by(ignoring=sys.modules.get("vcr")) or core_replaced_by()


class _Replay:
    """One :func:`replaying` block: its transport and the clients built on it, per owner."""

    def __init__(self, transport: ReplayTransport) -> None:
        self.transport = transport
        self.clients: dict[int, tuple[Any, httpx.Client]] = {}
        self.async_clients: dict[int, tuple[Any, httpx.AsyncClient]] = {}


T = TypeVar("T")

_current: ContextVar[_Replay | None] = ContextVar("opdecide_replay", default=None)


@contextlib.contextmanager
def replaying(transport: ReplayTransport) -> Iterator[None]:
    """Send every request of this package's HTTP clients to ``transport`` in the block."""
    replay = _Replay(transport)
    token = _current.set(replay)
    try:
        yield
    finally:
        _current.reset(token)
        for _, client in replay.clients.values():
            client.close()


def replay_transport(own: object = None) -> ReplayTransport | None:
    """The transport of the enclosing :func:`replaying` block for a client whose own transport
    is ``own``, if any (see the module's docstring)."""
    replay = _current.get()
    if replay is None:
        return None
    if replay.transport.records and (not to_network(own) or another_mock() is None):
        return None
    return replay.transport


def replay_client(
    owner: object, *, headers: httpx.Headers, timeout: float | None, own: object = None
) -> httpx.Client | None:
    """A sync client sending through the replay transport (one per ``owner`` and block), or
    ``None`` outside :func:`replaying` (and for a client whose own transport ``own`` a
    recording transport leaves it)."""
    replay = _current.get()
    if replay is None or replay_transport(own) is None:
        return None
    return _one_per_owner(
        replay.clients,
        owner,
        lambda: httpx.Client(
            transport=replay.transport, headers=headers, timeout=httpx.Timeout(timeout)
        ),
    )


def replay_async_client(
    owner: object, *, headers: httpx.Headers, timeout: float | None, own: object = None
) -> httpx.AsyncClient | None:
    """An async client sending through the replay transport (one per ``owner`` and block), or
    ``None`` as for :func:`replay_client`.

    The transport holds no connection, so the client belongs to no event loop and needs no
    closing.
    """
    replay = _current.get()
    if replay is None or replay_transport(own) is None:
        return None
    return _one_per_owner(
        replay.async_clients,
        owner,
        lambda: httpx.AsyncClient(
            transport=replay.transport, headers=headers, timeout=httpx.Timeout(timeout)
        ),
    )


def _one_per_owner(clients: dict[int, tuple[Any, T]], owner: object, make: Callable[[], T]) -> T:
    # Keyed by id, with the owner kept: the id is not reused while the owner is alive.
    known = clients.get(id(owner))
    if known is None or known[0] is not owner:
        known = clients[id(owner)] = (owner, make())
    return known[1]
