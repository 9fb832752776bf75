"""Readable cassettes: structured JSON, decoded bodies, literal blocks, events one by one."""

from __future__ import annotations

import json

import pytest
from _openai_server import OpenAIServer, Reply

from ._support import cassette, dedent, interactions

PROMPT = "A customer writes:\n  my order A1 never came.\nDecide the next step."

STREAMING_CONFTEST = dedent(
    """
    import pytest
    from pytest_opdecide.runtimes import OpenAICompatibleRuntime

    @pytest.hookimpl
    def pytest_opdecide_runtime(request, settings):
        return OpenAICompatibleRuntime(settings.base_url, model=settings.model, stream=True)
    """
)

STREAM_TESTS = dedent(
    f"""
    import httpx
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {{"refund": "REFUND", "wait": "WAIT"}}
    BODY = {{"model": "m", "stream": True, "messages": [{{"role": "user", "content": "Hi."}}]}}

    @pytest.mark.opdecide(cassette=True)
    def test_runtime(runtime):
        assert decision.make({PROMPT!r}, OPTIONS) == "REFUND"
        events = runtime.trace[-1].reply.raw
        assert isinstance(events, list) and len(events) > 3

    @pytest.mark.opdecide(cassette=True)
    def test_chunks(runtime, record_property):
        # Another client than the runtime's: vcrpy records and replays it.
        with httpx.Client() as client:
            with client.stream("POST", runtime.url, json=BODY) as response:
                raw = b"".join(response.iter_raw())
        events = [line for line in raw.decode().splitlines() if line]
        print("EVENTS", len(events), events[0][:14], events[-1])

    @pytest.mark.opdecide(cassette=True)
    async def test_chunks_async(runtime):
        async with httpx.AsyncClient() as client:
            async with client.stream("POST", runtime.url, json=BODY) as response:
                events = [line async for line in response.aiter_lines() if line]
        print("ASYNC EVENTS", len(events), events[-1])
    """
)


def test_json_bodies_are_structured_and_prompts_are_literal_blocks(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    server.gzip = True
    project.makepyfile(
        test_readable=dedent(
            f"""
            import pytest
            from pytest_opdecide import decision

            @pytest.mark.opdecide(cassette=True)
            def test_pick(runtime):
                assert decision.make({PROMPT!r}, {{"refund": "R", "wait": "W"}}) == "R"
            """
        )
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    path = cassette(project, "test_readable", "test_pick")
    text = path.read_text(encoding="utf-8")
    (interaction,) = interactions(path)
    request, response = interaction["request"], interaction["response"]
    # Request and response bodies are YAML data, not JSON strings.
    assert request["body"]["json"]["messages"][0]["role"] == "user"
    assert response["body"]["string"]["json"]["choices"][0]["message"]["content"] == (
        '{"call": "refund"}'
    )
    # The prompt is a literal block that reads as it was sent.
    assert "content: |\n" in text
    assert "            my order A1 never came.\n" in text
    # The gzip body was decoded: no binary, no content-encoding, the server did compress.
    assert "!!binary" not in text
    assert "content-encoding" not in text.lower()
    # Transport noise (dates, client versions, lengths) is left out: re-recordings diff cleanly.
    for noise in ("user-agent", "date:", "content-length", "host:", "accept-encoding"):
        assert noise not in text.lower()
    # The version line comes last (a truncated file lacks it).
    assert text.rstrip().endswith("version: 1")
    project.runpytest().assert_outcomes(passed=1)


def test_server_really_compresses(server: OpenAIServer) -> None:
    import httpx

    server.gzip = True
    with httpx.Client() as client:
        response = client.post(
            f"{server.url}/chat/completions",
            json={"messages": []},
            headers={"accept-encoding": "gzip"},
        )
    assert response.headers["content-encoding"] == "gzip"
    assert response.json()["object"] == "chat.completion"


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_streams_are_recorded_event_by_event_and_replayed_as_streams(
    project: pytest.Pytester, server: OpenAIServer, crlf: bool
) -> None:
    server.crlf = crlf
    server.script(Reply(text='{"call": "refund"}'), Reply(text="Hello, streamed world."))
    server.script(Reply(text="Hello, async world."))
    project.makeconftest(STREAMING_CONFTEST)
    project.makepyfile(test_stream=STREAM_TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=3)

    events = interactions(cassette(project, "test_stream", "test_chunks"))[0]["response"]
    stored = events["body"]["string"]["events"]
    # One entry per event, JSON data structured, the end marker as it was sent.
    assert stored[0]["data"]["choices"][0]["delta"]["role"] == "assistant"
    assert "".join(e["data"]["choices"][0]["delta"].get("content", "") for e in stored[1:-3]) == (
        "Hello, streamed world."
    )
    assert stored[-1] == {"data": "[DONE]"}
    assert events["headers"]["content-type"] == "text/event-stream"  # one value: no list

    # Replay: the runtime's stream event by event (the replay transport: see test_replay), and
    # other clients' streams as the same events, sync and async.
    server.reset()
    result = project.runpytest("-s")
    result.assert_outcomes(passed=3)
    assert server.received == []
    out = result.stdout.str()
    assert f'EVENTS {len(stored)} data: {{"id": " data: [DONE]' in out
    assert f"ASYNC EVENTS {len(stored)} data: [DONE]" in out


def test_a_part_that_requests_repeat_is_written_once(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    """The menu's JSON schema goes with every decision call: the file holds it once (a YAML
    anchor), each later request refers to it (an alias), and replay reads equal values."""
    project.makepyfile(
        test_shared=dedent(
            f"""
            import pytest
            from pytest_opdecide import decision

            OPTIONS = {{"refund": "R", "wait": "W"}}

            @pytest.mark.opdecide(cassette=True)
            def test_three(runtime):
                for ticket in range(3):
                    assert decision.make(f"Ticket {{ticket}}. " + {PROMPT!r}, OPTIONS) == "R"
            """
        )
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    path = cassette(project, "test_shared", "test_three")
    text = path.read_text(encoding="utf-8")
    assert text.count("response_format: &id001\n") == 1
    assert text.count("response_format: *id001\n") == 2
    assert text.count("json_schema:") == 1
    first, second, third = (i["request"]["body"]["json"] for i in interactions(path))
    assert first["response_format"] == second["response_format"] == third["response_format"]
    assert first["response_format"]["type"] == "json_schema"
    # The prompts are not shared: each request keeps its own messages.
    assert "messages: &" not in text
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"model": "m", "messages": [{"role": "user", "content": "é ✓ \n"}], "n": 1.5},
        {"a": {}, "b": [], "c": None, "d": [1, {"e": True}], "f": float("inf")},
        {1: "non-text keys are written as text", "x": [1]},
        ["a list body", {"k": "v"}],
    ],
)
def test_a_stored_json_body_is_replayed_as_compact_json(data: object) -> None:
    """Replayed bodies are the bytes `json.dumps` gives (compact, as servers send them)."""
    from pytest_opdecide._cassettes._yaml_format import raw_body

    assert raw_body({"json": data}) == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
