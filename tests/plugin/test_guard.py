"""The real-call guard: what it refuses in which test, and what it always lets through.

Nothing here reaches the network. The suite runs inside the network jail (``tests/_jail``),
which refuses every connection and name lookup off the loopback underneath the guard: a
connection the guard lets through fails with the jail's ``NetworkJailError`` (for httpx, an
``httpx.ConnectError`` saying "network jail"), one the guard refuses with ``RealCallBlocked``.
That difference is what these tests read. Requests that must succeed go to a server on
127.0.0.1 started by the test. The runs are subprocesses: the guard hooks process-wide state.
"""

from __future__ import annotations

import socket

import pytest

from pytest_opdecide._http import _network as network
from pytest_opdecide.plugin._guard import RealCallBlocked, guard

from .support import write_ini

SUPPORT = '''
import http.server
import socket
import threading

import httpx
import httpx2
import pytest

from pytest_opdecide.plugin._guard import RealCallBlocked


def jailed(error):
    """Whether ``error`` is the network jail's refusal: the guard let the connection through."""
    while error is not None:
        if "network jail" in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False


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
    "the run){end}"
)
ALLOW_LINE = (
    ", or\n  - if this host is not a model server, let it through: opdecide_allow_hosts = {host} "
    "in the ini file (or --opdecide-allow-hosts={host})."
)


def test_a_test_that_uses_the_plugin_reaches_only_the_loopback(project: pytest.Pytester) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(
        test_calls=f"""
        import asyncio

        import respx
        from conftest import *

        pytestmark = pytest.mark.opdecide()  # the marker alone makes a test use the plugin
        MESSAGE = {MESSAGE!r}
        ALLOW_LINE = {ALLOW_LINE!r}


        def test_sync_request_is_blocked():
            with httpx.Client() as client, pytest.raises(RealCallBlocked) as caught:
                client.get("https://user:pw@api.example.com/v1/chat/completions?key=k")
            assert str(caught.value) == MESSAGE.format(
                target="https://api.example.com/v1/chat/completions",
                test="test_calls.py::test_sync_request_is_blocked",
                end=ALLOW_LINE.format(host="api.example.com"),
            )


        async def test_async_request_is_blocked():
            async with httpx.AsyncClient() as client:
                with pytest.raises(RealCallBlocked, match="api.example.com"):
                    await client.post("https://api.example.com/v1/chat/completions", json={{}})


        def test_httpx2_is_blocked_too():
            with pytest.raises(RealCallBlocked, match="https://api.example.com:8443/v1/models"):
                httpx2.get("https://api.example.com:8443/v1/models", timeout=5)


        async def test_httpx2_async_is_blocked_too():
            async with httpx2.AsyncClient() as client:
                with pytest.raises(RealCallBlocked, match="http://192.0.2.1/v1"):
                    await client.get("http://192.0.2.1/v1")


        def test_a_raw_socket_is_blocked():
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            with sock, pytest.raises(RealCallBlocked) as caught:
                sock.connect(("192.0.2.1", 443))
            assert str(caught.value) == MESSAGE.format(
                target="192.0.2.1:443",
                test="test_calls.py::test_a_raw_socket_is_blocked",
                end=ALLOW_LINE.format(host="192.0.2.1"),
            )
            with socket.socket() as other, pytest.raises(RealCallBlocked):
                other.connect_ex(("192.0.2.1", 80))
            with socket.socket(socket.AF_INET6) as six, pytest.raises(RealCallBlocked) as caught:
                six.connect(("2001:db8::1", 443))
            assert "a real call to [2001:db8::1]:443 in" in str(caught.value)


        def test_an_address_is_blocked():
            with pytest.raises(RealCallBlocked, match="http://192.0.2.1/v1/models"):
                httpx.get("http://192.0.2.1/v1/models", timeout=5)


        def test_loopback_is_allowed(local_server):
            assert httpx.get(local_server, timeout=5).text == "local"
            port = local_server.rsplit(":", 1)[1]
            assert httpx.get(f"http://localhost:{{port}}", timeout=5).text == "local"
            assert httpx2.get(local_server, timeout=5).text == "local"


        async def test_loopback_is_allowed_async(local_server):
            async with httpx.AsyncClient() as client:
                assert (await client.get(local_server, timeout=5)).text == "local"


        def test_a_mock_transport_is_never_blocked():
            transport = httpx.MockTransport(lambda request: httpx.Response(200, text="mocked"))
            with httpx.Client(transport=transport) as client:
                assert client.get("https://api.example.com/v1/models").text == "mocked"


        def test_a_call_respx_answers_is_no_real_call():
            with respx.mock:
                respx.get("https://crm.example/tickets/7").respond(json={{"tier": "gold"}})
                assert httpx.get("https://crm.example/tickets/7").json() == {{"tier": "gold"}}


        async def test_a_call_respx_answers_is_no_real_call_async():
            with respx.mock:
                respx.get("https://crm.example/tickets/7").respond(json={{"tier": "gold"}})
                async with httpx.AsyncClient() as client:
                    reply = await client.get("https://crm.example/tickets/7")
            assert reply.json() == {{"tier": "gold"}}


        def test_a_call_respx_lets_through_is_blocked():
            with respx.mock, pytest.raises(RealCallBlocked) as caught:
                respx.route(host="api.example.com").pass_through()
                httpx.get("https://api.example.com/v1/models?key=k")
            assert str(caught.value) == MESSAGE.format(
                target="https://api.example.com/v1/models",
                test="test_calls.py::test_a_call_respx_lets_through_is_blocked",
                end=ALLOW_LINE.format(host="api.example.com"),
            )


        async def test_a_call_respx_lets_through_is_blocked_async():
            with respx.mock:
                respx.route(host="api.example.com").pass_through()
                async with httpx.AsyncClient() as client:
                    with pytest.raises(RealCallBlocked, match="https://api.example.com/v1"):
                        await client.get("https://api.example.com/v1")


        @pytest.mark.opdecide(guard=False)
        def test_the_marker_lets_it_through():
            with pytest.raises(httpx.ConnectError) as caught:
                httpx.get("https://api.example.com/v1/models")
            assert jailed(caught.value)
            with socket.socket() as sock, pytest.raises(OSError) as refused:
                sock.connect(("192.0.2.1", 80))
            assert jailed(refused.value)


        @pytest.mark.opdecide(guard=False)
        async def test_the_marker_lets_it_through_async():
            async with httpx.AsyncClient() as client:
                with pytest.raises(httpx.ConnectError) as caught:
                    await client.get("https://api.example.com/")
            assert jailed(caught.value)


        def test_the_failure_users_see():
            with httpx.Client() as client:
                client.get("https://api.example.com/v1/models")
        """
    )
    result = project.runpytest_subprocess("--tb=short")
    result.assert_outcomes(passed=15, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   pytest_opdecide.RealCallBlocked: pytest-opdecide blocked a real call to "
            "https://api.example.com/v1/models in test_calls.py::test_the_failure_users_see: "
            "tests run offline by default.",
            "E     - script the model with the `runtime` / `decision_provider` fixtures, or",
            "E     - record it once: mark the test @pytest.mark.opdecide(cassette=True) and run "
            "pytest --opdecide-record=once, or",
            "E     - run it against the live model: --opdecide-live, or",
            "E     - allow it for this test: @pytest.mark.opdecide(guard=False) (or "
            "--opdecide-guard=off for the run), or",
            "E     - if this host is not a model server, let it through: opdecide_allow_hosts = "
            "api.example.com in the ini file (or --opdecide-allow-hosts=api.example.com).",
        ]
    )


def test_each_plugin_fixture_makes_a_test_use_the_plugin(project: pytest.Pytester) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(
        test_fixtures="""
        from conftest import *


        def reach():
            with socket.socket() as sock:
                sock.connect(("192.0.2.1", 80))


        def test_runtime(runtime):
            with pytest.raises(RealCallBlocked):
                reach()


        def test_decision_provider(decision_provider):
            with pytest.raises(RealCallBlocked):
                reach()


        def test_opdecide_config(opdecide_config):
            with pytest.raises(RealCallBlocked):
                reach()


        def test_opdecide_settings(opdecide_settings):  # it depends on opdecide_config
            with pytest.raises(RealCallBlocked):
                reach()


        @pytest.fixture
        def agent(runtime):
            return runtime


        def test_through_another_fixture(agent):
            with pytest.raises(RealCallBlocked):
                reach()


        def test_none_of_them():
            with pytest.raises(OSError) as caught:
                reach()
            assert jailed(caught.value)
        """
    )
    project.runpytest_subprocess().assert_outcomes(passed=6)


OWN_CALLS = """
from conftest import *

from pytest_opdecide import decision
from pytest_opdecide.questions import (
    OpenAICompatibleDecisionProvider,
    ProviderError,
    RuntimeDecisionProvider,
)
from pytest_opdecide.runtimes import OpenAICompatibleRuntime

MESSAGE = {message!r}
QUESTION = {{"refund": {{"type": "boolean", "instructions": "Refund?"}}}}


def test_a_plain_socket_is_left_alone():
    with socket.socket() as sock, pytest.raises(OSError) as caught:
        sock.connect(("192.0.2.1", 5432))
    assert jailed(caught.value)


def test_a_plain_httpx_request_is_left_alone():
    with pytest.raises(httpx.ConnectError) as caught:
        httpx.get("http://192.0.2.1/health", timeout=5)
    assert jailed(caught.value)


def test_our_runtime_is_blocked():
    runtime = OpenAICompatibleRuntime("https://api.example.com/v1", api_key="sk-secret")
    with runtime, pytest.raises(RealCallBlocked) as caught:
        decision.make("Pick.", {{"a": "A", "b": "B"}}, runtime=runtime)
    assert str(caught.value) == MESSAGE.format(
        target="https://api.example.com/v1/chat/completions",
        test="test_own.py::test_our_runtime_is_blocked",
        end=".",
    )


async def test_our_runtime_is_blocked_async():
    async with OpenAICompatibleRuntime("http://192.0.2.7/v1", stream=True) as runtime:
        with pytest.raises(RealCallBlocked, match="http://192.0.2.7/v1/chat/completions"):
            await runtime.exec_async("Hello?")


def test_our_decision_providers_are_blocked():
    provider = OpenAICompatibleDecisionProvider(base_url="https://api.example.com/v1", model="m")
    with pytest.raises(RealCallBlocked, match="https://api.example.com/v1/chat/completions"):
        provider.decide_sync({{"model": "", "context": "c", "questions": QUESTION}})
    runtime = OpenAICompatibleRuntime("https://api.example.com/v1", model="m")
    with runtime, pytest.raises(ProviderError) as caught:  # it reports its runtime's errors
        RuntimeDecisionProvider(runtime).decide_sync(
            {{"model": "", "context": "c", "questions": QUESTION}}
        )
    assert isinstance(caught.value.__cause__, RealCallBlocked)


def test_our_runtime_on_the_loopback_is_allowed(local_server):
    # The server does not serve POST: the call got through to it.
    with OpenAICompatibleRuntime(local_server + "/v1") as runtime:
        with pytest.raises(Exception, match="failed with 501 Unsupported method"):
            runtime.exec("Hello?")


def test_our_runtime_on_a_mock_transport_is_not_a_real_call():
    def server(request):
        message = {{"role": "assistant", "content": "Hi"}}
        return httpx.Response(200, json={{"choices": [{{"index": 0, "message": message}}]}})

    transport = httpx.MockTransport(server)
    with OpenAICompatibleRuntime("https://api.example.com/v1", transport=transport) as runtime:
        assert runtime.exec("Hello?") == "Hi"
"""


def test_other_tests_keep_their_network_but_not_our_model_calls(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(test_own=OWN_CALLS.format(message=MESSAGE))
    project.runpytest_subprocess().assert_outcomes(passed=7)


def test_guard_all_guards_every_test(project: pytest.Pytester) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(
        test_plain="""
        from conftest import *


        def test_a_socket():
            with socket.socket() as sock, pytest.raises(RealCallBlocked):
                sock.connect(("192.0.2.1", 5432))


        def test_httpx():
            with pytest.raises(RealCallBlocked, match="http://192.0.2.1/health"):
                httpx.get("http://192.0.2.1/health", timeout=5)


        def test_loopback_still_works(local_server):
            assert httpx.get(local_server, timeout=5).text == "local"


        @pytest.mark.opdecide(guard=False)
        def test_the_marker_still_lets_it_through():
            with socket.socket() as sock, pytest.raises(OSError) as caught:
                sock.connect(("192.0.2.1", 5432))
            assert jailed(caught.value)
        """
    )
    project.runpytest_subprocess("--opdecide-guard-all=yes").assert_outcomes(passed=4)
    write_ini(project, opdecide_guard_all="true")
    project.runpytest_subprocess().assert_outcomes(passed=4)
    # The command line beats the ini file.
    project.runpytest_subprocess("--opdecide-guard-all=no").assert_outcomes(passed=2, failed=2)
    # And the guard setting turns everything off.
    project.runpytest_subprocess("--opdecide-guard=off").assert_outcomes(passed=2, failed=2)


ALLOWED_OR_NOT = """
from conftest import *


def reach():
    with socket.socket() as sock:
        sock.connect(("192.0.2.1", 80))


def test_unmarked():
    reach()


@pytest.mark.opdecide(guard=True)
def test_marked_on():
    reach()


def test_with_fixture(runtime):
    reach()
"""


@pytest.mark.parametrize(
    ("arguments", "ini", "conftest", "blocked"),
    [
        ([], {}, "", ["test_marked_on", "test_with_fixture"]),
        (["--opdecide-guard=off"], {}, "", []),
        (["--opdecide-guard=off"], {}, '{"guard": True}', []),
        ([], {"opdecide_guard": "off"}, "", ["test_marked_on"]),
        ([], {"opdecide_guard": "off"}, '{"guard": True}', ["test_marked_on", "test_with_fixture"]),
        ([], {}, '{"guard": False}', ["test_marked_on"]),
        (
            ["--opdecide-guard-all=on"],
            {},
            "",
            ["test_unmarked", "test_marked_on", "test_with_fixture"],
        ),
    ],
    ids=[
        "default",
        "command-line-off",
        "command-line-beats-fixture",
        "ini-off-marker-on",
        "ini-off-fixture-on",
        "fixture-off",
        "guard-all",
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
    # The opdecide_config fixture applies to tests that use the plugin's fixtures. A test the
    # guard lets through fails on the network jail instead.
    monkeypatch.setenv("COLUMNS", "300")  # short summary lines in full
    write_ini(project, **ini)
    config = f"\n\n@pytest.fixture\ndef opdecide_config():\n    return {conftest}\n"
    project.makeconftest(SUPPORT + (config if conftest else ""))
    project.makepyfile(test_calls=ALLOWED_OR_NOT)
    result = project.runpytest_subprocess("-rf", *arguments)
    result.assert_outcomes(failed=3)
    for name in ("test_unmarked", "test_marked_on", "test_with_fixture"):
        error = "*RealCallBlocked*" if name in blocked else "*NetworkJailError*"
        result.stdout.fnmatch_lines([f"FAILED test_calls.py::{name} - {error}"])


def test_live_tests_and_recording_tests_are_not_guarded(project: pytest.Pytester) -> None:
    project.makeconftest(SUPPORT)
    project.makepyfile(
        test_live="""
        from conftest import *


        def reach():
            with socket.socket() as sock, pytest.raises(OSError) as caught:
                sock.connect(("192.0.2.1", 80))
            assert jailed(caught.value)


        @pytest.mark.opdecide_live
        def test_live(runtime):
            reach()


        @pytest.mark.opdecide(cassette=True)
        def test_recording(runtime):
            reach()
        """
    )
    project.runpytest_subprocess("--opdecide-live", "--opdecide-record=once").assert_outcomes(
        passed=2
    )


def test_a_session_run_inside_a_test_leaves_the_guard_as_it_was(
    project: pytest.Pytester,
) -> None:
    # pytester's in-process run configures and unconfigures the plugin in this process. This
    # test does not use the plugin (none of its fixtures, no marker): its scope is "model_calls".
    assert guard.scope == "model_calls"
    project.makepyfile("def test_inner():\n    pass\n")
    project.runpytest().assert_outcomes(passed=1)
    assert guard.scope == "model_calls"
    assert guard.test_id.endswith("test_a_session_run_inside_a_test_leaves_the_guard_as_it_was")


@pytest.mark.opdecide(guard=True)
def test_the_guard_comes_back_when_another_tool_drops_its_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another tool that restores the socket.connect it saw earlier must not disarm the guard."""
    assert guard.scope == "all"
    unguarded = network._originals[(socket.socket, "connect")]
    monkeypatch.setattr(socket.socket, "connect", unguarded)
    guard.refresh()  # what the plugin does as each test starts
    with socket.socket() as sock, pytest.raises(RealCallBlocked):
        sock.connect(("192.0.2.1", 80))


@pytest.mark.opdecide(guard=True)
def test_a_stack_imported_or_a_method_replaced_after_the_hooks_went_in_is_hooked_at_refresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The refresh before each test returns at once when every hook is in place; it must still
    see an HTTP stack loaded since, a transport class put in its place, and a method another
    tool set back."""
    import types

    import httpx

    def hooked(owner: type, name: str) -> bool:
        return bool(getattr(getattr(owner, name), network._MARK, False))

    guard.refresh()
    assert hooked(httpx.HTTPTransport, "handle_request")

    class Transport:
        def handle_request(self, request: object) -> object:
            return request

    stack = types.ModuleType("httpx2")
    stack.HTTPTransport = Transport  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "httpx2", stack)
    guard.refresh()
    assert hooked(Transport, "handle_request")

    class Replacement:
        def handle_request(self, request: object) -> object:
            return request

    monkeypatch.setattr(stack, "HTTPTransport", Replacement)
    guard.refresh()
    assert hooked(Replacement, "handle_request")

    original = network._originals[(httpx.HTTPTransport, "handle_request")]
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", original)
    guard.refresh()
    assert hooked(httpx.HTTPTransport, "handle_request")
