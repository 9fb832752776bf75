"""``ScriptedRuntime``: each step kind, the recorded calls, and the script's bookkeeping."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from fake_runtimes import FakeCall, ScriptedRuntime, error, pick, tool_call
from pytest_opdecide import (
    Agent,
    DecisionError,
    ModelReply,
    Runtime,
    ToolCall,
    Usage,
    agent,
    agent_async,
    decision,
)
from pytest_opdecide.decision import DECISION_FINISH_INSTRUCTION

ROUTES: dict[str, Any] = {
    "refund": ("REFUND", "Give the money back."),
    "escalate": ("ESCALATE", "Hand over to a human."),
}
ROUTES_MENU = (
    "refund()\n"
    "    Give the money back.\n"
    '    Call: {"call": "refund"}\n'
    "\n"
    "escalate()\n"
    "    Hand over to a human.\n"
    '    Call: {"call": "escalate"}\n'
)


def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    return f"order {order_id}: shipped"


def issue_refund(amount: float, reason: str = "unspecified") -> dict[str, Any]:
    """Refund the customer."""
    return {"refunded": amount, "reason": reason}


class TestReplyText:
    def test_a_string_is_the_reply_text(self) -> None:
        runtime = ScriptedRuntime("Hello there.")
        assert runtime.exec("Say hello.") == "Hello there."
        assert runtime.calls[0].reply is not None
        assert runtime.calls[0].reply.text == "Hello there."

    def test_raw_text_goes_through_the_real_parser(self) -> None:
        runtime = ScriptedRuntime('I think a refund.\n```json\n{"call": "refund"}\n```')
        assert decision.make("Decide.", ROUTES, runtime=runtime) == "REFUND"

    def test_raw_text_can_pick_an_option_that_was_not_offered(self) -> None:
        runtime = ScriptedRuntime('{"call": "cancel"}')
        with pytest.raises(DecisionError) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime, max_retries=0)
        assert caught.value.kind == "unknown_call"

    def test_the_reply_reports_the_runtime_model(self) -> None:
        runtime = ScriptedRuntime("a", "b", model="gpt-fake")
        runtime.exec("x")
        assert runtime.last_call.reply is not None
        assert runtime.last_call.reply.model == "gpt-fake"
        assert ScriptedRuntime().model == "fake-model"


class TestPickStep:
    def test_sends_the_canonical_json_and_resolves(self) -> None:
        runtime = ScriptedRuntime(pick("issue_refund", amount=30, reason="late"))
        result = decision.make("Decide.", {"issue_refund": issue_refund}, runtime=runtime)
        assert result == {"refunded": 30.0, "reason": "late"}
        assert runtime.calls[0].reply is not None
        assert runtime.calls[0].reply.text == (
            '{"call": "issue_refund", "args": {"amount": 30, "reason": "late"}}'
        )

    def test_a_value_option(self) -> None:
        runtime = ScriptedRuntime(pick("escalate"))
        assert decision.make("Decide.", ROUTES, runtime=runtime) == "ESCALATE"

    def test_a_schema_option(self) -> None:
        options = {"plan": ("Plan the work.", {"steps": [{"action": str}], "why": str})}
        runtime = ScriptedRuntime(pick("plan", steps=[{"action": "ship"}], why="fast"))
        assert decision.make("Plan.", options, runtime=runtime) == {
            "decision": "plan",
            "steps": [{"action": "ship"}],
            "why": "fast",
        }

    def test_a_loose_pick_with_invalid_arguments_fails_like_a_model_reply_would(self) -> None:
        runtime = ScriptedRuntime(pick("issue_refund", amount="thirty"), strict=False)
        with pytest.raises(DecisionError) as caught:
            decision.make("Decide.", {"issue_refund": issue_refund}, runtime=runtime, max_retries=0)
        assert caught.value.kind == "type_mismatch"
        assert caught.value.message == "Field 'amount' must be float, got str ('thirty')"

    def test_closes_a_working_turn_with_choices(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), pick("refund"))
        assert runtime.exec("Handle it.", tools=[lookup_order], choices=ROUTES) == "REFUND"
        assert [c.kind for c in runtime.calls] == ["turn", "tool_round"]


class TestToolCallStep:
    def test_the_runtime_runs_the_tool_and_sends_back_its_result(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), "It has shipped.")
        assert runtime.exec("Where is A1?", tools=[lookup_order]) == "It has shipped."
        first, second = runtime.calls
        assert first.kind == "turn"
        assert first.reply is not None
        assert first.reply.text == ""
        assert first.reply.tool_calls == (ToolCall("lookup_order", {"order_id": "A1"}, "call_1"),)
        assert second.kind == "tool_round"
        assert second.prompt == "order A1: shipped"
        assert second.parent == first.id

    def test_a_list_is_several_tool_calls_in_one_reply(self) -> None:
        runtime = ScriptedRuntime(
            [tool_call("lookup_order", order_id="A1"), tool_call("lookup_order", order_id="B2")],
            "Both shipped.",
        )
        assert runtime.exec("Where are A1 and B2?", tools=[lookup_order]) == "Both shipped."
        first, second = runtime.calls
        assert first.reply is not None
        assert [(c.name, c.arguments, c.id) for c in first.reply.tool_calls] == [
            ("lookup_order", {"order_id": "A1"}, "call_1"),
            ("lookup_order", {"order_id": "B2"}, "call_2"),
        ]
        assert second.prompt == "order A1: shipped\norder B2: shipped"

    def test_tool_call_ids_keep_counting_across_turns(self) -> None:
        runtime = ScriptedRuntime(
            tool_call("lookup_order", order_id="A1"), "ok", tool_call("lookup_order", order_id="B2")
        )
        runtime.add("ok")
        runtime.exec("one", tools=[lookup_order])
        runtime.exec("two", tools=[lookup_order])
        ids = [c.id for r in runtime.calls if r.reply for c in r.reply.tool_calls]
        assert ids == ["call_1", "call_2"]

    def test_tools_of_the_default_toolset_are_offered(self) -> None:
        runtime = ScriptedRuntime(
            tool_call("lookup_order", order_id="A1"), "done", tools=[lookup_order]
        )
        assert runtime.exec("Where is A1?") == "done"
        assert runtime.calls[0].tools == ["lookup_order"]

    def test_a_named_toolset(self) -> None:
        runtime = ScriptedRuntime(
            tool_call("lookup_order", order_id="A1"),
            "done",
            toolsets={"orders": [lookup_order]},
        )
        assert runtime.exec("Where is A1?", toolset="orders") == "done"

    def test_the_tool_arguments_are_validated_by_the_runtime(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", id="A1"), "sorry")
        runtime.exec("Where is A1?", tools=[lookup_order])
        assert runtime.calls[1].prompt == (
            "Error: Tool 'lookup_order' is missing required arguments: ['order_id']"
        )


class TestErrorStep:
    def test_the_call_raises_the_exception(self) -> None:
        exc = TimeoutError("the model took too long")
        runtime = ScriptedRuntime(error(exc))
        with pytest.raises(TimeoutError) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime)
        assert caught.value is exc
        assert runtime.calls[0].error is exc
        assert runtime.calls[0].reply is None

    def test_an_exception_class_is_instantiated(self) -> None:
        runtime = ScriptedRuntime(error(ConnectionError))
        with pytest.raises(ConnectionError):
            runtime.exec("Hi.")
        assert isinstance(runtime.calls[0].error, ConnectionError)

    def test_a_failure_in_the_middle_of_a_tool_loop(self) -> None:
        runtime = ScriptedRuntime(
            tool_call("lookup_order", order_id="A1"), error(RuntimeError("rate limited"))
        )
        with pytest.raises(RuntimeError, match="rate limited"):
            runtime.exec("Where is A1?", tools=[lookup_order])
        assert [c.kind for c in runtime.calls] == ["turn", "tool_round"]
        assert runtime.remaining == []

    async def test_on_the_async_path(self) -> None:
        runtime = ScriptedRuntime(error(TimeoutError("slow")))
        with pytest.raises(TimeoutError, match="slow"):
            await decision.make_async("Decide.", ROUTES, runtime=runtime)


class TestModelReplyStep:
    def test_is_returned_as_is(self) -> None:
        reply = ModelReply(text="Hi.", usage=Usage(7, 2, 9), model="m-1", raw={"id": "x"})
        runtime = ScriptedRuntime(reply)
        assert runtime.exec("Hello.") == "Hi."
        assert runtime.calls[0].reply is reply

    def test_can_carry_text_and_tool_calls_together(self) -> None:
        reply = ModelReply(
            text="Let me check.", tool_calls=(ToolCall("lookup_order", {"order_id": "A1"}, "t1"),)
        )
        runtime = ScriptedRuntime(reply, "Shipped.")
        assert runtime.exec("Where is A1?", tools=[lookup_order]) == "Shipped."
        assistant = runtime.calls[1].request.messages[1]
        assert assistant.role == "assistant"
        assert assistant.text == "Let me check."


class TestCallableStep:
    def test_receives_the_call_it_answers(self) -> None:
        seen: list[FakeCall] = []

        def step(call: FakeCall) -> Any:
            seen.append(call)
            return pick(call.options[-1])

        runtime = ScriptedRuntime("not a pick", step)
        assert decision.make("Decide.", ROUTES, runtime=runtime) == "ESCALATE"
        (call,) = seen
        assert call.index == 1
        assert call.kind == "repick"
        assert call.menu == ROUTES_MENU
        assert call.options == ["refund", "escalate"]
        assert call.tools == []
        assert call.prompt.startswith("Previous reply:\nnot a pick\n\nProblem: ")
        assert call.request is runtime.calls[1].request
        assert call.describe() == "call #1 (repick)"

    @pytest.mark.parametrize(
        ("built", "expected"),
        [
            ("text", "text"),
            (pick("refund"), "REFUND"),
            (ModelReply(text='{"call": "escalate"}'), "ESCALATE"),
        ],
    )
    def test_can_build_any_reply_step(self, built: Any, expected: str) -> None:
        runtime = ScriptedRuntime(lambda call: built, strict=True)
        if expected == "text":
            assert runtime.exec("Hi.") == "text"
        else:
            assert decision.make("Decide.", ROUTES, runtime=runtime) == expected

    def test_can_build_tool_calls(self) -> None:
        runtime = ScriptedRuntime(
            lambda call: [tool_call(name, order_id="A1") for name in call.tools], "done"
        )
        assert runtime.exec("Go.", tools=[lookup_order]) == "done"
        assert runtime.calls[1].prompt == "order A1: shipped"

    def test_can_build_an_error(self) -> None:
        runtime = ScriptedRuntime(lambda call: error(TimeoutError(f"call {call.index}")))
        with pytest.raises(TimeoutError, match="call 0"):
            runtime.exec("Hi.")

    def test_an_exception_raised_by_the_callable_propagates(self) -> None:
        def step(call: FakeCall) -> str:
            raise LookupError("no reply for that")

        runtime = ScriptedRuntime(step)
        with pytest.raises(LookupError, match="no reply for that"):
            runtime.exec("Hi.")
        assert isinstance(runtime.calls[0].error, LookupError)

    def test_building_another_callable_is_an_error(self) -> None:
        runtime = ScriptedRuntime(lambda call: lambda c: "x")
        with pytest.raises(TypeError) as caught:
            runtime.exec("Hi.")
        assert str(caught.value) == "step 0 built another callable; build a step instead"

    def test_building_something_that_is_not_a_step_is_an_error(self) -> None:
        runtime = ScriptedRuntime(lambda call: 42)
        with pytest.raises(TypeError) as caught:
            runtime.exec("Hi.")
        assert str(caught.value) == (
            "step 0 is int 42: a step is a reply string, pick(...), tool_call(...) (or a list "
            "of them), error(...), a ModelReply, or a callable that builds one of those from "
            "the call"
        )

    def test_a_whole_script_passed_as_one_list_says_to_unpack_it(self) -> None:
        # The marker takes script=[...]: the same list given to ScriptedRuntime is one argument.
        with pytest.raises(TypeError) as caught:
            ScriptedRuntime([pick("refund"), "done"])
        assert str(caught.value) == (
            "step 0 is a list of 2 steps: a list is one step only when it holds tool_call(...) "
            "steps (one reply calling several tools). Give the steps one by one, "
            "ScriptedRuntime(pick(...), pick(...)), or unpack a list, ScriptedRuntime(*steps)"
        )

    def test_an_async_callable_on_the_sync_path_says_to_use_the_async_api(self) -> None:
        async def step(call: FakeCall) -> str:
            return "hi"

        runtime = ScriptedRuntime(step)
        # The coroutine is closed, so no "never awaited" warning (an error in this suite).
        with pytest.raises(TypeError) as caught:
            runtime.exec("Hi.")
        assert str(caught.value) == (
            "step 0 is an async callable; use the async API (exec_async, decision.make_async) "
            "so that it can be awaited"
        )

    async def test_an_async_callable_on_the_async_path_is_awaited(self) -> None:
        async def step(call: FakeCall) -> Any:
            await asyncio.sleep(0)
            return pick(call.options[0])

        runtime = ScriptedRuntime(step)
        assert await decision.make_async("Decide.", ROUTES, runtime=runtime) == "REFUND"


class TestRecordedCalls:
    def test_a_decision_call(self) -> None:
        runtime = ScriptedRuntime(pick("refund"))
        decision.make("Should we refund?", ROUTES, runtime=runtime)
        (call,) = runtime.calls
        assert call.kind == "turn"
        assert call.prompt == f"Should we refund?\n\n{ROUTES_MENU}"
        assert call.menu == ROUTES_MENU
        assert call.options == ["refund", "escalate"]
        assert call.tools == []
        assert call.reply is not None
        assert call.reply.text == '{"call": "refund"}'

    def test_a_working_turn_with_choices_and_tools(self) -> None:
        runtime = ScriptedRuntime(pick("refund"))
        runtime.exec("Handle ticket 7.", tools=[lookup_order], choices=ROUTES)
        call = runtime.last_call
        assert call.kind == "turn"
        assert call.prompt == f"Handle ticket 7.{DECISION_FINISH_INSTRUCTION}{ROUTES_MENU}"
        assert call.menu == ROUTES_MENU
        assert call.options == ["refund", "escalate"]
        assert call.tools == ["lookup_order"]

    def test_a_plain_turn_offers_no_menu(self) -> None:
        runtime = ScriptedRuntime("ok")
        runtime.exec("Hi.")
        assert runtime.last_call.menu is None
        assert runtime.last_call.options == []

    def test_a_repick(self) -> None:
        runtime = ScriptedRuntime("I would refund.", pick("refund"))
        assert decision.make("Decide.", ROUTES, runtime=runtime) == "REFUND"
        first, repick = runtime.calls
        assert repick.kind == "repick"
        assert repick.parent == first.id
        assert repick.menu == ROUTES_MENU
        assert repick.options == ["refund", "escalate"]
        assert repick.tools == []
        assert repick.prompt == (
            "Previous reply:\nI would refund.\n\n"
            "Problem: Reply contained no parseable JSON with a 'call' field.\n\n"
            f"Options:\n{ROUTES_MENU}\n\n"
            "Your previous reply failed to parse or validate. Re-pick an option from the list "
            "above, fixing the problem described. Reply with valid JSON in the format shown in "
            "that option's Call: example line — JSON only, no prose."
        )

    def test_last_call_is_the_most_recent(self) -> None:
        runtime = ScriptedRuntime("one", "two")
        runtime.exec("first")
        runtime.exec("second")
        assert runtime.last_call.prompt == "second"
        assert runtime.last_call is runtime.calls[-1]

    def test_last_call_before_any_call_fails_clearly(self) -> None:
        with pytest.raises(AssertionError) as caught:
            _ = ScriptedRuntime("x").last_call
        assert str(caught.value) == "ScriptedRuntime received no model call yet"

    def test_calls_are_the_runtime_trace(self) -> None:
        runtime = ScriptedRuntime("a", "b")
        runtime.exec("1")
        runtime.exec("2")
        assert runtime.calls == runtime.trace.calls
        assert [c.id for c in runtime.calls] == [0, 1]

    def test_usage_is_plausible_and_deterministic(self) -> None:
        def run() -> list[Usage]:
            runtime = ScriptedRuntime("x" * 40, tool_call("lookup_order", order_id="A1"), "ok")
            runtime.exec("y" * 20)
            runtime.exec("Where?", tools=[lookup_order])
            return [c.usage for c in runtime.calls]

        usages = run()
        assert usages == run()
        # About four characters a token: 20 characters sent, 40 received.
        assert usages[0] == Usage(prompt_tokens=5, completion_tokens=10, total_tokens=15)
        for usage in usages:
            assert usage.prompt_tokens > 0
            assert usage.completion_tokens > 0
            assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


class TestScriptBookkeeping:
    def test_remaining_lists_the_steps_not_used_yet(self) -> None:
        steps = [pick("refund"), "hello", error(TimeoutError)]
        runtime = ScriptedRuntime(*steps)
        assert runtime.remaining == steps
        decision.make("Decide.", ROUTES, runtime=runtime)
        assert runtime.remaining == steps[1:]
        runtime.exec("Hi.")
        assert runtime.remaining == steps[2:]

    def test_a_step_that_raised_counts_as_used(self) -> None:
        runtime = ScriptedRuntime(error(TimeoutError))
        with pytest.raises(TimeoutError):
            runtime.exec("Hi.")
        assert runtime.remaining == []
        runtime.assert_complete()

    def test_add_appends_steps_and_returns_the_runtime(self) -> None:
        runtime = ScriptedRuntime("one")
        assert runtime.add("two", pick("refund")) is runtime
        assert runtime.steps == ["one", "two", pick("refund")]
        assert runtime.exec("1") == "one"
        assert runtime.exec("2") == "two"
        assert decision.make("3", ROUTES, runtime=runtime) == "REFUND"
        runtime.assert_complete()

    def test_add_after_the_script_ran_out(self) -> None:
        runtime = ScriptedRuntime()
        runtime.add("late")
        assert runtime.exec("Hi.") == "late"

    def test_add_checks_its_steps_and_numbers_them_in_the_script(self) -> None:
        runtime = ScriptedRuntime("one", "two")
        with pytest.raises(TypeError, match=r"^step 3 is int 7: "):
            runtime.add("three", 7)
        assert runtime.steps == ["one", "two"]

    def test_steps_are_used_in_order_by_concurrent_calls(self) -> None:
        async def main() -> list[Any]:
            runtime = ScriptedRuntime(*(pick(name) for name in ["refund", "escalate"] * 3))
            results = await asyncio.gather(
                *(decision.make_async(f"case {i}", ROUTES, runtime=runtime) for i in range(6))
            )
            runtime.assert_complete()
            return sorted(results)

        assert asyncio.run(main()) == ["ESCALATE"] * 3 + ["REFUND"] * 3


class TestEntryPoints:
    """The same script drives every API, sync and async."""

    def test_decision_make(self) -> None:
        assert decision.make("D.", ROUTES, runtime=ScriptedRuntime(pick("refund"))) == "REFUND"

    async def test_decision_make_async(self) -> None:
        runtime = ScriptedRuntime(pick("refund"))
        assert await decision.make_async("D.", ROUTES, runtime=runtime) == "REFUND"

    def test_exec(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), "shipped")
        assert runtime.exec("Where?", tools=[lookup_order]) == "shipped"

    async def test_exec_async_with_an_async_tool(self) -> None:
        async def lookup(order_id: str) -> str:
            """Look up an order."""
            await asyncio.sleep(0)
            return f"{order_id} is late"

        runtime = ScriptedRuntime(tool_call("lookup", order_id="A1"), pick("escalate"))
        result = await runtime.exec_async("Handle it.", tools=[lookup], choices=ROUTES)
        assert result == "ESCALATE"
        assert runtime.calls[1].prompt == "A1 is late"

    def test_agent_inside_an_agent_method(self) -> None:
        class Support(Agent):
            def handle(self, ticket: str) -> Any:
                return agent(f"Handle: {ticket}", choices=ROUTES, tools=[lookup_order])

        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), pick("refund"))
        assert Support(runtime).handle("A1 is broken") == "REFUND"
        assert runtime.calls[0].prompt.startswith("Handle: A1 is broken")
        runtime.assert_complete()

    async def test_agent_async_inside_an_agent_method(self) -> None:
        class Support(Agent):
            async def handle(self, ticket: str) -> Any:
                return await agent_async(f"Handle: {ticket}", choices=ROUTES)

        runtime = ScriptedRuntime(pick("escalate"))
        assert await Support(runtime).handle("angry customer") == "ESCALATE"

    def test_a_decision_made_inside_a_tool(self) -> None:
        runtime = ScriptedRuntime()

        def triage(summary: str) -> str:
            """Triage the ticket."""
            return str(decision.make(f"Triage: {summary}", ROUTES, runtime=runtime))

        runtime.add(tool_call("triage", summary="broken"), pick("escalate"), "Escalated.")
        assert runtime.exec("Go.", tools=[triage]) == "Escalated."
        turn, nested, final = runtime.calls
        assert nested.parent == turn.id
        assert nested.options == ["refund", "escalate"]
        assert final.prompt == "ESCALATE"

    def test_is_a_real_runtime(self) -> None:
        assert isinstance(ScriptedRuntime(), Runtime)


def test_pick_text_is_json_that_the_extractor_reads_back() -> None:
    step = pick("plan", steps=[{"a": 1}], note='He said "hi" {and} left')
    assert decision.extract_action(step.text) == json.loads(step.text)
