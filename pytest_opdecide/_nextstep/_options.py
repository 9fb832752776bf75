"""Options: the dict and list forms normalised into one menu, and the menu rendered as text.

Normalising is on the hot path of every decision, so what does not change between calls is
cached, always by what it is made of, never by object identity: a function's introspected
fields and argument validator (by function, checked against its defaults and docstring), a
schema's fields and validator (by its frozen notation), the rendered menu text (by the options'
structure), and whole menus (by a copy of the options, compared on every call, so that a menu
written as a dict literal inside a method, new on every call, is found again, and a changed
one never is).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import operator
import re
import typing
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic.fields import FieldInfo as _FieldInfo

from pytest_opdecide._nextstep._response_schema import menu_schema
from pytest_opdecide._nextstep._schema import (
    META_KEYS,
    ArgsValidator,
    ChoiceSpec,
    FieldSpec,
    FromContext,
    Param,
    TypeSpec,
    UnknownSpec,
    UnsupportedType,
    annotation_label,
    json_dumps,
    object_from_notation,
    spec_from_annotation,
)

__all__ = ["RUNTIME_PARAMETER_NAMES", "Menu", "Option", "normalize_options", "render_menu"]

RUNTIME_PARAMETER_NAMES = frozenset({"runtime", "exec_runtime", "review_runtime"})
"""Parameters with these names receive the active runtime and are hidden from the model."""

OptionKind = Literal["function", "value", "schema"]


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


# --- functions ---------------------------------------------------------------------------------

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_ARG_LINE = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    cleaned = inspect.cleandoc(doc).strip()
    para = cleaned.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines() if line.strip())


def _doc_arg_descriptions(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section."""
    if not doc:
        return {}
    out: dict[str, str] = {}
    lines = inspect.cleandoc(doc).splitlines()
    inside = False
    indent: int | None = None
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            inside, indent, current = True, None, None
            continue
        if not inside:
            continue
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        if width == 0:
            inside = False
            continue
        match = _ARG_LINE.match(line)
        if match and (indent is None or width == indent):
            indent = width
            current = match.group(2).lstrip("*")
            out[current] = match.group(4).strip()
        elif current is not None and indent is not None and width > indent:
            out[current] = f"{out[current]} {line.strip()}".strip()
    return out


def _is_runtime_annotation(hint: Any) -> bool:
    base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
    candidates = typing.get_args(base) or (base,)
    return any(getattr(c, "__opdecide_runtime__", False) for c in candidates if isinstance(c, type))


def _resolve_hints(fn: Callable[..., Any], sig: inspect.Signature) -> dict[str, Any]:
    """Annotations resolved with ``get_type_hints``; unresolvable ones stay strings, one by one."""
    target = inspect.unwrap(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    hints: dict[str, Any] = {}
    globalns = getattr(target, "__globals__", {})
    for name, param in sig.parameters.items():
        ann = param.annotation
        if isinstance(ann, str):
            try:
                ann = eval(ann, dict(globalns))
            except Exception:
                if "FromContext" in ann or "Runtime" in ann:
                    # Guessing would hand a hidden parameter to the model: refuse instead.
                    raise TypeError(
                        f"Cannot resolve the annotation {ann!r} of parameter {name!r} of "
                        f"{getattr(target, '__qualname__', target)!r}: import the names it uses "
                        "at module level, so that hidden parameters stay hidden"
                    ) from None
                hints[name] = ann
                continue
        hints[name] = ann
    return hints


@dataclass(frozen=True, slots=True)
class _FunctionShape:
    fields: tuple[FieldSpec, ...]
    hidden: tuple[FieldSpec, ...]
    description: str
    positional: tuple[str, ...]
    validator: ArgsValidator | None
    version: tuple[Any, ...]


class _UnsupportedParameter(TypeError):
    def __init__(self, parameter: str, annotation: Any, reason: str) -> None:
        super().__init__(parameter, annotation, reason)
        self.parameter = parameter
        self.annotation = annotation
        self.reason = reason


_VERSION = operator.attrgetter("__defaults__", "__kwdefaults__", "__doc__")
"""What a function's menu entry depends on besides its identity, and that can be changed on the
same function object: its defaults and its docstring."""


def _version(fn: Any) -> tuple[Any, ...]:
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return _VERSION(fn)
    return ()


_function_cache: weakref.WeakKeyDictionary[Any, _FunctionShape] = weakref.WeakKeyDictionary()
_method_cache: weakref.WeakKeyDictionary[Any, _FunctionShape] = weakref.WeakKeyDictionary()
_unweakable_cache: dict[Any, _FunctionShape] = {}
_UNWEAKABLE_MAX = 4096


def _function_shape(fn: Callable[..., Any]) -> _FunctionShape:
    # A bound method is a new object on every attribute access: key it by its function, in a
    # cache of its own (the bound signature has no ``self``).
    if inspect.ismethod(fn):
        cache, key = _method_cache, fn.__func__
    else:
        cache, key = _function_cache, fn
    try:
        cached = cache.get(key)
        weak = True
    except TypeError:
        weak = False
        cached = _unweakable_cache.get(fn) if _hashable(fn) else None
    if cached is not None and cached.version == _version(fn):
        return cached
    shape = _introspect(fn)
    if weak:
        cache[key] = shape
    elif _hashable(fn) and len(_unweakable_cache) < _UNWEAKABLE_MAX:
        _unweakable_cache[fn] = shape
    return shape


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _introspect(fn: Callable[..., Any]) -> _FunctionShape:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot read the signature of option function {fn!r}: {exc}") from None
    hints = _resolve_hints(fn, sig)
    target = fn.func if isinstance(fn, functools.partial) else fn
    doc = inspect.getdoc(target)
    doc_args = _doc_arg_descriptions(doc)
    fields: list[FieldSpec] = []
    hidden: list[FieldSpec] = []
    for name, param in sig.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue  # never shown, never required: the model cannot fill them meaningfully
        hint = hints.get(name, param.annotation)
        has_default = param.default is not inspect.Parameter.empty
        positional_only = param.kind is inspect.Parameter.POSITIONAL_ONLY
        meta = hint.__metadata__ if typing.get_origin(hint) is typing.Annotated else ()
        context = next((m for m in meta if isinstance(m, FromContext)), None)
        if name in RUNTIME_PARAMETER_NAMES or _is_runtime_annotation(hint):
            hidden.append(
                FieldSpec(
                    name,
                    UnknownSpec(annotation_label(hint)),  # filled by the library, never validated
                    required=not has_default,
                    source="runtime",
                    default=param.default,
                    positional_only=positional_only,
                )
            )
            continue
        if context is not None:
            hidden.append(
                FieldSpec(
                    name,
                    UnknownSpec(annotation_label(hint)),  # filled from the context, never validated
                    required=not has_default,
                    source="context",
                    context_key=context.key or name,
                    default=param.default,
                    positional_only=positional_only,
                )
            )
            continue
        param_meta = next((m for m in meta if isinstance(m, Param)), None)
        try:
            spec: TypeSpec = spec_from_annotation(hint)
        except UnsupportedType as exc:
            raise _UnsupportedParameter(name, hint, str(exc)) from None
        description = doc_args.get(name, "")
        field_description = next(
            (m.description for m in meta if isinstance(m, _FieldInfo) and m.description), ""
        )
        description = field_description or description
        if param_meta is not None:
            description = param_meta.description or description
            if param_meta.options is not None:
                spec = ChoiceSpec(spec, tuple(param_meta.options))
        fields.append(
            FieldSpec(
                name,
                spec,
                description,
                required=not has_default,
                default=param.default,
                positional_only=positional_only,
            )
        )
    positional = tuple(
        name
        for name, param in sig.parameters.items()
        if param.kind is inspect.Parameter.POSITIONAL_ONLY
    )
    shown = tuple(fields)
    try:
        validator = ArgsValidator(shown, all_required=False) if shown else None
    except UnsupportedType as exc:
        raise _UnsupportedParameter("", None, str(exc)) from None
    return _FunctionShape(
        shown, tuple(hidden), _first_paragraph(doc), positional, validator, _version(fn)
    )


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


def _schema_option(name: str, description: str, schema: Any) -> Option:
    if not isinstance(schema, dict):
        raise TypeError(
            f"Option '{name}': a schema must be a dict of fields, got {type(schema).__name__}"
        )
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


# --- normalisation -----------------------------------------------------------------------------


def _function_option(name: str, fn: Callable[..., Any], description: str | None) -> Option:
    try:
        shape = _function_shape(fn)
    except _UnsupportedParameter as exc:
        raise TypeError(_unsupported_message(name, exc)) from None
    return Option(
        name,
        "function",
        shape.description if description is None else description,
        shape.fields,
        shape.hidden,
        handler=fn,
        positional=shape.positional,
        validator=shape.validator,
    )


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


def _check_description(name: str, description: Any) -> str:
    if not isinstance(description, str):
        raise TypeError(
            f"Option '{name}': the description must be a string, got {type(description).__name__}"
        )
    return description


def _dict_entry(name: Any, handler: Any) -> Option:
    if not isinstance(name, str) or not name:
        raise TypeError(f"Option names must be non-empty strings, got {name!r}")
    if isinstance(handler, tuple):
        if len(handler) == 2 and isinstance(handler[0], str) and isinstance(handler[1], dict):
            description, schema = handler
            return _schema_option(name, description, schema)
        if len(handler) == 2:
            target, description = handler
            description = _check_description(name, description)
            if callable(target):
                return _function_option(name, target, description)
            return Option(name, "value", description, (), value=target)
        raise TypeError(
            f"Option '{name}': a tuple handler must be (value, \"description\"), "
            f'(function, "description") or ("description", {{schema}}); got a {len(handler)}-tuple'
        )
    if callable(handler):
        return _function_option(name, handler, None)
    return Option(name, "value", "", (), value=handler)


def _list_entry(item: Any) -> Option:
    if isinstance(item, str):
        if not item:
            raise TypeError("Option names must be non-empty strings, got ''")
        return Option(item, "value", "", (), value=item)
    if callable(item):
        return _function_option(_callable_name(item), item, None)
    if isinstance(item, tuple) and item:
        head = item[0]
        if callable(head) and not isinstance(head, str):
            if len(item) != 2:
                raise TypeError(
                    f"Option {_callable_name(head)!r}: a function entry is fn or (fn, "
                    f'"description"), got a {len(item)}-tuple'
                )
            name = _callable_name(head)
            return _function_option(name, head, _check_description(name, item[1]))
        if isinstance(head, str) and head:
            if len(item) == 2:
                return Option(head, "value", _check_description(head, item[1]), (), value=head)
            if len(item) == 3:
                description = _check_description(head, item[1])
                return _schema_option(head, description, item[2])
        raise TypeError(
            'List options are fn, (fn, "description"), "name", ("name", "description") or '
            f'("name", "description", {{schema}}); got {item!r}'
        )
    raise TypeError(
        'List options are fn, (fn, "description"), "name", ("name", "description") or '
        f'("name", "description", {{schema}}); got {type(item).__name__} {item!r}'
    )


def _callable_name(fn: Any) -> str:
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or not name or name == "<lambda>":
        raise TypeError(
            f"Option {fn!r} has no usable __name__ to pick it by: "
            'use the dict form {"name": fn} or a named function'
        )
    return name


_menu_text_cache: dict[Any, str] = {}
_MENU_TEXT_CACHE_MAX = 1024

# --- the menu cache ----------------------------------------------------------------------------
# A menu is cached with copies of the options it was made from (*snapshots*), compared with the
# options of every call with ``==``: containers and leaves compare in C, identical objects at
# once, so a menu written as a dict literal inside a method (a new dict on every call, holding
# the same functions, strings and tuples) is found again at little cost. Where ``==`` alone
# would serve a changed menu stale, a snapshot holds a marker that compares in Python:


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


class _Value:
    """A value option's value in the loose snapshot: equal to any value that keeps the option
    a value option (values are not part of the menu; a call's own are bound to it)."""

    __slots__ = ("in_tuple",)

    def __init__(self, in_tuple: bool) -> None:
        self.in_tuple = in_tuple

    def __eq__(self, other: object) -> bool:
        return not callable(other) and (self.in_tuple or type(other) is not tuple)

    __hash__ = None  # type: ignore[assignment]


_VALUE = _Value(in_tuple=False)
_VALUE_IN_TUPLE = _Value(in_tuple=True)


class _Same:
    """A value in an exact snapshot: only the very same object (``1``, ``1.0`` and ``True``
    are equal, and an equal dict is not the caller's dict). Strings need no marker."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return other is self.value

    __hash__ = None  # type: ignore[assignment]


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


def _value_snapshot(value: Any, *, loose: bool) -> Any:
    if loose:
        return _VALUE_IN_TUPLE
    return value if type(value) is str or value is None else _Same(value)


def _handler_snapshot(handler: Any, *, loose: bool = False, ordered: bool = True) -> Any:
    """The snapshot of a dict-form handler, following ``_dict_entry``'s reading of it. The
    exact one holds values themselves; the loose one a marker that takes any value."""
    if isinstance(handler, tuple):
        head, tail = handler
        if isinstance(head, str) and isinstance(tail, dict):
            return (head, _schema_snapshot(tail, ordered))
        if callable(head):
            return handler
        return (_value_snapshot(head, loose=loose), tail)
    if callable(handler):
        return handler
    return _VALUE if loose else _value_snapshot(handler, loose=False)


def _item_snapshot(item: Any, *, ordered: bool = True) -> Any:
    """The snapshot of a list-form item, following ``_list_entry``'s reading of it."""
    if isinstance(item, tuple) and not callable(item[0]):
        return tuple(_schema_snapshot(part, ordered) for part in item)
    return item


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


# ("dict", names) or ("list", length) -> entries, the most recent first.
_menu_cache: dict[Any, list[_Entry]] = {}
_MENU_CACHE_KEYS = 256
_ENTRIES_PER_KEY = 8

# id(options) -> the entry whose ``last`` it is: a menu kept in a constant is found without
# building its key. An id is trusted only while ``entry.last`` is that very object. Options
# found by content are not added (a dict built on every call would churn this table).
_last_seen: dict[int, _Entry] = {}


def _seen(entry: _Entry, options: Any) -> None:
    entry.last = options
    if len(_last_seen) >= _MENU_CACHE_KEYS:
        _last_seen.pop(next(iter(_last_seen)))
    _last_seen[id(options)] = entry


def _rebound(entry: _Entry, options: Any) -> Menu:
    """The cached menu with this call's values of its value options."""
    menu = entry.menu
    changed = list(menu.options)
    for index, option in enumerate(changed):
        if option.kind == "value":
            handler = options[option.name]
            value = handler[0] if type(handler) is tuple else handler
            if value is not option.value:
                changed[index] = dataclasses.replace(option, value=value)
    by_name = {o.name: o for o in changed}
    return dataclasses.replace(menu, options=tuple(changed), by_name=by_name)


def _snapshots(key: Any, options: Any, menu: Menu) -> tuple[Any, Any, Any]:
    """The exact, loose and copy snapshots of ``options`` (see :class:`_Entry`)."""
    if key[0] == "dict":
        items = options.items()
        exact = {n: _handler_snapshot(h) for n, h in items}
        copy = {n: _handler_snapshot(h, ordered=False) for n, h in items}
        loose = None
        if any(o.kind == "value" for o in menu.options):
            loose = {n: _handler_snapshot(h, loose=True) for n, h in items}
        return exact, loose, copy
    kind = type(options)
    exact = kind(_item_snapshot(item) for item in options)
    return exact, None, kind(_item_snapshot(item, ordered=False) for item in options)


def _remember(key: Any, options: Any, menu: Menu) -> None:
    try:
        exact, loose, copy = _snapshots(key, options, menu)
    except _Uncacheable:
        return
    entries = _menu_cache.get(key)
    if entries is None:
        if len(_menu_cache) >= _MENU_CACHE_KEYS:
            _menu_cache.pop(next(iter(_menu_cache)))
        entries = _menu_cache[key] = []
    entry = _Entry(exact, loose, menu, options, copy)
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
            if entry.copy == options:  # the same object, unchanged since
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
    if entries:
        # Snapshots are on the left of ``==``: their markers compare first.
        for entry in entries:
            try:
                if entry.exact == options:
                    if id(options) in _last_seen:  # a kept object, changed back or moved
                        _seen(entry, options)
                    return entry.menu
            except Exception:  # a value that refuses to be compared: not this entry
                continue
        for entry in entries:  # the same menu, with other values (set per call)
            try:
                if entry.loose is not None and entry.loose == options:
                    return _rebound(entry, options)
            except Exception:
                continue
    menu = _normalize(options)
    _remember(key, options, menu)
    return menu


def clear_caches() -> None:
    """Forget every cached menu, schema, function shape and menu text (for benchmarks)."""
    _menu_cache.clear()
    _last_seen.clear()
    _menu_text_cache.clear()
    _schema_cache.clear()
    _function_cache.clear()
    _method_cache.clear()
    _unweakable_cache.clear()


def _normalize(options: Any) -> Menu:
    opts: list[Option]
    if isinstance(options, Mapping):
        opts = [_dict_entry(name, handler) for name, handler in options.items()]
    elif isinstance(options, list | tuple):
        opts = [_list_entry(item) for item in options]
    else:
        raise TypeError(f"options must be a dict or list, got {type(options).__name__}")
    if not opts:
        raise ValueError("options must offer at least one option, got none")
    by_name: dict[str, Option] = {}
    for opt in opts:
        if opt.name in by_name:
            raise ValueError(f"Duplicate option name '{opt.name}' in options list")
        by_name[opt.name] = opt
    key = tuple((o.name, o.description, o.fields) for o in opts)
    text = _menu_text_cache.get(key)
    if text is None:
        text = render_menu(opts)
        if len(_menu_text_cache) >= _MENU_TEXT_CACHE_MAX:
            _menu_text_cache.clear()
        _menu_text_cache[key] = text
    async_options = tuple(
        o.name for o in opts if o.handler is not None and inspect.iscoroutinefunction(o.handler)
    )
    needs_context = any(f.source == "context" for o in opts for f in o.hidden)
    return Menu(tuple(opts), by_name, tuple(by_name), text, async_options, needs_context)


# --- rendering ---------------------------------------------------------------------------------


def _field_line(f: FieldSpec) -> str:
    line = f"    {f.name}"
    if f.description:
        line += f": {f.description}"
    if f.type.choices is not None:
        line += " (options: " + ", ".join(f'"{v}"' for v in f.type.choices) + ")"
    return line


def render_menu(options: list[Option] | tuple[Option, ...]) -> str:
    """Render options as the menu text the model reads."""
    blocks: list[str] = []
    for opt in options:
        lines = [f"{opt.name}(" + ", ".join(f"{f.name}: {f.type.label}" for f in opt.fields) + ")"]
        if opt.description:
            lines.append("    " + opt.description.strip("\n").replace("\n", "\n    "))
        lines.extend(_field_line(f) for f in opt.fields)
        call: dict[str, Any] = {"call": opt.name}
        if opt.fields:
            call["args"] = {f.name: f.type.placeholder() for f in opt.fields}
        lines.append(f"    Call: {json_dumps(call)}")
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)[:-1]
