"""Function options' shapes: what a function's menu entry is made of, read once per shape.

A function's signature, resolved annotations and docstring make its *shape*: the fields the
model fills, the parameters the library fills (context and runtime), the description, and the
compiled argument check. Reading one costs a signature, type resolution and a pydantic
validator, so shapes are cached: by the function (checked against its defaults and docstring),
and, for plain functions, by code (a closure defined inside the method that decides is a new
object on every call, but shares its code; see *shapes by what determines them*).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import keyword
import operator
import re
import typing
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic.fields import FieldInfo as _FieldInfo

from pytest_opdecide._bounded import drop_oldest
from pytest_opdecide._nextstep._annotations import (
    FromContext,
    Param,
    annotation_label,
    bounded,
    spec_from_annotation,
)
from pytest_opdecide._nextstep._field_types import (
    SCALAR_PLACEHOLDERS,
    ChoiceSpec,
    FieldSpec,
    ScalarSpec,
    TypeSpec,
    UnknownSpec,
    UnsupportedType,
)
from pytest_opdecide._nextstep._menu_text import PLAIN_SHOWN, PlainParts
from pytest_opdecide._nextstep._validation import ArgsValidator

__all__ = ["RUNTIME_PARAMETER_NAMES", "clear_shape_caches", "known_shape"]

RUNTIME_PARAMETER_NAMES = frozenset({"runtime", "exec_runtime", "review_runtime"})
"""Parameters with these names receive the active runtime and are hidden from the model."""

# --- functions ---------------------------------------------------------------------------------

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_ARG_LINE = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring cleaned by ``inspect.getdoc``, on one line."""
    if not doc:
        return ""
    cleaned = doc.strip()
    if cleaned.isprintable():  # one line (no line break of any kind): the usual docstring
        return cleaned
    para = cleaned.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines() if line.strip())


def _doc_arg_descriptions(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from the Google-style ``Args:`` section of a docstring cleaned by
    ``inspect.getdoc``."""
    if not doc or ("Args" not in doc and "Arguments" not in doc and "Parameters" not in doc):
        return {}
    out: dict[str, str] = {}
    lines = doc.splitlines()
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


_annotation_code: dict[str, Any] = {}
_ANNOTATION_CODE_MAX = 4096
_NoneType = type(None)
_NOTHING: dict[str, Any] = {}  # shared, never written to
_EMPTY = inspect.Parameter.empty
_FunctionType = type(_first_paragraph)


def _plain_hint(value: Any, depth: int = 0) -> bool:
    """Whether an evaluated annotation is one ``get_type_hints`` returns as it is: a class,
    ``Any``, or a generic or union of those (no string, forward reference, ``Annotated`` or
    ``Literal`` inside: those are left to ``get_type_hints``)."""
    if value is Any:
        return True
    origin = typing.get_origin(value)
    if origin is None:
        return isinstance(value, type)
    if depth > 8 or origin is typing.Annotated or origin is typing.Literal:
        return False
    return all(_plain_hint(arg, depth + 1) for arg in typing.get_args(value))


_BUILTIN_NAMES = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type)
)
"""The builtin classes an annotation names bare (``str``, ``int``, ``dict``...)."""


def _builtin(globalns: dict[str, Any], name: str) -> Any:
    """The builtin class ``name`` as eval in ``globalns`` finds it (its ``__builtins__``, a
    module or a dict), or ``Parameter.empty`` when it is not there or is no class."""
    found = _builtin_namespace(globalns).get(name, _EMPTY)
    return found if isinstance(found, type) else _EMPTY


def _builtin_namespace(globalns: dict[str, Any]) -> dict[str, Any]:
    """The namespace eval in ``globalns`` finds builtins in (its ``__builtins__``, a module or
    a dict), or an empty one."""
    namespace = globalns["__builtins__"]
    if type(namespace) is not dict:
        namespace = getattr(namespace, "__dict__", None)
        if type(namespace) is not dict:
            return _NOTHING
    return namespace


def _quick_hints(target: Any) -> dict[str, Any] | None:
    """The parameters' annotations of a plain function, resolved as ``get_type_hints`` resolves
    them, with each annotation string compiled once per process (compiling is most of the cost
    of a first sight); ``None`` where anything is not plain (see :func:`_plain_hint`), for
    ``get_type_hints`` to decide."""
    if type(target) is not _FunctionType:
        return None
    annotations = target.__annotations__
    globalns = target.__globals__
    hints: dict[str, Any] = {}
    for name, value in annotations.items():
        if name == "return":  # never read: a return type names no field
            continue
        if type(value) is str:
            if value in globalns:  # a bare name (``str``, ``Order``): what eval would find first
                found = globalns[value]
                if value.isidentifier() and not keyword.iskeyword(value):
                    if found is None:
                        found = _NoneType
                    elif not _plain_hint(found):
                        return None
                    hints[name] = found
                    continue
            elif value in _BUILTIN_NAMES and "__builtins__" in globalns:
                found = _builtin(globalns, value)
                if found is not _EMPTY:  # a builtin class (``str``, ``int``) shadowed by none
                    hints[name] = found
                    continue
            code = _annotation_code.get(value)
            if code is None:
                try:
                    code = compile(value, "<annotation>", "eval")
                except SyntaxError:
                    return None
                if len(_annotation_code) >= _ANNOTATION_CODE_MAX:
                    _annotation_code.clear()
                _annotation_code[value] = code
            try:
                value = eval(code, globalns)  # as get_type_hints does
            except Exception:
                return None
        if value is None:
            value = _NoneType
        elif not _plain_hint(value):
            return None
        hints[name] = value
    return hints


def _resolve_hints(fn: Callable[..., Any], sig: inspect.Signature) -> dict[str, Any]:
    """Annotations resolved with ``get_type_hints``; unresolvable ones stay strings, one by one."""
    target = inspect.unwrap(fn)
    quick = _quick_hints(target)
    if quick is not None:
        return quick
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


class _FunctionShape(NamedTuple):
    """What a function's menu entry is made of (a named tuple: made on every first sight of a
    function, at a fraction of a frozen dataclass's cost)."""

    fields: tuple[FieldSpec, ...]
    hidden: tuple[FieldSpec, ...]
    description: str
    positional: tuple[str, ...]
    validator: ArgsValidator | None
    version: tuple[Any, ...]
    frame: PlainParts | None = None
    """What the fields write of the option's block (see :func:`._menu_text.plain_parts`),
    when every field is a plain ``str``, ``int``, ``float`` or ``bool``; ``None`` otherwise (the
    block is written from the option's fields)."""


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


def _same_parts(kept: tuple[Any, ...], parts: tuple[Any, ...]) -> bool:
    """:func:`_same` of a kept shape's parts (after its globals) and a function's: the usual
    case, the very objects or containers of the very objects, told without recursing."""
    for a, b in zip(kept[1:], parts, strict=True):
        if a is b:
            continue
        kind = type(a)
        if kind is not type(b):
            return False
        if kind is tuple:
            if len(a) == len(b) and all(map(operator.is_, a, b)):
                continue
        elif kind is dict and list(a) == list(b) and all(map(operator.is_, a.values(), b.values())):
            continue
        if not _same(a, b, 1):
            return False
    return True


def _shape_by_code(fn: Any) -> _FunctionShape:
    code = fn.__code__
    parts = (fn.__defaults__, fn.__kwdefaults__, fn.__annotations__, fn.__doc__)
    shapes = _code_cache.get(code)
    if shapes is not None:
        for kept, shape in shapes:
            if kept[0] is fn.__globals__ and _same_parts(kept, parts):
                return shape
    shape = _introspect_code(fn)
    # A copy of the annotations: the function's own dict can be changed in place.
    kept = (fn.__globals__, parts[0], parts[1], dict(parts[2]), parts[3])
    if shapes is None:
        if len(_code_cache) >= _CODE_CACHE_MAX:
            drop_oldest(_code_cache, _CODE_CACHE_MAX)
        _code_cache[code] = [(kept, shape)]
    else:
        shapes.insert(0, (kept, shape))
        del shapes[_SHAPES_PER_CODE:]
    return shape


def known_shape(fn: Any) -> _FunctionShape | None:
    """The shape kept for a plain function's code and parts, as :func:`_shape_by_code` finds
    it, or ``None``; never reads a signature."""
    shapes = _code_cache.get(fn.__code__)
    if shapes is not None:
        parts = (fn.__defaults__, fn.__kwdefaults__, fn.__annotations__, fn.__doc__)
        for kept, shape in shapes:
            if kept[0] is fn.__globals__ and _same_parts(kept, parts):
                return shape
    return None


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
        # A closure, or any function defined inside another (``<locals>`` in its name), is
        # most likely new on every call of the one that defines it: kept by code alone, not by
        # identity too (a weak reference made, and its callback run when the function dies,
        # for a function that is never seen again).
        if fn.__closure__ is not None or "<locals>" in fn.__qualname__:
            return _shape_by_code(fn)
        cached = _function_cache.get(fn)  # the same function again: found by identity
        if cached is not None and cached.version == _VERSION(fn):
            return cached
        shape = _shape_by_code(fn)
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


_Parameter = tuple[str, Any, Any, bool]
"""A parameter the model or the library fills: its name, annotation (as written, or
``Parameter.empty``), default (or ``Parameter.empty``) and whether it is positional-only;
``*args`` and ``**kwargs`` are never among them."""


def _code_parameters(fn: Any) -> list[_Parameter]:
    """A plain function's parameters read off its code object, defaults and annotations, as
    ``inspect.signature`` reads them (see :func:`_by_code`: not wrapped, no ``__signature__``)."""
    code = fn.__code__
    names = code.co_varnames
    count = code.co_argcount
    positional_only = code.co_posonlyargcount
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    annotations = fn.__annotations__
    first_default = count - len(defaults)
    out: list[_Parameter] = []
    for i in range(count):
        name = names[i]
        default = defaults[i - first_default] if i >= first_default else _EMPTY
        out.append((name, annotations.get(name, _EMPTY), default, i < positional_only))
    for name in names[count : count + code.co_kwonlyargcount]:
        out.append((name, annotations.get(name, _EMPTY), kwdefaults.get(name, _EMPTY), False))
    return out


def _signature_parameters(sig: inspect.Signature) -> list[_Parameter]:
    return [
        (name, param.annotation, param.default, param.kind is inspect.Parameter.POSITIONAL_ONLY)
        for name, param in sig.parameters.items()
        if param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]  # *args and **kwargs: never shown, never required (the model cannot fill them)


_SIMPLE_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_PLAIN_CLASSES = frozenset({str, int, float, bool})
_SCALAR_SPECS = {pytype: ScalarSpec(pytype) for pytype in SCALAR_PLACEHOLDERS}
"""One spec per scalar class, shared by the fields of :func:`_scalar_shape` (a spec is
immutable)."""


def _scalar_shape(fn: Any) -> _FunctionShape | None:
    """The shape of a plain function (see :func:`_by_code`) whose every parameter is annotated
    with a scalar class (``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``, or its name
    as a string), read in one pass off its code, defaults and annotations: what
    :func:`_quick_hints`, :func:`_code_parameters` and :func:`_shape` make of it, field for
    field, and, when every field is a plain ``str``, ``int``, ``float`` or ``bool``, what its
    fields write of the option's block (see :func:`._menu_text.plain_parts`). ``None`` for any
    other function (``*args``, a runtime parameter, any other annotation), which takes the
    general way."""
    code = fn.__code__
    if code.co_flags & _SIMPLE_FLAGS:
        return None
    annotations = fn.__annotations__
    count = code.co_argcount
    total = count + code.co_kwonlyargcount
    if len(annotations) - ("return" in annotations) != total:
        return None  # a parameter without an annotation
    names = code.co_varnames
    if not RUNTIME_PARAMETER_NAMES.isdisjoint(names[:total]):
        return None
    doc = fn.__doc__
    if type(doc) is str and doc.isprintable():
        # One line, no tab: what inspect.cleandoc and _first_paragraph make of it is the line
        # stripped, and it has no Args: section.
        description = doc.strip()
        doc_args: dict[str, str] = _NOTHING
    else:
        if type(doc) is not str:
            doc = inspect.getdoc(fn)
        elif "\n" in doc or "\t" in doc or doc[:1].isspace():
            doc = inspect.cleandoc(doc)
        description = _first_paragraph(doc)
        doc_args = _doc_arg_descriptions(doc) if doc else _NOTHING
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__
    first_default = count - len(defaults)
    positional_only = code.co_posonlyargcount
    globalns = fn.__globals__
    builtin_names: Any = None  # the builtins namespace, read at the first name it resolves
    fields: list[FieldSpec] = []
    plain = True  # every field a plain str, int, float or bool (see ArgsValidator.of_plain)
    # What plain fields write of the block (see plain_parts), each part in its own list.
    signature: list[str] = []
    lines: list[str] = []
    example: list[str] | None = []
    for i in range(total):
        name = names[i]
        hint = annotations.get(name, _EMPTY)
        if type(hint) is str:  # as :func:`_quick_hints` resolves a bare name
            found = globalns.get(hint, _EMPTY)
            if found is not _EMPTY or hint in globalns:
                if not hint.isidentifier() or keyword.iskeyword(hint):
                    return None
                hint = found
            elif hint in _BUILTIN_NAMES and "__builtins__" in globalns:
                if builtin_names is None:
                    builtin_names = _builtin_namespace(globalns)
                hint = builtin_names.get(hint, _EMPTY)
            else:
                return None
        spec = _SCALAR_SPECS.get(hint) if type(hint) is type else None
        if spec is None:
            return None
        if i < count:
            default = defaults[i - first_default] if i >= first_default else _EMPTY
        else:
            default = _EMPTY if kwdefaults is None else kwdefaults.get(name, _EMPTY)
        required = default is _EMPTY
        described = doc_args.get(name, "") if doc_args else ""
        fields.append(
            FieldSpec.shown(name, spec, described, required, default, i < positional_only)
        )
        if not plain:
            continue
        shown = PLAIN_SHOWN.get(hint)
        if shown is None:  # an untyped list or dict: validated by pydantic-core
            plain, example = False, None
            continue
        if example is not None:
            if name.isidentifier():
                # As plain_parts writes them (f-strings: a format string is parsed per call).
                signature.append(f"{name}: {spec.label}")
                lines.append(f"    {name}: {described}\n" if described else f"    {name}\n")
                example.append(f'"{name}": {shown}')
            else:
                example = None
    fields_made = tuple(fields)
    if not fields_made:
        validator = None
    elif plain:
        validator = ArgsValidator.of_plain(fields_made)
    else:
        validator = ArgsValidator(fields_made, all_required=False)
    return _FunctionShape(
        fields_made,
        (),
        description,
        names[:positional_only],
        validator,
        _VERSION(fn),
        None if example is None else (", ".join(signature), "".join(lines), ", ".join(example)),
    )


def _introspect(fn: Callable[..., Any]) -> _FunctionShape:
    """The shape of ``fn``: a plain function's parameters read off its code and its annotations
    resolved once compiled (the first sight of a closure); anything else, or any annotation that
    is not plain, through ``inspect.signature`` and ``typing.get_type_hints``."""
    if _by_code(fn):
        return _introspect_code(fn)
    return _introspect_signature(fn)


def _introspect_code(fn: Any) -> _FunctionShape:
    """:func:`_introspect` of a plain function (see :func:`_by_code`)."""
    shape = _scalar_shape(fn)
    if shape is not None:
        return shape
    hints = _quick_hints(fn)
    if hints is None:  # an annotation that is not plain
        return _introspect_signature(fn)
    doc = fn.__doc__
    if type(doc) is not str:
        doc = inspect.getdoc(fn)
    elif "\n" in doc or "\t" in doc or doc[:1].isspace():
        doc = inspect.cleandoc(doc)
    # else one line, no tab, nothing to strip in front: cleandoc would return it as it is
    return _shape(fn, _code_parameters(fn), hints, doc)


def _introspect_signature(fn: Callable[..., Any]) -> _FunctionShape:
    """:func:`_introspect` through ``inspect.signature`` and ``typing.get_type_hints``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot read the signature of option function {fn!r}: {exc}") from None
    hints = _resolve_hints(fn, sig)
    doc = inspect.getdoc(fn.func if isinstance(fn, functools.partial) else fn)
    return _shape(fn, _signature_parameters(sig), hints, doc)


def _shape(
    fn: Any, parameters: list[_Parameter], hints: dict[str, Any], doc: str | None
) -> _FunctionShape:
    doc_args = _doc_arg_descriptions(doc)
    fields: list[FieldSpec] = []
    hidden: list[FieldSpec] = []
    for name, annotation, default, positional_only in parameters:
        hint: Any = hints.get(name, annotation)
        has_default = default is not _EMPTY
        if (
            type(hint) is type
            and hint in SCALAR_PLACEHOLDERS
            and name not in RUNTIME_PARAMETER_NAMES
        ):
            # ``str``, ``int``...: what spec_from_annotation makes of them, without its dispatch
            description = doc_args.get(name, "")
            fields.append(
                FieldSpec.shown(
                    name, ScalarSpec(hint), description, not has_default, default, positional_only
                )
            )
            continue
        meta = hint.__metadata__ if typing.get_origin(hint) is typing.Annotated else ()
        context = next((m for m in meta if isinstance(m, FromContext)), None)
        if name in RUNTIME_PARAMETER_NAMES or _is_runtime_annotation(hint):
            hidden.append(
                FieldSpec(
                    name,
                    UnknownSpec(annotation_label(hint)),  # filled by the library, never validated
                    required=not has_default,
                    source="runtime",
                    default=default,
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
                    default=default,
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
            FieldSpec.shown(name, spec, description, not has_default, default, positional_only)
        )
    positional = tuple(p[0] for p in parameters if p[3])
    shown = tuple(fields)
    try:
        validator = ArgsValidator(shown, all_required=False) if shown else None
    except UnsupportedType as exc:
        raise _UnsupportedParameter("", None, str(exc)) from None
    return _FunctionShape(
        shown, tuple(hidden), _first_paragraph(doc), positional, validator, _version(fn)
    )


def clear_shape_caches() -> None:
    """Forget every cached function shape (for benchmarks)."""
    for weak in (_function_cache, _method_cache):
        if len(weak):  # clear() pops item by item until a KeyError, even when empty
            weak.clear()
    _code_cache.clear()
    _unweakable_cache.clear()
    _annotation_code.clear()
