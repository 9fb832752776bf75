"""Any runtime: an object with only ``exec`` (the reference's contract), OpenProgram's shape, a
class inheriting from both, and the adapter that gives them calls, the trace and recordings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from fake_runtimes import ScriptedRuntime
from pytest_opdecide import (
    Agent,
    ExecRuntime,
    ModelReply,
    ModelRequest,
    Runtime,
    agent,
    agent_async,
    as_runtime,
    current_runtime,
    decision,
    use_runtime,
)
from pytest_opdecide.decision import DECISION_FINISH_INSTRUCTION
from pytest_opdecide.recording import RecordingRuntime

OPTIONS = {"done": ("DONE", "Pick when finished."), "more": "MORE"}
MENU = decision.render_options(OPTIONS)


class OnlyExec:
    """A runtime as the reference defines one: exec(content=[...], timeout_s=...) -> text."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.received: list[dict[str, Any]] = []

    def exec(self, content: list[dict[str, Any]], timeout_s: float | None = None) -> str:
        self.received.append({"content": content, "timeout_s": timeout_s})
        return self.replies.pop(0)


class AsyncExec:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.received: list[Any] = []

    async def exec(self, content: list[dict[str, Any]]) -> str:
        await asyncio.sleep(0)
        self.received.append(content)
        return self.replies.pop(0)


class OpenProgramShaped:
    """The shape of OpenProgram's ``Runtime``: a public ``exec`` and an ``async_exec``, and a
    private ``_call(content, model, response_format)`` that subclasses override."""

    def __init__(self, *replies: str, model: str = "default") -> None:
        self.model = model
        self.replies = list(replies)
        self.private_calls: list[tuple[Any, Any, Any]] = []

    def exec(
        self,
        content: list[dict[str, Any]],
        context: str | None = None,
        response_format: dict[str, Any] | None = None,
        model: str | None = None,
        tools: list[Any] | None = None,
        toolset: str | None = None,
        max_iterations: int = 20,
        choices: Any = None,
    ) -> Any:
        if choices is not None:
            raise AssertionError("the library resolves choices itself; it never passes them")
        return self._call(content, model=model or self.model, response_format=response_format)

    async def async_exec(
        self,
        content: list[dict[str, Any]],
        context: str | None = None,
        response_format: dict[str, Any] | None = None,
        model: str | None = None,
    ) -> str:
        result: str = self._call(content, model=model or self.model, response_format=None)
        return result

    def _call(
        self, content: list[dict[str, Any]], model: str = "default", response_format: Any = None
    ) -> str:
        self.private_calls.append((content, model, response_format))
        return self.replies.pop(0)


def text_of(content: list[dict[str, Any]]) -> str:
    return "".join(block["text"] for block in content)


class TestOnlyExec:
    def test_decision_make_sends_one_content_list_per_model_call(self) -> None:
        runtime = OnlyExec('{"call": "done"}')
        assert decision.make("Finished?", OPTIONS, runtime=runtime) == "DONE"
        assert runtime.received == [
            {"content": [{"type": "text", "text": f"Finished?\n\n{MENU}"}], "timeout_s": None}
        ]

    def test_the_calls_are_in_the_trace_of_its_adapter(self) -> None:
        runtime = OnlyExec("no idea", '{"call": "more"}')
        assert decision.make("Finished?", OPTIONS, runtime=runtime) == "MORE"
        calls = as_runtime(runtime).calls
        assert [c.kind for c in calls] == ["turn", "repick"]
        assert calls[1].parent == calls[0].id
        assert as_runtime(runtime).last_call.options == ["done", "more"]
        assert calls[0].menu == MENU
        assert calls[1].reply is not None
        assert calls[1].reply.text == '{"call": "more"}'
        assert text_of(runtime.received[1]["content"]).startswith("Previous reply:\nno idea\n")

    def test_every_adapter_of_one_object_shares_its_trace(self) -> None:
        runtime = OnlyExec('{"call": "done"}', '{"call": "more"}')
        decision.make("One.", OPTIONS, runtime=runtime)
        decision.make("Two.", OPTIONS, runtime=ExecRuntime(runtime))
        assert as_runtime(runtime) is as_runtime(runtime)
        assert [c.prompt.split("\n")[0] for c in ExecRuntime(runtime).calls] == ["One.", "Two."]

    def test_resolve_decision_needs_no_call_for_a_valid_reply(self) -> None:
        runtime = OnlyExec()
        assert decision.resolve_decision('{"call": "done"}', OPTIONS, runtime=runtime) == "DONE"
        assert runtime.received == []

    def test_resolve_decision_and_parse_args_re_pick_through_it(self) -> None:
        runtime = OnlyExec('{"call": "done"}', '{"call": "more"}')
        assert decision.resolve_decision("hmm", OPTIONS, runtime=runtime) == "DONE"
        assert decision.parse_args("hmm", OPTIONS, runtime=runtime) == ("more", {})
        assert [c.kind for c in as_runtime(runtime).calls] == ["repick", "repick"]

    def test_agent_with_choices_splices_the_finish_instruction_and_menu(self) -> None:
        runtime = OnlyExec('Done. {"call": "done"}')
        assert agent("Close the ticket.", choices=OPTIONS, runtime=runtime) == "DONE"
        (sent,) = runtime.received
        assert sent["content"] == [
            {"type": "text", "text": "Close the ticket."},
            {"type": "text", "text": DECISION_FINISH_INSTRUCTION + MENU},
        ]

    def test_an_agent_and_use_runtime_bind_it(self) -> None:
        class Desk(Agent):
            def close(self) -> Any:
                return decision.make("Finished?", OPTIONS)

        runtime = OnlyExec('{"call": "done"}', '{"call": "more"}')
        assert Desk(runtime=runtime).close() == "DONE"
        with use_runtime(runtime):
            assert current_runtime() is runtime
            assert Desk().close() == "MORE"
        assert len(as_runtime(runtime).calls) == 2

    def test_a_timeout_is_passed_only_when_exec_takes_one(self) -> None:
        runtime = OnlyExec('{"call": "done"}')
        assert agent("Go.", choices=OPTIONS, runtime=runtime, timeout_s=7.5) == "DONE"
        assert runtime.received[0]["timeout_s"] == 7.5

        class ContentOnly:
            def exec(self, content: list[dict[str, Any]]) -> str:
                return '{"call": "done"}'

        assert agent("Go.", choices=OPTIONS, runtime=ContentOnly(), timeout_s=7.5) == "DONE"

    def test_keyword_catch_all_gets_every_keyword_and_a_model_when_asked(self) -> None:
        seen: list[dict[str, Any]] = []

        class Loose:
            def exec(self, **kwargs: Any) -> str:
                seen.append(kwargs)
                return "plain text"

        assert agent("Hi.", runtime=Loose(), timeout_s=3, model="m-1") == "plain text"
        assert seen == [
            {"content": [{"type": "text", "text": "Hi."}], "timeout_s": 3, "model": "m-1"}
        ]

    def test_content_goes_by_position_when_exec_names_it_otherwise(self) -> None:
        class Positional:
            def exec(self, blocks: list[dict[str, Any]], /) -> str:
                return '{"call": "more"}' if blocks[0]["text"].startswith("Next") else "?"

        assert decision.make("Next?", OPTIONS, runtime=Positional()) == "MORE"

    def test_a_function_option_receives_the_object_itself_as_its_runtime(self) -> None:
        runtime = OnlyExec('{"call": "who"}')

        def who(runtime: Any) -> Any:
            return runtime

        assert decision.make("Who?", {"who": who}, runtime=runtime) is runtime

    def test_a_decision_made_inside_an_option_is_a_child_call(self) -> None:
        runtime = OnlyExec('{"call": "outer"}', '{"call": "done"}')

        def outer(runtime: Any) -> Any:
            return decision.make("Inner?", OPTIONS, runtime=runtime)

        assert decision.make("Outer?", {"outer": outer}, runtime=runtime) == "DONE"
        first, second = as_runtime(runtime).calls
        assert second.parent == first.id

    def test_exec_returning_something_else_than_text_is_a_clear_error(self) -> None:
        class Structured:
            def exec(self, content: Any) -> Any:
                return {"call": "done"}

        runtime = Structured()
        with pytest.raises(TypeError) as info:
            decision.make("Go.", OPTIONS, runtime=runtime)
        assert str(info.value) == (
            "Structured.exec returned dict {'call': 'done'}: a runtime's exec must return the "
            "model's reply as a str"
        )
        assert isinstance(as_runtime(runtime).last_call.error, TypeError)

    def test_tools_go_to_an_exec_that_takes_them_and_are_refused_otherwise(self) -> None:
        def lookup(key: str) -> str:
            """Look a key up."""
            return key

        received: list[Any] = []

        class WithTools:
            def exec(self, content: Any, tools: list[Any] | None = None) -> str:
                received.append(tools)
                return "looked it up"

        assert agent("Find it.", tools=[lookup], runtime=WithTools()) == "looked it up"
        assert received == [[lookup]]
        with pytest.raises(TypeError) as info:
            agent("Find it.", tools=[lookup], runtime=OnlyExec("x"))
        assert str(info.value) == (
            "OnlyExec.exec takes no tools, but this call offers the tools ['lookup']: pass "
            "toolset='none' (or no tools) to this call, or use a runtime whose exec takes "
            "tools=[...]"
        )

    def test_exec_taking_no_content_is_refused(self) -> None:
        class NoContent:
            def exec(self) -> str:
                return ""

        with pytest.raises(TypeError, match=r"NoContent.exec takes no content: a runtime's exec"):
            decision.make("Go.", OPTIONS, runtime=NoContent())

    def test_a_recording_of_it_replays_as_a_scripted_fake(self, tmp_path: Path) -> None:
        path = tmp_path / "route.yaml"
        recording = RecordingRuntime(OnlyExec("no pick", '{"call": "more"}'), path)
        assert decision.make("Finished?", OPTIONS, runtime=recording) == "MORE"
        replay = ScriptedRuntime.from_recording(path)
        assert decision.make("Finished?", OPTIONS, runtime=replay) == "MORE"
        assert [c.kind for c in replay.calls] == ["turn", "repick"]


class TestAsync:
    async def test_an_async_exec_serves_the_async_twins(self) -> None:
        runtime = AsyncExec('{"call": "done"}', '{"call": "more"}', 'ok {"call": "done"}')
        assert await decision.make_async("Finished?", OPTIONS, runtime=runtime) == "DONE"
        assert await decision.resolve_decision_async("?", OPTIONS, runtime=runtime) == "MORE"
        assert await agent_async("Go.", choices=OPTIONS, runtime=runtime) == "DONE"
        assert [c.kind for c in as_runtime(runtime).calls] == ["turn", "repick", "turn"]

    async def test_exec_async_and_async_exec_are_its_twins(self) -> None:
        class Twins:
            def exec(self, content: Any) -> str:
                return '{"call": "done"}'

            async def exec_async(self, content: Any) -> str:
                return '{"call": "more"}'

        assert await decision.make_async("?", OPTIONS, runtime=Twins()) == "MORE"
        assert decision.make("?", OPTIONS, runtime=Twins()) == "DONE"
        shaped = OpenProgramShaped('{"call": "more"}')
        assert await decision.make_async("?", OPTIONS, runtime=shaped) == "MORE"

    async def test_a_sync_exec_runs_in_a_worker_thread_on_the_async_path(self) -> None:
        runtime = OnlyExec('{"call": "more"}')
        assert await decision.make_async("?", OPTIONS, runtime=runtime) == "MORE"

    def test_an_async_exec_serves_the_sync_api_when_no_loop_runs(self) -> None:
        assert decision.make("?", OPTIONS, runtime=AsyncExec('{"call": "done"}')) == "DONE"

    async def test_an_async_exec_on_the_sync_api_inside_a_loop_says_what_to_use(self) -> None:
        with pytest.raises(RuntimeError) as info:
            decision.make("?", OPTIONS, runtime=AsyncExec('{"call": "done"}'))
        assert str(info.value) == (
            "AsyncExec has only an async exec and an event loop is running: use the async API "
            "(decision.make_async, agent_async, exec_async)"
        )


class TestOpenProgramShape:
    def test_passed_in_its_own_private_call_makes_each_model_call(self) -> None:
        runtime = OpenProgramShaped("no pick", '{"call": "done"}')
        assert decision.make("Finished?", OPTIONS, runtime=runtime) == "DONE"
        assert agent("Go.", choices=OPTIONS, runtime=OpenProgramShaped('{"call": "more"}')) == (
            "MORE"
        )
        (first, model, response_format), (second, _, repick_format) = runtime.private_calls
        assert first == [{"type": "text", "text": f"Finished?\n\n{MENU}"}]
        # Its exec names response_format: a decision call gets the menu's schema there.
        schema = decision.response_schema(OPTIONS)
        structured = {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema}}
        assert (model, response_format, repick_format) == ("default", structured, structured)
        assert text_of(second).startswith("Previous reply:\nno pick\n")
        assert [c.kind for c in as_runtime(runtime).calls] == ["turn", "repick"]

    def test_a_class_inheriting_from_both_is_driven_through_call_model(self) -> None:
        class Both(OpenProgramShaped, Runtime):
            """OpenProgram's base first, whose __init__ does not call super().__init__()."""

            def call_model(self, request: ModelRequest) -> ModelReply:
                return ModelReply(text='{"call": "done"}')

        both = Both("from OpenProgram's own path")
        assert decision.make("Finished?", OPTIONS, runtime=both) == "DONE"
        assert both.private_calls == []  # the library never reached OpenProgram's _call
        assert [c.kind for c in both.calls] == ["turn"]
        # ...and OpenProgram's own code still reaches its _call, not the library's hook.
        assert both.exec([{"type": "text", "text": "hi"}]) == "from OpenProgram's own path"
        assert both.private_calls == [([{"type": "text", "text": "hi"}], "default", None)]

    def test_our_base_first_leaves_their_private_call_theirs(self) -> None:
        class Both(Runtime, OpenProgramShaped):
            def __init__(self) -> None:
                Runtime.__init__(self)
                OpenProgramShaped.__init__(self, "from OpenProgram's own path")

            def call_model(self, request: ModelRequest) -> ModelReply:
                return ModelReply(text='{"call": "more"}')

        both = Both()
        assert decision.make("Finished?", OPTIONS, runtime=both) == "MORE"
        assert both._call([], model="m") == "from OpenProgram's own path"
        assert agent("Go.", choices=OPTIONS, runtime=both) == "MORE"

    def test_inheriting_from_both_without_a_model_call_goes_through_its_exec(self) -> None:
        class Both(OpenProgramShaped, Runtime):
            pass

        both = Both('{"call": "more"}')
        assert decision.make("Finished?", OPTIONS, runtime=both) == "MORE"
        assert len(both.private_calls) == 1
        assert as_runtime(both) is not both
        assert [c.kind for c in as_runtime(both).calls] == ["turn"]


NOT_A_RUNTIME = (
    "A runtime makes the model calls; there are two ways to get one: subclass "
    "pytest_opdecide.Runtime and implement call_model(request), or pass any object with an "
    "exec(content=[...], **kwargs) method that returns the reply text (async: an async exec, "
    "exec_async or async_exec), which is wrapped with pytest_opdecide.as_runtime."
)


class TestNotARuntime:
    def test_a_model_name(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.make("?", OPTIONS, runtime="gpt-4o-mini")
        assert str(info.value) == (
            f"runtime= got str 'gpt-4o-mini', which is not a runtime. {NOT_A_RUNTIME} A model "
            "name is not a runtime: build one that calls the model, e.g. "
            "OpenAICompatibleRuntime(base_url, model='gpt-4o-mini') from "
            "pytest_opdecide.runtimes."
        )

    def test_a_class_instead_of_an_instance(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.make("?", OPTIONS, runtime=OnlyExec)
        assert str(info.value) == (
            "runtime= got type <class 'decision.test_any_runtime.OnlyExec'>, which is not a "
            f"runtime. {NOT_A_RUNTIME} A class is not a runtime either: pass an instance, "
            "OnlyExec(...)."
        )
        with pytest.raises(TypeError, match=r"pass an instance, ScriptedRuntime\(...\)\.$"):
            Agent(runtime=ScriptedRuntime)

    def test_the_exec_method_instead_of_its_object(self) -> None:
        runtime = OnlyExec()
        with pytest.raises(TypeError) as info:
            decision.make("?", OPTIONS, runtime=runtime.exec)
        assert str(info.value).startswith("runtime= got method <bound method OnlyExec.exec")
        assert str(info.value).endswith(
            f"which is not a runtime. {NOT_A_RUNTIME} This is the bound exec method of OnlyExec: "
            "pass the OnlyExec object itself, not its exec method."
        )

    def test_a_function(self) -> None:
        def ask_the_model(content: Any, **kwargs: Any) -> str:
            return '{"call": "a"}'

        with pytest.raises(TypeError) as info:
            decision.make("?", OPTIONS, runtime=ask_the_model)
        assert str(info.value).endswith(
            f"which is not a runtime. {NOT_A_RUNTIME} A function is not a runtime: wrap it in an "
            "object with an exec method, e.g. a class with def exec(self, content, **kwargs) "
            "that calls it."
        )

    @pytest.mark.parametrize(
        ("call", "start"),
        [
            (lambda: decision.make("?", OPTIONS, runtime=object()), "runtime= got object "),
            (lambda: decision.parse_args("x", OPTIONS, runtime=42), "runtime= got int 42,"),
            (lambda: decision.resolve_decision("x", OPTIONS, runtime=[]), "runtime= got list []"),
            (lambda: agent("?", runtime=3.5), "runtime= got float 3.5,"),
            (lambda: Agent(runtime=object()), "Agent(runtime=...) got object "),
            (lambda: use_runtime(7).__enter__(), "use_runtime() got int 7,"),
            (lambda: RecordingRuntime("m", "x.yaml"), "RecordingRuntime() got str 'm',"),
            (lambda: ExecRuntime(object()), "ExecRuntime() got object "),
        ],
    )
    def test_every_entry_point_says_what_a_runtime_is(self, call: Any, start: str) -> None:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value).startswith(start)
        assert f"which is not a runtime. {NOT_A_RUNTIME}" in str(info.value)


def test_a_foreign_runtime_menu_snapshot(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_snap="""
        from pytest_opdecide import as_runtime, decision

        class Model:
            def exec(self, content, timeout_s=None):
                return '{"call": "done"}'

        def test_menu(menu_snapshot):
            model = Model()
            decision.make("Finished?", {"done": "DONE", "more": "MORE"}, runtime=model)
            menu_snapshot.assert_match(as_runtime(model).last_call.menu)
        """
    )
    pytester.runpytest("--opdecide-update-snapshots").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(passed=1)
    stored = pytester.path / "__menus__" / "test_snap" / "test_menu.txt"
    assert stored.read_text() == (
        'done()\n    Call: {"call": "done"}\n\nmore()\n    Call: {"call": "more"}\n'
    )


def test_the_reply_text_of_an_exec_is_sent_unchanged_to_the_parser() -> None:
    reply = 'I will pick.\n```json\n{"call": "done"}\n```'
    runtime = OnlyExec(reply)
    decision.make("?", OPTIONS, runtime=runtime)
    record = as_runtime(runtime).last_call
    assert record.reply is not None
    assert record.reply.text == reply
    assert json.loads(record.reply.text.split("```json\n")[1].split("\n```")[0]) == {"call": "done"}


def test_the_runtime_hook_may_return_an_object_with_exec(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPDECIDE_LIVE_URL", raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(
        """
        class Model:
            def exec(self, content, timeout_s=None):
                return '{"call": "done"}'

        def pytest_opdecide_runtime(request, settings):
            return Model()
        """
    )
    pytester.makepyfile(
        """
        import pytest
        from pytest_opdecide import ExecRuntime, decision

        @pytest.mark.opdecide(cassette=True)
        def test_live(runtime):
            assert isinstance(runtime, ExecRuntime)
            assert decision.make("?", {"done": "DONE", "more": "MORE"}) == "DONE"
            assert [call.kind for call in runtime.calls] == ["turn"]
        """
    )
    pytester.runpytest("--opdecide-live").assert_outcomes(passed=1)


class TakesAFormat:
    """An exec that names ``response_format``; it records what it got."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.formats: list[Any] = []

    def exec(
        self,
        content: list[dict[str, Any]],
        response_format: dict[str, Any] | None = None,
        tools: list[Any] | None = None,
    ) -> str:
        self.formats.append(response_format)
        return self.replies.pop(0)


class TakesKeywords:
    """An exec that takes ``**kwargs``: it may hand them on to code that knows no format."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.keywords: list[dict[str, Any]] = []

    def exec(self, content: list[dict[str, Any]], **kwargs: Any) -> str:
        self.keywords.append(kwargs)
        return self.replies.pop(0)


STRUCTURED = {
    "type": "json_schema",
    "json_schema": {"name": "decision", "schema": decision.response_schema(OPTIONS)},
}


class TestStructuredDecisions:
    def test_an_exec_that_names_response_format_gets_the_schema_on_decisions(self) -> None:
        model = TakesAFormat("no pick", '{"call": "done"}', "plain text")
        assert decision.make("Finished?", OPTIONS, runtime=model) == "DONE"
        assert as_runtime(model).exec("Say something.") == "plain text"
        assert model.formats == [STRUCTURED, STRUCTURED, None]

    def test_the_callers_response_format_comes_first(self) -> None:
        model = TakesAFormat('{"call": "more"}', "{}")
        runtime = as_runtime(model)
        own = {"type": "json_object"}
        assert runtime.exec("Pick.", choices=OPTIONS, response_format=own) == "MORE"
        assert runtime.exec("JSON please.", response_format=own) == "{}"
        assert model.formats == [own, own]

    def test_not_on_a_turn_that_offers_tools(self) -> None:
        def look(order: str) -> str:
            """Look an order up."""
            return order

        model = TakesAFormat('{"call": "done"}')
        assert agent("Work, then pick.", choices=OPTIONS, tools=[look], runtime=model) == "DONE"
        assert model.formats == [None]
        assert as_runtime(model).last_call.response_schema == decision.response_schema(OPTIONS)

    def test_never_when_the_adapter_says_so(self) -> None:
        model = TakesAFormat('{"call": "done"}')
        runtime = ExecRuntime(model, structured_decisions="never")
        assert decision.make("Finished?", OPTIONS, runtime=runtime) == "DONE"
        assert model.formats == [None]
        assert runtime.structured_decisions == "never"

    def test_an_exec_taking_only_keywords_gets_none(self) -> None:
        model = TakesKeywords('{"call": "done"}')
        assert decision.make("Finished?", OPTIONS, runtime=model) == "DONE"
        assert model.keywords == [{}]

    def test_the_reference_shape_gets_none(self) -> None:
        model = OnlyExec('{"call": "done"}')
        assert decision.make("Finished?", OPTIONS, runtime=model) == "DONE"
        assert model.received == [
            {"content": [{"type": "text", "text": f"Finished?\n\n{MENU}"}], "timeout_s": None}
        ]

    @pytest.mark.parametrize("value", ["always", "sometimes", None])
    def test_a_bad_setting_is_refused(self, value: Any) -> None:
        with pytest.raises(ValueError, match="structured_decisions") as caught:
            ExecRuntime(TakesAFormat(), structured_decisions=value)
        assert str(caught.value) == (
            f"structured_decisions of an ExecRuntime must be 'auto' or 'never', got {value!r}"
        )
