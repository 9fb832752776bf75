"""Options: the dict and list forms normalised into one menu, and the menu rendered as text.

Each entry is read once, by ``_option_forms``, into the form it is written in and its parts;
from that reading this module builds the entry's :class:`Option` (its sections *functions* and
*schemas*: a function's signature and a schema notation turned into fields and a validator), and
the menu cache its snapshot of the entry (*the menu cache*). *Rendering* writes the menu text.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, assert_never

from pydantic.fields import FieldInfo as _FieldInfo

from pytest_opdecide._nextstep._annotations import (
    META_KEYS,
    FromContext,
    Param,
    annotation_label,
    bounded,
    object_from_notation,
    spec_from_annotation,
)
from pytest_opdecide._nextstep._field_types import (
    ChoiceSpec,
    FieldSpec,
    TypeSpec,
    UnknownSpec,
    UnsupportedType,
    call_example,
    shown_choice,
)
from pytest_opdecide._nextstep._option_forms import (
    FORMS,
    Form,
    OptionKind,
    Reading,
    Role,
    read_entries,
)
from pytest_opdecide._nextstep._response_schema import menu_schema
from pytest_opdecide._nextstep._validation import ArgsValidator

__all__ = ["RUNTIME_PARAMETER_NAMES", "Menu", "Option", "normalize_options", "render_menu"]

RUNTIME_PARAMETER_NAMES = frozenset({"runtime", "exec_runtime", "review_runtime"})
"""Parameters with these names receive the active runtime and are hidden from the model."""


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


# --- shapes by what determines them ---------------------------------------------------------
# A function defined inside the method that makes the decision is a new object on every call,
# but every such closure shares its ``__code__``; what else its shape is made of can be read off
# the function object: its defaults, its annotations, its docstring and its globals (where string
# annotations are resolved). Shapes are also kept by code, each with a copy of those parts,
# compared exactly (see :func:`_same`), so a fresh closure costs a few comparisons, not a new
# signature, type resolution and pydantic validator.

_FunctionType = type(_first_paragraph)
_code_cache: dict[Any, list[tuple[tuple[Any, ...], _FunctionShape]]] = {}
_CODE_CACHE_MAX = 1024
_SHAPES_PER_CODE = 4
_EXACT_LEAVES = (str, int, float, bool, bytes, type(None), complex)


def _same(a: Any, b: Any, depth: int = 0) -> bool:
    """Whether ``a`` and ``b`` make the same shape: the same object, or equal values of the very
    same types all the way down (``1``, ``1.0`` and ``True`` are equal but render apart)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b) or depth > 32:
        return False
    if kind in _EXACT_LEAVES:
        return bool(a == b)
    if kind is tuple or kind is list:
        if len(a) != len(b):
            return False
        if all(map(operator.is_, a, b)):  # the usual case, in C
            return True
        return all(_same(x, y, depth + 1) for x, y in zip(a, b, strict=False))
    if kind is dict:
        if list(a) != list(b):
            return False
        if all(map(operator.is_, a.values(), b.values())):
            return True
        return all(_same(a[k], b[k], depth + 1) for k in a)
    args = getattr(a, "__args__", None)
    if isinstance(args, tuple):  # a typing construct: list[str], X | None, Literal[...]
        return (
            _same(getattr(a, "__origin__", None), getattr(b, "__origin__", None), depth + 1)
            and _same(args, getattr(b, "__args__", None), depth + 1)
            and _same(getattr(a, "__metadata__", None), getattr(b, "__metadata__", None), depth + 1)
        )
    if dataclasses.is_dataclass(a):  # Param, FromContext
        return all(
            _same(getattr(a, f.name), getattr(b, f.name), depth + 1) for f in dataclasses.fields(a)
        )
    return False  # any other object: only itself


def _shape_by_code(fn: Any) -> _FunctionShape:
    code = fn.__code__
    parts = (fn.__defaults__, fn.__kwdefaults__, fn.__annotations__, fn.__doc__)
    shapes = _code_cache.get(code)
    if shapes is not None:
        for kept, shape in shapes:
            if kept[0] is fn.__globals__ and _same(kept[1:], parts):
                return shape
    shape = _introspect(fn)
    if shapes is None:
        if len(_code_cache) >= _CODE_CACHE_MAX:
            _code_cache.pop(next(iter(_code_cache)))
        shapes = _code_cache[code] = []
    # A copy of the annotations: the function's own dict can be changed in place.
    kept = (fn.__globals__, parts[0], parts[1], dict(parts[2]), parts[3])
    shapes.insert(0, (kept, shape))
    del shapes[_SHAPES_PER_CODE:]
    return shape


def _by_code(fn: Any) -> bool:
    """Whether ``fn``'s shape is made of its code, defaults, annotations and doc alone: a plain
    function, not wrapped and without a signature of its own."""
    return (
        type(fn) is _FunctionType
        and "__wrapped__" not in fn.__dict__
        and "__signature__" not in fn.__dict__
    )


def _function_shape(fn: Callable[..., Any]) -> _FunctionShape:
    if _by_code(fn):
        cached = _function_cache.get(fn)  # the same function again: found by identity
        if cached is not None and cached.version == _VERSION(fn):
            return cached
        shape = _shape_by_code(fn)
        if fn.__closure__ is None:  # a closure is new on every call: not worth keeping
            _function_cache[fn] = shape
        return shape
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
            spec = bounded(spec, hint, param_meta.max_length)
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
    return Option(reading.name, "value", reading.description or "", (), value=reading.value)


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


_menu_text_cache: dict[Any, str] = {}
_MENU_TEXT_CACHE_MAX = 1024

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


_ANY_VALUE = {form: _any_value(form.value_rule) for form in FORMS if form.value_rule is not None}


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


def _part_snapshot(form: Form, role: Role, part: Any, *, loose: bool, ordered: bool) -> Any:
    if role == "schema":
        return _schema_snapshot(part, ordered)
    if role == "value":
        if loose:
            return _ANY_VALUE[form]
        return part if type(part) is str or part is None else _Same(part)
    if role == "function" or role == "name" or role == "description":
        # A string, or the same function (an equal bound method: of the same instance).
        return part
    assert_never(role)


def _entry_snapshot(reading: Reading, *, loose: bool = False, ordered: bool = True) -> Any:
    """The snapshot of one entry: the entry as written, each part copied by its role. The exact
    one holds values themselves; the loose one a marker that takes any value of the same form."""
    form, entry = reading.form, reading.entry
    if form.bare:
        return _part_snapshot(form, form.parts[0], entry, loose=loose, ordered=ordered)
    parts = tuple(
        _part_snapshot(form, role, part, loose=loose, ordered=ordered)
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
    value_places: tuple[tuple[int, Any, int | None], ...] = ()
    """Where a call's values are, for the loose snapshot: each value option's index in the menu,
    its entry's key in the options (its name, or its index in a list), and its place in the tuple
    the entry is (``None``: written bare)."""
    order: tuple[Any, ...] = ()  # a dict-form menu's keys, in order (dict ``==`` ignores it)


# ("dict", names) or ("list", length) -> entries, the most recent first.
_menu_cache: dict[Any, list[_Entry]] = {}
_MENU_CACHE_KEYS = 256
_ENTRIES_PER_KEY = 8

# key -> how many calls in a row missed every menu kept under it (see ``normalize_options``).
_misses: dict[Any, int] = {}
_MISSES_BEFORE_SKIPPING = 8

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
    for index, where, place in entry.value_places:
        handler = options[where]
        value = handler if place is None else handler[place]
        if value is not changed[index].value:
            changed[index] = dataclasses.replace(changed[index], value=value)
    by_name = {o.name: o for o in changed}
    return dataclasses.replace(menu, options=tuple(changed), by_name=by_name)


def _snapshot(
    key: Any, options: Any, readings: list[Reading], *, loose: bool = False, ordered: bool = True
) -> Any:
    """A snapshot of ``options``: the same container, each entry's snapshot taken from its
    reading."""
    if key[0] == "dict":
        return {r.name: _entry_snapshot(r, loose=loose, ordered=ordered) for r in readings}
    return type(options)(_entry_snapshot(r, loose=loose, ordered=ordered) for r in readings)


def _remember(key: Any, options: Any, menu: Menu, readings: list[Reading]) -> None:
    """Cache ``menu`` under ``key`` with the snapshots of ``options`` (see :class:`_Entry`)."""
    by_key = key[0] == "dict"
    places = tuple(
        (index, r.name if by_key else index, None if r.form.bare else r.form.parts.index("value"))
        for index, r in enumerate(readings)
        if r.form.value_rule is not None
    )
    try:
        exact = _snapshot(key, options, readings)
        # The same object may have been changed since in what ``==`` cannot see (the order of
        # its keys, or of a schema's fields): its copy is the ordered snapshot, and the key
        # order is checked with it.
        copy = exact
        loose = _snapshot(key, options, readings, loose=True) if places else None
    except _Uncacheable:
        return
    entries = _menu_cache.get(key)
    if entries is None:
        if len(_menu_cache) >= _MENU_CACHE_KEYS:
            _menu_cache.pop(next(iter(_menu_cache)))
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
        return _normalize(options)[0]  # another Mapping: normalised on every call
    entries = _menu_cache.get(key)
    if entries:
        # Snapshots are on the left of ``==``: their markers compare first.
        for entry in entries:
            try:
                if entry.exact == options:
                    if id(options) in _last_seen:  # a kept object, changed back or moved
                        _seen(entry, options)
                    _misses.pop(key, None)
                    return entry.menu
            except Exception:  # a value that refuses to be compared: not this entry
                continue
        for entry in entries:  # the same menu, with other values (set per call)
            try:
                if entry.loose is not None and entry.loose == options:
                    _misses.pop(key, None)
                    return _rebound(entry, options)
            except Exception:
                continue
    menu, readings = _normalize(options)
    # A menu that differs on every call (a description with the ticket id, a closure) is never
    # found again: after a run of misses under its key, only every 16th is kept, so that such a
    # menu does not pay for snapshots it never uses (a hit ends the run).
    streak = _misses.get(key, 0)
    if entries and streak:
        _misses[key] = streak + 1
        if streak >= _MISSES_BEFORE_SKIPPING and streak % 16:
            return menu
    else:
        if len(_misses) >= _MENU_CACHE_KEYS:
            _misses.pop(next(iter(_misses)))
        _misses[key] = 1
    _remember(key, options, menu, readings)
    return menu


def clear_caches() -> None:
    """Forget every cached menu, schema, function shape and menu text (for benchmarks)."""
    _menu_cache.clear()
    _misses.clear()
    _last_seen.clear()
    _frame_cache.clear()
    _menu_text_cache.clear()
    _schema_cache.clear()
    _function_cache.clear()
    _method_cache.clear()
    _code_cache.clear()
    _unweakable_cache.clear()


def _normalize(options: Any) -> tuple[Menu, list[Reading]]:
    """The menu ``options`` make, with the readings of their entries it was built from."""
    readings: list[Reading] = []
    opts: list[Option] = []
    for reading in read_entries(options):  # each entry built as it is read: its error first
        readings.append(reading)
        opts.append(_option(reading))
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
    menu = Menu(tuple(opts), by_name, tuple(by_name), text, async_options, needs_context)
    return menu, readings


# --- rendering ---------------------------------------------------------------------------------


def _field_line(f: FieldSpec) -> str:
    line = f"    {f.name}"
    if f.description:
        line += f": {f.description}"
    if f.type.choices is not None:
        line += " (options: " + ", ".join(shown_choice(v) for v in f.type.choices) + ")"
    return line


_frame_cache: dict[Any, tuple[str, str]] = {}
_FRAME_CACHE_MAX = 8192


def render_menu(options: list[Option] | tuple[Option, ...]) -> str:
    """Render options as the menu text the model reads."""
    return "".join([_render_block(opt) for opt in options])[:-1]


def _render_block(opt: Option) -> str:
    # The signature line, and the field and Call: lines, are kept by name and fields: a
    # description that changes per call is all that is written anew.
    key = (opt.name, opt.fields)
    frame = _frame_cache.get(key)
    if frame is None:
        head = f"{opt.name}(" + ", ".join(f"{f.name}: {f.type.label}" for f in opt.fields) + ")"
        lines = [_field_line(f) for f in opt.fields]
        call: dict[str, Any] = {"call": opt.name}
        if opt.fields:
            call["args"] = {f.name: f.type.placeholder() for f in opt.fields}
        lines.append(f"    Call: {call_example(call)}")
        frame = (head, "\n".join(lines) + "\n\n")
        if len(_frame_cache) >= _FRAME_CACHE_MAX:
            _frame_cache.pop(next(iter(_frame_cache)))
        _frame_cache[key] = frame
    head, tail = frame
    if opt.description:
        described = opt.description.strip("\n").replace("\n", "\n    ")
        return f"{head}\n    {described}\n{tail}"
    return f"{head}\n{tail}"
