"""``timeout_s`` bounds the whole call, against a real server on 127.0.0.1 that trickles.

httpx's timeouts bound each read on its own: a server that sends a byte every 0.3 s never trips
them. Each test measures that the call ends within about its limit; the bound is generous (it
proves a bound, not a speed, on a loaded machine).
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from _slow_server import TrickleServer

from pytest_opdecide.runtimes import CallTimeoutError, OpenAICompatibleRuntime

KEY = "sk-opdecide-test-7a1c3e5f9b2d4f6a8c0e"
LIMIT = 1.0
BOUND = LIMIT + 3.0
"""A call must end before this: the limit, and room for a loaded machine."""

WHOLE_CALL = (
    "timed out: the whole call took longer than 1 s (while waiting for or receiving the "
    "reply). timeout_s bounds the whole call: connecting, sending and all of the reply, "
    "streamed or not. The model took too long: raise timeout_s "
    "(OpenAICompatibleRuntime(timeout_s=...) or exec(..., timeout_s=...))"
)


def timed_call(runtime: OpenAICompatibleRuntime, mode: str, **options: float) -> float:
    """Run one call that must time out; how long it took."""

    def call() -> object:
        if mode == "sync":
            return runtime.exec("hi", **options)
        return asyncio.run(runtime.exec_async("hi", **options))

    start = time.monotonic()
    with pytest.raises(CallTimeoutError) as caught:
        call()
    took = time.monotonic() - start
    error = caught.value
    assert WHOLE_CALL in str(error)
    assert (error.phase, error.timeout_s) == ("read", LIMIT)
    assert KEY not in str(error)
    return took


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("trickled", "stream"),
    [("body", False), ("stream", True), ("headers", False)],
    ids=["json-body", "event-stream", "headers"],
)
def test_a_trickling_server_cannot_hold_a_call_past_timeout_s(
    mode: str, trickled: str, stream: bool
) -> None:
    with (
        TrickleServer(trickled) as server,
        OpenAICompatibleRuntime(server.url, KEY, stream=stream, timeout_s=LIMIT) as runtime,
    ):
        took = timed_call(runtime, mode)
    assert LIMIT - 0.05 <= took < BOUND, f"the call took {took:.2f} s"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_request_s_own_timeout_s_bounds_the_whole_call(mode: str) -> None:
    with (
        TrickleServer("body") as server,
        OpenAICompatibleRuntime(server.url, KEY, timeout_s=600) as runtime,
    ):
        took = timed_call(runtime, mode, timeout_s=LIMIT)
    assert took < BOUND, f"the call took {took:.2f} s"


@pytest.mark.parametrize("trickled", ["headers", "body"])
def test_a_kept_alive_connection_is_bounded_too(trickled: str) -> None:
    """The second call reuses the first one's connection: its socket is told to the runtime
    only when the headers come, and a server that trickles them still cannot hold it."""
    with (
        TrickleServer("whole", trickled) as server,
        OpenAICompatibleRuntime(server.url, KEY, timeout_s=LIMIT) as runtime,
    ):
        assert runtime.exec("hi").startswith("Hello, slowly")
        took = timed_call(runtime, "sync")
        assert (server.requests, server.connections) == (2, 1)  # the first call's connection
    assert took < BOUND, f"the call took {took:.2f} s"


def test_the_runtime_is_usable_after_a_call_ran_out_of_time() -> None:
    with (
        TrickleServer("body", "whole") as server,
        OpenAICompatibleRuntime(server.url, KEY, timeout_s=LIMIT) as runtime,
    ):
        timed_call(runtime, "sync")
        assert runtime.exec("hi").startswith("Hello, slowly")


@pytest.mark.parametrize(
    ("script", "calls"), [(("headers",), 1), (("body",), 1), (("whole", "body"), 2)]
)
def test_a_transport_of_the_caller_s_own_is_bounded_too(
    script: tuple[str, ...], calls: int
) -> None:
    """Through an ``httpx.HTTPTransport`` the caller passed, the runtime shuts down only the
    sockets it knows are the call's: a new connection's (the trace extension), or the one that
    answered (its headers came, the body trickles)."""
    with (
        TrickleServer(*script) as server,
        httpx.HTTPTransport() as transport,
        OpenAICompatibleRuntime(server.url, KEY, transport=transport, timeout_s=LIMIT) as runtime,
    ):
        if calls == 2:
            assert runtime.exec("hi").startswith("Hello, slowly")
        took = timed_call(runtime, "sync")
        assert server.connections == 1
    assert took < BOUND, f"the call took {took:.2f} s"
