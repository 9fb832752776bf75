"""OpenAICompatibleRuntime against httpx.MockTransport: requests, replies, streams and errors.

Every behaviour is checked on the sync and the async path (the ``twin`` fixture), with
real-shaped replies of the llama-cpp-python server (``_samples.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pickle
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pydantic
import pytest
from _openai_server import OpenAIServer

import pytest_opdecide.runtimes as runtimes
from pytest_opdecide import Message, ModelReply, ModelRequest, ToolCall, decision
from pytest_opdecide.runtimes import (
    AuthenticationError,
    BadRequestError,
    CallTimeoutError,
    ConnectionFailedError,
    MalformedResponseError,
    NotFoundError,
    OpenAICompatibleRuntime,
    RateLimitError,
    ResponseStatusError,
    RuntimeCallError,
    ServerError,
)

from ._samples import (
    ALIAS,
    BASE_URL,
    CHAT_PATH,
    TOOLS_ALIAS,
    MockServer,
    completion,
    event_stream,
    forced_tool_stream,
    json_response,
    openai_text_stream,
    openai_tool_stream,
    sse,
    text_stream,
    tool_call_completion,
)

KEY = "sk-opdecide-test-5f2c9a7e41b34d0c8a1e"
"""A real-looking API key: no message, repr or traceback may ever show it."""

OPTIONS = {
    "search": ("SEARCH", "Look the answer up first."),
    "answer": ("ANSWER", "Answer now."),
}


def runtime_for(server: MockServer, **kwargs: Any) -> OpenAICompatibleRuntime:
    """A runtime with a key and the plain model alias, every request going to ``server``."""
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("model", ALIAS)
    return OpenAICompatibleRuntime(BASE_URL, transport=server.transport, **kwargs)


def request_for(text: str, **kwargs: Any) -> ModelRequest:
    """A one-message model request, as the base class builds it for ``exec(text)``."""
    return ModelRequest("turn", (Message("user", ({"type": "text", "text": text},)),), **kwargs)


class Twin:
    """Runs the same call on the sync or the async path."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def exec(self, runtime: OpenAICompatibleRuntime, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return runtime.exec(*args, **kwargs)
        return asyncio.run(runtime.exec_async(*args, **kwargs))

    def make(self, prompt: str, options: Any, runtime: OpenAICompatibleRuntime) -> Any:
        if self.mode == "sync":
            return decision.make(prompt, options, runtime=runtime)
        return asyncio.run(decision.make_async(prompt, options, runtime=runtime))

    def call(self, runtime: OpenAICompatibleRuntime, request: ModelRequest) -> ModelReply:
        if self.mode == "sync":
            return runtime.call_model(request)
        return asyncio.run(runtime.call_model_async(request))


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    """The sync and the async path, one test each."""
    return Twin(request.param)


def menu_text(options: Any) -> str:
    return decision.render_options(options)


# --- the public surface --------------------------------------------------------------------


def test_public_names_are_pinned() -> None:
    assert runtimes.__all__ == sorted(runtimes.__all__)
    assert runtimes.__all__ == [
        "AuthenticationError",
        "BadRequestError",
        "CallTimeoutError",
        "ConnectionFailedError",
        "MalformedResponseError",
        "NotFoundError",
        "OpenAICompatibleRuntime",
        "RateLimitError",
        "ResponseStatusError",
        "RuntimeCallError",
        "ServerError",
    ]


def test_error_tree() -> None:
    for status_error in (
        BadRequestError,
        AuthenticationError,
        NotFoundError,
        RateLimitError,
        ServerError,
    ):
        assert issubclass(status_error, ResponseStatusError)
    for error in (ResponseStatusError, CallTimeoutError, ConnectionFailedError):
        assert issubclass(error, RuntimeCallError)
    assert issubclass(MalformedResponseError, RuntimeCallError)
    assert issubclass(RuntimeCallError, RuntimeError)


# --- construction ----------------------------------------------------------------------------


def test_construction_does_no_io() -> None:
    server = MockServer()
    runtime = runtime_for(server)
    # Even with no transport: nothing listens on port 9 and nothing is tried.
    OpenAICompatibleRuntime("http://127.0.0.1:9/v1")
    assert server.seen == []
    assert runtime.url == f"{BASE_URL}/chat/completions"
    assert runtime.model == ALIAS


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://127.0.0.1:8765/v1", "http://127.0.0.1:8765/v1/chat/completions"),
        ("http://127.0.0.1:8765/v1/", "http://127.0.0.1:8765/v1/chat/completions"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("http://localhost:11434", "http://localhost:11434/chat/completions"),
    ],
)
def test_the_endpoint_is_base_url_plus_chat_completions(base_url: str, expected: str) -> None:
    assert OpenAICompatibleRuntime(base_url).url == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"base_url": "127.0.0.1:8765/v1"}, ValueError, "absolute http"),
        ({"base_url": "ftp://host/v1"}, ValueError, "absolute http"),
        ({"base_url": 8765}, TypeError, "base_url must be a string"),
        ({"transport": object()}, TypeError, "httpx.MockTransport"),
        ({"async_transport": httpx.HTTPTransport()}, TypeError, "AsyncBaseTransport"),
        ({"timeout_s": 0}, ValueError, "> 0"),
        ({"timeout_s": "60"}, TypeError, "seconds"),
        ({"temperature": "0"}, TypeError, "temperature"),
        ({"stream": "yes"}, TypeError, "stream"),
        ({"extra_body": [("seed", 1)]}, TypeError, "extra_body"),
        ({"api_key": 123}, TypeError, "api_key"),
        ({"model": 3}, TypeError, "model"),
    ],
)
def test_bad_arguments_fail_at_construction(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    kwargs = {"base_url": BASE_URL, **kwargs}
    with pytest.raises(error, match=match):
        OpenAICompatibleRuntime(**kwargs)


def test_repr_shows_no_key_and_no_user_info() -> None:
    runtime = OpenAICompatibleRuntime("http://user:hunter2-password@127.0.0.1:8765/v1", KEY, ALIAS)
    shown = repr(runtime)
    assert shown == (
        "OpenAICompatibleRuntime(base_url='http://127.0.0.1:8765/v1', "
        "model='smollm2-135m-instruct', api_key='***', stream=False)"
    )
    assert KEY not in repr(vars(runtime))
    assert "hunter2" not in shown


# --- plain replies -------------------------------------------------------------------------


def test_plain_exec_sends_the_prompt_and_returns_the_text(twin: Twin) -> None:
    server = MockServer(json_response(completion("Hello! How can I help you today?")))
    runtime = runtime_for(server)

    assert twin.exec(runtime, "Say hello.") == "Hello! How can I help you today?"

    seen = server.last
    assert (seen.method, seen.path) == ("POST", CHAT_PATH)
    assert seen.body == {
        "model": ALIAS,
        "messages": [{"role": "user", "content": "Say hello."}],
        "temperature": 0.0,
    }
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    record = runtime.trace.calls[-1]
    assert record.kind == "turn"
    assert record.reply is not None
    assert record.reply.usage.total_tokens == 49
    assert record.reply.model == ALIAS


def test_call_model_returns_the_whole_reply(twin: Twin) -> None:
    body = completion("Paris.", usage=(31, 2))
    server = MockServer(json_response(body))
    reply = twin.call(runtime_for(server), request_for("Capital of France?"))
    assert reply.text == "Paris."
    assert reply.tool_calls == ()
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (31, 2)
    assert reply.usage.total_tokens == 33
    assert reply.model == ALIAS
    assert reply.raw == body


def test_no_key_means_no_authorization_header(twin: Twin) -> None:
    for api_key in (None, ""):
        server = MockServer(json_response(completion("ok")))
        twin.exec(runtime_for(server, api_key=api_key), "hi")
        assert "authorization" not in server.last.headers


def test_default_headers_are_sent(twin: Twin) -> None:
    server = MockServer(json_response(completion("ok")))
    runtime = runtime_for(server, default_headers={"OpenAI-Organization": "org-tests"})
    twin.exec(runtime, "hi")
    assert server.last.headers["openai-organization"] == "org-tests"
    assert server.last.headers["authorization"] == f"Bearer {KEY}"


def test_model_comes_from_the_request_then_the_runtime(twin: Twin) -> None:
    server = MockServer(
        json_response(completion("a")),
        json_response(completion("b")),
        json_response(completion("c")),
    )
    runtime = runtime_for(server)
    twin.exec(runtime, "hi")
    assert server.last.body["model"] == ALIAS
    twin.exec(runtime, "hi", model="other-model")
    assert server.last.body["model"] == "other-model"
    twin.exec(runtime_for(server, model=None), "hi")
    assert "model" not in server.last.body


def test_temperature_and_extra_body(twin: Twin) -> None:
    server = MockServer(json_response(completion("a")), json_response(completion("b")))
    twin.exec(runtime_for(server, temperature=None), "hi")
    assert "temperature" not in server.last.body

    extra = {"max_tokens": 64, "seed": 7, "temperature": 0.3, "stop": ("\n\n",)}
    twin.exec(runtime_for(server, extra_body=extra), "hi")
    assert server.last.body["max_tokens"] == 64
    assert server.last.body["seed"] == 7
    assert server.last.body["temperature"] == 0.3
    assert server.last.body["stop"] == ["\n\n"]


def test_extra_body_none_removes_a_field() -> None:
    runtime = OpenAICompatibleRuntime(BASE_URL, extra_body={"stream_options": None}, stream=True)
    body = runtime.request_body(request_for("hi"))
    assert body["stream"] is True
    assert "stream_options" not in body


def test_response_format_mapping_is_passed_through(twin: Twin) -> None:
    server = MockServer(json_response(completion('{"city": "Paris"}')))
    schema = {"type": "json_object", "schema": {"type": "object"}}
    assert twin.exec(runtime_for(server), "JSON please", response_format=schema) == (
        '{"city": "Paris"}'
    )
    assert server.last.body["response_format"] == schema


def test_response_format_model_class_is_validated_not_sent(twin: Twin) -> None:
    class City(pydantic.BaseModel):
        city: str

    server = MockServer(json_response(completion('{"city": "Paris"}')))
    assert twin.exec(runtime_for(server), "JSON please", response_format=City) == City(city="Paris")
    assert "response_format" not in server.last.body


def test_content_blocks_that_are_not_text_become_content_parts(twin: Twin) -> None:
    server = MockServer(json_response(completion("A cat.")))
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    twin.exec(runtime_for(server), ["What is in this picture?", image])
    assert server.last.body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is in this picture?"}, image],
        }
    ]


def test_several_text_blocks_are_one_string(twin: Twin) -> None:
    server = MockServer(json_response(completion("ok")))
    twin.exec(runtime_for(server), ["First part.", " Second part."])
    assert server.last.body["messages"][0]["content"] == "First part. Second part."


def test_timeout_comes_from_the_request_then_the_runtime(twin: Twin) -> None:
    server = MockServer(json_response(completion("a")), json_response(completion("b")))
    runtime = runtime_for(server, timeout_s=12.5)
    twin.exec(runtime, "hi")
    assert server.last.timeout == {"connect": 12.5, "read": 12.5, "write": 12.5, "pool": 12.5}
    twin.exec(runtime, "hi", timeout_s=3)
    assert server.last.timeout == {"connect": 3, "read": 3, "write": 3, "pool": 3}


def test_refusal_is_the_text_when_there_is_no_content(twin: Twin) -> None:
    body = completion(None)
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    server = MockServer(json_response(body))
    assert twin.call(runtime_for(server), request_for("hi")).text == "I can't help with that."


def test_content_parts_in_a_reply_are_joined(twin: Twin) -> None:
    body = completion(None)
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "Hello"},
        {"type": "text", "text": " there"},
    ]
    server = MockServer(json_response(body))
    assert twin.call(runtime_for(server), request_for("hi")).text == "Hello there"


# --- decisions -----------------------------------------------------------------------------


def test_decision_make_sends_no_tools_and_the_exact_prompt(twin: Twin) -> None:
    server = MockServer(json_response(completion('{"call": "answer"}')))
    runtime = runtime_for(server, tools=[len])  # A default toolset must not leak in.

    assert twin.make("Should you search first? Pick one.", OPTIONS, runtime) == "ANSWER"

    body = server.last.body
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": f"Should you search first? Pick one.\n\n{menu_text(OPTIONS)}",
        }
    ]


def test_decision_make_repicks_after_a_bad_reply(twin: Twin) -> None:
    server = MockServer(
        json_response(completion("I think I would search.")),
        json_response(completion('{"call": "search"}', number=2)),
    )
    runtime = runtime_for(server)

    assert twin.make("Pick one.", OPTIONS, runtime) == "SEARCH"

    assert [record.kind for record in runtime.trace.calls] == ["turn", "repick"]
    repick = server.last.body
    assert "tools" not in repick
    assert repick["messages"][0]["content"].startswith(
        "Previous reply:\nI think I would search.\n\nProblem:"
    )


def test_decision_make_raises_decision_error_after_the_repick(twin: Twin) -> None:
    server = MockServer(
        json_response(completion("no idea")), json_response(completion("still none"))
    )
    with pytest.raises(decision.DecisionError) as caught:
        twin.make("Pick one.", OPTIONS, runtime_for(server))
    assert caught.value.attempts == 2
    server.assert_done()


# --- native tools --------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_exec_with_choices_runs_a_native_tool_round_trip(twin: Twin) -> None:
    server = MockServer(
        json_response(tool_call_completion([("add", '{"a": 2, "b": 3}')])),
        json_response(completion('The sum is 5. {"call": "answer"}', model=TOOLS_ALIAS)),
    )
    runtime = runtime_for(server, model=TOOLS_ALIAS, tool_turns="native")
    options = {"answer": ("ANSWER", "Answer now.")}

    result = twin.exec(runtime, "What is 2 + 3? Use the tool.", tools=[add], choices=options)

    assert result == "ANSWER"
    first, second = (seen.body for seen in server.seen)
    expected_tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                },
            },
        }
    ]
    assert first["tools"] == expected_tools
    assert first["tool_choice"] == "auto"
    user = first["messages"][0]
    assert user["role"] == "user"
    assert user["content"].startswith("What is 2 + 3? Use the tool.\n\nDo whatever work")
    assert user["content"].endswith(menu_text(options))
    call_id = "call__0_add_cmpl-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": call_id,
            "content": "5",
        },
    ]
    assert second["tools"] == expected_tools
    assert [record.kind for record in runtime.trace.calls] == ["turn", "tool_round"]


async def test_async_tool_round_trip_awaits_the_tool() -> None:
    server = MockServer(
        json_response(tool_call_completion([("add_async", '{"a": 20, "b": 22}')])),
        json_response(completion('{"call": "answer"}')),
    )
    async with runtime_for(server, tool_turns="native") as runtime:
        result = await runtime.exec_async(
            "Add.", tools=[add_async], choices={"answer": ("ANSWER", "Done.")}
        )
    assert result == "ANSWER"
    assert server.last.body["messages"][-1]["content"] == "42"


def test_the_parsed_tool_call_prefers_tool_calls_over_the_legacy_name(twin: Twin) -> None:
    server = MockServer(json_response(tool_call_completion([("add", '{"a": 1, "b": 2}')])))
    reply = twin.call(runtime_for(server), request_for("Add 1 and 2."))
    [call] = reply.tool_calls
    assert call.name == "add"  # Not the legacy "add:".
    assert call.arguments == {"a": 1, "b": 2}
    assert call.id.startswith("call__0_add_")


def test_a_legacy_function_call_alone_loses_its_trailing_colon(twin: Twin) -> None:
    body = tool_call_completion([("add", '{"a": 1, "b": 2}')])
    del body["choices"][0]["message"]["tool_calls"]
    server = MockServer(json_response(body))
    [call] = twin.call(runtime_for(server), request_for("Add.")).tool_calls
    assert (call.name, call.arguments) == ("add", {"a": 1, "b": 2})


def test_arguments_that_are_not_json_reach_the_model_as_an_error(twin: Twin) -> None:
    server = MockServer(
        json_response(tool_call_completion([("add", '{"a": 2, "b": ')])),
        json_response(completion("I could not add them.")),
    )
    runtime = runtime_for(server)

    assert twin.exec(runtime, "Add 2 and 3.", tools=[add]) == "I could not add them."

    first_reply = runtime.trace.calls[0].reply
    assert first_reply is not None
    assert first_reply.tool_calls[0].arguments == '{"a": 2, "b": '
    tool_message = server.last.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == (
        "Error: the arguments of 'add' are not valid JSON: '{\"a\": 2, \"b\": '"
    )
    # The assistant message echoes the arguments exactly as the model wrote them.
    assert server.last.body["messages"][1]["tool_calls"][0]["function"]["arguments"] == (
        '{"a": 2, "b": '
    )


def test_parallel_tool_calls_each_get_their_result(twin: Twin) -> None:
    server = MockServer(
        json_response(
            tool_call_completion([("add", '{"a": 1, "b": 1}'), ("add", '{"a": 2, "b": 2}')])
        ),
        json_response(completion("2 and 4.")),
    )
    assert twin.exec(runtime_for(server), "Two sums.", tools=[add]) == "2 and 4."
    messages = server.last.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    ids = [call["id"] for call in messages[1]["tool_calls"]]
    assert [m["tool_call_id"] for m in messages[2:]] == ids
    assert [m["content"] for m in messages[2:]] == ["2", "4"]


def test_tool_calls_without_ids_get_stable_matching_ids() -> None:
    runtime = OpenAICompatibleRuntime(BASE_URL)
    messages = (
        Message("user", ({"type": "text", "text": "Add twice."},)),
        Message(
            "assistant",
            ({"type": "text", "text": "Adding."},),
            tool_calls=(ToolCall("add", {"a": 1, "b": 1}), ToolCall("add", '{"a": 2, "b": 2}')),
        ),
        Message("tool", ({"type": "text", "text": "2"},), tool_call_id="", name="add"),
        Message("tool", ({"type": "text", "text": "4"},), tool_call_id="", name="add"),
    )
    body = runtime.request_body(ModelRequest("tool_round", messages))
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
                },
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": "2"},
        {"role": "tool", "tool_call_id": "call_1_1", "content": "4"},
    ]


def test_toolset_none_sends_no_tools(twin: Twin) -> None:
    server = MockServer(json_response(completion("ok")))
    twin.exec(runtime_for(server, tools=[add]), "hi", toolset="none")
    assert "tools" not in server.last.body


def test_the_default_toolset_is_offered(twin: Twin) -> None:
    server = MockServer(json_response(completion("ok")))
    twin.exec(runtime_for(server, tools=[add]), "hi")
    assert [tool["function"]["name"] for tool in server.last.body["tools"]] == ["add"]


# --- streaming -----------------------------------------------------------------------------


def test_a_streamed_text_reply_is_assembled(twin: Twin) -> None:
    events = text_stream(["Hel", "lo", "! How", " can I help?"])
    server = MockServer(event_stream(sse(events)))
    runtime = runtime_for(server, stream=True)

    reply = twin.call(runtime, request_for("Say hello."))

    assert reply.text == "Hello! How can I help?"
    assert reply.tool_calls == ()
    assert reply.usage.total_tokens == 0  # llama-cpp-python sends no usage in streams.
    assert reply.model == ALIAS
    assert reply.raw == events
    assert server.last.body["stream"] is True
    assert server.last.body["stream_options"] == {"include_usage": True}


def test_streamed_exec_returns_the_same_text_as_unstreamed(twin: Twin) -> None:
    server = MockServer(
        json_response(completion("Hello there.")),
        event_stream(sse(text_stream(["Hello", " there", "."]))),
    )
    plain = twin.exec(runtime_for(server), "hi")
    streamed = twin.exec(runtime_for(server, stream=True), "hi")
    assert plain == streamed == "Hello there."


def test_usage_comes_from_the_final_chunk(twin: Twin) -> None:
    events = openai_text_stream(["Hi", "!"], usage=(12, 3))
    server = MockServer(event_stream(sse(events, newline="\n")))
    reply = twin.call(runtime_for(server, stream=True), request_for("hi"))
    assert reply.text == "Hi!"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 3)
    assert reply.usage.total_tokens == 15
    assert reply.model == "gpt-4o-mini-2024-07-18"


def test_streamed_tool_calls_merge_by_index(twin: Twin) -> None:
    events = openai_tool_stream(
        [
            ("call_a", "add", ['{"a"', ": 1, ", '"b": 2}']),
            ("call_b", "add", ['{"a": 3,', ' "b": 4}']),
        ]
    )
    server = MockServer(event_stream(sse(events, newline="\n")))
    reply = twin.call(runtime_for(server, stream=True), request_for("Two sums."))
    assert reply.tool_calls == (
        ToolCall("add", {"a": 1, "b": 2}, "call_a"),
        ToolCall("add", {"a": 3, "b": 4}, "call_b"),
    )
    assert reply.text == ""


@pytest.mark.parametrize("lose_first_fragment", [False, True], ids=["0.3.36", "older"])
def test_llama_cpp_streamed_tool_call(twin: Twin, lose_first_fragment: bool) -> None:
    fragments = ['{"', "a", '": ', "2", ', "', "b", '": ', "3", "}"]
    events = forced_tool_stream("add", fragments, lose_first_fragment=lose_first_fragment)
    server = MockServer(event_stream(sse(events)))
    [call] = twin.call(runtime_for(server, stream=True), request_for("Add.")).tool_calls
    # The name repeated in every delta is not concatenated; with the older releases' quirk the
    # complete arguments come from the legacy function_call copy.
    assert call == ToolCall("add", {"a": 2, "b": 3}, "call__0_add_cmpl-0a1b2c3d")


def test_crlf_framed_events(twin: Twin) -> None:
    server = MockServer(event_stream(sse(text_stream(["Hi", " there"]), newline="\r\n")))
    assert twin.call(runtime_for(server, stream=True), request_for("hi")).text == "Hi there"


def test_a_streamed_tool_round_trip(twin: Twin) -> None:
    server = MockServer(
        event_stream(sse(openai_tool_stream([("call_x", "add", ['{"a": 4, ', '"b": 5}'])]))),
        event_stream(sse(text_stream(['{"call": ', '"answer"}']))),
    )
    runtime = runtime_for(server, stream=True, tool_turns="native")
    result = twin.exec(runtime, "Add 4 and 5.", tools=[add], choices=OPTIONS)
    assert result == "ANSWER"
    assert server.last.body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_x",
        "content": "9",
    }


def test_a_stream_without_done_comments_or_final_blank_line(twin: Twin) -> None:
    """A finish_reason ends a stream as [DONE] does: some servers send no [DONE]."""
    body = (
        b": keep-alive\n\n"
        b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
        b"event: message\n"
        b'data: {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}'
    )
    server = MockServer(event_stream(body))
    assert twin.call(runtime_for(server, stream=True), request_for("hi")).text == "Hello"


CUT_OFF = (
    "POST /v1/chat/completions answered 200, but the stream ended before the server finished "
    "it: {events}, with no finish_reason and no [DONE]. The server (or a proxy in between) cut "
    "the reply short: retry, or look at the server's log for why it stopped."
)


@pytest.mark.parametrize(
    ("pieces", "events"), [(1, "1 event came"), (2, "2 events came"), (0, "0 events came")]
)
def test_a_stream_cut_off_before_its_end_is_no_reply(twin: Twin, pieces: int, events: str) -> None:
    """No finish_reason and no [DONE]: what came is a part of the reply, never returned as it."""
    texts = ['{"call"', ': "answer"}']
    cut = text_stream(texts)[1:][:pieces]  # the text deltas only
    server = MockServer(event_stream(sse(cut, done=False)))
    with pytest.raises(MalformedResponseError) as caught:
        twin.exec(runtime_for(server, stream=True), "Pick.", choices=OPTIONS)
    assert str(caught.value) == CUT_OFF.format(events=events)
    assert caught.value.status_code == 200
    assert caught.value.body == "".join(texts[:pieces])  # what came, for a look


@pytest.mark.parametrize("cut", [5, 20, 30])
def test_a_cut_off_stream_that_echoed_the_key_in_pieces_shows_none_of_it(
    twin: Twin, cut: int
) -> None:
    """The error's body is what the events added up to: a key sent in pieces is whole there,
    and redacted whole (its first piece alone, key-shaped, would be redacted and the rest not)."""
    pieces = [f"Your key is {KEY[:cut]}", KEY[cut:]]
    server = MockServer(event_stream(sse(text_stream(pieces)[1:-1], done=False)))
    with pytest.raises(MalformedResponseError) as caught:
        twin.exec(runtime_for(server, stream=True), "Echo my key.")
    assert caught.value.body == "Your key is ***"
    for start in range(len(KEY) - 5):
        assert KEY[start : start + 6] not in f"{caught.value} {caught.value.body}"


def test_a_stream_that_says_done_or_finished_is_whole(twin: Twin) -> None:
    pieces = text_stream(["Hel", "lo"])  # its last event has finish_reason "stop"
    finished = MockServer(event_stream(sse(pieces, done=False)))
    assert twin.call(runtime_for(finished, stream=True), request_for("hi")).text == "Hello"
    done = MockServer(event_stream(sse(pieces[:-1], done=True)))
    assert twin.call(runtime_for(done, stream=True), request_for("hi")).text == "Hello"


def test_a_real_server_that_cuts_its_stream_off() -> None:
    with (
        OpenAIServer(cut_after=1) as server,
        OpenAICompatibleRuntime(server.url, KEY, stream=True) as runtime,
    ):
        server.script('{"call": "answer"}')
        with pytest.raises(MalformedResponseError) as caught:
            decision.make("Pick.", OPTIONS, runtime=runtime)
    assert str(caught.value) == CUT_OFF.format(events="2 events came")


async def test_a_real_server_that_cuts_its_stream_off_async() -> None:
    with OpenAIServer(cut_after=1) as server:
        server.script('{"call": "answer"}')
        async with OpenAICompatibleRuntime(server.url, KEY, stream=True) as runtime:
            with pytest.raises(MalformedResponseError) as caught:
                await decision.make_async("Pick.", OPTIONS, runtime=runtime)
    assert str(caught.value) == CUT_OFF.format(events="2 events came")


def test_a_server_that_ignores_stream_answers_json(twin: Twin) -> None:
    server = MockServer(json_response(completion("Not streamed.")))
    reply = twin.call(runtime_for(server, stream=True), request_for("hi"))
    assert reply.text == "Not streamed."


def test_an_error_event_mid_stream_is_a_server_error(twin: Twin) -> None:
    body = sse(
        [
            *text_stream(["Hel"])[:2],
            {"error": {"message": "Automatic streaming tool choice is not supported"}},
        ],
        done=False,
    )
    server = MockServer(event_stream(body))
    with pytest.raises(ServerError, match="Automatic streaming tool choice is not supported"):
        twin.call(runtime_for(server, stream=True), request_for("hi"))


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"data: {not json}\n\n", "a streamed event is not JSON"),
        (b"", r"the stream ended before the server finished it: 0 events came"),
        (b"data: [DONE]\n\n", "the streamed reply carried no events"),
        (b'data: ["a list"]\n\n', "not a JSON object"),
    ],
)
def test_a_broken_stream_is_malformed(twin: Twin, body: bytes, match: str) -> None:
    server = MockServer(event_stream(body))
    with pytest.raises(MalformedResponseError, match=match):
        twin.call(runtime_for(server, stream=True), request_for("hi"))


def test_an_error_status_on_a_stream_raises_the_status_error(twin: Twin) -> None:
    body = {"error": {"message": "Automatic streaming tool choice is not supported"}}
    server = MockServer(json_response(body, status=500))
    with pytest.raises(ServerError, match="500 Internal Server Error: Automatic streaming"):
        twin.call(runtime_for(server, stream=True), request_for("hi"))


# --- errors --------------------------------------------------------------------------------


CONTEXT_EXCEEDED = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens. However, you requested "
        "2113 tokens (2113 in the messages, None in the completion). Please reduce the length "
        "of the messages or completion.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VALIDATION_FAILED = {
    "detail": [
        {
            "type": "missing",
            "loc": ["body", "messages", 0, "content"],
            "msg": "Field required",
            "input": {"role": "user"},
        }
    ]
}


@pytest.mark.parametrize(
    ("response", "error", "fragments"),
    [
        (
            json_response(CONTEXT_EXCEEDED, status=400),
            BadRequestError,
            ["400 Bad Request: This model's maximum context length is 2048 tokens", "model="],
        ),
        (
            json_response(VALIDATION_FAILED, status=422),
            BadRequestError,
            ["422 Unprocessable Entity: body.messages.0.content: Field required", "validation"],
        ),
        (
            json_response({"detail": "Invalid API Key"}, status=401),
            AuthenticationError,
            ["401 Unauthorized: Invalid API Key.", "refused the API key", "api_key="],
        ),
        (
            json_response({"error": {"message": "Project has no access to model"}}, status=403),
            AuthenticationError,
            ["403 Forbidden", "permissions"],
        ),
        (
            json_response({"detail": "Not Found"}, status=404),
            NotFoundError,
            ["404 Not Found: Not Found.", "base_url", "/v1"],
        ),
        (
            json_response(
                {"error": {"message": "Rate limit reached", "type": "requests"}},
                status=429,
                **{"retry-after": "7"},
            ),
            RateLimitError,
            ["429 Too Many Requests: Rate limit reached.", "wait 7 s"],
        ),
        (
            json_response(
                {"error": {"message": "llama_decode returned -1", "type": "internal_server_error"}},
                status=500,
            ),
            ServerError,
            ["500 Internal Server Error: llama_decode returned -1.", "server's log"],
        ),
        (
            httpx.Response(503, text="<html><body>Service Unavailable</body></html>"),
            ServerError,
            ["503 Service Unavailable: <html>"],
        ),
        (
            httpx.Response(409, json={"error": {"message": "Conflict"}}),
            BadRequestError,
            ["409 Conflict: Conflict."],
        ),
        (
            httpx.Response(307, headers={"location": "https://example.test/v1/chat/completions"}),
            ResponseStatusError,
            ["307 Temporary Redirect (the body gives no reason).", "/v1/chat/completions"],
        ),
    ],
    ids=["400", "422", "401", "403", "404", "429", "500", "503", "409", "307"],
)
def test_error_statuses_raise_typed_errors(
    twin: Twin, response: httpx.Response, error: type[ResponseStatusError], fragments: list[str]
) -> None:
    server = MockServer(response)
    runtime = runtime_for(server)
    with pytest.raises(error) as caught:
        twin.exec(runtime, "hi")
    raised = caught.value
    assert type(raised) is error
    message = str(raised)
    assert message.startswith(f"POST {CHAT_PATH} failed with {response.status_code}")
    for fragment in fragments:
        assert fragment in message
    assert raised.status_code == response.status_code
    assert raised.path == CHAT_PATH
    assert raised.method == "POST"
    assert runtime.trace.calls[-1].error is raised


def test_the_server_reason_is_kept_on_the_error(twin: Twin) -> None:
    server = MockServer(json_response(CONTEXT_EXCEEDED, status=400))
    with pytest.raises(BadRequestError) as caught:
        twin.exec(runtime_for(server), "hi")
    assert caught.value.server_message.startswith("This model's maximum context length")
    assert json.loads(caught.value.body) == CONTEXT_EXCEEDED


def test_401_without_a_key_says_to_pass_one(twin: Twin) -> None:
    server = MockServer(json_response({"detail": "Not authenticated"}, status=401))
    with pytest.raises(AuthenticationError, match=r"No API key was sent: pass api_key=\.\.\."):
        twin.exec(runtime_for(server, api_key=None), "hi")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "1"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # In the past: no wait.
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_rate_limit_retry_after(
    twin: Twin, headers: dict[str, str], expected: float | None
) -> None:
    server = MockServer(
        json_response({"error": {"message": "Rate limit reached"}}, status=429, **headers)
    )
    with pytest.raises(RateLimitError) as caught:
        twin.exec(runtime_for(server), "hi")
    assert caught.value.retry_after == expected
    assert caught.value.status_code == 429


@pytest.mark.parametrize(
    ("response", "error", "match"),
    [
        (
            httpx.Response(200, text="<!doctype html><title>Dashboard</title>"),
            MalformedResponseError,
            "answered 200, but the body is not JSON: '<!doctype html>",
        ),
        (httpx.Response(200, text=""), MalformedResponseError, "not JSON: 'an empty body'"),
        (
            json_response({"object": "list", "data": []}),
            MalformedResponseError,
            "the body has no 'choices' \\(its keys: 'object', 'data'\\)",
        ),
        (json_response({"choices": []}), MalformedResponseError, "has no 'choices'"),
        (json_response([1, 2]), MalformedResponseError, "the JSON body is a list"),
        (
            json_response({"choices": [{"index": 0, "text": "legacy completion"}]}),
            MalformedResponseError,
            "choices\\[0\\] has no 'message'",
        ),
        (
            json_response({"choices": [{"message": {"content": 42}}]}),
            MalformedResponseError,
            "choices\\[0\\].message.content is a int",
        ),
        (
            json_response({"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]}),
            MalformedResponseError,
            "tool_calls\\[0\\] is not a function call",
        ),
        (
            json_response({"error": {"message": "model is loading"}}),
            ServerError,
            "answered 200, but the body reports an error: model is loading",
        ),
    ],
    ids=[
        "html",
        "empty",
        "no-choices",
        "empty-choices",
        "list",
        "no-message",
        "bad-content",
        "bad-tool-call",
        "error-body",
    ],
)
def test_malformed_replies(
    twin: Twin, response: httpx.Response, error: type[RuntimeCallError], match: str
) -> None:
    server = MockServer(response)
    with pytest.raises(error, match=match) as caught:
        twin.call(runtime_for(server), request_for("hi"))
    assert caught.value.path == CHAT_PATH
    assert caught.value.status_code == 200
    assert "base_url" in str(caught.value) or error is ServerError


@pytest.mark.parametrize(
    ("raised", "phase", "during"),
    [
        (httpx.ReadTimeout("timed out"), "read", "while waiting for or receiving the reply"),
        (httpx.ConnectTimeout("timed out"), "connect", "while connecting"),
        (httpx.WriteTimeout("timed out"), "write", "while sending the request"),
        (httpx.PoolTimeout("timed out"), "pool", "while waiting for a free connection"),
    ],
)
def test_transport_timeouts_raise_call_timeout_error(
    twin: Twin, raised: httpx.TimeoutException, phase: str, during: str
) -> None:
    server = MockServer(raised)
    with pytest.raises(CallTimeoutError) as caught:
        twin.exec(runtime_for(server, timeout_s=2.5), "hi")
    error = caught.value
    assert (error.phase, error.timeout_s, error.path) == (phase, 2.5, CHAT_PATH)
    assert str(error).startswith(
        f"POST {CHAT_PATH} to http://127.0.0.1:8765 timed out: the whole call took longer than "
        f"2.5 s ({during}). timeout_s bounds the whole call: connecting, sending and all of the "
        "reply, streamed or not."
    )
    assert isinstance(error.__cause__, httpx.TimeoutException)


def test_a_request_timeout_is_named_in_the_error(twin: Twin) -> None:
    server = MockServer(httpx.ReadTimeout("timed out"))
    with pytest.raises(CallTimeoutError, match=r"took longer than 0\.5 s") as caught:
        twin.exec(runtime_for(server), "hi", timeout_s=0.5)
    assert "raise timeout_s" in str(caught.value)


@pytest.mark.parametrize(
    ("raised", "match"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "could not connect to http"),
        (httpx.RemoteProtocolError("Server disconnected"), "failed before the reply was complete"),
        (httpx.ReadError("Connection reset by peer"), "ReadError: Connection reset by peer"),
    ],
)
def test_connection_failures(twin: Twin, raised: httpx.TransportError, match: str) -> None:
    server = MockServer(raised)
    with pytest.raises(ConnectionFailedError, match=match):
        twin.exec(runtime_for(server), "hi")


def test_a_body_that_cannot_be_decoded(twin: Twin) -> None:
    server = MockServer(
        lambda request: httpx.Response(
            200, stream=httpx.ByteStream(b"not gzip"), headers={"content-encoding": "gzip"}
        )
    )
    with pytest.raises(MalformedResponseError, match="could not be decoded"):
        twin.exec(runtime_for(server), "hi")


def test_errors_pickle_with_their_attributes() -> None:
    server = MockServer(
        json_response({"error": {"message": "slow down"}}, 429, **{"retry-after": "3"})
    )
    with pytest.raises(RateLimitError) as caught:
        runtime_for(server).exec("hi")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is RateLimitError
    assert str(copy) == str(caught.value)
    assert (copy.retry_after, copy.status_code, copy.path) == (3.0, 429, CHAT_PATH)
    assert copy.server_message == "slow down"


# --- the key never shows -------------------------------------------------------------------


def _failures() -> list[tuple[str, Callable[[], Any], bool]]:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}
    return [
        ("401-echoing-the-key", lambda: json_response(echo, status=401), False),
        ("400", lambda: json_response(CONTEXT_EXCEEDED, status=400), False),
        ("429", lambda: json_response({"error": {"message": f"slow {KEY}"}}, 429), False),
        ("500-text", lambda: httpx.Response(500, text=f"crash with Bearer {KEY}"), False),
        ("timeout", lambda: httpx.ReadTimeout("timed out"), False),
        ("connect", lambda: httpx.ConnectError("[Errno 111] Connection refused"), False),
        ("malformed", lambda: httpx.Response(200, text=f"<html>{KEY}</html>"), False),
        (
            "stream-error",
            lambda: event_stream(sse([{"error": {"message": f"bad key {KEY}"}}])),
            True,
        ),
    ]


@pytest.mark.parametrize(
    ("make_reply", "stream"),
    [(make, stream) for _, make, stream in _failures()],
    ids=[name for name, _, _ in _failures()],
)
def test_the_key_never_appears_in_errors(
    twin: Twin, make_reply: Callable[[], Any], stream: bool
) -> None:
    server = MockServer(make_reply())
    runtime = runtime_for(server, stream=stream)
    with pytest.raises(RuntimeCallError) as caught:
        twin.exec(runtime, "hi")
    error = caught.value
    shown = [
        str(error),
        repr(error),
        repr(vars(error)),
        "".join(traceback.format_exception(error)),
        "".join(traceback.TracebackException.from_exception(error, capture_locals=True).format()),
        repr(runtime),
        repr(runtime.trace.calls[-1]),
    ]
    for text in shown:
        assert KEY not in text
    assert KEY.encode() not in pickle.dumps(error)
    assert server.last.headers["authorization"] == f"Bearer {KEY}"  # It was sent, though.


def test_quoted_server_text_has_the_key_redacted(twin: Twin) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}."}}
    server = MockServer(json_response(echo, status=401))
    with pytest.raises(AuthenticationError) as caught:
        twin.exec(runtime_for(server), "hi")
    assert caught.value.server_message == "Incorrect API key provided: ***."
    assert "Incorrect API key provided: ***." in str(caught.value)


def test_secret_default_headers_are_redacted_too(twin: Twin) -> None:
    azure_key = "azure-key-0123456789abcdef"
    server = MockServer(json_response({"error": {"message": f"bad {azure_key}"}}, status=401))
    runtime = runtime_for(server, api_key=None, default_headers={"api-key": azure_key})
    with pytest.raises(AuthenticationError) as caught:
        twin.exec(runtime, "hi")
    assert azure_key not in str(caught.value)
    assert server.last.headers["api-key"] == azure_key


# --- transports and clients ----------------------------------------------------------------


class CountingTransport(httpx.BaseTransport):
    """A sync-only transport that counts requests and closes."""

    def __init__(self, server: MockServer) -> None:
        self.inner = httpx.MockTransport(server)
        self.requests = 0
        self.closed = 0
        self.threads: set[str] = set()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        self.threads.add(threading.current_thread().name)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.closed += 1


class AsyncOnlyTransport(httpx.AsyncBaseTransport):
    """An async-only transport."""

    def __init__(self, server: MockServer) -> None:
        self.inner = httpx.MockTransport(server)
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return await self.inner.handle_async_request(request)


def test_the_client_is_reused_and_closed() -> None:
    server = MockServer(*(json_response(completion(str(n))) for n in range(3)))
    transport = CountingTransport(server)
    with OpenAICompatibleRuntime(BASE_URL, transport=transport) as runtime:
        runtime.exec("one")
        runtime.exec("two")
        assert transport.closed == 0
    assert transport.requests == 2
    assert transport.closed == 1
    # Closed is not dead: the next call opens a new client.
    assert runtime.exec("three") == "2"
    runtime.close()
    assert transport.closed == 2


async def test_a_sync_only_transport_serves_async_calls_in_a_thread() -> None:
    server = MockServer(json_response(completion("threaded")))
    transport = CountingTransport(server)
    runtime = OpenAICompatibleRuntime(BASE_URL, transport=transport)
    assert await runtime.exec_async("hi") == "threaded"
    assert transport.requests == 1
    assert threading.main_thread().name not in transport.threads
    runtime.close()


def test_an_async_only_transport_refuses_sync_calls() -> None:
    server = MockServer()
    runtime = OpenAICompatibleRuntime(BASE_URL, transport=AsyncOnlyTransport(server))
    with pytest.raises(TypeError, match="only an async transport: use the async API"):
        runtime.exec("hi")
    assert server.seen == []


async def test_async_transport_serves_async_calls() -> None:
    sync_server = MockServer()
    async_server = MockServer(json_response(completion("from async")))
    sync_transport = CountingTransport(sync_server)
    async_transport = AsyncOnlyTransport(async_server)
    async with OpenAICompatibleRuntime(
        BASE_URL, transport=sync_transport, async_transport=async_transport
    ) as runtime:
        assert await runtime.exec_async("hi") == "from async"
    assert (sync_transport.requests, async_transport.requests) == (0, 1)


def test_one_runtime_serves_several_event_loops() -> None:
    server = MockServer(json_response(completion("first")), json_response(completion("second")))
    runtime = runtime_for(server)
    assert asyncio.run(runtime.exec_async("hi")) == "first"
    assert asyncio.run(runtime.exec_async("hi")) == "second"


class ClosingAsyncTransport(AsyncOnlyTransport):
    """An async-only transport that counts its closings."""

    def __init__(self, server: MockServer) -> None:
        super().__init__(server)
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def test_close_closes_the_async_client_on_its_loop() -> None:
    transport = ClosingAsyncTransport(MockServer(json_response(completion("hi"))))
    runtime = OpenAICompatibleRuntime(BASE_URL, transport=transport)
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(runtime.exec_async("hi")) == "hi"
        runtime.close()  # The loop is idle: the async client is closed on it.
        assert transport.closed == 1
        runtime.close()  # Closing twice is harmless.
        assert transport.closed == 1
    finally:
        loop.close()


def test_close_and_aclose_before_any_call() -> None:
    runtime = OpenAICompatibleRuntime(BASE_URL)
    runtime.close()
    asyncio.run(runtime.aclose())


async def test_async_context_manager_closes_the_clients() -> None:
    server = MockServer(json_response(completion("a")), json_response(completion("b")))
    async with runtime_for(server) as runtime:
        assert await runtime.exec_async("hi") == "a"
    # Usable again after closing.
    assert await runtime.exec_async("hi") == "b"
    await runtime.aclose()


# --- real sockets on 127.0.0.1 -------------------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A server on 127.0.0.1 that accepts connections, reads, and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()
    connections: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connections.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in connections:
            connection.close()
        listener.close()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
    return port


def test_a_real_read_timeout() -> None:
    with (
        silent_server() as port,
        OpenAICompatibleRuntime(f"http://127.0.0.1:{port}/v1", KEY, timeout_s=0.2) as runtime,
        pytest.raises(CallTimeoutError, match=r"took longer than 0\.2 s") as caught,
    ):
        runtime.exec("hi")
    assert caught.value.phase == "read"


async def test_a_real_read_timeout_async() -> None:
    with silent_server() as port:
        async with OpenAICompatibleRuntime(f"http://127.0.0.1:{port}/v1", KEY) as runtime:
            # 0.5 s: under a loaded machine an asyncio connection can take longer than 0.2 s,
            # and the deadline would then end the connect phase instead of the read.
            with pytest.raises(CallTimeoutError, match=r"took longer than 0\.5 s") as caught:
                await runtime.exec_async("hi", timeout_s=0.5)
    assert caught.value.phase == "read"


def test_a_real_refused_connection(twin: Twin) -> None:
    port = free_port()
    runtime = OpenAICompatibleRuntime(f"http://127.0.0.1:{port}/v1", KEY)
    with pytest.raises(ConnectionFailedError) as caught:
        twin.exec(runtime, "hi")
    runtime.close()
    message = str(caught.value)
    assert message.startswith(
        f"POST /v1/chat/completions: could not connect to http://127.0.0.1:{port}"
    )
    assert "Is the server running" in message
    assert KEY not in message
