"""``Runtime``: exec (plain, choices, content blocks), the tool loop, toolsets, trace, async."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest

from pytest_opdecide import (
    CallTrace,
    DecisionError,
    FromContext,
    Message,
    ModelReply,
    ModelRequest,
    Runtime,
    ToolCall,
    ToolLoopError,
    ToolSpec,
    Usage,
    decision,
    tool_spec,
)

from ._support import AsyncOnlyRuntime, FixedRuntime, SyncOnlyRuntime, pick

FINISH = (
    "\n\nDo whatever work you need to first. When you are finished, the LAST thing in your reply "
    "must be a single JSON object picking exactly one option from the menu below \u2014 in the "
    "format shown on that option's ``Call:`` line. Options:\n\n"
)


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def add(a: int, b: int = 0) -> dict[str, int]:
    """Add two numbers."""
    return {"sum": a + b}


def tools_reply(*calls: ToolCall, text: str = "") -> ModelReply:
    return ModelReply(text=text, tool_calls=calls)


OPTIONS: dict[str, Any] = {"a": "A", "b": "B"}
MENU = 'a()\n    Call: {"call": "a"}\n\nb()\n    Call: {"call": "b"}\n'


class TestFinishInstruction:
    def test_exact_string(self) -> None:
        assert decision.DECISION_FINISH_INSTRUCTION == FINISH
        assert "\u2014" in decision.DECISION_FINISH_INSTRUCTION
        assert "``Call:``" in decision.DECISION_FINISH_INSTRUCTION


class TestExecPlain:
    def test_returns_the_reply_text(self) -> None:
        rt = FixedRuntime("the answer")
        assert rt.exec("Question?") == "the answer"
        request = rt.requests[0]
        assert request.kind == "turn"
        assert request.blocks == ({"type": "text", "text": "Question?"},)
        assert request.messages == (Message("user", ({"type": "text", "text": "Question?"},)),)
        assert request.menu is None
        assert request.options == ()

    def test_content_blocks_are_sent_as_given(self) -> None:
        image = {"type": "image", "url": "http://example.invalid/cat.png"}
        rt = FixedRuntime("ok")
        rt.exec([{"type": "text", "text": "Look:"}, image, "and this"])
        assert rt.requests[0].blocks == (
            {"type": "text", "text": "Look:"},
            image,
            {"type": "text", "text": "and this"},
        )
        assert rt.requests[0].prompt == "Look:and this"

    @pytest.mark.parametrize(
        "blocks",
        [
            ({"type": "text", "text": "one"},),
            ({"text": "no type is text"},),
            ({"type": "text"},),
            ({"type": "image", "text": "not text"},),
            ({"type": "text", "text": 7},),
            ({"type": "text", "text": "a"}, {"type": "text", "text": "b"}),
            (),
        ],
    )
    def test_a_message_s_text_joins_its_text_blocks(self, blocks: Any) -> None:
        # One block takes a short way: it must read as the join of every block reads.
        joined = "".join(str(b.get("text", "")) for b in blocks if b.get("type", "text") == "text")
        assert Message("user", blocks).text == joined

    @pytest.mark.parametrize("content", [3, None, [{"text": "no type"}], [{"type": "text"}], [7]])
    def test_bad_content_fails_before_any_call(self, content: Any) -> None:
        rt = FixedRuntime()
        with pytest.raises(TypeError):
            rt.exec(content)
        assert rt.requests == []

    def test_model_timeout_and_response_format_are_passed(self) -> None:
        rt = FixedRuntime("a", "b", model="small")
        rt.exec("x", timeout_s=3.0, response_format={"type": "json_object"})
        rt.exec("y", model="large")
        assert rt.requests[0].model == "small"
        assert rt.requests[0].timeout_s == 3.0
        assert rt.requests[0].response_format == {"type": "json_object"}
        assert rt.requests[1].model == "large"

    def test_no_tools_offered_without_a_default_toolset(self) -> None:
        rt = FixedRuntime("ok")
        rt.exec("x")
        assert rt.requests[0].tools == ()

    def test_empty_reply_text(self) -> None:
        assert FixedRuntime(ModelReply()).exec("x") == ""


class TestExecChoices:
    def test_finish_instruction_and_menu_are_one_extra_text_block(self) -> None:
        rt = FixedRuntime(pick("b"))
        assert rt.exec("Do the work.", choices=OPTIONS) == "B"
        request = rt.requests[0]
        assert request.blocks == (
            {"type": "text", "text": "Do the work."},
            {"type": "text", "text": FINISH + MENU},
        )
        assert request.menu == MENU
        assert request.options == ("a", "b")
        assert request.kind == "turn"

    def test_with_content_blocks(self) -> None:
        rt = FixedRuntime(pick("a"))
        rt.exec(["one", {"type": "text", "text": "two"}], choices=OPTIONS)
        assert rt.requests[0].blocks == (
            {"type": "text", "text": "one"},
            {"type": "text", "text": "two"},
            {"type": "text", "text": FINISH + MENU},
        )

    def test_resolves_each_option_kind(self) -> None:
        options = {
            "lookup": lookup,
            "v": 42,
            "plan": ("Plan.", {"steps": [str]}),
        }
        assert FixedRuntime(pick("lookup", key="k")).exec("x", choices=options) == "value of k"
        assert FixedRuntime(pick("v")).exec("x", choices=options) == 42
        assert FixedRuntime(pick("plan", steps=["s"])).exec("x", choices=options) == {
            "decision": "plan",
            "steps": ["s"],
        }

    def test_list_form_choices(self) -> None:
        rt = FixedRuntime(pick("lookup", key="k"))
        assert rt.exec("x", choices=[lookup, "done"]) == "value of k"

    def test_one_repick_then_success(self) -> None:
        rt = FixedRuntime("no pick", pick("a"))
        assert rt.exec("x", choices=OPTIONS) == "A"
        assert [r.kind for r in rt.requests] == ["turn", "repick"]
        assert rt.requests[1].tools == ()
        assert rt.requests[1].menu == MENU

    def test_fixed_at_one_repick(self) -> None:
        rt = FixedRuntime("no pick", "still none", pick("a"))
        with pytest.raises(DecisionError) as info:
            rt.exec("x", choices=OPTIONS)
        assert info.value.attempts == 2
        assert info.value.replies == ["no pick", "still none"]
        assert len(rt.requests) == 2

    def test_repick_uses_the_turns_model_and_timeout(self) -> None:
        rt = FixedRuntime("no pick", pick("a"), model="m0")
        rt.exec("x", choices=OPTIONS, model="m1", timeout_s=5)
        assert [(r.model, r.timeout_s) for r in rt.requests] == [("m1", 5), ("m1", 5)]

    def test_context_is_passed_to_function_options(self) -> None:
        def refund(order_id: Annotated[str, FromContext()]) -> str:
            return order_id

        rt = FixedRuntime(pick("refund", order_id="EVIL"))
        assert rt.exec("x", choices={"refund": refund}, context={"order_id": "A1"}) == "A1"

    def test_missing_context_fails_before_any_call(self) -> None:
        def refund(order_id: Annotated[str, FromContext()]) -> str:
            return order_id

        rt = FixedRuntime()
        with pytest.raises(TypeError):
            rt.exec("x", choices={"refund": refund})
        assert rt.requests == []

    def test_exception_in_picked_function_propagates_without_repick(self) -> None:
        def boom() -> None:
            raise KeyError("inner")

        rt = FixedRuntime(pick("boom"), pick("boom"))
        with pytest.raises(KeyError, match="inner"):
            rt.exec("x", choices={"boom": boom})
        assert len(rt.requests) == 1


class TestMake:
    def test_prompt_is_prompt_blank_line_menu_with_no_tools(self) -> None:
        rt = FixedRuntime(pick("a"), tools=[lookup])
        assert decision.make("Pick one.", OPTIONS, runtime=rt) == "A"
        request = rt.requests[0]
        assert request.blocks == ({"type": "text", "text": "Pick one.\n\n" + MENU},)
        assert request.prompt == f"Pick one.\n\n{MENU}"
        assert decision.DECISION_FINISH_INSTRUCTION not in request.prompt
        assert request.tools == ()
        assert request.kind == "turn"
        assert request.menu == MENU
        assert request.options == ("a", "b")


class TestToolLoop:
    def test_tool_call_result_is_fed_back(self) -> None:
        rt = FixedRuntime(
            tools_reply(ToolCall("lookup", {"key": "k"}, id="c1"), text="Let me look."),
            "final",
        )
        assert rt.exec("x", tools=[lookup]) == "final"
        first, second = rt.requests
        assert first.tool_names == ["lookup"]
        assert second.kind == "tool_round"
        assert second.tool_names == ["lookup"]
        assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
        assistant, tool = second.messages[1:]
        assert assistant.content == ({"type": "text", "text": "Let me look."},)
        assert assistant.tool_calls == (ToolCall("lookup", {"key": "k"}, id="c1"),)
        assert tool.content == ({"type": "text", "text": "value of k"},)
        assert tool.tool_call_id == "c1"
        assert tool.name == "lookup"
        assert second.prompt == "value of k"

    def test_several_calls_and_rounds(self) -> None:
        rt = FixedRuntime(
            tools_reply(
                ToolCall("lookup", {"key": "a"}, "1"), ToolCall("add", {"a": 1, "b": 2}, "2")
            ),
            tools_reply(ToolCall("add", '{"a": 5}', "3")),
            "done",
        )
        assert rt.exec("x", tools=[lookup, add]) == "done"
        assert [r.kind for r in rt.requests] == ["turn", "tool_round", "tool_round"]
        results = [m.text for m in rt.requests[2].messages if m.role == "tool"]
        assert results == ["value of a", '{"sum": 3}', '{"sum": 5}']

    @pytest.mark.parametrize(
        ("call", "fed_back"),
        [
            (
                ToolCall("nope", {}, "1"),
                "Error: unknown tool 'nope'. Available tools: ['add', 'lookup']",
            ),
            (
                ToolCall("lookup", "{not json", "1"),
                "Error: the arguments of 'lookup' are not valid JSON: '{not json'",
            ),
            (
                ToolCall("lookup", "[1]", "1"),
                "Error: the arguments of 'lookup' must be an object, got list",
            ),
            (
                ToolCall("lookup", {}, "1"),
                "Error: Tool 'lookup' is missing required arguments: ['key']",
            ),
            (
                ToolCall("lookup", {"key": 1}, "1"),
                "Error: Field 'key' must be str, got int (1)",
            ),
        ],
    )
    def test_model_mistakes_are_fed_back_to_the_model(self, call: ToolCall, fed_back: str) -> None:
        rt = FixedRuntime(tools_reply(call), "recovered")
        assert rt.exec("x", tools=[lookup, add]) == "recovered"
        tool_messages = [m for m in rt.requests[1].messages if m.role == "tool"]
        assert [m.text for m in tool_messages] == [fed_back]

    def test_tool_gets_the_runtime_injected(self) -> None:
        seen: list[Runtime] = []

        def probe(runtime: Runtime) -> str:
            seen.append(runtime)
            return "ok"

        rt = FixedRuntime(tools_reply(ToolCall("probe", {"runtime": "EVIL"}, "1")), "done")
        rt.exec("x", tools=[probe])
        assert seen == [rt]

    def test_exec_context_reaches_native_tools(self) -> None:
        seen: list[str] = []

        def refund(amount: float, order_id: Annotated[str, FromContext()]) -> str:
            seen.append(order_id)
            return "refunded"

        rt = FixedRuntime(tools_reply(ToolCall("refund", {"amount": 1}, "1")), "done")
        assert rt.exec("x", tools=[refund], context={"order_id": "A1"}) == "done"
        assert seen == ["A1"]

    def test_tool_schema_hides_context_and_runtime_parameters(self) -> None:
        def refund(amount: float, order_id: Annotated[str, FromContext()], runtime: Runtime) -> str:
            return order_id

        spec, _ = tool_spec(refund)
        assert spec.parameters == {
            "type": "object",
            "properties": {"amount": {"type": "number"}},
            "required": ["amount"],
        }

    def test_unprintable_result_falls_back_to_str(self) -> None:
        class Thing:
            def __str__(self) -> str:
                return "a thing"

        def make_thing() -> Thing:
            return Thing()

        rt = FixedRuntime(tools_reply(ToolCall("make_thing", {}, "1")), "done")
        rt.exec("x", tools=[make_thing])
        assert rt.requests[1].prompt == "a thing"

    def test_tool_loop_then_choices(self) -> None:
        rt = FixedRuntime(tools_reply(ToolCall("lookup", {"key": "k"}, "1")), pick("b"))
        assert rt.exec("x", tools=[lookup], choices=OPTIONS) == "B"
        assert rt.requests[1].menu == MENU
        assert rt.requests[1].blocks[-1] == {"type": "text", "text": FINISH + MENU}

    def test_max_iterations(self) -> None:
        call = ToolCall("lookup", {"key": "k"}, "1")
        rt = FixedRuntime(*[tools_reply(call)] * 5)
        with pytest.raises(ToolLoopError) as info:
            rt.exec("x", tools=[lookup], max_iterations=3)
        assert str(info.value) == (
            "the model still asked for tools after max_iterations=3 model calls; raise "
            "max_iterations, or check what the tools return"
        )
        assert isinstance(info.value, RuntimeError)
        assert len(rt.requests) == 3

    def test_max_iterations_is_enough_when_the_last_call_answers(self) -> None:
        call = ToolCall("lookup", {"key": "k"}, "1")
        rt = FixedRuntime(tools_reply(call), tools_reply(call), "done")
        assert rt.exec("x", tools=[lookup], max_iterations=3) == "done"

    @pytest.mark.parametrize(
        ("value", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError)]
    )
    def test_max_iterations_is_validated_before_any_call(
        self, value: Any, error: type[Exception]
    ) -> None:
        rt = FixedRuntime()
        with pytest.raises(error):
            rt.exec("x", max_iterations=value)
        assert rt.requests == []

    def test_tool_spec(self) -> None:
        spec, _ = tool_spec(add)
        assert (spec.name, spec.description, spec.function) == ("add", "Add two numbers.", add)
        assert spec.parameters == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a"],
        }

    def test_tool_spec_objects_can_be_offered(self) -> None:
        spec = ToolSpec("find", "Find it.", {"type": "object", "properties": {}}, lookup)
        rt = FixedRuntime(tools_reply(ToolCall("find", {"key": "z"}, "1")), "done")
        rt.exec("x", tools=[spec])
        assert rt.requests[0].tools == (spec,)
        assert rt.requests[1].prompt == "value of z"


class TestToolsets:
    def test_default_toolset_is_offered_without_tools_or_toolset(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup])
        rt.exec("x")
        assert rt.requests[0].tool_names == ["lookup"]

    def test_named_toolset(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup], toolsets={"math": [add]})
        rt.exec("x", toolset="math")
        assert rt.requests[0].tool_names == ["add"]

    def test_none_offers_nothing(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup], toolsets={"math": [add]})
        rt.exec("x", toolset="none")
        assert rt.requests[0].tools == ()

    def test_explicit_tools_replace_the_default_toolset(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup])
        rt.exec("x", tools=[add])
        assert rt.requests[0].tool_names == ["add"]

    def test_toolset_plus_tools(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup])
        rt.exec("x", toolset="default", tools=[add])
        assert rt.requests[0].tool_names == ["lookup", "add"]

    def test_unknown_toolset_fails_before_any_call(self) -> None:
        rt = FixedRuntime(toolsets={"math": [add]})
        with pytest.raises(ValueError, match=r"^Unknown toolset 'web'") as info:
            rt.exec("x", toolset="web")
        assert str(info.value) == (
            "Unknown toolset 'web'; registered toolsets: ['default', 'math', 'none']"
        )
        assert rt.requests == []

    def test_none_cannot_be_registered(self) -> None:
        with pytest.raises(ValueError, match="'none' is reserved"):
            FixedRuntime(toolsets={"none": [add]})

    def test_two_different_tools_with_one_name(self) -> None:
        def other_lookup(key: str) -> str:
            return key

        other_lookup.__name__ = "lookup"
        rt = FixedRuntime()
        with pytest.raises(ValueError, match="Two different tools are named 'lookup'"):
            rt.exec("x", tools=[lookup, other_lookup])
        assert rt.requests == []

    def test_the_same_tool_twice_is_offered_once(self) -> None:
        rt = FixedRuntime("ok", tools=[lookup])
        rt.exec("x", toolset="default", tools=[lookup])
        assert rt.requests[0].tool_names == ["lookup"]


class TestTrace:
    def test_turn_tool_rounds_and_repick_form_a_chain(self) -> None:
        rt = FixedRuntime(
            tools_reply(ToolCall("lookup", {"key": "k"}, "1")),
            ModelReply(text="no pick", usage=Usage(10, 2, 12)),
            ModelReply(text=pick("a"), usage=Usage(5, 1, 6)),
        )
        assert rt.exec("x", tools=[lookup], choices=OPTIONS) == "A"
        calls = rt.trace.calls
        assert [(c.id, c.kind, c.parent) for c in calls] == [
            (0, "turn", None),
            (1, "tool_round", 0),
            (2, "repick", 1),
        ]
        assert [c.reply_text for c in calls] == ["", "no pick", pick("a")]
        assert calls[2].menu == MENU
        assert calls[2].options == ["a", "b"]
        assert calls[0].tools == ["lookup"]
        assert calls[2].tools == []
        assert calls[0].blocks == rt.requests[0].blocks
        assert calls[1].prompt == "value of k"
        assert rt.trace.usage == Usage(15, 3, 18)
        assert calls[1].usage == Usage(10, 2, 12)
        assert all(isinstance(c.duration_s, float) and c.duration_s >= 0 for c in calls)
        assert all(c.error is None for c in calls)
        assert [c.id for c in rt.trace.children(1)] == [2]
        assert len(rt.trace) == 3

    def test_make_and_its_repick(self) -> None:
        rt = FixedRuntime("bad", "bad again", pick("a"))
        decision.make("Pick.", OPTIONS, runtime=rt, max_retries=2)
        assert [(c.id, c.kind, c.parent) for c in rt.trace] == [
            (0, "turn", None),
            (1, "repick", 0),
            (2, "repick", 1),
        ]

    def test_decision_inside_a_tool_hangs_off_the_call_that_asked_for_the_tool(self) -> None:
        rt = FixedRuntime()

        def choose() -> str:
            result: str = decision.make("Inner.", OPTIONS, runtime=rt)
            return result

        rt.replies.extend([tools_reply(ToolCall("choose", {}, "1")), pick("b"), "done"])
        assert rt.exec("x", tools=[choose]) == "done"
        # ids are given when a call starts: the inner decision (1) runs during round 0's tools.
        assert {c.id: (c.kind, c.parent) for c in rt.trace} == {
            0: ("turn", None),
            1: ("turn", 0),
            2: ("tool_round", 0),
        }
        assert rt.requests[2].prompt == "B"

    def test_decision_inside_a_picked_function_hangs_off_the_accepted_call(self) -> None:
        rt = FixedRuntime()

        def outer() -> Any:
            return decision.make("Inner.", OPTIONS, runtime=rt)

        rt.replies.extend(["bad", pick("outer"), pick("a")])
        assert decision.make("Outer.", {"outer": outer}, runtime=rt) == "A"
        assert [(c.id, c.kind, c.parent) for c in rt.trace] == [
            (0, "turn", None),
            (1, "repick", 0),
            (2, "turn", 1),
        ]

    def test_parent_ids_never_point_into_another_runtimes_trace(self) -> None:
        inner = FixedRuntime("warm-up reply", pick("a"), pick("b"))
        inner.exec("warm up")  # inner's call 0, unrelated to what follows

        def choose() -> str:
            result: str = decision.make("Inner.", OPTIONS, runtime=inner)
            return result

        outer = FixedRuntime(
            tools_reply(ToolCall("choose", {}, "1")),
            tools_reply(ToolCall("choose", {}, "2")),
            "done",
        )
        assert outer.exec("x", tools=[choose]) == "done"
        assert [(c.id, c.kind) for c in inner.trace] == [(0, "turn"), (1, "turn"), (2, "turn")]
        # The inner decisions follow from calls of *another* runtime: nothing in this trace.
        assert [c.parent for c in inner.trace] == [None, None, None]

    def test_parse_args_repick_has_no_parent(self) -> None:
        rt = FixedRuntime(pick("a"))
        decision.parse_args("bad", OPTIONS, rt)
        assert [(c.kind, c.parent) for c in rt.trace] == [("repick", None)]

    def test_failed_call_is_recorded_and_raises(self) -> None:
        class Down(Runtime):
            def call_model(self, request: ModelRequest) -> ModelReply:
                raise ConnectionError("backend down")

        rt = Down()
        with pytest.raises(ConnectionError, match="backend down"):
            rt.exec("x")
        (record,) = rt.trace.calls
        assert record.reply is None
        assert record.reply_text is None
        assert isinstance(record.error, ConnectionError)
        assert record.usage == Usage()

    def test_ids_stay_unique_under_threads(self) -> None:
        rt = FixedRuntime(*[pick("a")] * 16)
        barrier = threading.Barrier(4)

        def work() -> None:
            barrier.wait(timeout=10)
            for _ in range(4):
                decision.make("Pick.", OPTIONS, runtime=rt)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(c.id for c in rt.trace) == list(range(16))
        assert all(c.parent is None for c in rt.trace)

    def test_each_runtime_has_its_own_trace(self) -> None:
        one, two = FixedRuntime("a"), FixedRuntime("b", "c")
        one.exec("x")
        two.exec("x")
        two.exec("y")
        assert (len(one.trace), len(two.trace)) == (1, 2)
        assert [c.id for c in two.trace] == [0, 1]

    def test_clear(self) -> None:
        rt = FixedRuntime("a")
        rt.exec("x")
        rt.trace.clear()
        assert len(rt.trace) == 0
        assert rt.trace.calls == []
        assert isinstance(rt.trace, CallTrace)


class TestAsync:
    async def test_exec_async(self) -> None:
        rt = FixedRuntime("text")
        assert await rt.exec_async("x") == "text"

    async def test_exec_async_with_choices_and_async_tools_and_options(self) -> None:
        async def fetch(key: str) -> str:
            await asyncio.sleep(0)
            return f"fetched {key}"

        async def finish(n: int) -> int:
            await asyncio.sleep(0)
            return n * 2

        rt = FixedRuntime(
            tools_reply(ToolCall("fetch", {"key": "k"}, "1")), "bad", pick("finish", n=4)
        )
        assert await rt.exec_async("x", tools=[fetch], choices={"finish": finish}) == 8
        assert rt.requests[1].prompt == "fetched k"
        assert [r.kind for r in rt.requests] == ["turn", "tool_round", "repick"]

    async def test_make_async_awaits_async_options(self) -> None:
        async def finish() -> str:
            return "async done"

        rt = FixedRuntime(pick("finish"))
        assert await decision.make_async("Pick.", {"finish": finish}, runtime=rt) == "async done"

    async def test_parse_and_resolve_async(self) -> None:
        rt = FixedRuntime(pick("a"), pick("b"))
        assert await decision.parse_args_async("bad", OPTIONS, rt) == ("a", {})
        assert await decision.resolve_decision_async("bad", OPTIONS, rt) == "B"

    async def test_make_async_raises_decision_error(self) -> None:
        rt = FixedRuntime("bad", "bad")
        with pytest.raises(DecisionError):
            await decision.make_async("Pick.", OPTIONS, runtime=rt)

    async def test_make_async_without_runtime(self) -> None:
        with pytest.raises(RuntimeError, match=r"^no runtime available"):
            await decision.make_async("Pick.", OPTIONS)

    def test_async_option_on_sync_exec_fails_before_any_call(self) -> None:
        async def finish() -> None:
            pass

        rt = FixedRuntime()
        with pytest.raises(TypeError) as info:
            rt.exec("x", choices={"finish": finish})
        assert str(info.value) == (
            "Option 'finish' is an async function; use exec_async (or a sync function)"
        )
        assert rt.requests == []

    def test_async_option_on_sync_resolve_decision(self) -> None:
        async def finish() -> None:
            pass

        with pytest.raises(TypeError, match=r"use decision\.resolve_decision_async"):
            decision.resolve_decision(pick("finish"), {"finish": finish})

    def test_awaitable_returned_on_the_sync_path(self) -> None:
        async def inner() -> None:
            pass

        def sneaky() -> Any:
            return inner()

        rt = FixedRuntime(tools_reply(ToolCall("sneaky", {}, "1")), "done")
        with pytest.raises(TypeError, match="returned an awaitable on the sync path"):
            rt.exec("x", tools=[sneaky])

    def test_async_only_runtime_from_sync_code(self) -> None:
        rt = AsyncOnlyRuntime("bad", pick("a"))
        assert decision.make("Pick.", OPTIONS, runtime=rt) == "A"
        assert rt.awaited == 2
        assert [c.kind for c in rt.trace] == ["turn", "repick"]

    async def test_async_only_runtime_from_async_code(self) -> None:
        rt = AsyncOnlyRuntime("text")
        assert await rt.exec_async("x") == "text"
        assert rt.awaited == 1

    async def test_async_only_runtime_from_sync_code_inside_a_loop(self) -> None:
        rt = AsyncOnlyRuntime("text")
        with pytest.raises(RuntimeError) as info:
            rt.exec("x")
        assert str(info.value) == (
            "AsyncOnlyRuntime implements only call_model_async and an event loop is running: "
            "use the async API (exec_async, decision.make_async, agent_async)"
        )

    async def test_sync_only_runtime_from_async_code_runs_in_a_worker_thread(self) -> None:
        rt = SyncOnlyRuntime("text", pick("b"))
        assert await rt.exec_async("x") == "text"
        assert await decision.make_async("Pick.", OPTIONS, runtime=rt) == "B"
        assert len(rt.threads) == 2
        assert threading.get_ident() not in rt.threads

    def test_runtime_with_no_model_call(self) -> None:
        class Nothing(Runtime):
            pass

        with pytest.raises(NotImplementedError, match="must implement call_model"):
            Nothing().exec("x")

    async def test_runtime_with_no_model_call_async(self) -> None:
        class Nothing(Runtime):
            pass

        with pytest.raises(NotImplementedError, match="must implement call_model"):
            await Nothing().exec_async("x")

    async def test_concurrent_decisions_on_one_runtime_keep_their_own_chains(self) -> None:
        gate = asyncio.Event()

        class Gated(Runtime):
            async def call_model_async(self, request: ModelRequest) -> ModelReply:
                await gate.wait()
                return ModelReply(text=pick("a") if "First" in request.prompt else pick("b"))

        rt = Gated()
        first = asyncio.create_task(decision.make_async("First.", OPTIONS, runtime=rt))
        second = asyncio.create_task(decision.make_async("Second.", OPTIONS, runtime=rt))
        await asyncio.sleep(0)
        gate.set()
        assert list(await asyncio.gather(first, second)) == ["A", "B"]
        assert sorted(c.id for c in rt.trace) == [0, 1]
        assert all(c.parent is None for c in rt.trace)
