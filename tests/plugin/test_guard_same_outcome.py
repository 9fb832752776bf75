"""Installing the plugin changes nothing for tests that do not use it.

A suite of plain tests, the kind any project has, opens sockets and makes HTTP requests (httpx,
httpx2, urllib, the official ``openai`` client) to addresses off the loopback. It runs twice,
with the plugin and with ``-p no:opdecide``, and every test must end the same way, with the same
error. The addresses are reserved for documentation (TEST-NET, ``2001:db8::/32``) and the names
end in ``.test``; the suite's network jail refuses them all, on both sides: that refusal is the
expected outcome, and it shows that the guard let each attempt through untouched.
"""

from __future__ import annotations

import re

import pytest

PLAIN_SUITE = """
import asyncio
import http.server
import socket
import threading
import urllib.request

import httpx
import httpx2
import openai
import pytest


@pytest.fixture
def local_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_socket_connect():
    with socket.socket() as sock:
        sock.connect(("192.0.2.1", 5432))


def test_socket_connect_ex():
    with socket.socket() as sock:
        sock.connect_ex(("203.0.113.5", 6379))


def test_create_connection():
    socket.create_connection(("198.51.100.7", 443), timeout=2)


def test_ipv6_socket():
    with socket.socket(socket.AF_INET6) as sock:
        sock.connect(("2001:db8::5", 443))


def test_name_lookup():
    socket.getaddrinfo("db.example.test", 5432)


def test_httpx_to_an_address():
    httpx.get("http://192.0.2.10/health", timeout=2)


def test_httpx_to_a_name():
    with httpx.Client() as client:
        client.post("https://api.example.test/v1/items", json={"a": 1}, timeout=2)


def test_httpx_async():
    async def call():
        async with httpx.AsyncClient() as client:
            await client.get("http://198.51.100.8:8080/", timeout=2)

    asyncio.run(call())


def test_httpx2():
    httpx2.get("http://192.0.2.13/", timeout=2)


async def test_httpx2_async():
    async with httpx2.AsyncClient() as client:
        await client.get("http://203.0.113.14/", timeout=2)


def test_urllib():
    urllib.request.urlopen("http://192.0.2.11/", timeout=2)


def test_openai_client():
    client = openai.OpenAI(base_url="http://192.0.2.12/v1", api_key="sk-test", max_retries=0)
    client.models.list()


def test_a_refusal_the_test_expects():
    with socket.socket() as sock, pytest.raises(OSError, match="network jail"):
        sock.connect(("192.0.2.2", 80))


def test_loopback(local_server):
    assert httpx.get(local_server, timeout=5).text == "ok"


def test_a_mock_transport():
    transport = httpx.MockTransport(lambda request: httpx.Response(204))
    with httpx.Client(transport=transport) as client:
        assert client.get("https://api.example.test/").status_code == 204
"""

SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR) (test_plain\.py::\S+)(?: - (.*))?$")


def outcomes(result: pytest.RunResult) -> dict[str, tuple[str, str]]:
    """Each test's outcome and error, from the ``-rA`` short summary."""
    found = {}
    for line in result.outlines:
        match = SUMMARY.match(line)
        if match:
            found[match.group(2)] = (match.group(1), match.group(3) or "")
    return found


def test_plain_tests_end_the_same_with_and_without_the_plugin(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # whole errors in the short summary
    project.makepyfile(test_plain=PLAIN_SUITE)
    with_plugin = project.runpytest_subprocess("-rA")
    without = project.runpytest_subprocess("-rA", "-p", "no:opdecide")
    assert "opdecide" not in str(without.outlines[:6])  # the plugin was really left out

    expected = outcomes(without)
    assert len(expected) == PLAIN_SUITE.count("\ndef test_") + PLAIN_SUITE.count(
        "\nasync def test_"
    )
    assert outcomes(with_plugin) == expected
    failed = [name for name, (outcome, _) in expected.items() if outcome == "FAILED"]
    assert len(failed) == len(expected) - 3  # the expected refusal, the loopback, the mock
    reports = failure_reports(with_plugin)
    for name in failed:  # each failed on the jail, underneath whatever wraps its error
        report = reports[name.partition("::")[2]]
        # anyio (under the async clients) keeps the jail's error only as the context of its
        # own "All connection attempts failed", which the report does not show.
        jail = "network jail: the test suite tried to" in report
        assert jail or "ConnectError: All connection attempts failed" in report, name
    assert "RealCallBlocked" not in with_plugin.stdout.str()


def failure_reports(result: pytest.RunResult) -> dict[str, str]:
    """The failure report of each failed test, by test name."""
    reports: dict[str, str] = {}
    name = None
    for line in result.outlines:
        header = re.fullmatch(r"_{3,} (test_\w+) _{3,}", line)
        if header:
            name = header.group(1)
            reports[name] = ""
        elif line.startswith("=") and name is not None:
            name = None
        elif name is not None:
            reports[name] += line + "\n"
    return reports
