"""Options: the dict and list forms normalised into one menu, and the menu rendered as text.

Each entry is read once, by ``_option_forms``, into the form it is written in and its parts;
from that reading this module builds the entry's :class:`Option` (a function's shape comes from
``_function_shapes``; the section *schemas* turns a schema notation into fields and a
validator), and the menu cache its snapshot of the entry (*the menu cache*). The menu text is
written by ``_menu_text``.

Normalising is on the hot path of every decision, so what does not change between calls is
cached, always by what it is made of, never by object identity: a function's introspected
fields and argument validator (by function, checked against its defaults and docstring), a
schema's fields and validator (by its frozen notation), the rendered menu text (by the options'
structure), and whole menus (by a copy of the options, compared on every call, so that a menu
written as a dict literal inside a method, new on every call, is found again, and a changed
one never is).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, assert_never

from pytest_opdecide._bounded import drop_oldest
from pytest_opdecide._nextstep._annotations import (
    META_KEYS,
    annotation_label,
    object_from_notation,
)
from pytest_opdecide._nextstep._field_types import (
    FieldSpec,
    UnsupportedType,
)
from pytest_opdecide._nextstep._function_shapes import (
    RUNTIME_PARAMETER_NAMES,
    _function_shape,
    _FunctionShape,
    _FunctionType,
    _UnsupportedParameter,
    clear_shape_caches,
    known_shape,
)
from pytest_opdecide._nextstep._menu_text import (
    clear_frames,
    fieldless_block,
    framed_block,
    render_block,
    render_menu,
)
from pytest_opdecide._nextstep._option_forms import (
    FORMS,
    OptionKind,
    Reading,
    Role,
    read_dict_entry,
    read_entries,
)
from pytest_opdecide._nextstep._response_schema import menu_schema
from pytest_opdecide._nextstep._validation import ArgsValidator

__all__ = ["RUNTIME_PARAMETER_NAMES", "Menu", "Option", "normalize_options", "render_menu"]


@dataclass(frozen=True, slots=True, eq=False)
class Option:
    """One normalised option.

    Attributes:
        name: The option name the model picks.
        kind: ``"function"``, ``"value"`` or ``"schema"``.
        description: Shown under the signature; may be empty.
        fields: The fields the model fills, in order.
        hidden: Function parameters filled by the library (context and runtime), never shown.
        handler: The original function, for function options.
        value: What a value option resolves to.
        positional: Names of positional-only parameters, in signature order.
        validator: The compiled check of the fields (``None`` for an option without fields).
    """

    name: str
    kind: OptionKind
    description: str
    fields: tuple[FieldSpec, ...]
    hidden: tuple[FieldSpec, ...] = ()
    handler: Callable[..., Any] | None = None
    value: Any = None
    positional: tuple[str, ...] = ()
    validator: ArgsValidator | None = None


_SET_OPTION = tuple(getattr(Option, name).__set__ for name in Option.__slots__)


def _made_option(
    name: str,
    kind: OptionKind,
    description: str,
    fields: tuple[FieldSpec, ...],
    hidden: tuple[FieldSpec, ...],
    handler: Callable[..., Any] | None,
    value: Any,
    positional: tuple[str, ...],
    validator: ArgsValidator | None,
) -> Option:
    """``Option(...)`` with every field given, made at once: each slot set directly, past the
    frozen dataclass's ``object.__setattr__`` per field (a menu read anew makes one per
    entry)."""
    made: Option = object.__new__(Option)
    s_name, s_kind, s_description, s_fields, s_hidden, s_handler, s_value, s_positional, \
        s_validator = _SET_OPTION  # fmt: skip
    s_name(made, name)
    s_kind(made, kind)
    s_description(made, description)
    s_fields(made, fields)
    s_hidden(made, hidden)
    s_handler(made, handler)
    s_value(made, value)
    s_positional(made, positional)
    s_validator(made, validator)
    return made


@dataclass(frozen=True, slots=True, eq=False)
class Menu:
    """Normalised options with their rendered text.

    Attributes:
        options: Options in menu order.
        by_name: Options by name.
        names: Option names in menu order.
        text: The rendered menu (ends with exactly one newline).
        async_options: Names of options whose function is a coroutine function.
        needs_context: Whether any function option reads parameters from ``context=``.
    """

    options: tuple[Option, ...]
    by_name: dict[str, Option]
    names: tuple[str, ...]
    text: str
    async_options: tuple[str, ...] = ()
    needs_context: bool = False
    schema_json: list[str] = field(default_factory=list, repr=False)
    """The JSON text of :meth:`response_schema`, once it was asked for (kept by the copies of
    this menu that differ only in their options' values)."""

    def response_schema(self) -> dict[str, Any]:
        """The menu as a JSON schema (see :mod:`._response_schema`): a new copy on every call.

        Built the first time it is asked for, then kept with the menu: a decision whose runtime
        never reads it pays nothing.
        """
        built = self.schema_json
        if not built:
            built.append(json.dumps(menu_schema(self.options), ensure_ascii=False))
        return json.loads(built[0])  # type: ignore[no-any-return]


# --- schemas -----------------------------------------------------------------------------------

_schema_cache: dict[Any, tuple[tuple[FieldSpec, ...], ArgsValidator | None]] = {}
_SCHEMA_CACHE_MAX = 2048


def _freeze(notation: Any) -> Any:
    if isinstance(notation, dict):
        return ("{", tuple((k, _freeze(v)) for k, v in notation.items()))
    if isinstance(notation, list | tuple):
        return ("[" if isinstance(notation, list) else "(", tuple(_freeze(v) for v in notation))
    hash(notation)  # unhashable leaves (sets, objects) make the schema uncacheable
    # The type is part of the key: 1 == 1.0 == True, but they render differently.
    return (type(notation), notation)


def _schema_option(name: str, description: str, schema: dict[str, Any]) -> Option:
    try:
        key: Any = _freeze(schema)
        cached = _schema_cache.get(key)
    except TypeError:
        key, cached = None, None
    if cached is None:
        fields = object_from_notation(schema, where=name).fields
        try:
            validator = ArgsValidator(fields, all_required=True) if fields else None
        except UnsupportedType as exc:
            raise TypeError(
                f"Option '{name}': pydantic cannot validate this schema ({exc})"
            ) from None
        cached = (fields, validator)
        if key is not None:
            if len(_schema_cache) >= _SCHEMA_CACHE_MAX:
                _schema_cache.clear()
            _schema_cache[key] = cached
    return Option(name, "schema", description, cached[0], validator=cached[1])


# --- options built from their readings ---------------------------------------------------------


def _option(reading: Reading) -> Option:
    """The option an entry makes, from its reading (see :mod:`._option_forms`)."""
    kind = reading.form.kind
    if kind == "function":
        assert reading.function is not None
        return _function_option(reading.name, reading.function, reading.description)
    if kind == "schema":
        assert reading.schema is not None
        assert reading.description is not None
        return _schema_option(reading.name, reading.description, reading.schema)
    return _made_option(
        reading.name, "value", reading.description or "", (), (), None, reading.value, (), None
    )


def _function_option(
    name: str,
    fn: Callable[..., Any],
    description: str | None,
    shape: _FunctionShape | None = None,
) -> Option:
    """The option of ``fn``, from its ``shape`` when it was just read (else read here)."""
    if shape is None:
        shape = _option_shape(name, fn)
    return _made_option(
        name,
        "function",
        shape.description if description is None else description,
        shape.fields,
        shape.hidden,
        fn,
        None,
        shape.positional,
        shape.validator,
    )


def _option_shape(name: str, fn: Callable[..., Any]) -> _FunctionShape:
    try:
        return _function_shape(fn)
    except _UnsupportedParameter as exc:
        raise TypeError(_unsupported_message(name, exc)) from None


def _unsupported_message(option: str, exc: _UnsupportedParameter) -> str:
    if not exc.parameter:
        return f"Option '{option}': pydantic cannot validate its parameters ({exc.reason})"
    shown = exc.annotation if isinstance(exc.annotation, str) else annotation_label(exc.annotation)
    return (
        f"Option '{option}', parameter '{exc.parameter}': {shown} cannot be checked ("
        f"{exc.reason}). Annotate the parameter with a type pydantic validates from JSON (str, "
        "int, date, Decimal, a TypedDict, a pydantic model...), with Any to take any value "
        f"unchecked, or fill it from context=: Annotated[{shown}, FromContext()]"
    )


# --- the menu cache ----------------------------------------------------------------------------
# A menu is cached with copies of the options it was made from (*snapshots*), compared with the
# options of every call with ``==``: containers and leaves compare in C, identical objects at
# once, so a menu written as a dict literal inside a method (a new dict on every call, holding
# the same functions, strings and tuples) is found again at little cost. A snapshot is built
# from the readings the menu was built from (see ``_option_forms``), each entry in the form it
# is written in and each part by its role, so that the cache and the menu never read an entry
# apart. Where ``==`` alone would serve a changed menu stale, a snapshot holds a marker that
# compares in Python:


class _Exact:
    """A number in a schema snapshot: ``1``, ``1.0`` and ``True`` are equal but render apart."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self.value) and bool(other == self.value)

    __hash__ = None  # type: ignore[assignment]


class _Ordered:
    """A schema dict whose order is rendered (its fields): dict ``==`` ignores order."""

    __slots__ = ("keys", "plain")

    def __init__(self, items: list[tuple[Any, Any]]) -> None:
        self.plain = dict(items)
        self.keys = tuple(self.plain)

    def __eq__(self, other: object) -> bool:
        return type(other) is dict and self.plain == other and tuple(other) == self.keys

    __hash__ = None  # type: ignore[assignment]


def _any_value(rule: Callable[[object], bool]) -> object:
    """A value option's value in the loose snapshot: equal to any value that its form reads as
    its value in the same place, as the form's own ``rule`` decides (values are not part of the
    menu; a call's own are bound to it)."""

    class AnyValue:
        __slots__ = ()
        # The rule is the comparison itself: as a static method it is called with the other
        # operand alone, so that comparing costs the rule's call and no more.
        __eq__ = staticmethod(rule)
        __hash__ = None  # type: ignore[assignment]

    return AnyValue()


class _Same:
    """A value in an exact snapshot: only the very same object (``1``, ``1.0`` and ``True``
    are equal, and an equal dict is not the caller's dict). Strings need no marker."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return other is self.value

    __hash__ = None  # type: ignore[assignment]


class _SameFunction:
    """A plain function in an exact snapshot: the very same function, with the parts its entry
    is read from as they were (a function object can be changed in place: its defaults, its
    docstring, its annotations reassigned or edited), each the very same object."""

    __slots__ = ("annotations", "defaults", "doc", "fn", "kwdefaults")

    def __init__(self, fn: Any) -> None:
        self.fn, self.defaults, self.kwdefaults = fn, fn.__defaults__, fn.__kwdefaults__
        # A copy: the function's own dict can be edited in place. Compared in C, each value
        # first by identity.
        self.doc, self.annotations = fn.__doc__, dict(fn.__annotations__)

    def __eq__(self, other: object) -> bool:
        return (
            other is self.fn
            and other.__defaults__ is self.defaults
            and other.__kwdefaults__ is self.kwdefaults
            and other.__doc__ is self.doc
            and other.__annotations__ == self.annotations
        )

    __hash__ = None  # type: ignore[assignment]


_ANY_VALUE = {form: _any_value(form.value_rule) for form in FORMS if form.value_rule is not None}


class _AnyText:
    """A description in the loose snapshot: any string (a description with per-call text is
    the same menu with that block written anew)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is str

    __hash__ = None  # type: ignore[assignment]


_ANY_TEXT = _AnyText()


class _SameShape:
    """A plain function in the loose snapshot: equal to any function of the same code, globals,
    name and shape (a closure defined anew on every call), without attributes of its own."""

    __slots__ = ("code", "fn", "globals", "name", "same", "shape")

    def __init__(self, fn: Any, shape: Any) -> None:
        self.fn, self.shape, self.same = fn, shape, _SameFunction(fn)
        self.code, self.globals, self.name = fn.__code__, fn.__globals__, fn.__name__

    def __eq__(self, other: object) -> bool:
        if other is self.fn:  # unless it was changed in place since (as _SameFunction tells)
            same = self.same
            return (
                other.__defaults__ is same.defaults
                and other.__kwdefaults__ is same.kwdefaults
                and other.__doc__ is same.doc
                and other.__annotations__ == same.annotations
            )
        return (
            type(other) is _FunctionType
            and other.__code__ is self.code
            and other.__globals__ is self.globals
            and not other.__dict__
            and other.__name__ == self.name
            and known_shape(other) is self.shape
        )

    __hash__ = None  # type: ignore[assignment]


def _free_parts(reading: Reading) -> dict[Role, object]:
    """The markers of the loose snapshot, by the role of the part each stands for: a value, a
    description, a plain function (whose shape is kept by code: the one the menu was just built
    from)."""
    form = reading.form
    free: dict[Role, object] = {}
    if form.value_rule is not None:
        free["value"] = _ANY_VALUE[form]
    if "description" in form.parts:
        free["description"] = _ANY_TEXT
    fn = reading.function
    if type(fn) is _FunctionType and not fn.__dict__:
        shape = known_shape(fn)
        if shape is not None:
            free["function"] = _SameShape(fn, shape)
    return free


class _Uncacheable(Exception):
    pass


def _schema_snapshot(value: Any, ordered: bool, depth: int = 0) -> Any:
    if depth > 64:
        raise _Uncacheable
    kind = type(value)
    if kind is dict:
        copied = [(k, _schema_snapshot(v, ordered, depth + 1)) for k, v in value.items()]
        if ordered and len(copied) > 1 and not set(value) <= META_KEYS:
            return _Ordered(copied)  # fields: their order is rendered
        return dict(copied)
    if kind is list:
        return [_schema_snapshot(v, ordered, depth + 1) for v in value]
    if kind is tuple:
        return tuple(_schema_snapshot(v, ordered, depth + 1) for v in value)
    if kind is int or kind is float or kind is bool:
        return _Exact(value)
    if kind is not str and isinstance(value, dict | list | tuple | int | float):
        raise _Uncacheable  # a subclass may compare in its own way
    return value


def _part_snapshot(role: Role, part: Any, *, ordered: bool) -> Any:
    if role == "schema":
        return _schema_snapshot(part, ordered)
    if role == "value":
        return part if type(part) is str or part is None else _Same(part)
    if role == "function":
        # The same function, as it was; any other callable: an equal one (a bound method: of
        # the same instance).
        return _SameFunction(part) if type(part) is _FunctionType else part
    if role == "name" or role == "description":
        return part
    assert_never(role)


def _entry_snapshot(
    reading: Reading, free: dict[Role, object] | None = None, *, ordered: bool = True
) -> Any:
    """The snapshot of one entry: the entry as written, each part copied by its role. The exact
    one holds values themselves; the loose one, in place of each ``free`` part, its marker."""
    form, entry = reading.form, reading.entry
    free = free or {}
    if form.bare:
        role = form.parts[0]
        return free[role] if role in free else _part_snapshot(role, entry, ordered=ordered)
    parts = tuple(
        free[role] if role in free else _part_snapshot(role, part, ordered=ordered)
        for role, part in zip(form.parts, entry, strict=True)
    )
    if type(entry) is tuple and all(copy is part for copy, part in zip(parts, entry, strict=True)):
        # Every part stands for itself: the entry is its own snapshot, and the same tuple (a
        # constant in the caller's code) compares with it at once, by identity.
        return entry
    return parts


@dataclass(slots=True, eq=False)
class _Entry:
    exact: Any
    """Equal to options that make this very menu."""
    loose: Any
    """Equal to options that make this menu with other values (``None``: no value options)."""
    menu: Menu
    last: Any
    """The options object last found here, and a copy to tell whether it changed since: the
    same object needs no check of its dicts' order (which ``==`` cannot see), only of what was
    assigned."""
    copy: Any
    free_places: tuple[tuple[int, Any, int | None, Role], ...] = ()
    """Where a call's own parts are, for the loose snapshot: each free part's option index in the
    menu, its entry's key in the options (its name, or its index in a list), its place in the
    tuple the entry is (``None``: written bare) and its role."""
    order: tuple[Any, ...] = ()  # a dict-form menu's keys, in order (dict ``==`` ignores it)
    blocks: list[str] | None = None
    """The menu's text, block by block, once a call's descriptions differed from it."""


# ("dict", names) or ("list", length) -> entries, the most recent first.
_menu_cache: dict[Any, list[_Entry]] = {}
_MENU_CACHE_KEYS = 256
_ENTRIES_PER_KEY = 8

# key -> how many calls in a row missed every menu kept under it (see ``normalize_options``).
_misses: dict[Any, int] = {}
_MISSES_BEFORE_SKIPPING = 8
_RETRY_EVERY = 64  # during such a run, how often a call searches every kept menu and is kept

# Keys seen once, whose menu is not kept yet (see ``_kept``), oldest first.
_seen_once: dict[Any, None] = {}

# id(options) -> the entry whose ``last`` it is: a menu kept in a constant is found without
# building its key. An id is trusted only while ``entry.last`` is that very object. Options
# found by content are not added (a dict built on every call would churn this table).
_last_seen: dict[int, _Entry] = {}


def _seen(entry: _Entry, options: Any) -> None:
    entry.last = options
    if len(_last_seen) >= _MENU_CACHE_KEYS:
        drop_oldest(_last_seen, _MENU_CACHE_KEYS)
    _last_seen[id(options)] = entry


def _option_with(option: Option, role: Role, part: Any) -> Option:
    """``option`` with a call's own value, description or function (of the same shape)."""
    o = option
    if role == "value":
        return _made_option(o.name, o.kind, o.description, o.fields, o.hidden, o.handler, part,
                            o.positional, o.validator)  # fmt: skip
    if role == "description":
        return _made_option(o.name, o.kind, part, o.fields, o.hidden, o.handler, o.value,
                            o.positional, o.validator)  # fmt: skip
    return _made_option(o.name, o.kind, o.description, o.fields, o.hidden, part, o.value,
                        o.positional, o.validator)  # fmt: skip


def _rebound(entry: _Entry, options: Any) -> tuple[Menu, bool]:
    """The cached menu with this call's own parts (values, descriptions, functions of the same
    shape), and whether its text changed: only the blocks whose description changed are
    written anew."""
    menu = entry.menu
    changed: list[Option] | None = None
    described: list[int] = []
    for index, where, place, role in entry.free_places:
        handler = options[where]
        part = handler if place is None else handler[place]
        current = menu.options[index] if changed is None else changed[index]
        if role == "value":
            if part is current.value:
                continue
        elif role == "description":
            if part == current.description:
                continue
            described.append(index)
        elif part is current.handler:
            continue
        if changed is None:
            changed = list(menu.options)
        changed[index] = _option_with(current, role, part)
    if changed is None:
        return menu, False
    text = menu.text
    if described:
        if entry.blocks is None:
            entry.blocks = [render_block(o) for o in menu.options]
        blocks = entry.blocks.copy()
        for index in described:
            blocks[index] = render_block(changed[index])
        text = "".join(blocks)[:-1]
    by_name = {o.name: o for o in changed}
    rebound = Menu(
        tuple(changed),
        by_name,
        menu.names,
        text,
        menu.async_options,
        menu.needs_context,
        menu.schema_json,  # the schema is made of names and fields alone
    )
    return rebound, bool(described)


def _snapshot(
    key: Any,
    options: Any,
    readings: list[Reading],
    free: list[dict[Role, object]] | None = None,
    *,
    ordered: bool = True,
) -> Any:
    """A snapshot of ``options``: the same container, each entry's snapshot taken from its
    reading (the loose one with the ``free`` markers of each)."""
    frees = free or [{}] * len(readings)
    if key[0] == "dict":
        return {
            r.name: _entry_snapshot(r, f, ordered=ordered)
            for r, f in zip(readings, frees, strict=True)
        }
    return type(options)(
        _entry_snapshot(r, f, ordered=ordered) for r, f in zip(readings, frees, strict=True)
    )


def _remember(
    key: Any,
    options: Any,
    menu: Menu,
) -> None:
    """Cache ``menu`` under ``key`` with the snapshots of ``options`` (see :class:`_Entry`)."""
    by_key = key[0] == "dict"
    readings = list(read_entries(options))
    free = [_free_parts(r) for r in readings]
    places = tuple(
        (
            index,
            r.name if by_key else index,
            None if r.form.bare else r.form.parts.index(role),
            role,
        )
        for index, (r, markers) in enumerate(zip(readings, free, strict=True))
        for role in markers
    )
    try:
        # A function's exact copy is the one its loose marker holds (made once, not twice).
        same: list[dict[Role, object]] = []
        for markers in free:
            marker = markers.get("function")
            same.append({"function": marker.same} if isinstance(marker, _SameShape) else {})
        exact = _snapshot(key, options, readings, same)
        # The same object may have been changed since in what ``==`` cannot see (the order of
        # its keys, or of a schema's fields): its copy is the ordered snapshot, and the key
        # order is checked with it.
        copy = exact
        loose = _snapshot(key, options, readings, free) if places else None
    except _Uncacheable:
        return
    entries = _menu_cache.get(key)
    if entries is None:
        if len(_menu_cache) >= _MENU_CACHE_KEYS:
            drop_oldest(_menu_cache, _MENU_CACHE_KEYS)
        entries = _menu_cache[key] = []
    entry = _Entry(exact, loose, menu, options, copy, places, tuple(options) if by_key else ())
    entries.insert(0, entry)
    _seen(entry, options)
    del entries[_ENTRIES_PER_KEY:]


def normalize_options(options: Any) -> Menu:
    """Normalise the dict or list form into a :class:`Menu` (a ``Menu`` is returned as is).

    Raises:
        TypeError: ``options`` is not a dict or list, or an entry is malformed.
        ValueError: The options are empty or a name repeats.
    """
    # The hot path of every decision, inline: one lookup and one comparison when cached.
    entry = _last_seen.get(id(options))
    if entry is not None and entry.last is options:
        try:
            if entry.copy == options and (  # the same object, unchanged since
                type(options) is not dict or tuple(options) == entry.order
            ):
                return entry.menu
        except Exception:
            pass
    kind = type(options)
    if kind is dict:
        key: Any = ("dict", *options)
    elif kind is list or kind is tuple:
        key = ("list", len(options))
    elif isinstance(options, Menu):
        return options
    else:
        return _normalize(options)  # another Mapping: normalised on every call
    entries = _menu_cache.get(key)
    streak = 0
    if entries:
        # Menus under this key that have differed in their text call after call (a description
        # with the ticket id) are built anew, past all but the latest of those kept (a menu
        # built anew costs less than one rebound and rewritten); every 64th call searches all.
        streak = _misses.get(key, 0)
        skipping = streak >= _MISSES_BEFORE_SKIPPING and streak % _RETRY_EVERY
        # Snapshots are on the left of ``==``: their markers compare first.
        for entry in entries[:1] if skipping else entries:
            try:
                if entry.exact == options:
                    if id(options) in _last_seen:  # a kept object, changed back or moved
                        _seen(entry, options)
                    _misses.pop(key, None)
                    return entry.menu
            except Exception:  # a value that refuses to be compared: not this entry
                continue
        if skipping:
            _misses[key] = streak + 1
            return _normalize(options)
        for entry in entries:  # the same menu, with a call's own values, texts, closures
            try:
                if entry.loose is None or entry.loose != options:
                    continue
                rebound, described = _rebound(entry, options)
            except Exception:
                continue
            if not described:
                _misses.pop(key, None)
                return rebound
            # Another text: a menu of its own, kept as such if it repeats (as below).
            return _kept(key, options, entries, rebound, streak)
    return _kept(key, options, entries, _normalize(options), streak)


def _kept(
    key: Any,
    options: Any,
    entries: list[_Entry] | None,
    menu: Menu,
    streak: int,
) -> Menu:
    """``menu``, made for ``options`` and not found under ``key``, remembered; ``streak``: the
    run of misses under that key so far (``normalize_options`` builds the menu of a call in
    such a run anew and keeps only every 64th, so that a menu that differs on every call does
    not pay for snapshots it never uses; a hit ends the run)."""
    if not entries:
        # A menu is kept from its second sight of its key on: one whose names differ on every
        # call (an option per item of a list) is never found again, and a menu used once pays
        # for no snapshots. A menu used twice is built twice, with its function shapes kept.
        if key not in _seen_once:
            if len(_seen_once) >= _MENU_CACHE_KEYS:
                drop_oldest(_seen_once, _MENU_CACHE_KEYS)
            _seen_once[key] = None
            return menu
        _seen_once.pop(key, None)  # another thread may have kept it first
    if entries and streak:
        _misses[key] = streak + 1
    else:
        if len(_misses) >= _MENU_CACHE_KEYS:
            drop_oldest(_misses, _MENU_CACHE_KEYS)
        _misses[key] = 1
    _remember(key, options, menu)
    return menu


def clear_caches() -> None:
    """Forget every cached menu, schema, function shape and menu text (for benchmarks)."""
    _menu_cache.clear()
    _misses.clear()
    _seen_once.clear()
    _last_seen.clear()
    clear_frames()
    _schema_cache.clear()
    clear_shape_caches()


def _normalize(options: Any) -> Menu:
    """The menu ``options`` make, each entry built as it is read (its error first).

    The dict form's entries are built straight from the entry, past a reading of it: a value,
    ``(value, "description")``, a function and ``(fn, "description")`` (a menu read anew, an
    option per item of a list, makes one option per entry on every call), a value option's
    block written at once. Any other entry, and the list form, goes through its reading
    (:mod:`._option_forms`), which names what is wrong.
    """
    opts: list[Option] = []
    blocks: list[str] = []
    async_names: list[str] = []
    needs_context = False
    if type(options) is dict:
        for name, handler in options.items():
            if (
                type(name) is not str
                or not name
                or (type(handler) is not tuple and isinstance(handler, tuple))
            ):  # no name (raises), a str subclass, a named tuple: through the entry's reading
                if _add_reading(read_dict_entry(name, handler), opts, async_names, blocks):
                    needs_context = True
            elif type(handler) is tuple:
                if len(handler) == 2 and type(handler[1]) is str:
                    target, description = handler
                    if not callable(target):
                        opts.append(
                            _made_option(name, "value", description, (), (), None, target, (), None)
                        )
                        if name.isidentifier():
                            blocks.append(fieldless_block(name, description))
                        else:
                            blocks.append(render_block(opts[-1]))
                    elif _add_function(name, target, description, opts, async_names, blocks):
                        needs_context = True
                elif _add_reading(read_dict_entry(name, handler), opts, async_names, blocks):
                    needs_context = True  # a schema option, a malformed tuple, a str subclass
            elif not callable(handler):
                opts.append(_made_option(name, "value", "", (), (), None, handler, (), None))
                if name.isidentifier():
                    blocks.append(fieldless_block(name, ""))
                else:
                    blocks.append(render_block(opts[-1]))
            elif _add_function(name, handler, None, opts, async_names, blocks):
                needs_context = True
        if not opts:
            raise ValueError("options must offer at least one option, got none")
        by_name = dict(zip(options, opts, strict=True))  # its keys: the names, each once
    else:
        for reading in read_entries(options):
            if _add_reading(reading, opts, async_names, blocks):
                needs_context = True
        if not opts:
            raise ValueError("options must offer at least one option, got none")
        by_name = {}
        for opt in opts:
            if opt.name in by_name:
                raise ValueError(f"Duplicate option name '{opt.name}' in options list")
            by_name[opt.name] = opt
    return Menu(
        tuple(opts),
        by_name,
        tuple(by_name),
        "".join(blocks)[:-1],
        tuple(async_names),
        needs_context,
    )


def _add_reading(
    reading: Reading, opts: list[Option], async_names: list[str], blocks: list[str]
) -> bool:
    """Append the option ``reading`` makes to ``opts`` and its block to ``blocks``, as
    :func:`_add_function` does."""
    fn = reading.function
    if fn is not None and reading.form.kind == "function":
        return _add_function(reading.name, fn, reading.description, opts, async_names, blocks)
    opts.append(_option(reading))
    blocks.append(render_block(opts[-1]))
    return False


def _add_function(
    name: str,
    fn: Callable[..., Any],
    description: str | None,
    opts: list[Option],
    async_names: list[str],
    blocks: list[str],
) -> bool:
    """Append the option of ``fn`` to ``opts`` (its name to ``async_names`` if it is a
    coroutine function) and its block to ``blocks``; whether it reads parameters from
    ``context=``."""
    shape = _option_shape(name, fn)
    option = _function_option(name, fn, description, shape)
    opts.append(option)
    frame = shape.frame
    if frame is not None and type(name) is str and name.isidentifier():
        blocks.append(framed_block(name, option.description, frame))
    else:
        blocks.append(render_block(option))
    if _is_async(fn):
        async_names.append(name)
    return any(f.source == "context" for f in shape.hidden) if shape.hidden else False


def _is_async(handler: Callable[..., Any]) -> bool:
    """``inspect.iscoroutinefunction``, read off the code of a plain function without
    attributes of its own (no marker can be set on it), the usual option."""
    if type(handler) is _FunctionType and not handler.__dict__:
        return bool(handler.__code__.co_flags & inspect.CO_COROUTINE)
    return inspect.iscoroutinefunction(handler)
