"""The recording transport: this project's HTTP clients recorded by the cassette layer itself.

While a cassette records, this package's own runtimes and providers send through
:class:`RecordingTransport` (:func:`~pytest_opdecide._http._replay_routing.replaying`), as they
send through the replay transport while it replays. It reaches the server through
:class:`~pytest_opdecide._http._direct_transport.DirectTransport`, past whatever other HTTP mock
the test uses (pytest-httpx, respx), and puts each exchange in vcrpy's cassette
(:meth:`~._vcr.VcrCassette.record_own`), in order with what vcrpy records of other clients: the
file is then scrubbed and written as before. In ``new_episodes`` mode, a request the cassette
already answers is replayed from it, as vcrpy would.
"""

from __future__ import annotations

from typing import Any

import httpx

from pytest_opdecide._cassettes._vcr import VcrCassette
from pytest_opdecide._http._direct_transport import DirectTransport
from pytest_opdecide._http._replay_routing import ReplayTransport

__all__ = ["RecordingTransport"]


def _as_recorded(response: httpx.Response, content: bytes) -> dict[str, Any]:
    """A response as vcrpy records one (headers as lists, the body as it came)."""
    headers: dict[str, list[str]] = {}
    for name, value in response.headers.multi_items():
        headers.setdefault(name, []).append(value)
    return {
        "status": {"code": response.status_code, "message": response.reason_phrase},
        "headers": headers,
        "body": {"string": content},
    }


def _as_response(played: dict[str, Any]) -> httpx.Response:
    """A response vcrpy holds, for the client."""
    message = played["status"].get("message")
    return httpx.Response(
        played["status"]["code"],
        headers=[(name, value) for name, values in played["headers"].items() for value in values],
        stream=httpx.ByteStream(played["body"]["string"] or b""),
        extensions={"reason_phrase": message.encode("ascii", "replace")} if message else {},
    )


class RecordingTransport(ReplayTransport):
    """Sends to the server and records the exchange (see the module's docstring).

    Args:
        machine: vcrpy in use for the cassette being recorded.
    """

    records = True

    def __init__(self, machine: VcrCassette) -> None:
        self.machine = machine
        self.direct = DirectTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """The server's response to ``request``, recorded (or the cassette's, if it has one)."""
        body = request.read()
        uri = str(request.url)
        played = self.machine.play_own(request.method, uri, body, request.headers)
        if played is not None:
            return _as_response(played)
        response, content = self.direct.exchange(request)
        recorded = _as_recorded(response, content)
        self.machine.record_own(request.method, uri, body, request.headers, recorded)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """:meth:`handle_request` for async clients."""
        body = await request.aread()
        uri = str(request.url)
        played = self.machine.play_own(request.method, uri, body, request.headers)
        if played is not None:
            return _as_response(played)
        response, content = await self.direct.aexchange(request)
        recorded = _as_recorded(response, content)
        self.machine.record_own(request.method, uri, body, request.headers, recorded)
        return response
