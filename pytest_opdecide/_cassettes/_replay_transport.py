"""The replay transport: this project's HTTP clients answered straight from a cassette.

:class:`CassetteTransport` is an httpx transport (sync and async) that answers each request
with the first recorded interaction that matches it and has not been replayed (see
:class:`~._tape.Tape`), and raises
:class:`~._matching.CassetteMismatch`, with its diff, for a request the cassette
cannot answer. A recorded event stream comes back as a stream, one chunk per event, as the
server sent it.

The cassette layer hands it to this package's own runtimes and providers while a cassette
replays (:func:`~pytest_opdecide._http._replay_routing.replaying`); requests of other HTTP clients
are replayed by vcrpy from the same tape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import NoReturn

import httpx

from pytest_opdecide._cassettes._matching import CassetteMismatch
from pytest_opdecide._cassettes._tape import Interaction, Tape
from pytest_opdecide._http._replay_routing import ReplayTransport

__all__ = ["CassetteTransport", "EventStream", "event_chunks"]


def event_chunks(body: bytes) -> list[bytes]:
    """A recorded event-stream body cut into its events, each with its blank line."""
    return [part + b"\n\n" for part in body.split(b"\n\n") if part.strip()]


class EventStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A recorded event stream, yielded one event at a time (sync and async)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _response(interaction: Interaction) -> httpx.Response:
    content = interaction.content
    stream: httpx.SyncByteStream
    if interaction.streamed:
        stream = EventStream(event_chunks(content))
    else:
        stream = httpx.ByteStream(content)
    return httpx.Response(
        interaction.status,
        headers=[
            (name, value)
            for name, values in interaction.response_headers.items()
            for value in values
        ],
        stream=stream,
        extensions=(
            {"reason_phrase": interaction.reason.encode("ascii", "replace")}
            if interaction.reason
            else {}
        ),
    )


class CassetteTransport(ReplayTransport):
    """Answers requests from a cassette's tape (see the module's docstring).

    Args:
        tape: The cassette's interactions and what has been replayed.
    """

    def __init__(self, tape: Tape) -> None:
        self.tape = tape

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """The recorded response to ``request``.

        Raises:
            CassetteMismatch: No recorded interaction that has not been replayed matches.
        """
        return self._answer(request.method, str(request.url), request.read())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The recorded response to ``request`` (async clients).

        Raises:
            CassetteMismatch: No recorded interaction that has not been replayed matches.
        """
        return self._answer(request.method, str(request.url), await request.aread())

    def _answer(self, method: str, url: str, body: bytes) -> httpx.Response:
        interaction = self.tape.take(method, url, body)
        if interaction is None:
            _refuse(self.tape.mismatch(method, url, body))
        return _response(interaction)


def _refuse(error: CassetteMismatch) -> NoReturn:
    # Raised here, in a frame whose only argument is the error: pytest shows the arguments of
    # the frame that raised, and the request's URL or body may hold a key.
    raise error
