"""Every option form is read once: the menu cache and the parser agree on each.

For every form of ``FORMS`` (dict and list, each shape) an entry is written from its parts (see
``written``); then the menu that ``normalize_options`` gives, cached or not, is the menu that the
parser alone builds from the same options (``agreed``), or both raise the same error:

* the same options written twice, in new containers and tuples, find the very same menu;
* every single change of one part (name, description, value, function, schema) gives a fresh
  menu, and the first one is still found afterwards;
* an entry rewritten in each other form of its container gives a fresh menu.

A new form in ``FORMS`` is tested here as it is, once its parts have an example in ``PARTS``.
"""

from __future__ import annotations

import collections
import copy
from typing import Any, Literal

import pytest

from pytest_opdecide._nextstep._option_forms import (
    FORMS,
    Form,
    Role,
    read_dict_entry,
    read_list_entry,
)
from pytest_opdecide._nextstep._options import Menu, _normalize, clear_caches, normalize_options


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Each test starts with no menu cached (a key keeps its last 8 menus only, and the tests
    here write many menus with the same names)."""
    clear_caches()


def act(order_id: str) -> str:
    """Act on an order."""
    return order_id


def _another_act() -> Any:
    # Named ``act`` too, so that in the list form only the function changes, not the name.
    def act(order_id: str, urgent: bool = False) -> str:
        """Act on an order, maybe urgently."""
        return order_id

    return act


def _act_documented_otherwise() -> Any:
    def act(order_id: str) -> str:
        """Act on the order at once."""
        return order_id

    return act


def route(order_id: str) -> str:
    """Route an order."""
    return order_id


class Desk:
    def act(self, order_id: str) -> str:
        """Act on an order at this desk."""
        return f"{id(self)}:{order_id}"


class Ticket:
    """A value with no equality of its own."""


Pair = collections.namedtuple("Pair", "left right")

TICKET = Ticket()
SCHEMA: dict[str, Any] = {
    "steps": [{"action": str, "priority": {"type": str, "options": ["low", "high"]}}],
    "count": {"type": int, "options": [1, 2]},
    "why": str,
}

PARTS: dict[Role, Any] = {
    "name": "act",
    "description": "Act now.",
    "function": act,
    "value": TICKET,
    "schema": SCHEMA,
}
"""One example of each part; every example option is named ``act``."""

CHANGES: dict[Role, list[Any]] = {
    "name": ["acted", "Act"],
    "description": ["Act later.", "", "Act now. "],
    "function": [
        _another_act(),
        _act_documented_otherwise(),
        route,
        Desk().act,
        TICKET,  # no longer a function: a value option (or a malformed entry)
    ],
    "value": [
        Ticket(),
        "ACT",
        1,
        True,
        {"a": 1},
        Pair(1, 2),  # a tuple: the dict form reads a handler written alone as a tuple handler
        ("ACT", "Act now."),
        act,  # no longer a value: a function option
    ],
    "schema": [
        {**SCHEMA, "why": int},
        {"why": str, **SCHEMA},
        {
            **SCHEMA,
            "steps": [{"priority": {"type": str, "options": ["low", "high"]}, "action": str}],
        },
        {**SCHEMA, "count": {"type": int, "options": [True, 2]}},
        {**SCHEMA, "count": {"type": int, "options": [1.0, 2]}},
        {**SCHEMA, "steps": [{"action": str, "priority": {"type": str, "options": ["low"]}}]},
        {**SCHEMA, "why": Literal["a", "b"]},
        {**SCHEMA, "more": str},
        {},
    ],
}
"""Other examples of each part, each a single change of the options."""


def written(form: Form, parts: dict[Role, Any]) -> Any:
    """The entry ``form`` writes from ``parts``: a new tuple on every call."""
    items = tuple(
        copy.deepcopy(parts[role]) if role == "schema" else parts[role] for role in form.parts
    )
    return items[0] if form.bare else items


def options(form: Form, **changed: Any) -> Any:
    """Options with the example entry of ``form`` (with ``changed`` parts) and one more: new
    containers, tuples and schema dicts on every call, holding the same functions and values."""
    parts: dict[Any, Any] = {**PARTS, **changed}
    entry = written(form, parts)
    if form.container == "dict":
        return {parts["name"]: entry, "wait": ("WAITING", "Not yet.")}
    return [entry, ("wait", "Not yet.")]


def shown(menu: Menu) -> Any:
    """All a menu is made of, values and functions by identity."""
    return (
        menu.text,
        menu.names,
        menu.async_options,
        menu.needs_context,
        [
            (o.name, o.kind, o.description, o.fields, o.hidden, id(o.handler), id(o.value))
            for o in menu.options
        ],
    )


def agreed(opts: Any) -> Menu | None:
    """The menu ``normalize_options`` gives for ``opts``, checked against the menu the parser
    alone builds (``None`` where both raise, with the same message)."""
    try:
        expected = _normalize(opts)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        with pytest.raises(type(exc)) as raised:
            normalize_options(opts)
        assert str(raised.value) == message
        return None
    menu = normalize_options(opts)
    assert shown(menu) == shown(expected)
    return menu


def kept(opts: Any) -> Menu | None:
    """:func:`agreed` of ``opts`` once its menu is kept: a menu is kept from the second sight
    of its names on (its first sight is checked too)."""
    agreed(copy.copy(opts))
    return agreed(opts)


def form_id(form: Form) -> str:
    return f"{form.container} {form.written}"


def roles_of(form: Form) -> tuple[Role, ...]:
    """The parts a change can touch: a dict entry's name is its key, not one of its parts (a
    list-form function's is its ``__name__``, changed with the function)."""
    return ("name", *form.parts) if form.container == "dict" else form.parts


SINGLE_CHANGES = [
    pytest.param(form, role, index, id=f"{form_id(form)}: {role} {index}")
    for form in FORMS
    for role in roles_of(form)
    for index in range(len(CHANGES[role]))
]


@pytest.mark.parametrize("form", FORMS, ids=form_id)
def test_each_example_is_read_as_its_form(form: Form) -> None:
    entry = written(form, PARTS)
    reading = read_dict_entry("act", entry) if form.container == "dict" else read_list_entry(entry)
    assert reading.form is form
    assert reading.entry is entry
    assert reading.name == "act"


@pytest.mark.parametrize("form", FORMS, ids=form_id)
def test_a_menu_written_twice_is_found_again(form: Form) -> None:
    first = kept(options(form))
    assert first is not None
    assert agreed(options(form)) is first
    assert agreed(options(form)) is first


@pytest.mark.parametrize(("form", "role", "index"), SINGLE_CHANGES)
def test_every_single_change_of_a_part_gives_a_fresh_menu(
    form: Form, role: Role, index: int
) -> None:
    first = kept(options(form))
    changed = kept(options(form, **{role: CHANGES[role][index]}))
    assert changed is not first
    if changed is not None and role != "value":
        # A changed value is each call's own (a new menu every time); any other change is a
        # menu of its own, cached as such.
        assert agreed(options(form, **{role: CHANGES[role][index]})) is changed
    assert agreed(options(form)) is first


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(before, after, id=f"{form_id(before)} -> {after.written}")
        for before in FORMS
        for after in FORMS
        if before.container == after.container and before is not after
    ],
)
def test_an_entry_rewritten_in_another_form_gives_a_fresh_menu(before: Form, after: Form) -> None:
    first = kept(options(before))
    rewritten = kept(options(after))
    assert rewritten is not None
    assert rewritten is not first
    assert agreed(options(before)) is first


class Nameless:
    def __call__(self) -> None:
        pass

    def __repr__(self) -> str:
        return "Nameless()"


LIST_FORMS = (
    'List options are fn, (fn, "description"), "name", ("name", "description") or '
    '("name", "description", {schema}); got'
)
NAMELESS = (
    'Option Nameless() has no usable __name__ to pick it by: use the dict form {"name": fn} or a '
    "named function"
)
TUPLE_HANDLER = (
    'Option \'o\': a tuple handler must be (value, "description"), (function, "description") '
    'or ("description", {schema}); got a'
)


@pytest.mark.parametrize(
    ("malformed", "message"),
    [
        ({"": "X"}, "Option names must be non-empty strings, got ''"),
        ({3: "X"}, "Option names must be non-empty strings, got 3"),
        ({"o": (1, 2, 3)}, f"{TUPLE_HANDLER} 3-tuple"),
        ({"o": ()}, f"{TUPLE_HANDLER} 0-tuple"),
        ({"o": (act, 5)}, "Option 'o': the description must be a string, got int"),
        ({"o": (1, ["a"])}, "Option 'o': the description must be a string, got list"),
        ({"o": Pair(1, 2)}, "Option 'o': the description must be a string, got int"),
        ([""], "Option names must be non-empty strings, got ''"),
        (
            [(act, "D.", "E.")],
            "Option 'act': a function entry is fn or (fn, \"description\"), got a 3-tuple",
        ),
        ([(act,)], "Option 'act': a function entry is fn or (fn, \"description\"), got a 1-tuple"),
        ([("o",)], f"{LIST_FORMS} ('o',)"),
        ([("o", "D.", {}, 4)], f"{LIST_FORMS} ('o', 'D.', {{}}, 4)"),
        ([("o", 5)], "Option 'o': the description must be a string, got int"),
        ([("o", "D.", ["a"])], "Option 'o': a schema must be a dict of fields, got list"),
        ([("o", 5, ["a"])], "Option 'o': the description must be a string, got int"),
        ([("", "D.")], f"{LIST_FORMS} ('', 'D.')"),
        ([()], f"{LIST_FORMS} tuple ()"),
        ([5], f"{LIST_FORMS} int 5"),
        ([act, 5, ""], f"{LIST_FORMS} int 5"),
        ([Nameless()], NAMELESS),
        ([(Nameless(), "D.")], NAMELESS),
        ([(Nameless(), "D.", "E.")], NAMELESS),
        ({"o": (1, 2), 3: "X"}, "Option 'o': the description must be a string, got int"),
        ("options", "options must be a dict or list, got str"),
        ([], "options must offer at least one option, got none"),
        (["o", ("o", "D.")], "Duplicate option name 'o' in options list"),
    ],
)
def test_a_malformed_entry_says_what_is_wrong_and_the_first_one_is_reported(
    malformed: Any, message: str
) -> None:
    with pytest.raises((TypeError, ValueError)) as raised:
        normalize_options(malformed)
    assert str(raised.value) == message
    assert agreed(malformed) is None
