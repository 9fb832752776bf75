"""The script steps: ``pick``, ``tool_call``, ``error`` and how they read in messages."""

from __future__ import annotations

import json

import pytest

from fake_runtimes import ErrorStep, Pick, ScriptedRuntime, ToolCallStep, error, pick, tool_call
from pytest_opdecide import ModelReply


class TestPick:
    def test_builds_a_pick_of_the_option_with_its_arguments(self) -> None:
        step = pick("refund", amount=30, reason="late")
        assert step == Pick("refund", {"amount": 30, "reason": "late"})

    def test_a_pick_is_made_with_every_field_its_init_sets(self) -> None:
        import dataclasses

        made = pick("refund", amount=30, reason="late")
        built = Pick("refund", {"amount": 30, "reason": "late"})
        # Every dataclass field, in order: a field added to Pick must be set by pick() too.
        assert list(vars(made)) == [f.name for f in dataclasses.fields(Pick)]
        assert vars(made) == vars(built)
        assert made == built
        assert str(made) == str(built)

    def test_text_is_the_canonical_json_pick(self) -> None:
        assert pick("refund", amount=30).text == '{"call": "refund", "args": {"amount": 30}}'

    def test_text_omits_args_when_there_are_none(self) -> None:
        assert pick("done").text == '{"call": "done"}'

    def test_text_keeps_non_ascii_characters(self) -> None:
        assert pick("greet", name="Zoë").text == '{"call": "greet", "args": {"name": "Zoë"}}'

    def test_text_of_plain_arguments_is_the_encoder_s_bytes(self) -> None:
        # Strings, numbers, booleans and None are written piece by piece; the bytes must be
        # those of the shared encoder, on every edge of those types (and subclasses, which
        # take the encoder's own way).
        from fake_runtimes._script_steps import _ENCODER

        class Text(str):
            pass

        class Whole(int):
            pass

        values = ["a", 'é"\\\n\u2028', "", 0, -3, 10**30, 1.5, -0.0, float("nan"),
                  float("inf"), -float("inf"), 1e300, True, False, None, [1], {"a": 1},
                  Text("s"), Whole(3)]  # fmt: skip
        for name in ("refund", 'q"é'):
            for value in values:
                for key in ("a", 'é"', Text("k")):
                    args = {key: value, "b": values[len(key) % len(values)]}
                    expected = _ENCODER.encode({"call": name, "args": args})
                    assert Pick(name, args).text == expected, (name, args)
            assert Pick(name, {}).text == _ENCODER.encode({"call": name})

    def test_text_round_trips_nested_arguments(self) -> None:
        args = {"steps": [{"action": "ship", "target": "A1"}], "rationale": "fast"}
        assert json.loads(pick("plan", **args).text) == {"call": "plan", "args": args}

    def test_str_reads_like_the_call_that_built_it(self) -> None:
        assert str(pick("refund", amount=30, note="x")) == "pick('refund', amount=30, note='x')"
        assert str(pick("done")) == "pick('done')"

    def test_arguments_are_copied(self) -> None:
        args = {"amount": 30}
        step = pick("refund", **args)
        args["amount"] = 99
        assert step.args == {"amount": 30}

    @pytest.mark.parametrize("bad", ["", 3, None])
    def test_needs_an_option_name(self, bad: object) -> None:
        with pytest.raises(TypeError) as caught:
            pick(bad)  # type: ignore[arg-type]
        assert str(caught.value) == f"pick() needs an option name, got {bad!r}"

    def test_an_argument_may_be_named_like_a_parameter_of_pick(self) -> None:
        # ``option`` is positional-only, so a field called "option" is an ordinary argument.
        assert pick("set", option="dark").args == {"option": "dark"}


class TestToolCall:
    def test_builds_a_tool_call(self) -> None:
        assert tool_call("lookup_order", order_id="A1") == ToolCallStep(
            "lookup_order", {"order_id": "A1"}
        )

    def test_str_reads_like_the_call_that_built_it(self) -> None:
        assert str(tool_call("lookup_order", order_id="A1")) == (
            "tool_call('lookup_order', order_id='A1')"
        )

    def test_a_tool_argument_may_be_called_tool(self) -> None:
        assert tool_call("configure", tool="hammer").args == {"tool": "hammer"}

    @pytest.mark.parametrize("bad", ["", 3, None])
    def test_needs_a_tool_name(self, bad: object) -> None:
        with pytest.raises(TypeError) as caught:
            tool_call(bad)  # type: ignore[arg-type]
        assert str(caught.value) == f"tool_call() needs a tool name, got {bad!r}"


class TestError:
    def test_takes_an_exception_instance(self) -> None:
        exc = TimeoutError("slow")
        assert error(exc) == ErrorStep(exc)

    def test_takes_an_exception_class(self) -> None:
        assert error(TimeoutError).exception is TimeoutError

    def test_str(self) -> None:
        assert str(error(TimeoutError("slow"))) == "error(TimeoutError('slow'))"

    @pytest.mark.parametrize("bad", ["timeout", 3, int])
    def test_needs_an_exception(self, bad: object) -> None:
        with pytest.raises(TypeError) as caught:
            error(bad)  # type: ignore[arg-type]
        assert str(caught.value) == f"error() needs an exception, got {bad!r}"


class TestScriptValidation:
    """What cannot be a step is rejected when the script is written, not when it runs."""

    @pytest.mark.parametrize(
        ("bad", "shown"),
        [
            (42, "int 42"),
            (None, "NoneType None"),
            ([], "list []"),
            ({"call": "done"}, "dict {'call': 'done'}"),
        ],
    )
    def test_rejects_what_is_not_a_step(self, bad: object, shown: str) -> None:
        with pytest.raises(TypeError) as caught:
            ScriptedRuntime("fine", bad)
        assert str(caught.value) == (
            f"step 1 is {shown}: a step is a reply string, pick(...), tool_call(...) (or a "
            "list of them), error(...), a ModelReply, or a callable that builds one of those "
            "from the call"
        )

    @pytest.mark.parametrize(
        ("bad", "count"), [(["text"], 1), ([tool_call("a"), "text"], 2), ((pick("a"),), 1)]
    )
    def test_a_list_of_other_steps_says_to_give_them_one_by_one(
        self, bad: object, count: int
    ) -> None:
        with pytest.raises(TypeError) as caught:
            ScriptedRuntime("fine", bad)
        kind = type(bad).__name__
        assert str(caught.value) == (
            f"step 1 is a {kind} of {count} steps: a list is one step only when it holds "
            "tool_call(...) steps (one reply calling several tools). Give the steps one by one, "
            "ScriptedRuntime(pick(...), pick(...)), or unpack a list, ScriptedRuntime(*steps)"
        )

    @pytest.mark.parametrize(
        ("exception", "shown"),
        [(TimeoutError, "TimeoutError"), (TimeoutError("slow"), "TimeoutError('slow')")],
    )
    def test_a_bare_exception_says_to_wrap_it_in_error(
        self, exception: BaseException | type[BaseException], shown: str
    ) -> None:
        # An exception class is callable, so it must not pass for a callable step.
        with pytest.raises(TypeError) as caught:
            ScriptedRuntime(exception)
        assert str(caught.value) == (
            f"step 0 is the exception {shown}: to make the model call raise it, script "
            f"error({shown})"
        )

    def test_a_callable_step_that_builds_an_exception(self) -> None:
        runtime = ScriptedRuntime(lambda call: TimeoutError("slow"))
        with pytest.raises(TypeError) as caught:
            runtime.exec("Hi.")
        assert str(caught.value) == (
            "step 0 is the exception TimeoutError('slow'): to make the model call raise it, "
            "script error(TimeoutError('slow'))"
        )

    @pytest.mark.parametrize(
        "good",
        [
            "text",
            "",
            pick("a"),
            tool_call("t"),
            [tool_call("t"), tool_call("u")],
            error(TimeoutError),
            ModelReply(text="hi"),
            lambda call: "hi",
        ],
    )
    def test_accepts_every_kind_of_step(self, good: object) -> None:
        assert ScriptedRuntime(good).steps == [good]
