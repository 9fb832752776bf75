"""RecordingTransport: records, forwards, fails and holds, sync and async."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading

import httpx
import pytest

from pytest_opdecide.conformance import RecordingTransport


def backend(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content) if request.content else None
    return httpx.Response(201, json={"echo": body, "path": request.url.path})


def test_sync_requests_are_recorded_and_forwarded() -> None:
    transport = RecordingTransport(httpx.MockTransport(backend))
    with httpx.Client(transport=transport) as client:
        response = client.post("http://backend.invalid/v1/x", json={"a": [1, "1"]})
    assert response.status_code == 201
    assert response.json() == {"echo": {"a": [1, "1"]}, "path": "/v1/x"}
    (recorded,) = transport.requests
    assert recorded.method == "POST"
    assert recorded.url == "http://backend.invalid/v1/x"
    assert recorded.json == {"a": [1, "1"]}
    assert recorded.status == 201
    assert recorded.response_json == {"echo": {"a": [1, "1"]}, "path": "/v1/x"}
    assert recorded.headers["content-type"] == "application/json"


def test_async_requests_are_recorded_and_forwarded() -> None:
    transport = RecordingTransport(httpx.MockTransport(backend))

    async def call() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport) as client:
            return await client.get("http://backend.invalid/models")

    assert asyncio.run(call()).json()["path"] == "/models"
    assert len(transport) == 1
    transport.clear()
    assert transport.requests == []


def test_a_compressed_backend_body_reaches_the_client_decoded_once() -> None:
    def zipped(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=gzip.compress(b'{"ok": 1}'), headers={"content-encoding": "gzip"}
        )

    transport = RecordingTransport(httpx.MockTransport(zipped))
    with httpx.Client(transport=transport) as client:
        assert client.get("http://backend.invalid/").json() == {"ok": 1}
    assert transport.requests[0].response_json == {"ok": 1}


def test_failing_answers_without_reaching_the_backend() -> None:
    reached: list[str] = []

    def counting(request: httpx.Request) -> httpx.Response:
        reached.append(str(request.url))
        return httpx.Response(200)

    transport = RecordingTransport(httpx.MockTransport(counting))
    with (
        transport.failing(lambda request: httpx.Response(503, text="down")),
        httpx.Client(transport=transport) as client,
    ):
        assert client.get("http://backend.invalid/").status_code == 503
    assert reached == []
    assert transport.requests[0].status == 503


def test_a_raising_failure_is_recorded_without_a_status() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    transport = RecordingTransport(httpx.MockTransport(backend))
    with (
        transport.failing(refuse),
        httpx.Client(transport=transport) as client,
        pytest.raises(httpx.ConnectError),
    ):
        client.get("http://backend.invalid/")
    assert transport.requests[0].status is None


def test_hold_keeps_a_request_until_released() -> None:
    transport = RecordingTransport(httpx.MockTransport(backend))

    async def scenario() -> int:
        async with httpx.AsyncClient(transport=transport) as client:
            pending = asyncio.ensure_future(client.get("http://backend.invalid/slow"))
            assert await asyncio.to_thread(transport.arrived.wait, 10)
            await asyncio.sleep(0.05)
            assert not pending.done()
            threading.Timer(0.01, transport.release).start()
            return (await pending).status_code

    with transport.hold():
        assert asyncio.run(scenario()) == 201


def test_a_held_request_can_be_cancelled() -> None:
    transport = RecordingTransport(httpx.MockTransport(backend))

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            pending = asyncio.ensure_future(client.get("http://backend.invalid/slow"))
            assert await asyncio.to_thread(transport.arrived.wait, 10)
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending

    with transport.hold():
        asyncio.run(scenario())


def test_the_backend_must_be_a_transport() -> None:
    with pytest.raises(TypeError, match="httpx transport"):
        RecordingTransport(backend)  # type: ignore[arg-type]
