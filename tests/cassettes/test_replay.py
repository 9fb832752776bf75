"""Replay straight from the httpx request: the same answers as vcrpy's matching, in order."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from pathlib import Path

import httpx
import pytest

from pytest_opdecide._cassettes import (
    CassetteMismatch,
    _absent_transports,
    _imports_known_absent,
    use_cassette,
)

from ._support import dedent

URL = "http://127.0.0.1:8765/v1/chat/completions"


def interaction(body: str, reply: str, url: str = URL) -> str:
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
              content-type: text/plain
            body:
              string: {reply}
        """
    )


def write(path: Path, *interactions: str) -> Path:
    path.write_text("interactions:\n" + "".join(interactions) + "version: 1\n", encoding="utf-8")
    return path


def post(client: httpx.Client, body: bytes, url: str = URL) -> str:
    return client.post(url, content=body, headers={"content-type": "application/json"}).text


def test_the_first_matching_interaction_answers_even_when_a_later_one_has_the_same_bytes(
    tmp_path: Path,
) -> None:
    # #0 holds the same JSON as the request with its keys in another order; #1 holds the very
    # bytes the test sends. Matching is by content, so #0 answers first, then #1.
    path = write(
        tmp_path / "order.yaml",
        interaction('{"b": 1, "a": 2}', "first"),
        interaction('{"a": 2, "b": 1}', "second"),
    )
    with use_cassette(path) as cassette, httpx.Client() as client:
        assert post(client, b'{"a":2,"b":1}') == "first"
        assert post(client, b'{"a":2,"b":1}') == "second"
        assert cassette.play_count == 2
        assert cassette.all_played
        with pytest.raises(CassetteMismatch, match="already replayed"):
            post(client, b'{"a":2,"b":1}')


def test_the_same_request_recorded_twice_replays_its_answers_in_order(tmp_path: Path) -> None:
    body = '{"model": "m", "messages": [{"role": "user", "content": "Hi."}]}'
    path = write(tmp_path / "twice.yaml", interaction(body, "one"), interaction(body, "two"))
    sent = b'{"model":"m","messages":[{"role":"user","content":"Hi."}]}'
    with use_cassette(path), httpx.Client() as client:
        assert [post(client, sent), post(client, sent)] == ["one", "two"]


def test_another_host_and_port_still_match(tmp_path: Path) -> None:
    # The recording machine's server address is not compared: only the byte-for-byte shortcut
    # is lost, not the match.
    path = write(tmp_path / "host.yaml", interaction('{"a": 1}', "answer"))
    with use_cassette(path), httpx.Client() as client:
        assert post(client, b'{"a": 1}', "http://localhost:9999/v1/chat/completions") == "answer"


def test_async_clients_replay_through_the_same_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "async.yaml", interaction('{"a": 1}', "one"), interaction('{"a": 2}', "two")
    )

    async def run() -> list[str]:
        async with httpx.AsyncClient() as client:
            second = await client.post(URL, content=b'{"a":2}')
            first = await client.post(URL, content=b'{"a": 1}')
            return [second.text, first.text]

    with use_cassette(path) as cassette:
        assert asyncio.run(run()) == ["two", "one"]
        assert cassette.all_played


def test_a_request_the_cassette_lacks_still_fails_with_the_diff(tmp_path: Path) -> None:
    path = write(tmp_path / "lacks.yaml", interaction('{"a": 1}', "one"))
    with (
        use_cassette(path, allow_unused=True),
        httpx.Client() as client,
        pytest.raises(CassetteMismatch, match="Nearest recorded request: #0 of 1"),
    ):
        post(client, b'{"a": 3}')


def test_record_mode_all_never_replays(tmp_path: Path) -> None:
    path = write(tmp_path / "all.yaml", interaction('{"a": 1}', "recorded"))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="from the server")

    # vcrpy patches the mock transport too: "all" sends every request on and records it.
    transport = httpx.MockTransport(handler)
    with use_cassette(path, record="all"), httpx.Client(transport=transport) as client:
        assert post(client, b'{"a":1}') == "from the server"


def test_the_seams_in_vcrpy_are_restored(tmp_path: Path) -> None:
    from vcr.stubs import httpx_stubs

    before = (httpx_stubs._vcr_request, httpx_stubs._deserialize_response)
    path = write(tmp_path / "seams.yaml", interaction('{"a": 1}', "one"))
    with use_cassette(path), httpx.Client() as client:
        assert (httpx_stubs._vcr_request, httpx_stubs._deserialize_response) != before
        post(client, b'{"a":1}')
    assert (httpx_stubs._vcr_request, httpx_stubs._deserialize_response) == before


class TestOptionalTransports:
    """vcrpy imports two optional httpx transports whenever a cassette opens."""

    def test_absent_ones_fail_to_import_at_once_and_are_forgotten_after(self) -> None:
        absent = _absent_transports()
        assert set(absent) <= {"httpx_curl_cffi", "pyreqwest"}
        for name in absent:
            assert name not in sys.modules
        with _imports_known_absent():
            for name in absent:
                with pytest.raises(ImportError):
                    importlib.import_module(name)
        for name in absent:
            assert name not in sys.modules

    def test_a_module_already_imported_is_left_alone(self, monkeypatch: pytest.MonkeyPatch) -> None:
        if not _absent_transports():
            pytest.skip("both optional transports are installed here")
        name = _absent_transports()[0]
        stand_in = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, stand_in)
        with _imports_known_absent():
            assert sys.modules[name] is stand_in
        assert sys.modules[name] is stand_in
