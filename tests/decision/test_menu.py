"""The menu text (``render_options``), byte for byte as the reference page shows it."""

from __future__ import annotations

import functools
import itertools
import json
from typing import Annotated, Any

import pytest

from pytest_opdecide import FromContext, Param, Runtime, decision


class Widget:
    """A class pydantic knows nothing about."""


def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"


CANONICAL_OPTIONS: dict[str, Any] = {
    "greet": greet,
    "done": ("CONVERSATION_OVER", "Pick when the chat is over."),
    "emit_plan": (
        "Return a structured plan.",
        {"steps": [{"action": str, "target": str}], "rationale": str},
    ),
}

CANONICAL_MENU = (
    "greet(name: str)\n"
    "    Greet someone by name.\n"
    "    name\n"
    '    Call: {"call": "greet", "args": {"name": "<str>"}}\n'
    "\n"
    "done()\n"
    "    Pick when the chat is over.\n"
    '    Call: {"call": "done"}\n'
    "\n"
    "emit_plan(steps: list, rationale: str)\n"
    "    Return a structured plan.\n"
    "    steps\n"
    "    rationale\n"
    '    Call: {"call": "emit_plan", "args": {"steps": [{"action": "<str>", "target": "<str>"}],'
    ' "rationale": "<str>"}}\n'
)


def test_canonical_example_renders_byte_for_byte() -> None:
    assert decision.render_options(CANONICAL_OPTIONS) == CANONICAL_MENU


def test_menu_ends_with_exactly_one_newline() -> None:
    text = decision.render_options({"a": "A"})
    assert text == 'a()\n    Call: {"call": "a"}\n'
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


def test_blocks_are_separated_by_one_blank_line_in_option_order() -> None:
    text = decision.render_options({"b": "B", "a": "A", "c": "C"})
    assert text == (
        'b()\n    Call: {"call": "b"}\n\n'
        'a()\n    Call: {"call": "a"}\n\n'
        'c()\n    Call: {"call": "c"}\n'
    )


def test_list_form_renders_like_the_dict_form() -> None:
    listed = [
        greet,
        ("done", "Pick when the chat is over."),
        (
            "emit_plan",
            "Return a structured plan.",
            {"steps": [{"action": str, "target": str}], "rationale": str},
        ),
    ]
    assert decision.render_options(listed) == CANONICAL_MENU


class TestTypesInTheSignature:
    def test_plain_class_names(self) -> None:
        def f(s: str, i: int, x: float, b: bool, items: list, mapping: dict) -> None:  # type: ignore[type-arg]
            """F."""

        assert decision.render_options({"f": f}) == (
            "f(s: str, i: int, x: float, b: bool, items: list, mapping: dict)\n"
            "    F.\n"
            "    s\n"
            "    i\n"
            "    x\n"
            "    b\n"
            "    items\n"
            "    mapping\n"
            '    Call: {"call": "f", "args": {"s": "<str>", "i": <int>, "x": <float>, "b": <bool>,'
            ' "items": [], "mapping": {}}}\n'
        )

    def test_schema_scalars_and_their_placeholders(self) -> None:
        schema = {"s": str, "i": int, "x": float, "b": bool, "items": list, "mapping": dict}
        assert decision.render_options({"o": ("D.", schema)}) == (
            "o(s: str, i: int, x: float, b: bool, items: list, mapping: dict)\n"
            "    D.\n"
            "    s\n"
            "    i\n"
            "    x\n"
            "    b\n"
            "    items\n"
            "    mapping\n"
            '    Call: {"call": "o", "args": {"s": "<str>", "i": <int>, "x": <float>, "b": <bool>,'
            ' "items": [], "mapping": {}}}\n'
        )

    def test_a_class_pydantic_cannot_validate_is_refused(self) -> None:
        def build(w: Widget) -> None:
            pass

        with pytest.raises(TypeError) as info:
            decision.render_options({"build": build})
        assert str(info.value) == (
            "Option 'build', parameter 'w': Widget cannot be checked (Unable to generate "
            "pydantic-core schema for <class 'decision.test_menu.Widget'>). Annotate the "
            "parameter with a type pydantic validates from JSON (str, int, date, Decimal, a "
            "TypedDict, a pydantic model...), with Any to take any value unchecked, or fill it "
            "from context=: Annotated[Widget, FromContext()]"
        )


class TestPlaceholders:
    def test_described_string_field(self) -> None:
        text = decision.render_options({"o": ("D.", {"why": "The reason, in one line."})})
        assert text == (
            "o(why: str)\n"
            "    D.\n"
            "    why: The reason, in one line.\n"
            '    Call: {"call": "o", "args": {"why": "<str>"}}\n'
        )

    def test_nested_object_renders_its_own_placeholder_object(self) -> None:
        schema = {"plan": {"title": str, "size": int, "meta": {"ok": bool}}}
        assert decision.render_options({"o": ("D.", schema)}) == (
            "o(plan: dict)\n"
            "    D.\n"
            "    plan\n"
            '    Call: {"call": "o", "args": {"plan": {"title": "<str>", "size": <int>,'
            ' "meta": {"ok": <bool>}}}}\n'
        )

    def test_list_of_t_renders_a_one_item_list(self) -> None:
        schema = {"ints": [int], "floats": [float], "names": ["A name."], "grid": [[bool]]}
        assert decision.render_options({"o": ("D.", schema)}) == (
            "o(ints: list, floats: list, names: list, grid: list)\n"
            "    D.\n"
            "    ints\n"
            "    floats\n"
            "    names\n"
            "    grid\n"
            '    Call: {"call": "o", "args": {"ints": [<int>], "floats": [<float>], '
            '"names": ["<str>"], "grid": [[<bool>]]}}\n'
        )

    def test_non_ascii_is_kept_in_the_call_line(self) -> None:
        text = decision.render_options({"héllo": "x"})
        assert text == 'héllo()\n    Call: {"call": "héllo"}\n'


class TestEnums:
    def test_description_and_enum(self) -> None:
        schema = {"priority": {"type": int, "description": "1-5", "options": [1, 2, 3]}}
        text = decision.render_options({"o": ("D.", schema)})
        # Not the reference's "1", "2", "3" (strings, which the validator refuses), and the
        # example is an allowed value, not the reference's 0.
        assert text == (
            "o(priority: int)\n"
            "    D.\n"
            "    priority: 1-5 (options: 1, 2, 3)\n"
            '    Call: {"call": "o", "args": {"priority": 1}}\n'
        )

    def test_enum_without_description(self) -> None:
        schema = {"mode": {"type": str, "options": ["fast", "slow"]}}
        assert decision.render_options({"o": ("D.", schema)}) == (
            "o(mode: str)\n"
            "    D.\n"
            '    mode (options: "fast", "slow")\n'
            '    Call: {"call": "o", "args": {"mode": "<str>"}}\n'
        )

    def test_param_metadata_on_a_function(self) -> None:
        def escalate(
            team: Annotated[str, Param("Team to page", options=("ops", "billing"))],
            level: Annotated[int, Param(options=(1, 2))] = 1,
        ) -> None:
            """Page a human."""

        assert decision.render_options({"escalate": escalate}) == (
            "escalate(team: str, level: int)\n"
            "    Page a human.\n"
            '    team: Team to page (options: "ops", "billing")\n'
            "    level (options: 1, 2)\n"
            '    Call: {"call": "escalate", "args": {"team": "<str>", "level": 1}}\n'
        )

    def test_param_options_given_as_a_list(self) -> None:
        def escalate(
            team: Annotated[str, Param("Team to page", options=["ops", "billing"])],
        ) -> None:
            """Page a human."""

        assert decision.render_options({"escalate": escalate}) == (
            "escalate(team: str)\n"
            "    Page a human.\n"
            '    team: Team to page (options: "ops", "billing")\n'
            '    Call: {"call": "escalate", "args": {"team": "<str>"}}\n'
        )

    def test_param_options_list_in_schema_notation(self) -> None:
        schema = {"team": Annotated[str, Param("Team", options=["ops", "billing"])]}
        assert decision.render_options({"o": ("D.", schema)}) == (
            "o(team: str)\n"
            "    D.\n"
            '    team: Team (options: "ops", "billing")\n'
            '    Call: {"call": "o", "args": {"team": "<str>"}}\n'
        )

    def test_param_description_only(self) -> None:
        def f(n: Annotated[int, Param("How many.")]) -> None:
            pass

        assert decision.render_options({"f": f}) == (
            'f(n: int)\n    n: How many.\n    Call: {"call": "f", "args": {"n": <int>}}\n'
        )


class TestDescriptions:
    def test_explicit_description_beats_the_docstring(self) -> None:
        text = decision.render_options({"greet": (greet, "Say hello.")})
        assert text == (
            "greet(name: str)\n"
            "    Say hello.\n"
            "    name\n"
            '    Call: {"call": "greet", "args": {"name": "<str>"}}\n'
        )

    def test_first_paragraph_of_the_docstring_only(self) -> None:
        def lookup(key: str) -> str:
            """Look a key up in the store.

            This second paragraph is for humans only and never reaches the model.
            """
            return key

        assert decision.render_options({"lookup": lookup}) == (
            "lookup(key: str)\n"
            "    Look a key up in the store.\n"
            "    key\n"
            '    Call: {"call": "lookup", "args": {"key": "<str>"}}\n'
        )

    def test_multi_line_first_paragraph_stays_inside_the_block(self) -> None:
        def lookup(key: str) -> str:
            """Look a key up
            in the store.
            """
            return key

        text = decision.render_options({"lookup": lookup})
        # Every line of a block but the signature is indented.
        assert all(line.startswith("    ") for line in text.splitlines()[1:])
        assert "    Look a key up in the store.\n" in text

    def test_no_docstring_means_no_description_line(self) -> None:
        def bare(key: str) -> str:
            return key

        assert decision.render_options({"bare": bare}) == (
            'bare(key: str)\n    key\n    Call: {"call": "bare", "args": {"key": "<str>"}}\n'
        )

    def test_value_option_without_description(self) -> None:
        assert decision.render_options({"skip": "SKIPPED"}) == (
            'skip()\n    Call: {"call": "skip"}\n'
        )

    def test_google_style_args_become_field_descriptions(self) -> None:
        def refund(order: str, amount: float) -> None:
            """Refund an order.

            Args:
                order: The order id.
                amount: How much to give back,
                    in euros.
            """

        assert decision.render_options({"refund": refund}) == (
            "refund(order: str, amount: float)\n"
            "    Refund an order.\n"
            "    order: The order id.\n"
            "    amount: How much to give back, in euros.\n"
            '    Call: {"call": "refund", "args": {"order": "<str>", "amount": <float>}}\n'
        )

    def test_partial_is_described_by_the_wrapped_function(self) -> None:
        text = decision.render_options({"hi": functools.partial(greet)})
        assert "partial(func" not in text
        assert text == (
            "hi(name: str)\n"
            "    Greet someone by name.\n"
            "    name\n"
            '    Call: {"call": "hi", "args": {"name": "<str>"}}\n'
        )


class TestHiddenParameters:
    def test_runtime_and_context_parameters_are_never_shown(self) -> None:
        def refund(
            amount: float,
            runtime: Runtime,
            order_id: Annotated[str, FromContext()],
            exec_runtime: Any = None,
            review_runtime: Any = None,
        ) -> None:
            """Refund."""

        assert decision.render_options({"refund": refund}) == (
            "refund(amount: float)\n"
            "    Refund.\n"
            "    amount\n"
            '    Call: {"call": "refund", "args": {"amount": <float>}}\n'
        )

    def test_runtime_annotated_parameter_under_another_name_is_hidden(self) -> None:
        def f(rt: Runtime, n: int) -> None:
            pass

        assert decision.render_options({"f": f}) == (
            'f(n: int)\n    n\n    Call: {"call": "f", "args": {"n": <int>}}\n'
        )

    def test_function_with_only_hidden_parameters_renders_name_and_bare_call(self) -> None:
        def finish(runtime: Runtime) -> None:
            """Finish up."""

        assert decision.render_options({"finish": finish}) == (
            'finish()\n    Finish up.\n    Call: {"call": "finish"}\n'
        )

    def test_star_args_and_kwargs_are_never_shown(self) -> None:
        def f(n: int, *args: str, **kwargs: str) -> None:
            pass

        assert decision.render_options({"f": f}) == (
            'f(n: int)\n    n\n    Call: {"call": "f", "args": {"n": <int>}}\n'
        )

    def test_no_fields_at_all(self) -> None:
        def ping() -> str:
            """Ping."""
            return "pong"

        assert decision.render_options({"ping": ping}) == (
            'ping()\n    Ping.\n    Call: {"call": "ping"}\n'
        )

    def test_schema_option_with_no_fields(self) -> None:
        assert decision.render_options({"o": ("Nothing to fill.", {})}) == (
            'o()\n    Nothing to fill.\n    Call: {"call": "o"}\n'
        )


def test_rendering_is_stable_across_calls_and_equal_inputs() -> None:
    first = decision.render_options(CANONICAL_OPTIONS)
    second = decision.render_options(dict(CANONICAL_OPTIONS))
    assert first == second == CANONICAL_MENU


def test_schema_cache_does_not_confuse_equal_but_different_options() -> None:
    floats = {"o": ("D.", {"cache_probe": {"type": float, "options": [1.0, 2.5]}})}
    ints = {"o": ("D.", {"cache_probe": {"type": float, "options": [1, 2.5]}})}
    assert "(options: 1.0, 2.5)" in decision.render_options(floats)
    assert "(options: 1, 2.5)" in decision.render_options(ints)


def _example_through_the_encoder(call: dict[str, Any]) -> str:
    """A ``Call:`` example as ``json.dumps`` and the slot pattern write it (the general way)."""
    from pytest_opdecide._nextstep import _field_types as ft

    text = json.dumps(call, ensure_ascii=False, default=ft._slot_default)
    return ft._SLOT_TEXT.sub(r"\1", text) if ft._SLOT_MARK in text else text


def test_call_examples_written_the_short_way_are_the_encoder_s_bytes() -> None:
    from pytest_opdecide._nextstep import _field_types as ft

    values: list[Any] = ["<str>", ft.INT_SLOT, ft.FLOAT_SLOT, ft.BOOL_SLOT, [], {}, 'é"\\\n',
                         "\ue000<int>\ue000", 1, None, ft.Slot("<x y>", "w"), "\u2028"]  # fmt: skip
    names = ["a", "é", 'q"', "\ue000", "x\ny"]
    for name in names:
        assert ft.call_example({"call": name}) == _example_through_the_encoder({"call": name})
        reversed_pairs = zip(values, values[::-1], strict=True)
        pairs = itertools.product(values, repeat=2) if name == "a" else reversed_pairs
        for first, second in pairs:
            for call in (
                {"call": name, "args": {"one": first, "two": second}},
                {"call": name, "args": {name: first}},
                {"args": {"one": first}, "call": name},
                {"call": name, "args": {}},
            ):
                assert ft.call_example(call) == _example_through_the_encoder(call), call
