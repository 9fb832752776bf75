"""Error kinds and messages, ``DecisionError``, re-picks, and malformed options."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import pytest_opdecide
from pytest_opdecide import DecisionError, decision

from ._support import FixedRuntime, pick


def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"


def count(n: int) -> int:
    return n


OPTIONS: dict[str, Any] = {"a": "A", "b": "B"}

NO_RUNTIME = "no runtime available — call this inside an Agent method, or pass runtime= explicitly."


def failure(reply: Any, options: Any) -> DecisionError:
    """The DecisionError of a reply, with no re-pick."""
    with pytest.raises(DecisionError) as info:
        decision.parse_args(reply, options, max_retries=0)
    return info.value


class TestKindsAndMessages:
    def test_no_action(self) -> None:
        error = failure("I would rather not pick.", OPTIONS)
        assert error.kind == "no_action"
        assert error.message == "Reply contained no parseable JSON with a 'call' field."

    def test_json_without_a_call_key_is_no_action(self) -> None:
        error = failure('{"name": "ada"}', OPTIONS)
        assert error.kind == "no_action"

    def test_unknown_call(self) -> None:
        error = failure(pick("x"), OPTIONS)
        assert error.kind == "unknown_call"
        assert error.message == (
            "Picked 'x', which is not an available option. Valid options: ['a', 'b']"
        )

    def test_unknown_call_lists_options_in_menu_order(self) -> None:
        error = failure(pick("zz"), {"b": 1, "a": 2, "c": 3})
        assert error.message.endswith("Valid options: ['b', 'a', 'c']")

    @pytest.mark.parametrize(
        ("args", "got"),
        [("[1, 2]", "list"), ('"text"', "str"), ("3", "int"), ("true", "bool"), ("1.5", "float")],
    )
    def test_bad_args(self, args: str, got: str) -> None:
        error = failure(f'{{"call": "a", "args": {args}}}', OPTIONS)
        assert error.kind == "bad_args"
        assert error.message == f"args must be an object, got {got}"

    def test_missing_required_function_arguments(self) -> None:
        error = failure(pick("greet"), {"greet": greet})
        assert error.kind == "missing_required"
        assert error.message == "Call 'greet' is missing required arguments: ['name']"

    def test_missing_required_lists_every_missing_argument_in_order(self) -> None:
        def f(a: int, b: int, c: int = 0, *, d: int) -> None:
            pass

        error = failure(pick("f", b=1), {"f": f})
        assert error.message == "Call 'f' is missing required arguments: ['a', 'd']"

    def test_missing_required_schema_fields(self) -> None:
        error = failure(
            pick("plan", rationale="r"), {"plan": ("D.", {"steps": [str], "rationale": str})}
        )
        assert error.kind == "missing_required"
        assert error.message == "Option 'plan' is missing required fields: ['steps']"

    def test_missing_nested_field(self) -> None:
        options = {"o": ("D.", {"plan": {"sub": str, "other": int}})}
        error = failure(pick("o", plan={"other": 1}), options)
        assert error.kind == "missing_required"
        assert error.message == "Field 'plan' is missing nested field 'sub'"

    def test_missing_nested_field_in_a_list_item(self) -> None:
        options = {"o": ("D.", {"steps": [{"action": str, "target": str}]})}
        error = failure(pick("o", steps=[{"action": "a", "target": "t"}, {"action": "b"}]), options)
        assert error.message == "Field 'steps[1]' is missing nested field 'target'"

    def test_type_mismatch_str_for_int(self) -> None:
        error = failure(pick("count", n="3"), {"count": count})
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'n' must be int, got str ('3')"

    def test_type_mismatch_bool_is_not_int(self) -> None:
        error = failure(pick("count", n=True), {"count": count})
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'n' must be int, got bool"

    def test_type_mismatch_bool_is_not_float(self) -> None:
        def pay(x: float) -> None:
            pass

        error = failure(pick("pay", x=False), {"pay": pay})
        assert error.message == "Field 'x' must be float, got bool"

    def test_type_mismatch_list(self) -> None:
        error = failure(pick("o", steps={"a": 1}), {"o": ("D.", {"steps": [str]})})
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'steps' must be a list, got dict"

    def test_type_mismatch_object_given_a_list(self) -> None:
        error = failure(pick("o", plan=[1]), {"o": ("D.", {"plan": {"sub": str}})})
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'plan' must be an object, got list"

    def test_type_mismatch_object_given_a_string(self) -> None:
        error = failure(pick("o", plan="x"), {"o": ("D.", {"plan": {"sub": str}})})
        assert error.kind == "type_mismatch"
        assert error.message == "Field 'plan' must be an object, got str"

    def test_enum_violation(self) -> None:
        options = {"o": ("D.", {"mode": {"type": str, "options": ["fast", "slow"]}})}
        error = failure(pick("o", mode="medium"), options)
        assert error.kind == "enum_violation"
        assert error.message == "Field 'mode' must be one of ['fast', 'slow'], got 'medium'"

    def test_enum_of_ints(self) -> None:
        options = {"o": ("D.", {"n": {"type": int, "options": [1, 2]}})}
        error = failure(pick("o", n=3), options)
        assert error.message == "Field 'n' must be one of [1, 2], got 3"
        assert decision.parse_args(pick("o", n=2), options, max_retries=0) == ("o", {"n": 2})

    def test_enum_checks_the_type_first(self) -> None:
        options = {"o": ("D.", {"n": {"type": int, "options": [1, 2]}})}
        error = failure(pick("o", n="1"), options)
        assert error.kind == "type_mismatch"

    def test_float_enum_with_int_options_accepts_a_listed_value(self) -> None:
        options = {"o": ("D.", {"ratio": {"type": float, "options": [1, 2]}})}
        assert decision.parse_args(pick("o", ratio=1), options, max_retries=0) == (
            "o",
            {"ratio": 1.0},
        )

    def test_nested_paths(self) -> None:
        options = {"o": ("D.", {"steps": [{"action": str}], "plan": {"sub": {"deep": int}}})}
        error = failure(pick("o", steps=[{"action": 1}], plan={"sub": {"deep": 1}}), options)
        assert error.message == "Field 'steps[0].action' must be str, got int (1)"
        error = failure(pick("o", steps=[], plan={"sub": {"deep": "x"}}), options)
        assert error.message == "Field 'plan.sub.deep' must be int, got str ('x')"
        error = failure(pick("o", steps=[], plan={"sub": 4}), options)
        assert error.message.startswith("Field 'plan.sub' must be an object, got int")

    def test_missing_is_reported_before_type_errors(self) -> None:
        def f(a: int, b: int) -> None:
            pass

        error = failure(pick("f", a="x"), {"f": f})
        assert error.kind == "missing_required"


class TestDecisionError:
    def test_is_a_value_error(self) -> None:
        assert issubclass(DecisionError, ValueError)
        assert decision.DecisionError is DecisionError is pytest_opdecide.DecisionError

    def test_text_when_the_message_ends_with_a_period(self) -> None:
        error = failure("hello there", OPTIONS)
        assert str(error) == (
            "decision failed after 1 attempt(s). Last error (no_action): Reply contained no "
            "parseable JSON with a 'call' field. Last reply head: 'hello there'"
        )
        assert ".. Last reply head" not in str(error)

    def test_text_when_the_message_does_not_end_with_a_period(self) -> None:
        error = failure('{"call": "x"}', OPTIONS)
        assert str(error) == (
            "decision failed after 1 attempt(s). Last error (unknown_call): Picked 'x', which is "
            "not an available option. Valid options: ['a', 'b']. Last reply head: "
            '\'{"call": "x"}\''
        )

    def test_reply_head_is_the_first_200_characters(self) -> None:
        reply = "x" * 150 + "y" * 150
        error = failure(reply, OPTIONS)
        assert error.reply_head == reply[:200]
        assert str(error).endswith(f"Last reply head: {reply[:200]!r}")

    def test_attributes_after_a_re_pick(self) -> None:
        rt = FixedRuntime("no pick", "still no pick")
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        error = info.value
        assert error.kind == "no_action"
        assert error.message == "Reply contained no parseable JSON with a 'call' field."
        assert error.attempts == 2
        assert error.reply_head == "still no pick"
        assert str(error).startswith("decision failed after 2 attempt(s). ")

    def test_replies_lists_every_reply_seen(self) -> None:
        rt = FixedRuntime("first", pick("nope"))
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        assert info.value.replies == ["first", pick("nope")]
        assert info.value.kind == "unknown_call"

    def test_last_error_is_reported(self) -> None:
        rt = FixedRuntime(pick("x"), pick("a"))
        assert decision.make("Pick.", OPTIONS, runtime=rt) == "A"
        rt = FixedRuntime(pick("x"), "no json")
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        assert info.value.kind == "no_action"

    def test_pickles(self) -> None:
        error = failure("hello", OPTIONS)
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is DecisionError
        assert (copy.kind, copy.message, copy.replies, copy.attempts) == (
            error.kind,
            error.message,
            error.replies,
            error.attempts,
        )
        assert str(copy) == str(error)

    def test_caught_by_except_value_error(self) -> None:
        rt = FixedRuntime("no", "no")
        with pytest.raises(ValueError, match=r"^decision failed after 2 attempt\(s\)\.") as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        assert isinstance(info.value, DecisionError)


REPICK_PROMPT = (
    "Previous reply:\n"
    "I think we should greet them.\n"
    "\n"
    "Problem: Reply contained no parseable JSON with a 'call' field.\n"
    "\n"
    "Options:\n"
    "greet(name: str)\n"
    "    Greet someone by name.\n"
    "    name\n"
    '    Call: {"call": "greet", "args": {"name": "<str>"}}\n'
    "\n"
    "done()\n"
    '    Call: {"call": "done"}\n'
    "\n"
    "\n"
    "Your previous reply failed to parse or validate. Re-pick an option from the list above, "
    "fixing the problem described. Reply with valid JSON in the format shown in that option's "
    "Call: example line — JSON only, no prose."
)


class TestRepick:
    def test_repick_prompt_byte_for_byte(self) -> None:
        rt = FixedRuntime("I think we should greet them.", pick("greet", name="ada"))
        result = decision.make("Who next?", {"greet": greet, "done": "DONE"}, runtime=rt)
        assert result == "hello ada"
        assert len(rt.requests) == 2
        repick = rt.requests[1]
        assert repick.kind == "repick"
        assert repick.prompt == REPICK_PROMPT
        assert [m.role for m in repick.messages] == ["user"]
        assert repick.blocks == ({"type": "text", "text": REPICK_PROMPT},)
        assert repick.tools == ()

    def test_original_prompt_is_not_resent(self) -> None:
        rt = FixedRuntime("nope", pick("done"))
        decision.make("A SECRET PROMPT", {"done": "DONE"}, runtime=rt)
        assert "A SECRET PROMPT" not in rt.requests[1].prompt

    def test_repick_prompt_carries_the_error_message(self) -> None:
        rt = FixedRuntime(pick("greet", name=3), pick("greet", name="ada"))
        decision.make("Who?", {"greet": greet}, runtime=rt)
        assert "\n\nProblem: Field 'name' must be str, got int (3)\n\nOptions:\n" in rt.prompts[1]

    def test_previous_reply_head_is_500_characters(self) -> None:
        long_reply = "".join(chr(ord("a") + i % 26) for i in range(800))
        rt = FixedRuntime(long_reply, pick("done"))
        decision.make("Pick.", {"done": "DONE"}, runtime=rt)
        assert rt.prompts[1].startswith(f"Previous reply:\n{long_reply[:500]}\n\nProblem: ")

    def test_default_is_one_repick(self) -> None:
        rt = FixedRuntime("no", "no", pick("a"))
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt)
        assert info.value.attempts == 2
        assert len(rt.requests) == 2
        assert rt.replies == [pick("a")]

    def test_max_retries_zero_disables_repicks(self) -> None:
        rt = FixedRuntime("no", pick("a"))
        with pytest.raises(DecisionError) as info:
            decision.make("Pick.", OPTIONS, runtime=rt, max_retries=0)
        assert info.value.attempts == 1
        assert len(rt.requests) == 1

    def test_max_retries_three(self) -> None:
        rt = FixedRuntime("no", "no", "no", pick("b"))
        assert decision.make("Pick.", OPTIONS, runtime=rt, max_retries=3) == "B"
        assert [r.kind for r in rt.requests] == ["turn", "repick", "repick", "repick"]

    def test_parse_args_repicks_through_the_runtime(self) -> None:
        rt = FixedRuntime(pick("greet", name="ada"))
        chosen, kwargs = decision.parse_args("hmm", {"greet": greet}, rt)
        assert (chosen, kwargs) == (greet, {"name": "ada"})
        assert [r.kind for r in rt.requests] == ["repick"]

    def test_resolve_decision_repicks_through_the_runtime(self) -> None:
        rt = FixedRuntime(pick("greet", name="ada"))
        assert decision.resolve_decision("hmm", {"greet": greet}, rt) == "hello ada"

    def test_a_bad_repick_prompt_shows_the_latest_reply(self) -> None:
        rt = FixedRuntime("second bad", pick("a"))
        decision.parse_args("first bad", OPTIONS, rt, max_retries=2)
        assert rt.prompts[0].startswith("Previous reply:\nfirst bad\n\n")
        assert rt.prompts[1].startswith("Previous reply:\nsecond bad\n\n")

    @pytest.mark.usefixtures("outside_pytest")
    def test_parse_args_needs_a_runtime_to_repick(self) -> None:
        with pytest.raises(RuntimeError) as info:
            decision.parse_args("no pick", OPTIONS)
        assert str(info.value) == NO_RUNTIME
        assert type(info.value) is RuntimeError

    def test_parse_args_without_runtime_is_fine_when_nothing_fails(self) -> None:
        assert decision.parse_args(pick("a"), OPTIONS) == ("a", {})

    @pytest.mark.usefixtures("outside_pytest")
    def test_make_without_a_runtime(self) -> None:
        with pytest.raises(RuntimeError) as info:
            decision.make("Pick.", OPTIONS)
        assert str(info.value) == NO_RUNTIME

    @pytest.mark.parametrize(
        ("value", "error"), [(-1, ValueError), (1.0, TypeError), (True, TypeError)]
    )
    def test_max_retries_is_validated(self, value: Any, error: type[Exception]) -> None:
        rt = FixedRuntime()
        with pytest.raises(error):
            decision.make("Pick.", OPTIONS, runtime=rt, max_retries=value)
        assert rt.requests == []


class TestMalformedOptions:
    @pytest.mark.parametrize(
        ("options", "error", "message"),
        [
            (3, TypeError, "options must be a dict or list, got int"),
            ("abc", TypeError, "options must be a dict or list, got str"),
            (None, TypeError, "options must be a dict or list, got NoneType"),
            (
                {"x": "X", "y": "Y"}.keys(),
                TypeError,
                "options must be a dict or list, got dict_keys",
            ),
            (["x", "y", "x"], ValueError, "Duplicate option name 'x' in options list"),
            (
                [greet, ("greet", "again")],
                ValueError,
                "Duplicate option name 'greet' in options list",
            ),
            (
                {"o": ("D.", {"pair": [str, int]})},
                TypeError,
                "A list schema needs exactly one item template, e.g. [str] or [{...}]",
            ),
            (
                {"o": ("D.", {"none": []})},
                TypeError,
                "A list schema needs exactly one item template, e.g. [str] or [{...}]",
            ),
            (
                [("o", "D.", {"deep": {"items": [{"a": [str, str]}]}})],
                TypeError,
                "A list schema needs exactly one item template, e.g. [str] or [{...}]",
            ),
        ],
    )
    def test_reference_messages_before_any_model_call(
        self, options: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error) as info:
            decision.render_options(options)
        assert str(info.value) == message
        rt = FixedRuntime()
        with pytest.raises(error) as info:
            decision.make("Pick.", options, runtime=rt)
        assert str(info.value) == message
        if options is not None:  # exec(choices=None) means "no decision"
            with pytest.raises(error):
                rt.exec("Work.", choices=options)
        with pytest.raises(error):
            decision.parse_args(pick("x"), options, rt)
        assert rt.requests == []

    @pytest.mark.parametrize(
        "options",
        [
            {},
            [],
            {"o": ("a", "b", "c")},
            {"": "x"},
            {3: "x"},
            [lambda: 1],
            [("name", 3)],
            {"o": ("desc", {"f": 3})},
            {"o": ("desc", {"": str})},
            {"o": ("desc", {"f": {"type": str, "options": []}})},
            [("o", "desc", "not a schema")],
            [42],
        ],
    )
    def test_other_malformed_options_fail_before_any_call(self, options: Any) -> None:
        rt = FixedRuntime()
        with pytest.raises((TypeError, ValueError)):
            decision.make("Pick.", options, runtime=rt)
        assert rt.requests == []

    def test_empty_options(self) -> None:
        with pytest.raises(ValueError, match=r"^options must offer at least one option, got none$"):
            decision.render_options({})

    def test_async_function_option_on_the_sync_path(self) -> None:
        async def later() -> None:
            pass

        rt = FixedRuntime()
        with pytest.raises(TypeError) as info:
            decision.make("Pick.", {"later": later}, runtime=rt)
        assert str(info.value) == (
            "Option 'later' is an async function; use decision.make_async (or a sync function)"
        )
        assert rt.requests == []
