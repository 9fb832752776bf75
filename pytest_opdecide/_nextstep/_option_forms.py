"""The option forms: each entry of the dict or list form read once, into a :class:`Reading`.

An entry is written in one of the :data:`FORMS` (the seed's "Option containers"); each has
a kind and parts, each part a :data:`Role`:

    dict  fn                                   function  function
    dict  (fn, "description")                  function  function, description
    dict  value                                value     value
    dict  (value, "description")               value     value, description
    dict  ("description", {schema})            schema    description, schema
    list  fn                                   function  function (named by its __name__)
    list  (fn, "description")                  function  function, description
    list  "name"                               value     name (which is also the value)
    list  ("name", "description")              value     name, description
    list  ("name", "description", {schema})    schema    name, description, schema

A dict entry's name is its key. :func:`read_entries` reads every entry of an options
container, :func:`read_dict_entry` and :func:`read_list_entry` one entry each: each says which
form the entry is written in and what its parts are, or raises the ``TypeError`` that says what
is wrong with a malformed one. Two things are built from a reading, and from nothing else:

* ``_options`` builds the :class:`~._options.Option` (introspecting the function, compiling the
  schema);
* the menu cache in ``_options`` copies each part by its role into the snapshot it compares the
  next call's options with, and knows from :attr:`Form.value_rule` which other values keep an
  entry in its form.

So a new form is one :class:`Form` here and one branch in its reader; the menu cache follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

__all__ = [
    "FORMS",
    "Form",
    "OptionKind",
    "Reading",
    "Role",
    "callable_name",
    "read_dict_entry",
    "read_entries",
    "read_list_entry",
]

OptionKind = Literal["function", "value", "schema"]

Role = Literal["name", "description", "function", "value", "schema"]
"""What a part of an entry is: a list-form entry's name, the description, the function, the
value or the schema."""


def _is_bare_value(handler: object) -> bool:
    """Whether a dict-form handler written alone is a value: neither a tuple (a handler with
    its description) nor a function."""
    return not isinstance(handler, tuple) and not callable(handler)


def _is_described_value(target: object) -> bool:
    """Whether ``(target, "description")`` in the dict form is a value: a function there is a
    function option. (A string before a dict is a schema option, but a description is no dict:
    with its description kept, no other target makes the entry one.)"""
    return not callable(target)


@dataclass(frozen=True, slots=True, eq=False)
class Form:
    """One way of writing an option entry.

    Attributes:
        container: ``"dict"`` or ``"list"``.
        written: The form as the seed writes it, e.g. ``'(value, "description")'``.
        kind: The kind of option it makes.
        parts: The role of each item of the tuple the entry is, in order; for a bare entry,
            the role of the entry itself.
        bare: Whether the entry is its one part (``fn``, ``value``, ``"name"``), not a tuple.
        value_rule: For a form with a value part: what else, in the value's place (the rest of
            the entry unchanged), is still read as this form's value. The reader decides with it,
            and the menu cache takes any such value for another call's value of the same menu.
    """

    container: Literal["dict", "list"]
    written: str
    kind: OptionKind
    parts: tuple[Role, ...]
    bare: bool = False
    value_rule: Callable[[object], bool] | None = None


DICT_FUNCTION = Form("dict", "fn", "function", ("function",), bare=True)
DICT_DESCRIBED_FUNCTION = Form(
    "dict", '(fn, "description")', "function", ("function", "description")
)
DICT_VALUE = Form("dict", "value", "value", ("value",), bare=True, value_rule=_is_bare_value)
DICT_DESCRIBED_VALUE = Form(
    "dict",
    '(value, "description")',
    "value",
    ("value", "description"),
    value_rule=_is_described_value,
)
DICT_SCHEMA = Form("dict", '("description", {schema})', "schema", ("description", "schema"))
LIST_FUNCTION = Form("list", "fn", "function", ("function",), bare=True)
LIST_DESCRIBED_FUNCTION = Form(
    "list", '(fn, "description")', "function", ("function", "description")
)
LIST_NAME = Form("list", '"name"', "value", ("name",), bare=True)
LIST_DESCRIBED_NAME = Form("list", '("name", "description")', "value", ("name", "description"))
LIST_SCHEMA = Form(
    "list", '("name", "description", {schema})', "schema", ("name", "description", "schema")
)

FORMS = (
    DICT_FUNCTION,
    DICT_DESCRIBED_FUNCTION,
    DICT_VALUE,
    DICT_DESCRIBED_VALUE,
    DICT_SCHEMA,
    LIST_FUNCTION,
    LIST_DESCRIBED_FUNCTION,
    LIST_NAME,
    LIST_DESCRIBED_NAME,
    LIST_SCHEMA,
)
"""Every form an entry can be written in."""


class Reading(NamedTuple):
    """One entry, read (a named tuple: one is made per entry of every menu read anew, at a
    fraction of a frozen dataclass's cost).

    Attributes:
        form: The form it is written in.
        entry: The entry as written (for the dict form, the handler, without its key).
        name: The option name.
        description: The description written with it; ``None`` for a function written without
            one (the menu shows its docstring's first paragraph).
        function: The function of a function option.
        value: What a value option resolves to (a list-form value option's is its name).
        schema: The schema notation of a schema option.
    """

    form: Form
    entry: Any
    name: str
    description: str | None = ""
    function: Callable[..., Any] | None = None
    value: Any = None
    schema: dict[str, Any] | None = None


def read_entries(options: Any) -> Iterator[Reading]:
    """The entries of the dict form (any mapping) or the list form (a list or tuple), read one
    by one, so that the first malformed entry is the one reported.

    Raises:
        TypeError: ``options`` is neither, or an entry is malformed.
    """
    if isinstance(options, Mapping):
        for name, handler in options.items():
            yield read_dict_entry(name, handler)
    elif isinstance(options, list | tuple):
        for item in options:
            yield read_list_entry(item)
    else:
        raise TypeError(f"options must be a dict or list, got {type(options).__name__}")


def read_dict_entry(name: Any, handler: Any) -> Reading:
    """The dict-form entry ``{name: handler}``, read.

    Raises:
        TypeError: The name is no non-empty string, or the handler no form of the dict form.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Option names must be non-empty strings, got {name!r}")
    if isinstance(handler, tuple):
        if len(handler) == 2 and isinstance(handler[0], str) and isinstance(handler[1], dict):
            return Reading(DICT_SCHEMA, handler, name, handler[0], schema=handler[1])
        if len(handler) == 2:
            target, description = handler
            description = _check_description(name, description)
            if _is_described_value(target):
                return Reading(DICT_DESCRIBED_VALUE, handler, name, description, value=target)
            return Reading(DICT_DESCRIBED_FUNCTION, handler, name, description, function=target)
        raise TypeError(
            f"Option '{name}': a tuple handler must be (value, \"description\"), "
            f'(function, "description") or ("description", {{schema}}); got a {len(handler)}-tuple'
        )
    if _is_bare_value(handler):
        return Reading(DICT_VALUE, handler, name, value=handler)
    return Reading(DICT_FUNCTION, handler, name, None, function=handler)


_LIST_FORMS = (
    'List options are fn, (fn, "description"), "name", ("name", "description") or '
    '("name", "description", {schema}); got'
)


def read_list_entry(item: Any) -> Reading:
    """The list-form entry ``item``, read.

    Raises:
        TypeError: The item is no form of the list form, or a function in it has no name.
    """
    if isinstance(item, str):
        if not item:
            raise TypeError("Option names must be non-empty strings, got ''")
        return Reading(LIST_NAME, item, item, value=item)
    if callable(item):
        return Reading(LIST_FUNCTION, item, callable_name(item), None, function=item)
    if isinstance(item, tuple) and item:
        head = item[0]
        if callable(head) and not isinstance(head, str):
            if len(item) != 2:
                raise TypeError(
                    f"Option {callable_name(head)!r}: a function entry is fn or (fn, "
                    f'"description"), got a {len(item)}-tuple'
                )
            name = callable_name(head)
            description = _check_description(name, item[1])
            return Reading(LIST_DESCRIBED_FUNCTION, item, name, description, function=head)
        if isinstance(head, str) and head:
            if len(item) == 2:
                description = _check_description(head, item[1])
                return Reading(LIST_DESCRIBED_NAME, item, head, description, value=head)
            if len(item) == 3:
                description = _check_description(head, item[1])
                schema = _check_schema(head, item[2])
                return Reading(LIST_SCHEMA, item, head, description, schema=schema)
        raise TypeError(f"{_LIST_FORMS} {item!r}")
    raise TypeError(f"{_LIST_FORMS} {type(item).__name__} {item!r}")


def callable_name(fn: Any) -> str:
    """The name a function is picked by where no key names it (the list form, native tools).

    Raises:
        TypeError: It has no usable ``__name__`` (a lambda, most callable objects).
    """
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or not name or name == "<lambda>":
        raise TypeError(
            f"Option {fn!r} has no usable __name__ to pick it by: "
            'use the dict form {"name": fn} or a named function'
        )
    return name


def _check_description(name: str, description: Any) -> str:
    if not isinstance(description, str):
        raise TypeError(
            f"Option '{name}': the description must be a string, got {type(description).__name__}"
        )
    return description


def _check_schema(name: str, schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise TypeError(
            f"Option '{name}': a schema must be a dict of fields, got {type(schema).__name__}"
        )
    return schema
