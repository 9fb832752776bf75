"""A tool that raises: its exception goes back to the model as the tool's result, and the turn
goes on (OpenProgram's agent loop); ``tool_errors="raise"`` lets it out instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fake_runtimes import ScriptedRuntime, pick, tool_call
from pytest_opdecide import Agent, ModelReply, ToolCall, ToolLoopError, agent, agent_async


class OrderMissing(LookupError):
    pass


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    raise OrderMissing(f"no order {order_id!r}")


async def lookup_order_async(order_id: str) -> dict[str, Any]:
    """Look an order up, asynchronously."""
    await asyncio.sleep(0)
    raise OrderMissing(f"no order {order_id!r}")


CHOICES = {"refund": "REFUNDED", "escalate": "ESCALATED"}


def test_the_model_sees_the_error_and_decides() -> None:
    fake = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), pick("escalate"))
    result = agent("Handle it.", tools=[lookup_order], choices=CHOICES, runtime=fake)
    assert result == "ESCALATED"
    assert fake.calls[1].kind == "tool_round"
    assert fake.calls[1].prompt == "Error: OrderMissing: no order 'A1'"
    (failure,) = fake.calls[0].tool_failures
    assert failure.call.name == "lookup_order"
    assert isinstance(failure.error, OrderMissing)
    assert failure.result == "Error: OrderMissing: no order 'A1'"
    assert fake.calls[1].tool_failures == ()


def test_an_async_tool_that_raises_is_reported_too() -> None:
    fake = ScriptedRuntime(tool_call("lookup_order_async", order_id="B2"), pick("refund"))

    async def run() -> Any:
        return await agent_async(
            "Handle it.", tools=[lookup_order_async], choices=CHOICES, runtime=fake
        )

    assert asyncio.run(run()) == "REFUNDED"
    assert fake.calls[1].prompt == "Error: OrderMissing: no order 'B2'"


def test_one_failing_tool_of_several_in_a_reply() -> None:
    def ok(order_id: str) -> str:
        return f"order {order_id}: shipped"

    fake = ScriptedRuntime(
        [tool_call("lookup_order", order_id="A1"), tool_call("ok", order_id="A2")],
        pick("refund"),
    )
    agent("Handle it.", tools=[lookup_order, ok], choices=CHOICES, runtime=fake)
    assert fake.calls[1].prompt == "Error: OrderMissing: no order 'A1'\norder A2: shipped"
    assert len(fake.calls[0].tool_failures) == 1


def test_a_tool_that_always_fails_stays_within_the_round_limit() -> None:
    fake = ScriptedRuntime(*[tool_call("lookup_order", order_id="A1")] * 3)
    with pytest.raises(ToolLoopError, match="max_iterations=3"):
        agent("Handle it.", tools=[lookup_order], max_iterations=3, runtime=fake)
    assert [len(c.tool_failures) for c in fake.calls] == [1, 1, 0]


def test_raise_lets_the_exception_out() -> None:
    fake = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), strict=False)
    with pytest.raises(OrderMissing, match="no order 'A1'"):
        agent("Go.", tools=[lookup_order], choices=CHOICES, tool_errors="raise", runtime=fake)


def test_raise_as_the_runtimes_setting() -> None:
    fake = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), strict=False)
    fake.tool_errors = "raise"
    with pytest.raises(OrderMissing):
        fake.exec("Go.", tools=[lookup_order])
    fake2 = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), "fine")
    fake2.tool_errors = "raise"
    assert fake2.exec("Go.", tools=[lookup_order], tool_errors="report") == "fine"


def test_a_bad_setting_is_refused_before_any_call() -> None:
    fake = ScriptedRuntime(strict=False)
    with pytest.raises(ValueError, match=r"tool_errors must be 'report' .* or 'raise'"):
        fake.exec("Go.", tool_errors="ignore")  # type: ignore[arg-type]
    fake.tool_errors = "skip"  # type: ignore[assignment]
    with pytest.raises(ValueError, match=r"ScriptedRuntime.tool_errors must be"):
        fake.exec("Go.")
    assert fake.calls == []


def test_base_exceptions_are_never_swallowed() -> None:
    def interrupted(order_id: str) -> str:
        raise KeyboardInterrupt

    fake = ScriptedRuntime(tool_call("interrupted", order_id="A1"), strict=False)
    with pytest.raises(KeyboardInterrupt):
        agent("Go.", tools=[interrupted], runtime=fake)


def test_a_failing_tool_method_of_an_agent() -> None:
    class Judge(Agent):
        method_options = {"check_goal": {"tool": True}}  # noqa: RUF012

        def check_goal(self, goal: str) -> str:
            """Check the goal against the workspace."""
            raise RuntimeError("workspace unavailable")

        def judge(self, goal: str) -> Any:
            return agent(f"Is {goal!r} met?", choices={"met": True, "not_met": False})

    fake = ScriptedRuntime(tool_call("check_goal", goal="ship"), pick("not_met"))
    assert Judge(runtime=fake).judge("ship") is False
    assert fake.calls[1].prompt == "Error: RuntimeError: workspace unavailable"


def test_the_error_text_is_bounded_and_a_broken_str_is_survived() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    def long(order_id: str) -> str:
        raise ValueError("x" * 5000)

    def odd(order_id: str) -> str:
        raise Unprintable

    fake = ScriptedRuntime(
        ModelReply(tool_calls=(ToolCall("long", {"order_id": "1"}, "c1"),)),
        ModelReply(tool_calls=(ToolCall("odd", {"order_id": "1"}, "c2"),)),
        "done",
    )
    assert agent("Go.", tools=[long, odd], runtime=fake) == "done"
    assert fake.calls[1].prompt == "Error: ValueError: " + "x" * 2000 + "..."
    assert fake.calls[2].prompt == "Error: Unprintable"
