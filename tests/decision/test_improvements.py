"""The ten places where the library is deliberately better than the reference (one class each)."""

from __future__ import annotations

import json
import random
from typing import Annotated, Any, ClassVar

import pytest

from pytest_opdecide import (
    Agent,
    DecisionError,
    FromContext,
    ModelReply,
    Runtime,
    ToolCall,
    agent,
    decision,
)

from ._support import FixedRuntime, pick


def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"


def count(n: int) -> int:
    return n


OPTIONS: dict[str, Any] = {"greet": greet, "count": count, "a": "A", "b": "B"}


def parse(reply: Any, options: Any = None, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    return decision.parse_args(
        reply, OPTIONS if options is None else options, max_retries=0, **kwargs
    )


def kind_of(reply: Any, options: Any = None) -> str:
    with pytest.raises(DecisionError) as info:
        parse(reply, options)
    return info.value.kind


class TestImprovement1LastPickWins:
    def test_two_bare_picks(self) -> None:
        assert parse('{"call": "a"} ... actually, no: {"call": "b"}') == ("b", {})

    def test_fenced_pick_then_bare_pick(self) -> None:
        reply = 'First idea:\n```json\n{"call": "a"}\n```\nFinal answer: {"call": "b"}'
        assert parse(reply) == ("b", {})

    def test_bare_pick_then_fenced_pick(self) -> None:
        reply = 'Maybe {"call": "a"}.\n```json\n{"call": "b"}\n```\n'
        assert parse(reply) == ("b", {})

    def test_two_fenced_picks(self) -> None:
        reply = '```json\n{"call": "a"}\n```\nno wait\n```json\n{"call": "b"}\n```'
        assert parse(reply) == ("b", {})

    def test_trailing_data_object_does_not_replace_the_pick(self) -> None:
        reply = 'Pick: {"call": "greet", "args": {"name": "ada"}}\nFor reference: {"name": "bo"}'
        assert parse(reply) == (greet, {"name": "ada"})

    def test_exec_choices_takes_the_last_pick(self) -> None:
        rt = FixedRuntime('I considered {"call": "a"} but I pick:\n{"call": "b"}')
        assert rt.exec("Work.", choices={"a": "A", "b": "B"}) == "B"

    def test_an_earlier_invalid_pick_does_not_matter(self) -> None:
        reply = '{"call": "nope"} ... corrected: {"call": "greet", "args": {"name": "ada"}}'
        assert parse(reply) == (greet, {"name": "ada"})


class TestImprovement2LinearExtraction:
    """No timing assertions: these replies would take minutes with a quadratic scanner."""

    def test_many_open_braces(self) -> None:
        assert kind_of("{" * 200_000) == "no_action"

    def test_many_open_braces_with_call_anchors(self) -> None:
        assert kind_of('{"call": ' * 50_000) == "no_action"

    def test_random_braces_quotes_and_backslashes(self) -> None:
        rng = random.Random(2)
        reply = "".join(rng.choice('{}"\\:') for _ in range(200_000))
        assert kind_of(reply) in {"no_action", "unknown_call", "bad_args"}

    def test_pick_after_a_wall_of_braces_is_found(self) -> None:
        reply = "{" * 100_000 + ' then {"call": "a"}'
        assert parse(reply) == ("a", {})

    def test_pick_before_a_wall_of_braces_is_found(self) -> None:
        reply = '{"call": "a"} then ' + "{" * 100_000
        assert parse(reply) == ("a", {})


class TestImprovement3RealTypeChecking:
    def test_string_annotations_are_checked(self) -> None:
        from . import _future_types as future

        with pytest.raises(DecisionError) as info:
            parse(pick("scalars", count="1", ratio=1, name="n", flag=True), [future.scalars])
        assert info.value.message == "Field 'count' must be int, got str ('1')"

    def test_typing_constructs_are_checked(self) -> None:
        def f(ids: list[int], tag: str | None) -> None:
            pass

        assert kind_of(pick("f", ids=["x"], tag=None), {"f": f}) == "type_mismatch"
        assert kind_of(pick("f", ids=[], tag=3), {"f": f}) == "type_mismatch"
        assert parse(pick("f", ids=[1], tag=None), {"f": f}) == (f, {"ids": [1], "tag": None})


class TestImprovement4StarArgs:
    def test_never_shown(self) -> None:
        def f(n: int, *rest: str, **extra: str) -> int:
            return n

        assert decision.render_options({"f": f}) == (
            'f(n: int)\n    n\n    Call: {"call": "f", "args": {"n": <int>}}\n'
        )

    def test_never_required(self) -> None:
        seen: list[tuple[Any, ...]] = []

        def f(*rest: Any, **extra: Any) -> str:
            seen.append((rest, extra))
            return "ran"

        assert decision.render_options({"f": f}) == 'f()\n    Call: {"call": "f"}\n'
        assert decision.resolve_decision(pick("f"), {"f": f}) == "ran"
        assert seen == [((), {})]

    def test_keyword_only_after_star_args_is_still_required(self) -> None:
        def f(*rest: Any, key: str) -> str:
            return key

        assert decision.render_options({"f": f}).startswith("f(key: str)\n")
        assert kind_of(pick("f"), {"f": f}) == "missing_required"
        assert decision.resolve_decision(pick("f", key="k"), {"f": f}) == "k"


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class _Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class _HostileStr(str):
    __slots__ = ()

    def __hash__(self) -> int:
        raise RuntimeError("no hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class TestImprovement5NoEscapingErrors:
    @pytest.mark.parametrize(
        "reply",
        [
            None,
            0,
            3.5,
            float("nan"),
            True,
            [],
            [{"call": "a"}],
            (),
            {1, 2},
            pytest.param(object(), id="object"),
            pytest.param(_Unprintable(), id="str-raises"),
            b"\xff\xfe\x00binary",
            bytearray(b"{{{"),
            {"not": "a pick"},
            pytest.param(ModelReply(text="hmm"), id="ModelReply"),
        ],
        ids=repr,
    )
    def test_non_string_replies_end_in_decision_error(self, reply: Any) -> None:
        assert kind_of(reply) == "no_action"

    def test_reply_whose_str_raises_is_reported_safely(self) -> None:
        with pytest.raises(DecisionError) as info:
            parse(_Unprintable())
        assert info.value.reply_head == "<unprintable _Unprintable>"
        assert str(info.value).endswith("Last reply head: '<unprintable _Unprintable>'")

    def test_bytes_reply_with_a_pick(self) -> None:
        assert parse(b'{"call": "a"}') == ("a", {})

    def test_dict_reply_is_taken_as_the_pick(self) -> None:
        assert parse({"call": "greet", "args": {"name": "ada"}}) == (greet, {"name": "ada"})

    @pytest.mark.parametrize(
        "reply",
        [
            '{"call": ["greet"]}',
            '{"call": {"x": 1}}',
            '{"call": null}',
            '{"call": 3}',
            '{"call": true}',
            '{"action": [[1], {"a": []}]}',
            '{"function": {"name": ["greet"]}}',
            '{"function": {"name": {"a": 1}}}',
            '{"function": {"arguments": "{}"}}',
        ],
    )
    def test_unhashable_or_odd_call_values_are_unknown_call(self, reply: str) -> None:
        assert kind_of(reply) == "unknown_call"

    def test_unhashable_call_message(self) -> None:
        with pytest.raises(DecisionError) as info:
            parse('{"call": ["greet"]}')
        assert info.value.message == (
            "Picked ['greet'], which is not an available option. "
            "Valid options: ['greet', 'count', 'a', 'b']"
        )

    def test_openai_style_pick(self) -> None:
        reply = json.dumps({"function": {"name": "count", "arguments": '{"n": 2}'}})
        assert decision.resolve_decision(reply, OPTIONS) == 2

    @pytest.mark.parametrize(
        "reply",
        [
            '{"function": {"name": "count", "arguments": "{not json"}}',
            '{"function": {"name": "count", "arguments": "[1, 2]"}}',
            '{"call": "count", "arguments": "{not json"}',
            '{"call": "count", "arguments": "7"}',
            '{"call": "count", "args": "n=1"}',
        ],
    )
    def test_bad_argument_strings_are_bad_args(self, reply: str) -> None:
        assert kind_of(reply) == "bad_args"

    def test_runtime_reply_text_that_is_not_a_string(self) -> None:
        rt = FixedRuntime(ModelReply(text=None), ModelReply(text=12))  # type: ignore[arg-type]
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        assert info.value.kind == "no_action"
        assert info.value.replies == [None, 12]

    def test_runtime_returning_bare_text_instead_of_a_model_reply(self) -> None:
        rt = FixedRuntime(pick("a"))
        assert decision.make("Pick.", OPTIONS, runtime=rt) == "A"

    def test_huge_numbers_and_infinities(self) -> None:
        assert kind_of('{"call": "count", "args": {"n": 1e400}}') == "type_mismatch"
        assert kind_of('{"call": "count", "args": {"n": NaN}}') == "no_action"
        chosen, kwargs = parse('{"call": "count", "args": {"n": ' + "9" * 4000 + "}}")
        assert (chosen, kwargs) == (count, {"n": int("9" * 4000)})

    def test_json_integer_too_long_to_convert_is_no_pick(self) -> None:
        reply = '{"call": "greet", "args": {"name": ' + "9" * 5000 + "}}"
        assert kind_of(reply) in {"type_mismatch", "no_action"}

    def test_huge_int_argument_in_a_dict_reply(self) -> None:
        assert kind_of({"call": "greet", "args": {"name": 10**5000}}) == "type_mismatch"

    def test_huge_int_call_value_in_a_dict_reply(self) -> None:
        assert kind_of({"call": 10**5000}) == "unknown_call"

    @pytest.mark.parametrize("depth", [10, 500])
    def test_deeply_nested_json_that_parses(self, depth: int) -> None:
        nested = "[" * depth + "]" * depth
        assert parse(f'{{"call": "a", "args": {{"x": {nested}}}}}') == ("a", {})

    @pytest.mark.parametrize("depth", [5_000, 50_000])
    def test_json_nested_deeper_than_the_parser_goes_is_no_pick(self, depth: int) -> None:
        nested = "[" * depth + "]" * depth
        try:
            json.loads(nested)
        except RecursionError:
            parser_goes_that_deep = False
        else:  # Python 3.13's parser takes 5,000 levels that 3.11 and 3.12 refuse
            parser_goes_that_deep = True
        if parser_goes_that_deep:
            assert parse(f'{{"call": "a", "args": {{"x": {nested}}}}}')[0] == "a"
        else:
            assert kind_of(f'{{"call": "a", "args": {{"x": {nested}}}}}') == "no_action"
        assert kind_of(f'{{"call": {nested}}}') in {"no_action", "unknown_call"}
        if not parser_goes_that_deep:
            assert kind_of(f'{{"call": {nested}}}') == "no_action"

    def test_call_value_whose_repr_raises(self) -> None:
        assert kind_of({"call": _Hostile()}) == "unknown_call"

    def test_call_value_whose_hash_raises(self) -> None:
        assert kind_of({"call": _HostileStr("a")}) in {"unknown_call", "no_action"}

    def test_argument_whose_repr_raises(self) -> None:
        assert kind_of({"call": "count", "args": {"n": _HostileStr("3")}}) == "type_mismatch"


class TestImprovement6ContextWins:
    def test_model_value_for_a_context_parameter_is_ignored(self) -> None:
        def refund(amount: float, order_id: Annotated[str, FromContext()]) -> str:
            return f"{order_id}:{amount}"

        reply = pick("refund", amount=5, order_id="EVIL")
        assert decision.resolve_decision(reply, {"refund": refund}, context={"order_id": "A1"}) == (
            "A1:5.0"
        )

    def test_model_value_for_an_optional_context_parameter_is_ignored(self) -> None:
        def f(tag: Annotated[str, FromContext()] = "default") -> str:
            return tag

        assert decision.resolve_decision(pick("f", tag="EVIL"), {"f": f}) == "default"

    def test_model_value_for_a_runtime_parameter_is_ignored(self) -> None:
        def f(runtime: Any = "default") -> Any:
            return runtime

        assert decision.resolve_decision(pick("f", runtime="EVIL"), {"f": f}) == "default"
        rt = FixedRuntime(pick("f", runtime="EVIL"))
        assert decision.make("Pick.", {"f": f}, runtime=rt) is rt

    def test_model_value_under_top_level_tolerance_is_ignored_too(self) -> None:
        def refund(order_id: Annotated[str, FromContext()]) -> str:
            return order_id

        reply = '{"call": "refund", "order_id": "EVIL"}'
        assert decision.resolve_decision(reply, {"refund": refund}, context={"order_id": "A1"}) == (
            "A1"
        )


class TestImprovement7PureDecisionIsToolFree:
    def test_make_offers_no_tools_even_with_a_default_toolset(self) -> None:
        def lookup(key: str) -> str:
            return key

        rt = FixedRuntime("no pick", pick("a"), tools=[lookup])
        assert decision.make("Pick.", OPTIONS, runtime=rt) == "A"
        assert [r.tools for r in rt.requests] == [(), ()]
        assert [r.kind for r in rt.requests] == ["turn", "repick"]

    def test_make_inside_an_agent_with_tool_methods_offers_no_tools(self) -> None:
        class Helper(Agent):
            method_options: ClassVar[dict[str, dict[str, Any]]] = {"lookup": {"tool": True}}

            def lookup(self, key: str) -> str:
                return key

            def route(self) -> Any:
                return decision.make("Pick.", OPTIONS)

        rt = FixedRuntime(pick("a"))
        assert Helper(runtime=rt).route() == "A"
        assert rt.requests[0].tools == ()

    def test_exec_without_choices_does_offer_the_default_tools(self) -> None:
        def lookup(key: str) -> str:
            return key

        rt = FixedRuntime("done", tools=[lookup])
        rt.exec("Work.")
        assert rt.requests[0].tool_names == ["lookup"]


class TestImprovement8InspectableError:
    def test_attributes(self) -> None:
        rt = FixedRuntime(pick("count", n="x"))
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt, max_retries=0)
        error = info.value
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'n' must be int, got str ('x')"
        assert error.reply_head == pick("count", n="x")
        assert error.attempts == 1
        assert error.replies == [pick("count", n="x")]
        assert error.args == (str(error),)


class TestImprovement9AgentChoices:
    def test_result_is_returned_as_is(self) -> None:
        payload = {"rows": [1, 2]}

        def fetch() -> dict[str, list[int]]:
            return payload

        rt = FixedRuntime(pick("fetch"))
        assert agent("Work.", choices={"fetch": fetch}, runtime=rt) is payload

    def test_int_result_is_not_stringified(self) -> None:
        rt = FixedRuntime(pick("count", n=7))
        assert agent("Work.", choices=OPTIONS, runtime=rt) == 7

    def test_value_option_object_returned_as_is(self) -> None:
        marker = object()
        rt = FixedRuntime(pick("m"))
        assert agent("Work.", choices={"m": marker}, runtime=rt) is marker

    def test_without_choices_returns_the_reply_text(self) -> None:
        rt = FixedRuntime('{"call": "a"}')
        assert agent("Work.", runtime=rt) == '{"call": "a"}'

    def test_tools_then_a_decision(self) -> None:
        calls: list[str] = []

        def lookup(key: str) -> str:
            calls.append(key)
            return f"value of {key}"

        rt = FixedRuntime(
            ModelReply(tool_calls=(ToolCall("lookup", {"key": "k"}, id="c1"),)),
            pick("count", n=3),
        )
        assert agent("Work.", choices=OPTIONS, tools=[lookup], runtime=rt) == 3
        assert calls == ["k"]


class TestImprovement10TopLevelArguments:
    def test_accepted(self) -> None:
        assert parse('{"call": "greet", "name": "ada"}') == (greet, {"name": "ada"})
        assert decision.resolve_decision('{"call": "count", "n": 4}', OPTIONS) == 4

    def test_never_rendered(self) -> None:
        text = decision.render_options(OPTIONS)
        calls = [line for line in text.splitlines() if line.startswith("    Call: ")]
        assert calls == [
            '    Call: {"call": "greet", "args": {"name": "<str>"}}',
            '    Call: {"call": "count", "args": {"n": <int>}}',
            '    Call: {"call": "a"}',
            '    Call: {"call": "b"}',
        ]

    def test_top_level_with_openai_style_is_not_mixed(self) -> None:
        reply = json.dumps({"function": {"name": "greet"}, "name": "ada"})
        assert kind_of(reply) == "missing_required"


def test_every_runtime_class_can_answer() -> None:
    """A bare Runtime subclass with only ``call_model`` is enough for everything above."""

    class Minimal(Runtime):
        def call_model(self, request: Any) -> ModelReply:
            return ModelReply(text=pick("b"))

    assert decision.make("Pick.", OPTIONS, runtime=Minimal()) == "B"
