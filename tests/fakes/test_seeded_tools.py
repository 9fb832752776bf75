"""Seeded runs exercise tools: ``SeededRuntime`` calls every offered tool with generated valid
arguments before its closing reply (as pydantic-ai's ``TestModel``), and ``every_tool_call``
makes one valid scripted call per tool."""

from __future__ import annotations

import datetime
from typing import Annotated, Any, ClassVar, Literal

import pydantic
import pytest

from fake_runtimes import ScriptedRuntime, SeededRuntime, ToolCallStep, every_tool_call, pick
from pytest_opdecide import Agent, ToolSpec, agent, decision

CALLS: list[tuple[str, dict[str, Any]]] = []


def lookup_order(order_id: str, max_age_days: Annotated[int, pydantic.Field(lt=0)]) -> str:
    """Look an order up."""
    CALLS.append(("lookup_order", {"order_id": order_id, "max_age_days": max_age_days}))
    return "shipped"


def notify(team: Literal["ops", "legal"], when: datetime.date | None = None) -> str:
    """Tell a team."""
    CALLS.append(("notify", {"team": team, "when": when}))
    return "sent"


TOOLS = [lookup_order, notify]
CHOICES = {"refund": "REFUNDED", "close": "CLOSED"}


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def test_every_offered_tool_is_called_once_before_the_closing_pick() -> None:
    fake = SeededRuntime(7)
    result = agent("Handle it.", tools=TOOLS, choices=CHOICES, runtime=fake)
    assert result in ("REFUNDED", "CLOSED")
    assert [name for name, _ in CALLS] == ["lookup_order", "notify"]
    assert CALLS[0][1]["max_age_days"] < 0  # a valid argument, as the annotation demands
    assert [c.kind for c in fake.calls] == ["turn", "tool_round"]
    assert [t.name for t in fake.calls[0].reply.tool_calls] == ["lookup_order", "notify"]  # type: ignore[union-attr]
    assert fake.calls[1].prompt == "shipped\nsent"


def test_the_same_seed_makes_the_same_calls() -> None:
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=SeededRuntime(3))
    first = list(CALLS)
    CALLS.clear()
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=SeededRuntime(3))
    assert first == CALLS
    CALLS.clear()
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=SeededRuntime(4))
    assert first != CALLS


def test_which_tools_and_how_often() -> None:
    fake = SeededRuntime(1, call_tools=["notify"], tool_rounds=2)
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=fake)
    assert [name for name, _ in CALLS] == ["notify", "notify"]
    assert [c.kind for c in fake.calls] == ["turn", "tool_round", "tool_round"]
    CALLS.clear()
    quiet = SeededRuntime(1, call_tools=())
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=quiet)
    assert CALLS == []
    assert [c.kind for c in quiet.calls] == ["turn"]
    CALLS.clear()
    agent("Go.", tools=TOOLS, choices=CHOICES, runtime=SeededRuntime(1, tool_rounds=0))
    assert CALLS == []


def test_a_plain_turn_calls_its_tools_then_replies_text() -> None:
    fake = SeededRuntime(2)
    reply = agent("Chat.", tools=[notify], runtime=fake)
    assert isinstance(reply, str)
    assert reply.endswith(".")
    assert [name for name, _ in CALLS] == ["notify"]


def test_decision_make_offers_no_tools_so_none_are_called() -> None:
    fake = SeededRuntime(2, tools=TOOLS)
    decision.make("Pick.", CHOICES, runtime=fake)
    assert CALLS == []


def test_an_agents_tool_methods_are_exercised() -> None:
    class Desk(Agent):
        method_options: ClassVar[dict[str, dict[str, Any]]] = {"check": {"tool": True}}

        def __init__(self, runtime: Any = None) -> None:
            super().__init__(runtime)
            self.checked: list[str] = []

        def check(self, ticket_id: str) -> str:
            """Check a ticket."""
            self.checked.append(ticket_id)
            return "open"

        def handle(self) -> Any:
            return agent("Handle.", choices=CHOICES)

    desk = Desk(runtime=SeededRuntime(5))
    desk.handle()
    assert len(desk.checked) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"call_tools": "notify"}, TypeError, r"call_tools=\['notify'\]"),
        ({"call_tools": [1]}, TypeError, "takes tool names"),
        ({"tool_rounds": -1}, ValueError, "0 or more"),
        ({"tool_rounds": True}, TypeError, "must be an int"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        SeededRuntime(0, **kwargs)


class TestEveryToolCall:
    def test_one_valid_call_per_tool(self) -> None:
        calls = every_tool_call(TOOLS, seed=1)
        assert [c.tool for c in calls] == ["lookup_order", "notify"]
        assert all(isinstance(c, ToolCallStep) for c in calls)
        assert calls[0].args["max_age_days"] < 0
        assert calls == every_tool_call(TOOLS, seed=1)

    def test_scripted_as_one_reply_then_the_closing_pick(self) -> None:
        fake = ScriptedRuntime(every_tool_call(TOOLS), pick("close"))
        assert agent("Go.", tools=TOOLS, choices=CHOICES, runtime=fake) == "CLOSED"
        assert [name for name, _ in CALLS] == ["lookup_order", "notify"]
        assert "Error" not in fake.calls[1].prompt

    @pytest.mark.parametrize("call", every_tool_call(TOOLS), ids=str)
    def test_parametrized_one_tool_per_test(self, call: ToolCallStep) -> None:
        fake = ScriptedRuntime(call, pick("refund"))
        assert agent("Go.", tools=TOOLS, choices=CHOICES, runtime=fake) == "REFUNDED"
        assert CALLS[0][0] == call.tool

    def test_tool_specs_use_their_own_names(self) -> None:
        spec = ToolSpec("find", "Find an order.", {}, lookup_order)
        (call,) = every_tool_call([spec])
        assert call.tool == "find"

    def test_mistakes(self) -> None:
        with pytest.raises(ValueError, match="at least one tool"):
            every_tool_call([])
        with pytest.raises(TypeError, match="must be a function or a ToolSpec"):
            every_tool_call(["lookup_order"])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="no usable __name__"):
            every_tool_call([lambda x: x])
