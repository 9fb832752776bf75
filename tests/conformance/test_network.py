"""watch_network: every way out of the transport override is seen and refused."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from pytest_opdecide.conformance import watch_network
from pytest_opdecide.conformance._network_watch import allow_network


def test_a_real_httpx_request_is_recorded_and_refused() -> None:
    with watch_network() as attempts, pytest.raises(httpx.ConnectError, match="blocked"):
        httpx.get("http://api.example.invalid/v1/models")
    assert attempts.targets == ["GET http://api.example.invalid/v1/models"]


def test_an_async_httpx_request_is_recorded_and_refused() -> None:
    async def call() -> None:
        async with httpx.AsyncClient() as client:
            await client.post("http://127.0.0.1:9/v1/chat/completions", json={})

    with watch_network() as attempts, pytest.raises(httpx.ConnectError):
        asyncio.run(call())
    assert attempts.targets == ["POST http://127.0.0.1:9/v1/chat/completions"]


def test_sockets_and_dns_lookups_are_recorded_and_refused() -> None:
    with watch_network() as attempts:
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("example.invalid", 443)
        with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
            sock.connect(("127.0.0.1", 9))
    assert attempts.targets == ["resolve example.invalid", "connect 127.0.0.1:9"]


def test_a_mock_transport_is_not_the_network() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"ok": True}))
    with watch_network() as attempts, httpx.Client(transport=transport) as client:
        assert client.get("http://backend.invalid/").json() == {"ok": True}
    assert not attempts


def test_the_backend_may_be_reached_inside_allow_network() -> None:
    # Resolved for real (a loopback name: no test may send a lookup off the machine).
    with watch_network() as attempts, allow_network():
        assert socket.getaddrinfo("localhost", 80)
    assert not attempts


def test_the_patches_are_removed_afterwards() -> None:
    connect = socket.socket.connect
    getaddrinfo = socket.getaddrinfo
    handle = httpx.HTTPTransport.handle_request
    with watch_network(), watch_network():
        assert socket.getaddrinfo is not getaddrinfo
    assert socket.socket.connect is connect
    assert socket.getaddrinfo is getaddrinfo
    assert httpx.HTTPTransport.handle_request is handle
