"""Edges found in review: tool-loop limits, tool/toolset conflicts, layout, hidden parameters."""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pytest

from pytest_opdecide import ModelReply, ToolCall, ToolLoopError, decision

from ._support import FixedRuntime


def tools_reply(*calls: ToolCall) -> ModelReply:
    return ModelReply(tool_calls=calls)


class TestToolLoopLimit:
    def test_tools_of_the_last_allowed_round_do_not_run(self) -> None:
        ran: list[str] = []

        def probe(tag: str) -> str:
            """Record that the tool ran."""
            ran.append(tag)
            return "ok"

        rt = FixedRuntime(
            tools_reply(ToolCall("probe", {"tag": "first"}, "1")),
            tools_reply(ToolCall("probe", {"tag": "second"}, "2")),
        )
        with pytest.raises(ToolLoopError, match="max_iterations=2"):
            rt.exec("go", tools=[probe], max_iterations=2)
        # The second round's results could never reach the model, so its tool never ran.
        assert ran == ["first"]
        assert len(rt.trace) == 2


class TestToolsetConflicts:
    def test_toolset_none_with_explicit_tools_is_an_error_before_any_call(self) -> None:
        def probe() -> str:
            """Probe."""
            return "ok"

        rt = FixedRuntime()
        with pytest.raises(ValueError, match="toolset='none' offers no tools"):
            rt.exec("go", tools=[probe], toolset="none")
        assert len(rt.trace) == 0


class TestDescriptions:
    def test_a_multi_line_description_keeps_the_menu_layout(self) -> None:
        text = decision.render_options({"done": ("DONE", "First line.\nSecond line.")})
        assert text == ('done()\n    First line.\n    Second line.\n    Call: {"call": "done"}\n')


class TestMetaSpecWithoutType:
    def test_options_alone_give_the_type(self) -> None:
        options = {"o": ("D.", {"level": {"description": "1-3", "options": [1, 2, 3]}})}
        assert "o(level: int)" in decision.render_options(options)
        assert decision.parse_args('{"call": "o", "args": {"level": 2}}', options) == (
            "o",
            {"level": 2},
        )


class Node(TypedDict):
    name: str
    children: NotRequired[list[Node]]


class TestRecursiveTypes:
    def test_a_recursive_typed_dict_renders_once_and_keeps_nested_values(self) -> None:
        def walk(tree: Node) -> Node:
            return tree

        text = decision.render_options({"walk": walk})
        assert (
            'Call: {"call": "walk", "args": {"tree": {"name": "<str>", "children": [{}]}}}' in text
        )
        tree = {"name": "root", "children": [{"name": "leaf", "children": []}]}
        reply = '{"call": "walk", "args": {"tree": ' + __import__("json").dumps(tree) + "}}"
        assert decision.resolve_decision(reply, {"walk": walk}) == tree


class TestUnresolvableHiddenParameters:
    def test_a_context_parameter_whose_annotation_cannot_resolve_is_refused(self) -> None:
        namespace: dict[str, object] = {}
        exec(  # a module whose annotations name things it never imports
            "from __future__ import annotations\n"
            "def refund(amount: float, order_id: Annotated[str, FromContext()]) -> str:\n"
            "    return order_id\n",
            namespace,
        )
        with pytest.raises(TypeError, match="hidden parameters stay hidden"):
            decision.render_options({"refund": namespace["refund"]})
