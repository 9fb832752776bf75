"""Structured turns over the wire: ``exec(choices=..., tools=[...])`` on OpenAICompatibleRuntime
sends one reply's schema (call a tool or pick an option), runs a tool the reply calls through
the tool loop, and ends with a pick, whatever the model does.

Each behaviour runs on the sync and the async path, against ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pytest_opdecide import DecisionError, decision
from pytest_opdecide._nextstep._structured_turn import LAST_ROUND, TOOLS_INTRO
from pytest_opdecide.runtimes import OpenAICompatibleRuntime
from pytest_opdecide.runtimes._openai_runtime import STRUCTURED_TURN_MAX_TOKENS

from ._samples import MockServer, completion, json_response
from .test_openai_runtime import Twin, runtime_for

OPTIONS = {
    "refund": ("REFUND", "Give the money back."),
    "close": ("CLOSE", "Nothing is left to do."),
}


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    """The sync and the async path, one test each."""
    return Twin(request.param)


def says(reply: Any, number: int = 1) -> httpx.Response:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return json_response(completion(text, number=number))


seen_orders: list[str] = []


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    seen_orders.append(order_id)
    return f"Order {order_id}: charged twice."


def customer(email: str) -> str:
    """Read a customer's record."""
    return f"{email}: 2 tickets."


def turn_schema(*tools: Any) -> dict[str, Any]:
    return decision.response_schema({**OPTIONS, **{tool.__name__: tool for tool in tools}})


@pytest.fixture(autouse=True)
def _fresh() -> None:
    seen_orders.clear()


def test_a_turn_with_tools_and_choices_is_one_structured_reply(twin: Twin) -> None:
    server = MockServer(says({"call": "refund"}))
    runtime = runtime_for(server)
    assert runtime.tool_turns == "structured"
    prompt = "Look up order 1234, then decide."
    assert twin.exec(runtime, prompt, tools=[lookup_order], choices=OPTIONS) == "REFUND"

    body = server.last.body
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["max_tokens"] == STRUCTURED_TURN_MAX_TOKENS
    # One reply: a tool call or a pick, in the menu's own Call: format.
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "decision", "schema": turn_schema(lookup_order)},
    }
    [message] = body["messages"]
    tools = decision.render_options([lookup_order])
    assert message["content"].endswith(TOOLS_INTRO + tools)
    assert message["content"].startswith(prompt + "\n\nDo whatever work you need to first.")
    # The tool's text argument is bounded like every text of a structured decision.
    branch = body["response_format"]["json_schema"]["schema"]["anyOf"][2]
    assert branch["properties"]["args"]["properties"]["order_id"]["maxLength"] == 200


def test_a_reply_that_calls_a_tool_runs_it_then_the_turn_picks(twin: Twin) -> None:
    server = MockServer(
        says({"call": "lookup_order", "args": {"order_id": "1234"}}),
        says({"call": "refund"}, 2),
    )
    runtime = runtime_for(server)
    assert twin.exec(runtime, "Check, then pick.", tools=[lookup_order], choices=OPTIONS) == (
        "REFUND"
    )
    assert seen_orders == ["1234"]
    first, second = runtime.calls
    assert first.reply is not None
    assert [(c.name, c.arguments) for c in first.reply.tool_calls] == [
        ("lookup_order", {"order_id": "1234"})
    ]
    assert second.kind == "tool_round"
    assert second.prompt == "Order 1234: charged twice."
    # The conversation goes on as text (no native tools were offered), and one tool means
    # one tool round: the next reply may only pick.
    messages = server.last.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert json.loads(messages[1]["content"]) == {
        "call": "lookup_order",
        "args": {"order_id": "1234"},
    }
    assert messages[2]["content"] == "Result of lookup_order:\nOrder 1234: charged twice."
    assert messages[3]["content"] == LAST_ROUND
    assert server.last.body["response_format"]["json_schema"]["schema"] == (
        decision.response_schema(OPTIONS)
    )


def test_the_tools_are_offered_for_as_many_rounds_as_there_are_tools(twin: Twin) -> None:
    server = MockServer(
        says({"call": "lookup_order", "args": {"order_id": "1"}}),
        says({"call": "lookup_order", "args": {"order_id": "2"}}, 2),
        says({"call": "lookup_order", "args": {"order_id": "3"}}, 3),  # tools used up
        says({"call": "close"}, 4),  # the re-pick
    )
    runtime = runtime_for(server)
    outcome = twin.exec(
        runtime, "Check, then pick.", tools=[lookup_order, customer], choices=OPTIONS
    )
    assert outcome == "CLOSE"
    assert seen_orders == ["1", "2"]
    assert [c.kind for c in runtime.calls] == ["turn", "tool_round", "tool_round", "repick"]
    schemas = [seen.body["response_format"]["json_schema"]["schema"] for seen in server.seen]
    with_tools = turn_schema(lookup_order, customer)
    assert schemas[:2] == [with_tools, with_tools]
    assert schemas[2:] == [decision.response_schema(OPTIONS)] * 2
    assert "tools" not in server.seen[3].body


def test_a_turn_that_never_picks_ends_in_decision_error_not_a_tool_loop(twin: Twin) -> None:
    call = {"call": "lookup_order", "args": {"order_id": "1"}}
    server = MockServer(*(says(call, n) for n in range(1, 4)))
    runtime = runtime_for(server)
    with pytest.raises(DecisionError) as caught:
        twin.exec(runtime, "Check.", tools=[lookup_order], choices=OPTIONS, max_iterations=5)
    assert caught.value.kind == "unknown_call"
    assert len(server.seen) == 3


def test_native_tool_turns_on_request(twin: Twin) -> None:
    server = MockServer(says({"call": "close"}))
    runtime = runtime_for(server, tool_turns="native")
    assert twin.exec(runtime, "Pick.", tools=[lookup_order], choices=OPTIONS) == "CLOSE"
    body = server.last.body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["lookup_order"]
    assert "response_format" not in body
    assert "max_tokens" not in body


def test_tools_without_choices_stay_native(twin: Twin) -> None:
    server = MockServer(says("Done."))
    assert twin.exec(runtime_for(server), "Go.", tools=[lookup_order]) == "Done."
    assert "tools" in server.last.body
    assert "response_format" not in server.last.body


def test_a_tool_named_like_an_option_stays_native(twin: Twin) -> None:
    def close() -> str:
        """Close the ticket."""
        return "closed"

    server = MockServer(says({"call": "close"}))
    assert twin.exec(runtime_for(server), "Go.", tools=[close], choices=OPTIONS) == "CLOSE"
    assert "tools" in server.last.body


def test_text_decisions_mean_native_tool_turns(twin: Twin) -> None:
    server = MockServer(says({"call": "close"}))
    runtime = runtime_for(server, structured_decisions="never")
    assert twin.exec(runtime, "Go.", tools=[lookup_order], choices=OPTIONS) == "CLOSE"
    assert "tools" in server.last.body


def test_extra_body_max_tokens_wins(twin: Twin) -> None:
    server = MockServer(says({"call": "close"}))
    runtime = runtime_for(server, extra_body={"max_tokens": 64})
    twin.exec(runtime, "Go.", tools=[lookup_order], choices=OPTIONS)
    assert server.last.body["max_tokens"] == 64


def test_bad_tool_turns_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_turns must be 'structured' or 'native'"):
        OpenAICompatibleRuntime("http://127.0.0.1:8765/v1", tool_turns="json")  # type: ignore[arg-type]
