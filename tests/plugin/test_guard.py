"""The real-call guard: a request to a non-loopback host fails the test, saying how to allow it.

Nothing here reaches the network. The guard raises before any connection (before any name
lookup, for httpx); where a request must get through, it goes to a server on 127.0.0.1 started
by the test, or to an ``httpx`` transport whose connection pool is replaced by a fake one, so
that the guarded method runs but nothing is sent. The runs are subprocesses: the guard patches
process-wide state.
"""

from __future__ import annotations

import socket

import pytest

from pytest_opdecide._guard import RealCallBlocked, guard

from .support import write_ini

SUPPORT = '''
import http.server
import socket
import threading

import httpcore
import httpx
import pytest

from pytest_opdecide._guard import RealCallBlocked


class FakePool:
    """Stands in for httpcore's connection pool: answers without any connection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        pass

    def close(self):
        pass

    async def aclose(self):
        pass

    def handle_request(self, request):
        return httpcore.Response(200, content=b"fake pool")

    async def handle_async_request(self, request):
        return httpcore.Response(200, content=b"fake pool")


def offline_client():
    transport = httpx.HTTPTransport()
    transport._pool = FakePool()
    return httpx.Client(transport=transport)


def offline_async_client():
    transport = httpx.AsyncHTTPTransport()
    transport._pool = FakePool()
    return httpx.AsyncClient(transport=transport)


@pytest.fixture
def local_server():
    """An HTTP server on 127.0.0.1 (the loopback, always allowed)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"local")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
'''

MESSAGE = (
    "pytest-opdecide blocked a real call to {target} in {test}: tests run offline by default.\n"
    "  - script the model with the `runtime` / `decision_provider` fixtures, or\n"
    "  - record it once: mark the test @pytest.mark.opdecide(cassette=True) and run pytest "
    "--opdecide-record=once, or\n"
    "  - run it against the live model: --opdecide-live, or\n"
    "  - allow it for this test: @pytest.mark.opdecide(guard=False) (or --opdecide-guard=off for "
    "the run)."
)


def test_the_guard_blocks_and_allows(project: pytest.Pytester) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(
        test_calls=f"""
        import asyncio

        from conftest import *

        MESSAGE = {MESSAGE!r}


        def test_sync_request_is_blocked():
            with offline_client() as client, pytest.raises(RealCallBlocked) as caught:
                client.get("https://api.example.com/v1/chat/completions")
            assert str(caught.value) == MESSAGE.format(
                target="https://api.example.com/v1/chat/completions",
                test="test_calls.py::test_sync_request_is_blocked",
            )


        async def test_async_request_is_blocked():
            async with offline_async_client() as client:
                with pytest.raises(RealCallBlocked, match="api.example.com"):
                    await client.post("https://api.example.com/v1/chat/completions", json={{}})


        def test_a_raw_socket_is_blocked():
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            with sock, pytest.raises(RealCallBlocked) as caught:
                sock.connect(("192.0.2.1", 443))
            assert str(caught.value).startswith(
                "pytest-opdecide blocked a real call to 192.0.2.1:443 in "
                "test_calls.py::test_a_raw_socket_is_blocked"
            )
            with socket.socket() as other, pytest.raises(RealCallBlocked):
                other.connect_ex(("192.0.2.1", 80))


        def test_an_address_is_blocked():
            with pytest.raises(RealCallBlocked, match="http://192.0.2.1/v1/models"):
                httpx.get("http://192.0.2.1/v1/models", timeout=5)


        def test_loopback_is_allowed(local_server):
            assert httpx.get(local_server, timeout=5).text == "local"
            port = local_server.rsplit(":", 1)[1]
            assert httpx.get(f"http://localhost:{{port}}", timeout=5).text == "local"


        async def test_loopback_is_allowed_async(local_server):
            async with httpx.AsyncClient() as client:
                assert (await client.get(local_server, timeout=5)).text == "local"


        def test_a_mock_transport_is_never_blocked():
            transport = httpx.MockTransport(lambda request: httpx.Response(200, text="mocked"))
            with httpx.Client(transport=transport) as client:
                assert client.get("https://api.example.com/v1/models").text == "mocked"


        @pytest.mark.opdecide(guard=False)
        def test_the_marker_allows():
            with offline_client() as client:
                assert client.get("https://api.example.com/v1/models").text == "fake pool"


        @pytest.mark.opdecide(guard=False)
        async def test_the_marker_allows_async():
            async with offline_async_client() as client:
                assert (await client.get("https://api.example.com/")).text == "fake pool"


        def test_the_failure_users_see():
            with offline_client() as client:
                client.get("https://api.example.com/v1/models")
        """
    )
    result = project.runpytest_subprocess("--tb=short")
    result.assert_outcomes(passed=9, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   pytest_opdecide._guard.RealCallBlocked: pytest-opdecide blocked a real call to "
            "https://api.example.com/v1/models in test_calls.py::test_the_failure_users_see: "
            "tests run offline by default.",
            "E     - script the model with the `runtime` / `decision_provider` fixtures, or",
            "E     - record it once: mark the test @pytest.mark.opdecide(cassette=True) and run "
            "pytest --opdecide-record=once, or",
            "E     - run it against the live model: --opdecide-live, or",
            "E     - allow it for this test: @pytest.mark.opdecide(guard=False) (or "
            "--opdecide-guard=off for the run).",
        ]
    )


ALLOWED_OR_NOT = """
from conftest import *


def test_unmarked():
    with offline_client() as client:
        client.get("https://api.example.com/v1/models")


@pytest.mark.opdecide(guard=True)
def test_marked_on():
    with offline_client() as client:
        client.get("https://api.example.com/v1/models")


def test_with_fixture(runtime):
    with offline_client() as client:
        client.get("https://api.example.com/v1/models")
"""


@pytest.mark.parametrize(
    ("arguments", "ini", "conftest", "blocked"),
    [
        ([], {}, "", ["test_unmarked", "test_marked_on", "test_with_fixture"]),
        (["--opdecide-guard=off"], {}, "", []),
        (["--opdecide-guard=off"], {}, '{"guard": True}', []),
        ([], {"opdecide_guard": "off"}, "", ["test_marked_on"]),
        ([], {"opdecide_guard": "off"}, '{"guard": True}', ["test_marked_on", "test_with_fixture"]),
        ([], {}, '{"guard": False}', ["test_unmarked", "test_marked_on"]),
    ],
    ids=[
        "default",
        "command-line-off",
        "command-line-beats-fixture",
        "ini-off-marker-on",
        "ini-off-fixture-on",
        "fixture-off",
    ],
)
def test_the_guard_setting_follows_the_precedence(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    arguments: list[str],
    ini: dict[str, str],
    conftest: str,
    blocked: list[str],
) -> None:
    # The opdecide_config fixture applies to tests that use the plugin's fixtures.
    monkeypatch.setenv("COLUMNS", "300")  # short summary lines in full
    write_ini(project, **ini)
    config = f"\n\n@pytest.fixture\ndef opdecide_config():\n    return {conftest}\n"
    project.makeconftest(SUPPORT + (config if conftest else ""))
    project.makepyfile(test_calls=ALLOWED_OR_NOT)
    result = project.runpytest_subprocess("-rf", *arguments)
    result.assert_outcomes(passed=3 - len(blocked), failed=len(blocked))
    for name in blocked:
        result.stdout.fnmatch_lines([f"FAILED test_calls.py::{name} - *RealCallBlocked*"])


def test_a_session_run_inside_a_test_leaves_the_guard_on(project: pytest.Pytester) -> None:
    # pytester's in-process run configures and unconfigures the plugin in this process.
    assert guard.active
    project.makepyfile("def test_inner():\n    pass\n")
    project.runpytest().assert_outcomes(passed=1)
    assert guard.active
    assert guard.test_id.endswith("test_a_session_run_inside_a_test_leaves_the_guard_on")
    with socket.socket() as sock, pytest.raises(RealCallBlocked):
        sock.connect(("192.0.2.1", 80))


def test_the_guard_comes_back_when_another_tool_drops_its_patch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another tool that restores the socket.connect it saw earlier must not disarm the guard."""
    assert guard.active
    unguarded = next(o for (_, name, o) in guard._originals if name == "connect")
    assert not getattr(unguarded, "__opdecide_guard__", False)
    monkeypatch.setattr(socket.socket, "connect", unguarded)
    guard.refresh()  # what the plugin does as each test starts
    with socket.socket() as sock, pytest.raises(RealCallBlocked):
        sock.connect(("192.0.2.1", 80))
