"""Replay by both players: this package's clients (the replay transport) and any other client
(vcrpy), with the same matching, in the cassette's order, each interaction replayed once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from pytest_opdecide._cassettes._cassette import CassetteMismatch, use_cassette
from pytest_opdecide._cassettes._recording_transport import RecordingTransport
from pytest_opdecide._http._replay_routing import (
    replay_async_client,
    replay_client,
    replay_transport,
)

from ._support import dedent

URL = "http://127.0.0.1:8765/v1/chat/completions"


def interaction(body: str, reply: str, url: str = URL, kind: str = "text/plain") -> str:
    return dedent(
        f"""
        - request:
            method: POST
            uri: {url}
            body:
              json: {body}
            headers:
              content-type: application/json
          response:
            status:
              code: 200
              message: OK
            headers:
              content-type: {kind}
            body:
              string: {reply}
        """
    )


def write(path: Path, *interactions: str) -> Path:
    path.write_text("interactions:\n" + "".join(interactions) + "version: 1\n", encoding="utf-8")
    return path


Client = Callable[[], httpx.Client]


def other_client() -> httpx.Client:
    """A client of another library's making: vcrpy replays it."""
    return httpx.Client()


def our_client() -> httpx.Client:
    """The client this package's HTTP layer gets while a cassette replays (the transport)."""
    client = replay_client(object(), headers=httpx.Headers(), timeout=None)
    assert client is not None, "not inside a replaying cassette"
    return client


@pytest.fixture(params=[other_client, our_client], ids=["vcrpy", "transport"])
def client(request: pytest.FixtureRequest) -> Client:
    return request.param  # type: ignore[no-any-return]


def post(client: httpx.Client, body: bytes, url: str = URL) -> str:
    return client.post(url, content=body, headers={"content-type": "application/json"}).text


def test_the_first_matching_interaction_answers_even_when_a_later_one_has_the_same_bytes(
    tmp_path: Path, client: Client
) -> None:
    # #0 holds the same JSON as the request with its keys in another order; #1 holds the very
    # bytes the test sends. Matching is by content, so #0 answers first, then #1.
    path = write(
        tmp_path / "order.yaml",
        interaction('{"b": 1, "a": 2}', "first"),
        interaction('{"a": 2, "b": 1}', "second"),
    )
    with use_cassette(path) as tape:
        sender = client()
        assert post(sender, b'{"a":2,"b":1}') == "first"
        assert post(sender, b'{"a":2,"b":1}') == "second"
        assert tape.play_count == 2
        assert tape.all_played
        with pytest.raises(CassetteMismatch, match="already replayed"):
            post(sender, b'{"a":2,"b":1}')


def test_the_same_request_recorded_twice_replays_its_answers_in_order(
    tmp_path: Path, client: Client
) -> None:
    body = '{"model": "m", "messages": [{"role": "user", "content": "Hi."}]}'
    path = write(tmp_path / "twice.yaml", interaction(body, "one"), interaction(body, "two"))
    sent = b'{"model":"m","messages":[{"role":"user","content":"Hi."}]}'
    with use_cassette(path):
        sender = client()
        assert [post(sender, sent), post(sender, sent)] == ["one", "two"]


def test_both_players_share_one_tape(tmp_path: Path) -> None:
    """A request answered by one player is not answered again by the other."""
    body = '{"a": 1}'
    path = write(
        tmp_path / "shared.yaml",
        interaction(body, "one"),
        interaction(body, "two"),
        interaction(body, "three"),
    )
    with use_cassette(path) as tape:
        assert post(our_client(), b'{"a": 1}') == "one"
        assert post(other_client(), b'{"a": 1}') == "two"
        assert post(our_client(), b'{"a": 1}') == "three"
        assert tape.all_played
        for sender in (our_client(), other_client()):
            with pytest.raises(CassetteMismatch, match=r"#0 of 3 \(already replayed\)"):
                post(sender, b'{"a": 1}')


def test_another_host_and_port_still_match(tmp_path: Path, client: Client) -> None:
    # The recording machine's server address is not compared: only the byte-for-byte shortcut
    # is lost, not the match.
    path = write(tmp_path / "host.yaml", interaction('{"a": 1}', "answer"))
    with use_cassette(path):
        assert post(client(), b'{"a": 1}', "http://localhost:9999/v1/chat/completions") == "answer"


def test_async_clients_replay_through_the_same_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "async.yaml",
        interaction('{"a": 1}', "one"),
        interaction('{"a": 2}', "two"),
        interaction('{"a": 3}', "three"),
    )

    async def run() -> list[str]:
        ours = replay_async_client(object(), headers=httpx.Headers(), timeout=None)
        assert ours is not None
        async with httpx.AsyncClient() as theirs:
            second = await theirs.post(URL, content=b'{"a":2}')
            first = await ours.post(URL, content=b'{"a": 1}')
            third = await ours.post(URL, content=b'{"a":3}')
            return [second.text, first.text, third.text]

    with use_cassette(path) as tape:
        assert asyncio.run(run()) == ["two", "one", "three"]
        assert tape.all_played


def test_a_request_the_cassette_lacks_fails_with_the_diff(tmp_path: Path, client: Client) -> None:
    path = write(tmp_path / "lacks.yaml", interaction('{"a": 1}', "one"))
    with use_cassette(path, allow_unused=True), pytest.raises(CassetteMismatch) as caught:
        post(client(), b'{"a": 3}')
    message = str(caught.value)
    assert message.startswith(
        f"the test sent a request that is not in cassette {path} (record mode none):\n"
        f"    POST {URL}\n"
        "Nearest recorded request: #0 of 1:\n"
        "--- recorded #0\n"
        "+++ sent now\n"
    )
    assert "-a: 1\n+a: 3\n" in message
    assert caught.value.path == path
    assert caught.value.method == "POST"


def test_a_key_in_the_url_is_not_shown(tmp_path: Path, client: Client) -> None:
    path = write(tmp_path / "key.yaml", interaction('{"a": 1}', "one"))
    url = f"{URL}?api_key=sk-abcdefghijklmnopqrstuvwx"
    with use_cassette(path, allow_unused=True), pytest.raises(CassetteMismatch) as caught:
        post(client(), b'{"a": 2}', url)
    assert "sk-abcdefghijklmnopqrstuvwx" not in str(caught.value)
    assert f"POST {URL}?api_key=<REDACTED>" in str(caught.value)
    assert caught.value.uri == f"{URL}?api_key=<REDACTED>"


def test_record_mode_all_never_replays(tmp_path: Path) -> None:
    path = write(tmp_path / "all.yaml", interaction('{"a": 1}', "recorded"))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="from the server")

    # vcrpy patches the mock transport too: "all" sends every request on and records it.
    transport = httpx.MockTransport(handler)
    with use_cassette(path, record="all"), httpx.Client(transport=transport) as client:
        # This package's clients are recorded by the cassette layer (past other mocks), those
        # on a transport of their own other than httpx's network one keep it (vcrpy records).
        assert isinstance(replay_transport(), RecordingTransport)
        assert isinstance(replay_transport(httpx.HTTPTransport()), RecordingTransport)
        assert replay_transport(transport) is None
        headers = httpx.Headers()
        assert replay_client(object(), headers=headers, timeout=None, own=transport) is None
        assert post(client, b'{"a":1}') == "from the server"


def test_the_transport_is_used_only_inside_the_cassette(tmp_path: Path) -> None:
    path = write(tmp_path / "inside.yaml", interaction('{"a": 1}', "one"))
    assert replay_client(object(), headers=httpx.Headers(), timeout=None) is None
    with use_cassette(path):
        owner = object()
        client = replay_client(owner, headers=httpx.Headers(), timeout=None)
        assert client is replay_client(owner, headers=httpx.Headers(), timeout=None)
        assert post(our_client(), b'{"a": 1}') == "one"
    assert replay_client(object(), headers=httpx.Headers(), timeout=None) is None
    assert client is not None
    assert client.is_closed


@pytest.fixture
def stream_cassette(tmp_path: Path) -> Path:
    events = 'data: {\\"n\\": 1}\\n\\ndata: {\\"n\\": 2}\\n\\ndata: [DONE]\\n\\n'
    return write(
        tmp_path / "stream.yaml",
        interaction('{"stream": true}', f'"{events}"', kind="text/event-stream"),
    )


def test_streams_replay_event_by_event_through_the_transport(stream_cassette: Path) -> None:
    with use_cassette(stream_cassette):
        client = our_client()
        with client.stream("POST", URL, content=b'{"stream": true}') as response:
            chunks = list(response.iter_raw())
    assert chunks == [b'data: {"n": 1}\n\n', b'data: {"n": 2}\n\n', b"data: [DONE]\n\n"]


def test_streams_replay_whole_to_other_clients(stream_cassette: Path) -> None:
    """vcrpy replays a body in one piece: a client reading events still gets each of them."""
    with (
        use_cassette(stream_cassette),
        httpx.Client() as client,
        client.stream("POST", URL, content=b'{"stream": true}') as response,
    ):
        lines = [line for line in response.iter_lines() if line]
    assert lines == ['data: {"n": 1}', 'data: {"n": 2}', "data: [DONE]"]


def test_vcrpy_patches_are_removed_after_the_cassette(tmp_path: Path) -> None:
    path = write(tmp_path / "patches.yaml", interaction('{"a": 1}', "one"))
    before = httpx.HTTPTransport.handle_request
    with use_cassette(path), httpx.Client() as client:
        assert httpx.HTTPTransport.handle_request is not before
        post(client, b'{"a":1}')
    assert httpx.HTTPTransport.handle_request is before
