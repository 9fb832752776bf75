"""Option forms: dict and list forms, handler shapes, schema notation and its caveats."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_opdecide import decision

from ._support import pick


def retry_fn(times: int) -> str:
    """Retry the step."""
    return f"retry x{times}"


class AbortSignal:
    def __repr__(self) -> str:
        return "AbortSignal()"


ABORT = AbortSignal()

SPEC_EXAMPLE: dict[str, Any] = {
    "retry": retry_fn,
    "skip": "SKIPPED",
    "abort": (ABORT, "pick when stuck"),
    "emit_plan": (
        "Produce a plan.",
        {"steps": [{"action": str, "target": str}], "rationale": str},
    ),
}


def resolve(reply: str, options: Any) -> Any:
    return decision.resolve_decision(reply, options, max_retries=0)


class TestDictForm:
    def test_spec_example_menu(self) -> None:
        assert decision.render_options(SPEC_EXAMPLE) == (
            "retry(times: int)\n"
            "    Retry the step.\n"
            "    times\n"
            '    Call: {"call": "retry", "args": {"times": <int>}}\n'
            "\n"
            "skip()\n"
            '    Call: {"call": "skip"}\n'
            "\n"
            "abort()\n"
            "    pick when stuck\n"
            '    Call: {"call": "abort"}\n'
            "\n"
            "emit_plan(steps: list, rationale: str)\n"
            "    Produce a plan.\n"
            "    steps\n"
            "    rationale\n"
            '    Call: {"call": "emit_plan", "args": {"steps": [{"action": "<str>", "target":'
            ' "<str>"}], "rationale": "<str>"}}\n'
        )

    def test_function_option(self) -> None:
        assert resolve(pick("retry", times=2), SPEC_EXAMPLE) == "retry x2"

    def test_value_option(self) -> None:
        assert resolve(pick("skip"), SPEC_EXAMPLE) == "SKIPPED"

    def test_value_option_with_description(self) -> None:
        assert resolve(pick("abort"), SPEC_EXAMPLE) is ABORT

    def test_schema_option(self) -> None:
        reply = pick("emit_plan", steps=[{"action": "a", "target": "b"}], rationale="r")
        assert resolve(reply, SPEC_EXAMPLE) == {
            "decision": "emit_plan",
            "steps": [{"action": "a", "target": "b"}],
            "rationale": "r",
        }

    def test_function_with_description_tuple(self) -> None:
        options = {"retry": (retry_fn, "Try once more.")}
        assert "    Try once more.\n" in decision.render_options(options)
        assert resolve(pick("retry", times=1), options) == "retry x1"

    @pytest.mark.parametrize("value", [None, 0, False, "", [], {}, 3.5])
    def test_falsy_and_plain_values(self, value: Any) -> None:
        assert resolve(pick("v"), {"v": value}) == value

    def test_callable_instance_is_a_function_option(self) -> None:
        class Doubler:
            def __call__(self, n: int) -> int:
                return 2 * n

        options = {"double": Doubler()}
        assert decision.render_options(options).startswith("double(n: int)\n")
        assert resolve(pick("double", n=4), options) == 8

    def test_builtin_method_with_a_positional_only_parameter(self) -> None:
        seen: list[str] = []
        options = {"note": seen.append}
        assert decision.render_options(options) == (
            "note(object: any)\n"
            "    Append object to the end of the list.\n"
            "    object\n"
            '    Call: {"call": "note", "args": {"object": null}}\n'
        )
        assert resolve(pick("note", object="x"), options) is None
        assert seen == ["x"]


class TestListForm:
    def test_every_item_shape(self) -> None:
        listed = [
            retry_fn,
            "skip",
            ("abort", "pick when stuck"),
            ("emit_plan", "Produce a plan.", {"rationale": str}),
        ]
        assert decision.render_options(listed) == (
            "retry_fn(times: int)\n"
            "    Retry the step.\n"
            "    times\n"
            '    Call: {"call": "retry_fn", "args": {"times": <int>}}\n'
            "\n"
            "skip()\n"
            '    Call: {"call": "skip"}\n'
            "\n"
            "abort()\n"
            "    pick when stuck\n"
            '    Call: {"call": "abort"}\n'
            "\n"
            "emit_plan(rationale: str)\n"
            "    Produce a plan.\n"
            "    rationale\n"
            '    Call: {"call": "emit_plan", "args": {"rationale": "<str>"}}\n'
        )
        assert resolve(pick("retry_fn", times=3), listed) == "retry x3"
        assert resolve(pick("skip"), listed) == "skip"
        assert resolve(pick("abort"), listed) == "abort"
        assert resolve(pick("emit_plan", rationale="r"), listed) == {
            "decision": "emit_plan",
            "rationale": "r",
        }

    def test_function_with_description(self) -> None:
        listed = [(retry_fn, "Try again.")]
        assert decision.render_options(listed).startswith("retry_fn(times: int)\n    Try again.\n")

    def test_tuple_of_options_is_accepted_like_a_list(self) -> None:
        assert resolve(pick("b"), ("a", "b")) == "b"

    def test_lambda_has_no_usable_name(self) -> None:
        with pytest.raises(TypeError, match="no usable __name__"):
            decision.render_options([lambda: None])

    def test_lambda_is_fine_in_the_dict_form(self) -> None:
        assert resolve(pick("f"), {"f": lambda: 42}) == 42


class TestSchemaNotation:
    def test_described_scalar(self) -> None:
        options = {"o": ("D.", {"why": "Why you picked it."})}
        assert resolve(pick("o", why="because"), options) == {"decision": "o", "why": "because"}
        with pytest.raises(decision.DecisionError) as info:
            resolve(pick("o", why=1), options)
        assert info.value.message == "Field 'why' must be str, got int (1)"

    def test_list_of_objects(self) -> None:
        options = {"o": ("D.", {"steps": [{"action": str, "n": int}]})}
        steps = [{"action": "a", "n": 1}, {"action": "b", "n": 2}]
        assert resolve(pick("o", steps=steps), options) == {"decision": "o", "steps": steps}

    def test_list_of_lists(self) -> None:
        options = {"o": ("D.", {"grid": [[int]]})}
        assert resolve(pick("o", grid=[[1, 2], []]), options)["grid"] == [[1, 2], []]
        with pytest.raises(decision.DecisionError) as info:
            resolve(pick("o", grid=[[1, "2"]]), options)
        assert info.value.message == "Field 'grid[0][1]' must be int, got str ('2')"

    def test_nested_object(self) -> None:
        options = {"o": ("D.", {"plan": {"title": str, "sub": {"n": int}}})}
        plan = {"title": "t", "sub": {"n": 1}}
        assert resolve(pick("o", plan=plan), options) == {"decision": "o", "plan": plan}

    def test_meta_spec_type_description_options(self) -> None:
        options = {
            "o": ("D.", {"mode": {"type": str, "description": "How.", "options": ["a", "b"]}})
        }
        assert '    mode: How. (options: "a", "b")\n' in decision.render_options(options)
        assert resolve(pick("o", mode="b"), options) == {"decision": "o", "mode": "b"}

    def test_meta_spec_with_description_only_is_a_string(self) -> None:
        options = {"o": ("D.", {"note": {"description": "A note."}})}
        assert decision.render_options(options) == (
            "o(note: str)\n"
            "    D.\n"
            "    note: A note.\n"
            '    Call: {"call": "o", "args": {"note": "<str>"}}\n'
        )

    def test_meta_spec_fields_is_a_nested_object(self) -> None:
        options = {"o": ("D.", {"plan": {"description": "The plan.", "fields": {"n": int}}})}
        assert decision.render_options(options) == (
            "o(plan: dict)\n"
            "    D.\n"
            "    plan: The plan.\n"
            '    Call: {"call": "o", "args": {"plan": {"n": <int>}}}\n'
        )
        assert resolve(pick("o", plan={"n": 2}), options)["plan"] == {"n": 2}

    def test_meta_spec_items_is_a_list(self) -> None:
        options = {"o": ("D.", {"tags": {"description": "Tags.", "items": str}})}
        assert decision.render_options(options) == (
            "o(tags: list)\n"
            "    D.\n"
            "    tags: Tags.\n"
            '    Call: {"call": "o", "args": {"tags": ["<str>"]}}\n'
        )
        with pytest.raises(decision.DecisionError) as info:
            resolve(pick("o", tags=[1]), options)
        assert info.value.message == "Field 'tags[0]' must be str, got int (1)"


class TestCaveats:
    def test_list_schema_with_two_templates_raises(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.render_options({"o": ("D.", {"pair": [str, int]})})
        assert str(info.value) == (
            "A list schema needs exactly one item template, e.g. [str] or [{...}]"
        )

    def test_dict_with_only_meta_keys_is_a_meta_spec(self) -> None:
        # A nested object whose fields happen to be called "type" and "description" is read as
        # a meta-spec: the field is a plain str, not an object.
        options = {"o": ("D.", {"item": {"type": str, "description": "What it is."}})}
        assert decision.render_options(options) == (
            "o(item: str)\n"
            "    D.\n"
            "    item: What it is.\n"
            '    Call: {"call": "o", "args": {"item": "<str>"}}\n'
        )
        assert resolve(pick("o", item="x"), options) == {"decision": "o", "item": "x"}

    def test_one_key_outside_the_meta_set_makes_it_a_nested_object(self) -> None:
        options = {"o": ("D.", {"item": {"type": str, "description": str, "name": str}})}
        assert decision.render_options(options) == (
            "o(item: dict)\n"
            "    D.\n"
            "    item\n"
            '    Call: {"call": "o", "args": {"item": {"type": "<str>", "description": "<str>",'
            ' "name": "<str>"}}}\n'
        )
        item = {"type": "t", "description": "d", "name": "n"}
        assert resolve(pick("o", item=item), options) == {"decision": "o", "item": item}

    def test_two_tuple_value_is_misparsed_as_value_and_description(self) -> None:
        options = {"pair": ("left", "right")}
        assert decision.render_options(options) == 'pair()\n    right\n    Call: {"call": "pair"}\n'
        assert resolve(pick("pair"), options) == "left"

    def test_two_tuple_with_a_non_string_second_item_is_rejected(self) -> None:
        with pytest.raises(TypeError) as info:
            decision.render_options({"pair": (1, 2)})
        assert str(info.value) == "Option 'pair': the description must be a string, got int"

    def test_wrap_a_tuple_value_to_keep_it(self) -> None:
        # The documented way out: give the tuple a description.
        options = {"pair": ((1, 2), "A pair.")}
        assert resolve(pick("pair"), options) == (1, 2)

    def test_string_and_dict_tuple_is_a_schema_option(self) -> None:
        options = {"o": ("Fill it.", {"n": int})}
        assert resolve(pick("o", n=1), options) == {"decision": "o", "n": 1}


class TestCaching:
    def test_same_function_in_two_menus_renders_each_correctly(self) -> None:
        def f(n: int) -> int:
            return n

        assert decision.render_options({"a": f}).startswith("a(n: int)\n")
        assert decision.render_options({"b": (f, "Described.")}) == (
            'b(n: int)\n    Described.\n    n\n    Call: {"call": "b", "args": {"n": <int>}}\n'
        )
        assert (
            decision.render_options({"a": f})
            == 'a(n: int)\n    n\n    Call: {"call": "a", "args": {"n": <int>}}\n'
        )

    def test_different_functions_with_the_same_name(self) -> None:
        def make(kind: str) -> Any:
            if kind == "int":

                def f(n: int) -> int:
                    return n

            else:

                def f(n: str) -> str:  # type: ignore[misc]
                    return n

            return f

        assert decision.render_options({"f": make("int")}).startswith("f(n: int)\n")
        assert decision.render_options({"f": make("str")}).startswith("f(n: str)\n")

    def test_equal_schemas_with_different_types(self) -> None:
        assert "(n: int)" in decision.render_options({"o": ("D.", {"n": int})})
        assert "(n: str)" in decision.render_options({"o": ("D.", {"n": str})})
        assert "(n: bool)" in decision.render_options({"o": ("D.", {"n": bool})})
