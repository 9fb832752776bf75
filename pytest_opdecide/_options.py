"""Options: the dict and list forms normalised into one menu, and the menu rendered as text.

Normalising is on the hot path of every decision, so what does not change between calls is
cached: a function's introspected fields (by function), a schema's parsed fields (by its frozen
notation) and the rendered menu text (by the options' structure).
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pytest_opdecide._schema import (
    ChoiceSpec,
    FieldSpec,
    FromContext,
    Param,
    TypeSpec,
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
    """

    name: str
    kind: OptionKind
    description: str
    fields: tuple[FieldSpec, ...]
    hidden: tuple[FieldSpec, ...] = ()
    handler: Callable[..., Any] | None = None
    value: Any = None
    positional: tuple[str, ...] = ()


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
    if cached is not None:
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
                    spec_from_annotation(hint),
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
                    spec_from_annotation(hint),
                    required=not has_default,
                    source="context",
                    context_key=context.key or name,
                    default=param.default,
                    positional_only=positional_only,
                )
            )
            continue
        param_meta = next((m for m in meta if isinstance(m, Param)), None)
        spec: TypeSpec = spec_from_annotation(hint)
        description = doc_args.get(name, "")
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
    return _FunctionShape(tuple(fields), tuple(hidden), _first_paragraph(doc), positional)


# --- schemas -----------------------------------------------------------------------------------

_schema_cache: dict[Any, tuple[FieldSpec, ...]] = {}
_SCHEMA_CACHE_MAX = 2048


def _freeze(notation: Any) -> Any:
    if isinstance(notation, dict):
        return ("{", tuple((k, _freeze(v)) for k, v in notation.items()))
    if isinstance(notation, list | tuple):
        return ("[" if isinstance(notation, list) else "(", tuple(_freeze(v) for v in notation))
    hash(notation)  # unhashable leaves (sets, objects) make the schema uncacheable
    # The type is part of the key: 1 == 1.0 == True, but they render differently.
    return (type(notation), notation)


def _schema_fields(name: str, schema: Any) -> tuple[FieldSpec, ...]:
    if not isinstance(schema, dict):
        raise TypeError(
            f"Option '{name}': a schema must be a dict of fields, got {type(schema).__name__}"
        )
    try:
        key: Any = _freeze(schema)
        cached = _schema_cache.get(key)
    except TypeError:
        key, cached = None, None
    if cached is not None:
        return cached
    fields = object_from_notation(schema, where=name).fields
    if key is not None:
        if len(_schema_cache) >= _SCHEMA_CACHE_MAX:
            _schema_cache.clear()
        _schema_cache[key] = fields
    return fields


# --- normalisation -----------------------------------------------------------------------------


def _function_option(name: str, fn: Callable[..., Any], description: str | None) -> Option:
    shape = _function_shape(fn)
    return Option(
        name,
        "function",
        shape.description if description is None else description,
        shape.fields,
        shape.hidden,
        handler=fn,
        positional=shape.positional,
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
            return Option(name, "schema", description, _schema_fields(name, schema))
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
                return Option(head, "schema", description, _schema_fields(head, item[2]))
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


def _shape_copy(value: Any, depth: int = 0) -> Any:
    """Copy the containers of an options object (leaves shared), to detect later mutation."""
    if depth > 64:
        raise _Uncacheable
    if isinstance(value, dict):
        return {k: _shape_copy(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape_copy(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_shape_copy(v, depth + 1) for v in value)
    return value


class _Uncacheable(Exception):
    pass


# id(options) -> (options, copy of its containers, menu). The cache holds the options object, so
# its id cannot be reused while the entry lives; the copy, compared with ``==`` on every hit,
# catches any change made to the options (leaves compare by identity first, so this is cheap).
_menu_cache: dict[int, tuple[Any, Any, Menu]] = {}
_MENU_CACHE_MAX = 256


def normalize_options(options: Any) -> Menu:
    """Normalise the dict or list form into a :class:`Menu`.

    Raises:
        TypeError: ``options`` is not a dict or list, or an entry is malformed.
        ValueError: The options are empty or a name repeats.
    """
    entry = _menu_cache.get(id(options))
    if entry is not None and entry[0] is options:
        try:
            if entry[1] == options:
                return entry[2]
        except Exception:
            pass
    menu = _normalize(options)
    try:
        snapshot = _shape_copy(options)
    except _Uncacheable:
        return menu
    if len(_menu_cache) >= _MENU_CACHE_MAX:
        _menu_cache.pop(next(iter(_menu_cache)))
    _menu_cache[id(options)] = (options, snapshot, menu)
    return menu


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
