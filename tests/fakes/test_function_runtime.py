"""``FunctionRuntime``: a function builds each reply from the call it answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fake_runtimes import FakeCall, FunctionRuntime, error, pick, tool_call
from pytest_opdecide import Agent, DecisionError, Runtime, agent, agent_async, decision

ROUTES: dict[str, Any] = {"billing": "BILLING", "shipping": "SHIPPING", "other": "OTHER"}


def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    return f"order {order_id}: shipped"


def route_by_keyword(call: FakeCall) -> Any:
    """A tiny 'model': route by a word in the prompt."""
    for option in call.options:
        if option in call.prompt.split("\n\n")[0].lower():
            return pick(option)
    return pick("other")


class TestReplies:
    @pytest.mark.parametrize(
        ("ticket", "expected"),
        [
            ("A billing question", "BILLING"),
            ("Shipping is slow", "SHIPPING"),
            ("Hello", "OTHER"),
        ],
    )
    def test_the_reply_depends_on_the_request(self, ticket: str, expected: str) -> None:
        runtime = FunctionRuntime(route_by_keyword)
        assert decision.make(ticket, ROUTES, runtime=runtime) == expected

    def test_the_function_sees_every_detail_of_the_call(self) -> None:
        seen: list[FakeCall] = []

        def fn(call: FakeCall) -> Any:
            seen.append(call)
            return tool_call("lookup_order", order_id="A1") if call.kind == "turn" else "Done."

        runtime = FunctionRuntime(fn)
        assert runtime.exec("Where is A1?", tools=[lookup_order]) == "Done."
        first, second = seen
        assert (first.index, first.kind, first.prompt, first.tools) == (
            0,
            "turn",
            "Where is A1?",
            ["lookup_order"],
        )
        assert (second.index, second.kind, second.prompt) == (1, "tool_round", "order A1: shipped")
        assert first.menu is None
        assert first.options == []
        assert first.request is runtime.calls[0].request

    def test_every_kind_of_step_can_be_returned(self) -> None:
        replies: list[Any] = [
            "text",
            [tool_call("lookup_order", order_id="A1")],
            "after the tool",
            pick("billing"),
            error(TimeoutError("slow")),
        ]
        runtime = FunctionRuntime(lambda call: replies[call.index])
        assert runtime.exec("1") == "text"
        assert runtime.exec("2", tools=[lookup_order]) == "after the tool"
        assert decision.make("3", ROUTES, runtime=runtime) == "BILLING"
        with pytest.raises(TimeoutError, match="slow"):
            runtime.exec("4")

    def test_it_never_runs_out(self) -> None:
        runtime = FunctionRuntime(lambda call: f"reply {call.index}")
        assert [runtime.exec("x") for _ in range(5)] == [f"reply {i}" for i in range(5)]

    def test_repicks_reach_the_function(self) -> None:
        runtime = FunctionRuntime(
            lambda call: pick("shipping") if call.kind == "repick" else "I am not sure."
        )
        assert decision.make("Route.", ROUTES, runtime=runtime) == "SHIPPING"
        assert [c.kind for c in runtime.calls] == ["turn", "repick"]

    def test_invalid_replies_end_in_decision_error(self) -> None:
        runtime = FunctionRuntime(lambda call: "no JSON here")
        with pytest.raises(DecisionError) as caught:
            decision.make("Route.", ROUTES, runtime=runtime)
        assert caught.value.attempts == 2

    def test_an_exception_raised_by_the_function_propagates_and_is_recorded(self) -> None:
        def fn(call: FakeCall) -> str:
            raise KeyError("unexpected prompt")

        runtime = FunctionRuntime(fn)
        with pytest.raises(KeyError):
            runtime.exec("Hi.")
        assert isinstance(runtime.last_call.error, KeyError)

    def test_needs_a_function(self) -> None:
        with pytest.raises(TypeError) as caught:
            FunctionRuntime("pick billing")  # type: ignore[arg-type]
        assert str(caught.value) == "FunctionRuntime needs a function, got str"

    def test_what_the_function_returns_is_checked(self) -> None:
        runtime = FunctionRuntime(lambda call: None)
        with pytest.raises(TypeError, match=r"^the function's step is NoneType None: a step is"):
            runtime.exec("Hi.")

    def test_model_and_toolsets(self) -> None:
        runtime = FunctionRuntime(
            lambda call: tool_call("lookup_order", order_id="A1") if call.index == 0 else "ok",
            model="my-model",
            toolsets={"orders": [lookup_order]},
        )
        assert runtime.exec("Go.", toolset="orders") == "ok"
        assert runtime.last_call.reply is not None
        assert runtime.last_call.reply.model == "my-model"
        assert isinstance(runtime, Runtime)


class TestAsync:
    async def test_a_sync_function_on_the_async_path(self) -> None:
        runtime = FunctionRuntime(route_by_keyword)
        assert await decision.make_async("Billing issue", ROUTES, runtime=runtime) == "BILLING"

    async def test_an_async_function_is_awaited(self) -> None:
        async def fn(call: FakeCall) -> Any:
            await asyncio.sleep(0)
            return route_by_keyword(call)

        runtime = FunctionRuntime(fn)
        assert await decision.make_async("Shipping late", ROUTES, runtime=runtime) == "SHIPPING"

    async def test_an_async_function_in_a_tool_loop(self) -> None:
        async def fn(call: FakeCall) -> Any:
            await asyncio.sleep(0)
            if call.kind == "turn":
                return tool_call("lookup_order", order_id="B2")
            return pick("shipping")

        runtime = FunctionRuntime(fn)
        result = await runtime.exec_async("Handle B2.", tools=[lookup_order], choices=ROUTES)
        assert result == "SHIPPING"
        assert runtime.calls[1].prompt == "order B2: shipped"

    async def test_agent_async(self) -> None:
        class Router(Agent):
            async def route(self, ticket: str) -> Any:
                return await agent_async(ticket, choices=ROUTES)

        runtime = FunctionRuntime(route_by_keyword)
        assert await Router(runtime).route("billing: charged twice") == "BILLING"

    def test_agent(self) -> None:
        class Router(Agent):
            def route(self, ticket: str) -> Any:
                return agent(ticket, choices=ROUTES)

        runtime = FunctionRuntime(route_by_keyword)
        assert Router(runtime).route("shipping: where is it") == "SHIPPING"

    def test_an_async_function_on_the_sync_path_says_to_use_the_async_api(self) -> None:
        async def fn(call: FakeCall) -> str:
            return "hi"

        with pytest.raises(TypeError) as caught:
            FunctionRuntime(fn).exec("Hi.")
        assert str(caught.value) == (
            "the function's step is an async callable; use the async API (exec_async, "
            "decision.make_async) so that it can be awaited"
        )


def test_a_pick_s_reply_is_the_reply_its_constructors_make() -> None:
    # The reply to a scripted pick is made slot by slot (a fake makes one per call): every
    # field of ModelReply and Usage must be set as their constructors set it.
    import dataclasses

    from pytest_opdecide import ModelReply, Usage

    replies: list[Any] = []

    def step(call: FakeCall) -> Any:
        return pick("refund", amount=2.5)

    runtime = FunctionRuntime(step)
    runtime.call_model = _recording(runtime.call_model, replies)  # type: ignore[method-assign]

    def refund(amount: float) -> str:
        return f"refunded {amount}"

    assert decision.make("Route it.", {"refund": refund}, runtime=runtime) == "refunded 2.5"
    (reply,) = replies
    prompt = runtime.last_call.prompt
    text = '{"call": "refund", "args": {"amount": 2.5}}'
    sent, written = (len(prompt) + 3) // 4, (len(text) + 3) // 4  # about 4 characters a token
    expected_usage = Usage(sent, written, sent + written)
    expected = ModelReply(text=text, usage=expected_usage, model="fake-model")
    for f in dataclasses.fields(ModelReply):
        assert getattr(reply, f.name) == getattr(expected, f.name), f.name
    for f in dataclasses.fields(Usage):
        assert getattr(reply.usage, f.name) == getattr(expected_usage, f.name), f.name
    assert type(reply) is ModelReply
    assert type(reply.usage) is Usage


def _recording(call_model: Any, replies: list[Any]) -> Any:
    def recorded(request: Any) -> Any:
        reply = call_model(request)
        replies.append(reply)
        return reply

    return recorded
