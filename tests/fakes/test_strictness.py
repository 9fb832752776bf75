"""Strict fakes: exhausted scripts, mismatched steps and unused steps fail, with exact messages.

The messages are what a user reads when a test goes wrong, so each one is pinned here in full.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fake_runtimes import (
    FakeCall,
    FakeError,
    FunctionRuntime,
    ScriptedRuntime,
    ScriptExhausted,
    ScriptMismatch,
    UnusedSteps,
    error,
    pick,
    tool_call,
)
from pytest_opdecide import DecisionError, decision

ROUTES: dict[str, Any] = {"refund": "REFUND", "escalate": "ESCALATE"}


def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    return f"order {order_id}: shipped"


def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return "cancelled"


@pytest.mark.parametrize("error_class", [ScriptExhausted, ScriptMismatch, UnusedSteps])
def test_every_failure_is_an_assertion_error(error_class: type[Exception]) -> None:
    assert issubclass(error_class, FakeError)
    assert issubclass(error_class, AssertionError)


class TestScriptExhausted:
    def test_names_the_call_what_it_offered_and_the_script(self) -> None:
        runtime = ScriptedRuntime(pick("refund"))
        decision.make("Decide.", ROUTES, runtime=runtime)
        with pytest.raises(ScriptExhausted) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime)
        assert str(caught.value) == (
            "ScriptedRuntime ran out of steps: call #1 (turn) is not scripted.\n"
            "It offered options ['refund', 'escalate'] and no tools.\n"
            "Prompt head: 'Decide.'\n"
            "Scripted (1 step):\n"
            "  0. pick('refund')  -> call #0 (turn)\n"
            "Add a step for this call, or find out why the code made one more model call."
        )

    def test_a_working_turn_with_tools(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"))
        with pytest.raises(ScriptExhausted) as caught:
            runtime.exec("Where is A1?", tools=[lookup_order])
        assert str(caught.value) == (
            "ScriptedRuntime ran out of steps: call #1 (tool_round) is not scripted.\n"
            "It offered no options and tools ['lookup_order'].\n"
            "Prompt head: 'order A1: shipped'\n"
            "Scripted (1 step):\n"
            "  0. tool_call('lookup_order', order_id='A1')  -> call #0 (turn)\n"
            "Add a step for this call, or find out why the code made one more model call."
        )

    def test_an_empty_script(self) -> None:
        with pytest.raises(ScriptExhausted) as caught:
            ScriptedRuntime().exec("Hello?")
        assert str(caught.value) == (
            "ScriptedRuntime ran out of steps: call #0 (turn) is not scripted.\n"
            "It offered no options and no tools.\n"
            "Prompt head: 'Hello?'\n"
            "Scripted (0 steps):\n"
            "  (no steps)\n"
            "Add a step for this call, or find out why the code made one more model call."
        )

    def test_a_long_prompt_is_cut_after_200_characters(self) -> None:
        runtime = ScriptedRuntime()
        with pytest.raises(ScriptExhausted) as caught:
            runtime.exec("x" * 250)
        assert f"Prompt head: {'x' * 200 + '...'!r}\n" in str(caught.value)

    def test_a_repick_that_was_not_scripted(self) -> None:
        runtime = ScriptedRuntime("no idea", "still no idea", strict=True)
        with pytest.raises(DecisionError):
            decision.make("Decide.", ROUTES, runtime=runtime)
        with pytest.raises(ScriptExhausted) as caught:
            decision.make("Decide.", ROUTES, runtime=ScriptedRuntime("no idea"))
        assert str(caught.value).startswith(
            "ScriptedRuntime ran out of steps: call #1 (repick) is not scripted.\n"
        )
        assert "  0. 'no idea'  -> call #0 (turn)\n" in str(caught.value)

    def test_long_and_callable_steps_are_shown_briefly(self) -> None:
        def route_by_prompt(call: FakeCall) -> str:
            return "x"

        runtime = ScriptedRuntime("y" * 80, route_by_prompt, lambda call: "z")
        runtime.exec("1")
        runtime.exec("2")
        runtime.exec("3")
        with pytest.raises(ScriptExhausted) as caught:
            runtime.exec("4")
        assert (
            "Scripted (3 steps):\n"
            f"  0. {'y' * 57 + '...'!r}  -> call #0 (turn)\n"
            "  1. <callable TestScriptExhausted.test_long_and_callable_steps_are_shown_briefly."
            "<locals>.route_by_prompt>  -> call #1 (turn)\n"
            "  2. <callable TestScriptExhausted.test_long_and_callable_steps_are_shown_briefly."
            "<locals>.<lambda>>  -> call #2 (turn)\n"
        ) in str(caught.value)

    async def test_on_the_async_path(self) -> None:
        runtime = ScriptedRuntime()
        with pytest.raises(ScriptExhausted) as caught:
            await decision.make_async("Decide.", ROUTES, runtime=runtime)
        assert str(caught.value).startswith(
            "ScriptedRuntime ran out of steps: call #0 (turn) is not scripted.\n"
        )

    def test_is_raised_in_non_strict_mode_too(self) -> None:
        # Never cycle or return a placeholder: a silent reply hides the bug.
        with pytest.raises(ScriptExhausted):
            ScriptedRuntime(strict=False).exec("Hi.")

    def test_the_failed_call_is_in_the_trace(self) -> None:
        runtime = ScriptedRuntime()
        with pytest.raises(ScriptExhausted) as caught:
            runtime.exec("Hi.")
        assert runtime.last_call.error is caught.value

    def test_is_not_swallowed_by_the_repick(self) -> None:
        # An AssertionError from the fake is not a parse failure: no re-pick hides it.
        runtime = ScriptedRuntime()
        with pytest.raises(ScriptExhausted):
            decision.make("Decide.", ROUTES, runtime=runtime, max_retries=3)
        assert len(runtime.calls) == 1


class TestScriptMismatch:
    def test_a_pick_of_an_option_not_offered(self) -> None:
        runtime = ScriptedRuntime(pick("cancel", order_id="A1"))
        with pytest.raises(ScriptMismatch) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime)
        assert str(caught.value) == (
            "ScriptedRuntime: step 0 picks 'cancel', but "
            "call #0 (turn) offered options ['refund', 'escalate'].\n"
            "To send a pick of an option that was not offered, script the raw reply text "
            """instead: '{"call": "cancel", "args": {"order_id": "A1"}}'"""
        )

    def test_a_pick_in_a_call_without_options(self) -> None:
        runtime = ScriptedRuntime(pick("refund"))
        with pytest.raises(ScriptMismatch) as caught:
            runtime.exec("Say hello.")
        assert str(caught.value) == (
            "ScriptedRuntime: step 0 picks 'refund', but call #0 (turn) offered no options.\n"
            "To send a pick of an option that was not offered, script the raw reply text "
            """instead: '{"call": "refund"}'"""
        )

    def test_a_tool_call_in_a_call_without_tools(self) -> None:
        runtime = ScriptedRuntime(tool_call("lookup_order", order_id="A1"))
        with pytest.raises(ScriptMismatch) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime)
        assert str(caught.value) == (
            "ScriptedRuntime: step 0 calls tool 'lookup_order', but "
            "call #0 (turn) offered no tools.\n"
            "Offer the tool to the call (tools=[...] or a toolset), or script a reply that does "
            "not call it."
        )

    def test_a_tool_call_of_a_tool_not_offered(self) -> None:
        runtime = ScriptedRuntime(tool_call("cancel_order", order_id="A1"))
        with pytest.raises(ScriptMismatch) as caught:
            runtime.exec("Cancel A1.", tools=[lookup_order])
        assert str(caught.value) == (
            "ScriptedRuntime: step 0 calls tool 'cancel_order', but call #0 (turn) offered tools "
            "['lookup_order'].\n"
            "Offer the tool to the call (tools=[...] or a toolset), or script a reply that does "
            "not call it."
        )

    def test_one_bad_tool_call_in_a_list_fails_the_whole_step(self) -> None:
        runtime = ScriptedRuntime(
            [tool_call("lookup_order", order_id="A1"), tool_call("cancel_order", order_id="A1")]
        )
        with pytest.raises(
            ScriptMismatch, match=r"^ScriptedRuntime: step 0 calls tool 'cancel_order'"
        ):
            runtime.exec("Go.", tools=[lookup_order])
        # Nothing ran: the check happens before the reply is handed to the tool loop.
        assert len(runtime.calls) == 1
        assert runtime.calls[0].reply is None

    def test_names_the_step_by_its_position(self) -> None:
        runtime = ScriptedRuntime("hello", pick("cancel"))
        runtime.exec("Hi.")
        with pytest.raises(
            ScriptMismatch, match=r"^ScriptedRuntime: step 1 picks 'cancel', but call #1 \(turn\)"
        ):
            decision.make("Decide.", ROUTES, runtime=runtime)

    def test_a_pick_built_by_a_callable_step_is_checked(self) -> None:
        runtime = ScriptedRuntime(lambda call: pick("cancel"))
        with pytest.raises(
            ScriptMismatch, match=r"^ScriptedRuntime: step 0 picks 'cancel', but call #0"
        ):
            decision.make("Decide.", ROUTES, runtime=runtime)

    def test_a_pick_in_a_repick_is_checked(self) -> None:
        runtime = ScriptedRuntime("unsure", pick("cancel"))
        with pytest.raises(
            ScriptMismatch, match=r"^ScriptedRuntime: step 1 picks 'cancel', but call #1 \(repick\)"
        ):
            decision.make("Decide.", ROUTES, runtime=runtime)

    def test_a_tool_call_in_a_repick_is_checked(self) -> None:
        runtime = ScriptedRuntime("unsure", tool_call("lookup_order", order_id="A1"))
        with pytest.raises(ScriptMismatch) as caught:
            runtime.exec("Go.", tools=[lookup_order], choices=ROUTES)
        assert str(caught.value).startswith(
            "ScriptedRuntime: step 1 calls tool 'lookup_order', but "
            "call #1 (repick) offered no tools.\n"
        )

    async def test_on_the_async_path(self) -> None:
        async def step(call: FakeCall) -> Any:
            await asyncio.sleep(0)
            return pick("cancel")

        with pytest.raises(ScriptMismatch, match=r"^ScriptedRuntime: step 0 picks 'cancel'"):
            await decision.make_async("Decide.", ROUTES, runtime=ScriptedRuntime(step))

    def test_a_function_runtime_names_its_function(self) -> None:
        runtime = FunctionRuntime(lambda call: pick("cancel"))
        with pytest.raises(ScriptMismatch) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime)
        assert str(caught.value) == (
            "FunctionRuntime: the function's step picks 'cancel', but "
            "call #0 (turn) offered options "
            "['refund', 'escalate'].\n"
            "To send a pick of an option that was not offered, script the raw reply text "
            """instead: '{"call": "cancel"}'"""
        )


class TestNonStrict:
    def test_a_pick_of_an_option_not_offered_is_sent_as_is(self) -> None:
        runtime = ScriptedRuntime(pick("cancel"), strict=False)
        with pytest.raises(DecisionError) as caught:
            decision.make("Decide.", ROUTES, runtime=runtime, max_retries=0)
        assert caught.value.kind == "unknown_call"
        assert caught.value.replies == ['{"call": "cancel"}']

    def test_a_tool_not_offered_is_reported_to_the_model_by_the_tool_loop(self) -> None:
        runtime = ScriptedRuntime(tool_call("cancel_order", order_id="A1"), "Sorry.", strict=False)
        assert runtime.exec("Go.", tools=[lookup_order]) == "Sorry."
        assert runtime.calls[1].prompt == (
            "Error: unknown tool 'cancel_order'. Available tools: ['lookup_order']"
        )

    def test_function_runtime(self) -> None:
        runtime = FunctionRuntime(lambda call: pick("cancel"), strict=False)
        with pytest.raises(DecisionError):
            decision.make("Decide.", ROUTES, runtime=runtime, max_retries=0)


class TestUnusedSteps:
    def test_assert_complete_lists_the_unused_steps(self) -> None:
        runtime = ScriptedRuntime(
            pick("refund"),
            "extra reply",
            tool_call("lookup_order", order_id="A1"),
            error(TimeoutError("slow")),
        )
        decision.make("Decide.", ROUTES, runtime=runtime)
        with pytest.raises(UnusedSteps) as caught:
            runtime.assert_complete()
        assert str(caught.value) == (
            "ScriptedRuntime: 3 scripted steps were never used:\n"
            "  1. 'extra reply'\n"
            "  2. tool_call('lookup_order', order_id='A1')\n"
            "  3. error(TimeoutError('slow'))\n"
            "The code made 1 model call; remove the unused steps, or find out why the code "
            "stopped early."
        )

    def test_no_call_at_all(self) -> None:
        with pytest.raises(UnusedSteps) as caught:
            ScriptedRuntime(pick("refund")).assert_complete()
        assert str(caught.value) == (
            "ScriptedRuntime: 1 scripted step was never used:\n"
            "  0. pick('refund')\n"
            "The code made 0 model calls; remove the unused steps, or find out why the code "
            "stopped early."
        )

    def test_passes_when_every_step_was_used(self) -> None:
        runtime = ScriptedRuntime(pick("refund"), "bye")
        decision.make("Decide.", ROUTES, runtime=runtime)
        runtime.exec("Bye.")
        runtime.assert_complete()

    def test_passes_for_an_empty_script(self) -> None:
        ScriptedRuntime().assert_complete()

    def test_a_subclass_is_named_in_the_messages(self) -> None:
        class TicketModel(ScriptedRuntime):
            pass

        with pytest.raises(UnusedSteps, match=r"^TicketModel: 1 scripted step was never used"):
            TicketModel("x").assert_complete()
        with pytest.raises(ScriptExhausted, match=r"^TicketModel ran out of steps"):
            TicketModel().exec("Hi.")
