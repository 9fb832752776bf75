"""What a server that misbehaves mid-reply leaves in a cassette.

A stream cut off before its end (no ``finish_reason``, no ``[DONE]``) is recorded as it came and
marked (``x-opdecide-truncated-stream``): its replay raises the same ``MalformedResponseError``
as the recording did, never a reply. A call that ran out of time while the server trickled its
reply is not recorded at all: the recording ends at the limit like any call.
"""

from __future__ import annotations

import json
import sys
import time

import pytest
from _openai_server import OpenAIServer
from _slow_server import TrickleServer

from ._support import cassette, dedent, interactions, load, write_ini

TRUNCATED_HEADER = "x-opdecide-truncated-stream"

CUT_OFF = dedent(
    """
    import json
    from pathlib import Path

    import httpx
    import pytest
    from pytest_opdecide import decision
    from pytest_opdecide.runtimes import MalformedResponseError, OpenAICompatibleRuntime

    OPTIONS = {"alpha": "A", "beta": "B"}


    @pytest.mark.opdecide(cassette=True)
    def test_cut_off(opdecide_settings):
        with OpenAICompatibleRuntime(opdecide_settings.base_url, stream=True) as runtime:
            with pytest.raises(MalformedResponseError) as caught:
                decision.make("Pick one.", OPTIONS, runtime=runtime)
        Path("seen.json").write_text(json.dumps(str(caught.value)))


    @pytest.mark.opdecide(cassette=True)
    def test_another_client(opdecide_settings):
        body = {"messages": [{"role": "user", "content": "Hi."}], "stream": True}
        url = opdecide_settings.base_url + "/chat/completions"
        text = httpx.post(url, json=body).text  # httpx sees nothing wrong: HTTP was whole
        assert "[DONE]" not in text
    """
)

WHOLE = dedent(
    """
    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime


    @pytest.mark.opdecide(cassette=True)
    def test_whole(opdecide_settings):
        with OpenAICompatibleRuntime(opdecide_settings.base_url, stream=True) as runtime:
            assert runtime.exec("Hi.") == "Hello from the test server."
    """
)

MESSAGE = (
    "POST /v1/chat/completions answered 200, but the stream ended before the server finished "
    "it: 2 events came, with no finish_reason and no [DONE]. The server (or a proxy in "
    "between) cut the reply short: retry, or look at the server's log for why it stopped."
)


def seen(project: pytest.Pytester) -> str:
    message = json.loads((project.path / "seen.json").read_text())
    assert isinstance(message, str)
    return message


def test_a_cut_off_stream_is_recorded_marked_and_replays_the_same_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    with OpenAIServer(cut_after=1) as server:
        server.script('{"call": "alpha"}')
        write_ini(pytester, opdecide_base_url=server.url)
        pytester.makepyfile(test_cut=CUT_OFF)
        pytester.runpytest("--opdecide-record=once", "-k", "test_cut_off").assert_outcomes(passed=1)
        assert seen(pytester) == MESSAGE
        [recorded] = interactions(cassette(pytester, "test_cut", "test_cut_off"))
        assert recorded["response"]["headers"][TRUNCATED_HEADER] == (
            "the stream ended before the server finished it: 2 events came, with no "
            "finish_reason and no [DONE]"
        )
        events = recorded["response"]["body"]["string"]["events"]
        assert [event["data"]["choices"][0]["delta"] for event in events] == [
            {"role": "assistant", "content": ""},
            {"content": '{"call":'},
        ]  # as the server sent it: replay hands the runtime the same stream

        server.reset()
        pytester.runpytest("-k", "test_cut_off").assert_outcomes(passed=1)  # replayed
        assert server.received == []
        assert seen(pytester) == MESSAGE  # the same error, never the reply {"call":


def test_another_client_s_cut_off_stream_is_marked_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    with OpenAIServer(cut_after=2) as server:
        write_ini(pytester, opdecide_base_url=server.url)
        pytester.makepyfile(test_cut=CUT_OFF)
        result = pytester.runpytest("--opdecide-record=once", "-k", "test_another_client")
        result.assert_outcomes(passed=1)
    [recorded] = interactions(cassette(pytester, "test_cut", "test_another_client"))
    assert recorded["response"]["headers"][TRUNCATED_HEADER] == (
        "the stream ended before the server finished it: 3 events came, with no "
        "finish_reason and no [DONE]"
    )


def test_a_whole_stream_is_not_marked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    with OpenAIServer() as server:
        write_ini(pytester, opdecide_base_url=server.url)
        pytester.makepyfile(test_whole=WHOLE)
        pytester.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    path = cassette(pytester, "test_whole", "test_whole")
    [recorded] = interactions(path)
    assert TRUNCATED_HEADER not in recorded["response"]["headers"]
    assert TRUNCATED_HEADER not in path.read_text()


TRICKLED = dedent(
    """
    import time

    import pytest
    from pytest_opdecide.runtimes import CallTimeoutError, OpenAICompatibleRuntime


    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("stream", [False, True])
    def test_trickled(opdecide_settings, stream):
        start = time.monotonic()
        with OpenAICompatibleRuntime(
            opdecide_settings.base_url, stream=stream, timeout_s=1
        ) as runtime:
            with pytest.raises(CallTimeoutError, match="the whole call took longer than 1 s"):
                runtime.exec("Hi.")
        assert time.monotonic() - start < 4
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="raw sockets of the trickling server")
def test_recording_a_trickling_server_ends_at_the_limit_and_records_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vcrpy reads the whole reply inside the transport while it records: the limit still
    holds (the watchdog shuts the socket under it), and the unfinished call leaves nothing."""
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    with TrickleServer("body", "stream") as server:
        write_ini(pytester, opdecide_base_url=server.url)
        pytester.makepyfile(test_slow=TRICKLED)
        start = time.monotonic()
        pytester.runpytest("--opdecide-record=once").assert_outcomes(passed=2)
        took = time.monotonic() - start
    assert took < 10, f"recording took {took:.2f} s"
    for path in sorted((pytester.path / "cassettes" / "test_slow").iterdir()):
        assert load(path)["interactions"] == [], path.name
