"""Menus are cached by what they are made of, never by the identity of the dict.

The seed writes a menu as a dict literal inside a method: a new dict on every call, holding the
same functions, strings and tuples. Such a menu is found again; a changed one is never served
stale, whatever changed.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import pytest

from pytest_opdecide import decision
from pytest_opdecide._nextstep import _options
from pytest_opdecide._nextstep._options import _normalize, clear_caches, normalize_options


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Each test starts with no menu cached: what an earlier test left under the same names (a
    run of misses, a first sight) is not this test's."""
    clear_caches()


def lookup_order(order_id: str) -> str:
    """Look up an order by id."""
    return order_id


def route_options(description: str = "Nothing left to do.") -> dict[str, Any]:
    return {
        "lookup_order": lookup_order,
        "plan": (
            "Return a plan.",
            {"steps": [{"action": str, "priority": {"type": str, "options": ["low", "high"]}}]},
        ),
        "close": ("CLOSED", description),
        "wait": "WAITING",
    }


class Router:
    def options(self) -> dict[str, Any]:
        return {"lookup": self.lookup, "close": ("CLOSED", "Done."), "wait": "WAITING"}

    def lookup(self, order_id: str) -> str:
        """Look an order up."""
        return f"{id(self)}:{order_id}"


def test_a_menu_built_afresh_on_every_call_is_found_again() -> None:
    normalize_options(route_options())  # a first sight: kept from the second on
    first = normalize_options(route_options())
    assert normalize_options(route_options()) is first
    assert normalize_options(route_options()) is first


def test_bound_methods_made_on_every_call_find_their_menu_and_their_instance() -> None:
    router = Router()
    normalize_options(router.options())
    first = normalize_options(router.options())
    assert normalize_options(router.options()) is first
    other = Router()
    menu = normalize_options(other.options())
    assert menu is not first
    assert decision.resolve_decision('{"call": "lookup", "args": {"order_id": "A"}}', menu) == (
        f"{id(other)}:A"
    )


def test_a_menu_is_kept_from_the_second_sight_of_its_names() -> None:
    once = normalize_options(route_options())
    assert not _options._menu_cache  # seen once: no snapshots paid for
    twice = normalize_options(route_options())
    assert twice is not once  # built again, and kept this time
    assert twice.text == once.text
    assert normalize_options(route_options()) is twice
    assert normalize_options(route_options()) is twice


def test_a_menu_whose_names_differ_on_every_call_is_never_kept() -> None:
    # One option per item of a list, named after it: the names are new on every call.
    for item in range(2 * _options._MENU_CACHE_KEYS):
        menu = normalize_options({f"open_{item}": lookup_order, "wait": "WAITING"})
        assert menu.names == (f"open_{item}", "wait")
    assert not _options._menu_cache
    assert len(_options._seen_once) <= _options._MENU_CACHE_KEYS  # bounded, oldest dropped
    assert ("dict", "open_0", "wait") not in _options._seen_once
    # A key dropped from the doorkeeper is a first sight again, then kept as any other.
    normalize_options({"open_0": lookup_order, "wait": "WAITING"})
    assert not _options._menu_cache
    again = normalize_options({"open_0": lookup_order, "wait": "WAITING"})
    assert normalize_options({"open_0": lookup_order, "wait": "WAITING"}) is again


def test_a_changed_description_is_never_served_stale() -> None:
    before = decision.render_options(route_options("Nothing left to do."))
    after = decision.render_options(route_options("The customer is happy."))
    assert "    Nothing left to do.\n" in before
    assert "    The customer is happy.\n" in after


def test_a_changed_default_is_never_served_stale() -> None:
    def options(default: int | None) -> dict[str, Any]:
        if default is None:

            def seats(n: int) -> int:
                return n

        else:

            def seats(n: int = default) -> int:  # type: ignore[misc]
                return n

        return {"seats": seats, "wait": "WAITING"}

    assert decision.resolve_decision('{"call": "seats"}', options(2)) == 2
    assert decision.resolve_decision('{"call": "seats"}', options(3)) == 3
    with pytest.raises(decision.DecisionError, match="missing required arguments: \\['n'\\]"):
        decision.resolve_decision('{"call": "seats"}', options(None), max_retries=0)


def test_a_default_set_with_a_partial_is_never_served_stale() -> None:
    def seats(n: int, cabin: str) -> str:
        return f"{n} {cabin}"

    for cabin in ("economy", "business"):
        options = {"seats": functools.partial(seats, cabin=cabin), "wait": "WAITING"}
        assert decision.resolve_decision('{"call": "seats", "args": {"n": 2}}', options) == (
            f"2 {cabin}"
        )
    required = {"seats": seats, "wait": "WAITING"}
    with pytest.raises(decision.DecisionError, match=r"arguments: \['cabin'\]"):
        decision.resolve_decision('{"call": "seats", "args": {"n": 2}}', required, max_retries=0)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"n": str}, {"n": int}),
        ({"n": str}, {"n": str, "m": str}),
        ({"n": {"type": str, "options": ["a", "b"]}}, {"n": {"type": str, "options": ["a"]}}),
        ({"n": {"type": int, "options": [1, 2]}}, {"n": {"type": int, "options": [1.0, 2]}}),
        ({"n": {"type": int, "options": [1, 2]}}, {"n": {"type": int, "options": [True, 2]}}),
        ({"a": str, "b": int}, {"b": int, "a": str}),
        ({"o": {"a": str, "b": int}}, {"o": {"b": int, "a": str}}),
        ({"o": [{"a": str}]}, {"o": [{"a": int}]}),
    ],
)
def test_a_changed_spec_is_never_served_stale(before: Any, after: Any) -> None:
    old = decision.render_options({"o": ("D.", before)})
    new = decision.render_options({"o": ("D.", after)})
    assert new == decision.render_options({"o": ("D.", dict(after))})
    assert old != new
    assert decision.render_options({"o": ("D.", before)}) == old


def test_a_dict_changed_in_place_is_never_served_stale() -> None:
    options = route_options()
    first = normalize_options(options)
    options["close"] = ("CLOSED", "Changed in place.")
    assert normalize_options(options) is not first
    assert "    Changed in place.\n" in normalize_options(options).text
    options["plan"][1]["steps"][0]["action"] = int
    assert normalize_options(options).by_name["plan"].fields[0].type.item.fields[0].type.label == (  # type: ignore[attr-defined]
        "int"
    )


def test_values_set_per_call_are_each_call_s_own() -> None:
    for answer in ("forty-two", "forty-three", ["a", "list"], {"a": "dict"}, 1, True, 1.0):
        options = {"answer": answer, "wait": ("WAITING", "Not yet.")}
        result = decision.resolve_decision('{"call": "answer"}', options)
        assert result is answer
    assert normalize_options({"answer": 1, "wait": "W"}).text == (
        normalize_options({"answer": True, "wait": "W"}).text
    )


def test_an_equal_value_is_still_the_caller_s_object() -> None:
    first = {"status": "closed"}
    second = {"status": "closed"}
    assert decision.resolve_decision('{"call": "close"}', {"close": first}) is first
    assert decision.resolve_decision('{"call": "close"}', {"close": second}) is second


def test_a_value_that_becomes_a_function_is_a_function_option() -> None:
    def done() -> str:
        return "ran"

    assert decision.resolve_decision('{"call": "done"}', {"done": "DONE"}) == "DONE"
    assert decision.resolve_decision('{"call": "done"}', {"done": done}) == "ran"
    assert decision.resolve_decision('{"call": "done"}', {"done": (done, "Run it.")}) == "ran"
    assert decision.resolve_decision('{"call": "done"}', {"done": ("DONE", "Stop.")}) == "DONE"


def test_the_list_form_is_cached_and_checked_alike() -> None:
    def options(note: str) -> list[Any]:
        return [lookup_order, ("wait", note), ("plan", "Plan.", {"steps": [str]})]

    normalize_options(options("Wait."))  # a first sight: kept from the second on
    first = normalize_options(options("Wait."))
    assert normalize_options(options("Wait.")) is first
    assert "    Later.\n" in normalize_options(options("Later.")).text


def test_option_order_is_part_of_the_menu() -> None:
    a = decision.render_options({"a": "A", "b": "B"})
    b = decision.render_options({"b": "B", "a": "A"})
    assert a.startswith("a()")
    assert b.startswith("b()")


def test_values_that_refuse_comparison_are_never_a_problem() -> None:
    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no comparison")

        __hash__ = object.__hash__

    first, second = Hostile(), Hostile()
    assert decision.resolve_decision('{"call": "x"}', {"x": first, "y": "Y"}) is first
    assert decision.resolve_decision('{"call": "x"}', {"x": second, "y": "Y"}) is second


def test_a_literal_in_a_schema_changed_is_never_served_stale() -> None:
    a = decision.render_options({"o": ("D.", {"m": Literal["a", "b"]})})
    b = decision.render_options({"o": ("D.", {"m": Literal["a", "c"]})})
    assert '(options: "a", "b")' in a
    assert '(options: "a", "c")' in b


def test_a_kept_dict_whose_key_is_moved_to_the_end_is_never_served_stale() -> None:
    options = {"close": "CLOSED", "wait": "WAITING", "ask": "ASKED"}
    assert normalize_options(options).names == ("close", "wait", "ask")
    assert normalize_options(options).names == ("close", "wait", "ask")
    options["close"] = options.pop("close")
    assert normalize_options(options).names == ("wait", "ask", "close")


def test_a_kept_schema_whose_fields_are_reordered_is_never_served_stale() -> None:
    schema: dict[str, Any] = {"a": str, "b": int}
    options = {"plan": ("Plan.", schema), "close": "CLOSED"}
    assert "plan(a: str, b: int)" in normalize_options(options).text
    assert "plan(a: str, b: int)" in normalize_options(options).text
    schema["a"] = schema.pop("a")
    assert "plan(b: int, a: str)" in normalize_options(options).text


def test_menus_that_never_repeat_are_served_right_every_time() -> None:
    for n in range(40):  # past the run of misses after which most are not kept
        options = {"close": ("CLOSED", f"Close ticket {n}."), "wait": "WAITING"}
        assert f"Close ticket {n}." in normalize_options(options).text
    again = {"close": ("CLOSED", "Close ticket 3."), "wait": "WAITING"}
    assert "Close ticket 3." in normalize_options(again).text


def _fresh(options: Any) -> Any:
    """What a menu is made of, as the parser alone builds it (no cache)."""
    menu = _normalize(options)
    return _made_of(menu)


def _made_of(menu: Any) -> Any:
    return (
        menu.text,
        menu.names,
        menu.async_options,
        [
            (o.name, o.kind, o.description, o.fields, id(o.handler), id(o.value))
            for o in menu.options
        ],
    )


def _per_call(ticket: int) -> dict[str, Any]:
    def refund(amount: float) -> str:
        """Refund the customer."""
        return f"refunded {amount} on {ticket}"

    return {
        "refund": (refund, f"Refund ticket {ticket}.\nOnly once."),
        "lookup": lookup_order,
        "plan": (f"Plan for {ticket}.", {"steps": [str]}),
        "close": (f"CLOSED {ticket}", f"Close ticket {ticket}."),
        "escalate": ("ESCALATED", "Hand it over."),
        "wait": "WAITING",
    }


def test_per_call_texts_and_closures_are_each_call_s_own_and_render_as_a_fresh_menu() -> None:
    for ticket in range(40):  # past the run of misses after which most are not kept
        options = _per_call(ticket)
        menu = normalize_options(options)
        assert _made_of(menu) == _fresh(options)
        assert f"    Refund ticket {ticket}.\n    Only once.\n" in menu.text
        assert menu.by_name["refund"].handler is options["refund"][0]
        assert decision.resolve_decision('{"call": "refund", "args": {"amount": 1}}', options) == (
            f"refunded 1.0 on {ticket}"
        )
    # A menu that starts repeating after such a run is kept within the run's retry period,
    # and found from then on.
    repeated = _per_call(7)
    made = [normalize_options(repeated) for _ in range(_options._RETRY_EVERY + 1)]
    assert made[-1] is normalize_options(repeated) is normalize_options(repeated)
    assert all(_made_of(menu) == _fresh(repeated) for menu in made)


def test_a_closure_that_is_no_longer_the_same_is_read_anew() -> None:
    def menu(rename: str | None = None, mark: bool = False) -> list[Any]:
        def pay(amount: int) -> str:
            """Pay."""
            return str(amount)

        if rename is not None:
            pay.__name__ = rename
        if mark:
            pay.__dict__["marked"] = True
        return [pay, "wait"]

    assert normalize_options(menu()).names == ("pay", "wait")
    assert normalize_options(menu()).names == ("pay", "wait")
    assert normalize_options(menu("settle")).names == ("settle", "wait")
    assert normalize_options(menu()).names == ("pay", "wait")
    marked = menu(mark=True)
    assert normalize_options(marked).by_name["pay"].handler is marked[0]


def test_a_closure_without_fields_and_another_docstring_is_read_anew() -> None:
    def menu(doc: str) -> dict[str, Any]:
        def close() -> str:
            return "closed"

        close.__doc__ = doc
        return {"close": close, "wait": "WAITING"}

    for _ in range(2):
        assert "    Close it.\n" in normalize_options(menu("Close it.")).text
    assert "    Shut it.\n" in normalize_options(menu("Shut it.")).text
    assert "    Close it.\n" in normalize_options(menu("Close it.")).text
