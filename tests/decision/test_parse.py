"""``parse_args`` and ``resolve_decision``: from a reply to ``(chosen, kwargs)`` and a result."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest

from pytest_opdecide import DecisionError, FromContext, Runtime, decision

from ._support import FixedRuntime, fenced, pick


def greet(name: str, greeting: str = "hello") -> str:
    """Greet someone by name."""
    return f"{greeting} {name}"


def shout(text: str) -> str:
    return text.upper()


OPTIONS: dict[str, Any] = {
    "greet": greet,
    "done": ("CONVERSATION_OVER", "Pick when the chat is over."),
    "plan": ("Return a plan.", {"steps": [{"action": str, "target": str}], "rationale": str}),
    "skip": "SKIPPED",
}


def parse(reply: Any, options: Any = None, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    return decision.parse_args(
        reply, OPTIONS if options is None else options, max_retries=0, **kwargs
    )


class TestChosen:
    def test_function_option_gives_the_original_function(self) -> None:
        chosen, kwargs = parse(pick("greet", name="ada"))
        assert chosen is greet
        assert kwargs == {"name": "ada"}

    def test_value_option_gives_its_name(self) -> None:
        assert parse(pick("done")) == ("done", {})
        assert parse(pick("skip")) == ("skip", {})

    def test_schema_option_gives_its_name_and_validated_fields(self) -> None:
        steps = [{"action": "read", "target": "a.txt"}]
        chosen, kwargs = parse(pick("plan", steps=steps, rationale="because"))
        assert chosen == "plan"
        assert kwargs == {"steps": steps, "rationale": "because"}

    def test_list_form_function_is_named_by_dunder_name(self) -> None:
        chosen, kwargs = parse(pick("shout", text="hi"), [greet, shout])
        assert chosen is shout
        assert kwargs == {"text": "hi"}

    def test_list_form_function_with_description(self) -> None:
        chosen, _ = parse(pick("shout", text="hi"), [(shout, "Shout it.")])
        assert chosen is shout

    def test_option_name_differs_from_function_name(self) -> None:
        chosen, kwargs = parse(pick("say_hi", name="bo"), {"say_hi": greet})
        assert chosen is greet
        assert kwargs == {"name": "bo"}


class TestResolve:
    def test_function_option_runs_and_its_result_is_returned(self) -> None:
        assert decision.resolve_decision(pick("greet", name="ada"), OPTIONS) == "hello ada"

    def test_optional_argument_is_passed_when_given(self) -> None:
        reply = pick("greet", name="ada", greeting="hi")
        assert decision.resolve_decision(reply, OPTIONS) == "hi ada"

    def test_value_option_returns_its_value_as_is(self) -> None:
        sentinel = object()
        assert decision.resolve_decision(pick("v"), {"v": sentinel}) is sentinel
        assert decision.resolve_decision(pick("done"), OPTIONS) == "CONVERSATION_OVER"

    def test_value_option_with_a_dict_value(self) -> None:
        value = {"status": "closed"}
        assert decision.resolve_decision(pick("close"), {"close": value}) is value

    def test_schema_option_returns_decision_and_fields(self) -> None:
        steps = [{"action": "read", "target": "a.txt"}]
        result = decision.resolve_decision(pick("plan", steps=steps, rationale="r"), OPTIONS)
        assert result == {"decision": "plan", "steps": steps, "rationale": "r"}

    def test_bare_string_list_option_resolves_to_its_name(self) -> None:
        assert decision.resolve_decision(pick("escalate"), ["done", "escalate"]) == "escalate"

    def test_described_string_list_option_resolves_to_its_name(self) -> None:
        options = [("done", "Finished."), ("escalate", "Page a human.")]
        assert decision.resolve_decision(pick("escalate"), options) == "escalate"

    def test_list_schema_option_resolves_to_decision_and_fields(self) -> None:
        options = [("rate", "Rate it.", {"stars": int})]
        assert decision.resolve_decision(pick("rate", stars=4), options) == {
            "decision": "rate",
            "stars": 4,
        }

    def test_positional_only_parameters_are_passed_positionally(self) -> None:
        def pos(a: int, /, b: int) -> tuple[int, int]:
            return (a, b)

        assert decision.resolve_decision(pick("pos", a=1, b=2), {"pos": pos}) == (1, 2)

    def test_exception_inside_the_picked_function_propagates_unchanged(self) -> None:
        class Boom(Exception):
            pass

        error = Boom("kaboom")

        def explode() -> None:
            raise error

        rt = FixedRuntime()  # no reply scripted: a retry would fail loudly
        with pytest.raises(Boom) as info:
            decision.resolve_decision(pick("explode"), {"explode": explode}, rt)
        assert info.value is error
        assert rt.requests == []

    def test_value_error_inside_the_picked_function_is_not_a_decision_error(self) -> None:
        def bad() -> None:
            raise ValueError("not a decision problem")

        rt = FixedRuntime(pick("bad"))
        with pytest.raises(ValueError, match="not a decision problem") as info:
            decision.make("Pick.", {"bad": bad}, runtime=rt)
        assert not isinstance(info.value, DecisionError)
        assert len(rt.requests) == 1


class TestWhereThePickIs:
    def test_fenced_json_after_prose(self) -> None:
        assert parse(fenced(pick("greet", name="ada")))[1] == {"name": "ada"}

    def test_bare_json_in_prose(self) -> None:
        reply = 'I will greet them: {"call": "greet", "args": {"name": "ada"}} and stop.'
        assert parse(reply) == (greet, {"name": "ada"})

    def test_reply_that_is_only_json(self) -> None:
        assert parse('{"call":"done"}') == ("done", {})

    def test_pretty_printed_json(self) -> None:
        reply = json.dumps({"call": "greet", "args": {"name": "ada"}}, indent=4)
        assert parse(reply) == (greet, {"name": "ada"})


class TestArgs:
    def test_args_null_means_empty(self) -> None:
        assert parse('{"call": "done", "args": null}') == ("done", {})

    def test_args_missing_means_empty(self) -> None:
        assert parse('{"call": "done"}') == ("done", {})

    def test_args_null_on_a_function_with_required_args_is_missing_required(self) -> None:
        with pytest.raises(DecisionError) as info:
            parse('{"call": "greet", "args": null}')
        assert info.value.kind == "missing_required"
        assert info.value.message == "Call 'greet' is missing required arguments: ['name']"

    def test_args_as_a_json_string_under_arguments(self) -> None:
        reply = json.dumps({"call": "greet", "arguments": json.dumps({"name": "ada"})})
        assert parse(reply) == (greet, {"name": "ada"})

    def test_args_under_arguments_as_an_object(self) -> None:
        reply = json.dumps({"call": "greet", "arguments": {"name": "ada"}})
        assert parse(reply) == (greet, {"name": "ada"})

    def test_fields_outside_the_signature_are_dropped(self) -> None:
        assert parse(pick("greet", name="ada", mood="sunny")) == (greet, {"name": "ada"})

    def test_fields_outside_the_schema_are_dropped(self) -> None:
        chosen, kwargs = parse(pick("plan", steps=[], rationale="r", extra=1))
        assert (chosen, kwargs) == ("plan", {"steps": [], "rationale": "r"})

    def test_nested_fields_outside_the_schema_are_dropped(self) -> None:
        steps = [{"action": "a", "target": "t", "why": "w"}]
        _, kwargs = parse(pick("plan", steps=steps, rationale="r"))
        assert kwargs["steps"] == [{"action": "a", "target": "t"}]

    def test_value_option_ignores_any_args(self) -> None:
        assert parse(pick("done", reason="tired")) == ("done", {})

    def test_float_field_accepts_an_int_as_a_float(self) -> None:
        def pay(amount: float) -> float:
            return amount

        chosen, kwargs = parse(pick("pay", amount=3), {"pay": pay})
        assert chosen is pay
        assert kwargs == {"amount": 3.0}
        assert type(kwargs["amount"]) is float

    def test_empty_list_and_object_are_valid(self) -> None:
        options = {"o": ("D.", {"items": [int], "meta": dict})}
        assert parse(pick("o", items=[], meta={}), options) == ("o", {"items": [], "meta": {}})


class TestAliases:
    @pytest.mark.parametrize("key", ["call", "action", "function", "tool"])
    def test_every_call_key_alias(self, key: str) -> None:
        reply = json.dumps({key: "greet", "args": {"name": "ada"}})
        assert parse(reply) == (greet, {"name": "ada"})

    def test_openai_style_function_object_with_json_arguments(self) -> None:
        reply = json.dumps(
            {"function": {"name": "greet", "arguments": json.dumps({"name": "ada"})}}
        )
        assert parse(reply) == (greet, {"name": "ada"})

    def test_openai_style_with_empty_arguments(self) -> None:
        reply = json.dumps({"function": {"name": "done", "arguments": ""}})
        assert parse(reply) == ("done", {})

    def test_openai_style_with_object_arguments(self) -> None:
        reply = json.dumps({"function": {"name": "greet", "arguments": {"name": "ada"}}})
        assert parse(reply) == (greet, {"name": "ada"})

    def test_openai_style_tool_call_wrapper(self) -> None:
        reply = json.dumps(
            {
                "type": "function",
                "function": {"name": "greet", "arguments": '{"name": "ada"}'},
            }
        )
        assert parse(reply) == (greet, {"name": "ada"})


class TestTopLevelArguments:
    def test_arguments_at_the_top_level_are_accepted(self) -> None:
        assert parse('{"call": "greet", "name": "ada"}') == (greet, {"name": "ada"})

    def test_top_level_with_an_alias_key(self) -> None:
        assert parse('{"tool": "greet", "name": "ada"}') == (greet, {"name": "ada"})

    def test_top_level_schema_fields(self) -> None:
        reply = '{"call": "plan", "steps": [], "rationale": "r"}'
        assert parse(reply) == ("plan", {"steps": [], "rationale": "r"})

    def test_args_key_wins_over_top_level_fields(self) -> None:
        reply = '{"call": "greet", "args": {"name": "ada"}, "greeting": "yo"}'
        assert parse(reply) == (greet, {"name": "ada"})

    def test_top_level_arguments_are_validated(self) -> None:
        with pytest.raises(DecisionError) as info:
            parse('{"call": "greet", "name": 3}')
        assert info.value.kind == "type_mismatch"
        assert info.value.message == "Field 'name' must be str, got int (3)"


class TestContextAndRuntimeInjection:
    def test_context_parameter_is_filled_from_context(self) -> None:
        def refund(amount: float, order_id: Annotated[str, FromContext()]) -> str:
            return f"{order_id}:{amount}"

        chosen, kwargs = parse(
            pick("refund", amount=5), {"refund": refund}, context={"order_id": "A1"}
        )
        assert chosen is refund
        assert kwargs == {"amount": 5.0, "order_id": "A1"}

    def test_context_parameter_with_another_key(self) -> None:
        def refund(order: Annotated[str, FromContext("order_id")]) -> str:
            return order

        result = decision.resolve_decision(
            pick("refund"), {"refund": refund}, context={"order_id": "A1"}, max_retries=0
        )
        assert result == "A1"

    def test_optional_context_parameter_keeps_its_default_when_context_lacks_it(self) -> None:
        def f(tag: Annotated[str, FromContext()] = "none") -> str:
            return tag

        assert decision.resolve_decision(pick("f"), {"f": f}, max_retries=0) == "none"
        assert decision.resolve_decision(pick("f"), {"f": f}, context={}, max_retries=0) == "none"

    def test_required_context_parameter_missing_is_a_type_error_before_any_call(self) -> None:
        def refund(order_id: Annotated[str, FromContext()]) -> str:
            return order_id

        rt = FixedRuntime()
        with pytest.raises(TypeError) as info:
            decision.make("Pick.", {"refund": refund}, runtime=rt, context={})
        assert str(info.value) == (
            "Option 'refund' fills parameter 'order_id' from the context, but context has no "
            "key 'order_id': pass context={'order_id': ...} or give the parameter a default"
        )
        assert rt.requests == []

    def test_runtime_named_parameters_get_the_active_runtime(self) -> None:
        seen: dict[str, Any] = {}

        def work(n: int, runtime=None, exec_runtime=None, review_runtime=None) -> int:  # type: ignore[no-untyped-def]
            seen.update(runtime=runtime, exec_runtime=exec_runtime, review_runtime=review_runtime)
            return n

        rt = FixedRuntime(pick("work", n=1, runtime="model says", exec_runtime=1))
        assert decision.make("Pick.", {"work": work}, runtime=rt) == 1
        assert seen == {"runtime": rt, "exec_runtime": rt, "review_runtime": rt}

    def test_runtime_annotated_parameter_gets_the_active_runtime(self) -> None:
        got: list[Runtime] = []

        def work(engine: Runtime) -> str:
            got.append(engine)
            return "ok"

        rt = FixedRuntime(pick("work"))
        assert decision.make("Pick.", {"work": work}, runtime=rt) == "ok"
        assert got == [rt]

    def test_runtime_subclass_annotation_is_injected(self) -> None:
        got: list[Any] = []

        def work(engine: FixedRuntime) -> None:
            got.append(engine)

        rt = FixedRuntime(pick("work"))
        decision.make("Pick.", {"work": work}, runtime=rt)
        assert got == [rt]

    def test_parse_args_injects_the_passed_runtime(self) -> None:
        def work(runtime: Runtime) -> None:
            pass

        rt = FixedRuntime()
        chosen, kwargs = decision.parse_args(pick("work"), {"work": work}, rt)
        assert chosen is work
        assert kwargs == {"runtime": rt}

    def test_runtime_parameter_with_default_and_no_runtime_keeps_its_default(self) -> None:
        def work(runtime: Any = "default") -> Any:
            return runtime

        assert decision.resolve_decision(pick("work"), {"work": work}) == "default"
