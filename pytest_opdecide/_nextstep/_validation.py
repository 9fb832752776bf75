"""Validation of a pick's arguments: one compiled pydantic-core validator per option, and its
failures explained in the reference implementation's words.

Validation follows pydantic's strict mode for JSON input: an ISO string becomes a ``date``, a
``UUID`` or a ``Decimal``, an array a ``set`` or a ``tuple``, but ``"42"`` is not an ``int``.
The arguments of an option whose types validate alike in pydantic's Python and JSON modes
(strings, numbers, lists, objects, allowed values...) are validated as parsed; any other's go
through JSON text, which costs about a microsecond more per pick (see
``benchmarks/bench_decision.py``).

The sections, in order: :class:`ParseFailure` and how a wrong value is shown;
:class:`ArgsValidator`, built once per option and cached with it (it also catches a value
copied from the menu's ``Call:`` example); :func:`explain`, which reports a failure in the
reference's words where it has them, so the model reads the same problems as with the
reference.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import pydantic
from pydantic_core import CoreSchema, PydanticSerializationError, SchemaValidator, to_json
from pydantic_core import core_schema as cs

from pytest_opdecide._nextstep._field_types import (
    DictSpec,
    FieldSpec,
    ListSpec,
    NoneSpec,
    ScalarSpec,
    TypeSpec,
    UnionSpec,
    UnknownSpec,
    UnsupportedType,
    fields_core_schema,
    json_dumps,
    pydantic_gist,
    slots_of,
)

__all__ = ["ArgsValidator", "ParseFailure", "explain", "safe_repr"]


class ParseFailure(Exception):
    """A reply failed to parse or validate; ``kind`` is one of the documented error kinds."""

    __module__ = "pytest_opdecide.options"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _type_name(value: object) -> str:
    return type(value).__name__


def safe_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, shortened, and never raising (huge ints, hostile ``__repr__``)."""
    try:
        text = repr(value)
    except Exception:
        return f"<{_type_name(value)} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _got(value: object) -> str:
    """How a wrong scalar is described: ``str ('3')``, ``int (3)``, else the type name."""
    if type(value) is str:
        shown = value if len(value) <= 40 else value[:40] + "..."
        return f"str ({shown!r})"
    if type(value) in (int, float):
        return f"{_type_name(value)} ({safe_repr(value)})"
    return _type_name(value)


# --- the validator -------------------------------------------------------------------------------


def _string_placeholders(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, list):
        for item in value:
            _string_placeholders(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _string_placeholders(item, found)


_ALWAYS_COMPILES: frozenset[type] = frozenset({str, int, float, bool, list, dict})


def _compiles(spec: TypeSpec) -> bool:
    """Whether pydantic-core compiles ``spec``'s schema whatever it holds: a plain scalar,
    ``Any``, or a list, an object of free keys or a union of those (any other type, with its
    own constraints, models or allowed values, is compiled when the menu is built)."""
    kind = type(spec)
    if kind is ScalarSpec:
        return cast(ScalarSpec, spec).pytype in _ALWAYS_COMPILES
    if kind is UnknownSpec or kind is NoneSpec:
        return True
    if kind is ListSpec:
        return _compiles(cast(ListSpec, spec).item)
    if kind is DictSpec:
        return _compiles(cast(DictSpec, spec).value)
    if kind is UnionSpec:
        return all(_compiles(m) for m in cast(UnionSpec, spec).members)
    return False


_PLAIN_TYPES: frozenset[type] = frozenset({str, int, float, bool})
_EXACT_FLOAT = 2**53  # an int up to this size is exactly the float it converts to


class ArgsValidator:
    """The compiled check of one option's arguments: one pydantic-core validator per option.

    Args:
        fields: The fields the model fills, in order.
        all_required: Every field must be sent (schema options), or only those without a
            default (function options).

    Raises:
        UnsupportedType: pydantic cannot build a validator of these fields.
    """

    def __init__(self, fields: tuple[FieldSpec, ...], *, all_required: bool) -> None:
        self.fields = fields
        self.all_required = all_required
        native = True
        compiles = True
        plain = True
        for f in fields:  # one pass: made on every first sight of an option
            name, spec = f.name, f.type
            native = native and spec.native
            if type(spec) is ScalarSpec:
                pytype = spec.pytype
                if pytype not in _PLAIN_TYPES:
                    plain = False
                if compiles and pytype not in _ALWAYS_COMPILES:
                    compiles = False
            else:
                plain = False
                compiles = compiles and _compiles(spec)
            if compiles and (type(name) is not str or not name.isidentifier()):
                compiles = False
        self.native = native
        """Whether a pick parsed from JSON is validated as it is (else through JSON text)."""
        self._plain = plain
        """Whether every field is a plain ``str``, ``int``, ``float`` or ``bool`` (see
        :meth:`_checked_plainly`)."""
        if not compiles:
            # A type outside the known-safe set: compiled now, so that one pydantic-core
            # refuses is refused when the menu is built, before any model call.
            self._compiled  # noqa: B018

    @classmethod
    def of_plain(cls, fields: tuple[FieldSpec, ...]) -> ArgsValidator:
        """``ArgsValidator(fields, all_required=False)`` of fields named by identifiers whose
        every type is a plain ``str``, ``int``, ``float`` or ``bool``, made at once (what
        ``__init__`` reads off them; a function's first sight makes one)."""
        made = object.__new__(_PlainArgsValidator)
        made.fields = fields
        made.all_required = False
        made.native = True
        made._plain = True
        return made

    @functools.cached_property
    def by_name(self) -> dict[str, FieldSpec]:
        """The fields by name (read when a pick fails, to explain it)."""
        return {f.name: f for f in self.fields}

    # The schema and the compiled validator: built on the option's first pick when every field
    # has a type pydantic-core always compiles (see :func:`_compiles`), else in ``__init__``.

    @functools.cached_property
    def core_schema(self) -> CoreSchema:
        """The pydantic-core schema of the arguments (a typed dict of the fields)."""
        defs: dict[str, CoreSchema] = {}
        schema = fields_core_schema(self.fields, defs, all_required=self.all_required)
        if defs:
            schema = cs.definitions_schema(schema, list(defs.values()))
        return schema

    @functools.cached_property
    def _compiled(self) -> SchemaValidator:
        try:
            return SchemaValidator(self.core_schema)
        except Exception as exc:  # a field name or a combination pydantic-core refuses
            raise UnsupportedType(pydantic_gist(exc)) from None

    @functools.cached_property
    def _python(self) -> Callable[..., Any]:
        return self._compiled.validate_python

    @functools.cached_property
    def _json(self) -> Callable[..., Any]:
        return self._compiled.validate_json

    @functools.cached_property
    def validate_parsed(self) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """:meth:`validate` of arguments parsed from reply text (the hot path)."""
        if self._plain:
            return self._checked_plainly
        if self.native:
            return functools.partial(self._python, strict=True)  # in C: no Python frame per pick
        return functools.partial(self.validate, from_json=True)

    def _checked_plainly(self, args: dict[str, Any]) -> dict[str, Any]:
        """What pydantic-core's strict check of plain fields returns (the fields sent, in the
        fields' order, a float field's ``int`` as a ``float``), told without compiling it for
        a value of exactly the field's class; anything else (a missing field, another class, a
        subclass, a huge ``int``) goes to pydantic-core, which converts or raises its error."""
        out: dict[str, Any] = {}
        all_required = self.all_required
        for f in self.fields:
            name = f.name
            if name in args:
                value = args[name]
                kind = type(value)
                pytype = f.type.pytype  # type: ignore[attr-defined]  # a ScalarSpec's
                if kind is pytype:
                    out[name] = value
                    continue
                if pytype is float and kind is int and -_EXACT_FLOAT <= value <= _EXACT_FLOAT:
                    out[name] = float(value)
                    continue
            elif not (all_required or f.required):
                continue
            return self._python(args, strict=True)  # type: ignore[no-any-return]
        return out

    # What tells a value copied from the menu's ``Call:`` example: read on a pick's first
    # check, so that an option never picked never pays for it.

    @functools.cached_property
    def _texts(self) -> frozenset[str]:
        """The menu's string placeholders of these fields (``<str>``, ``<date yyyy-mm-dd>``)."""
        if self._plain:
            return _PLAIN_TEXTS  # a plain field's placeholder is "<str>" or a slot
        return _placeholder_texts(self.fields)

    @functools.cached_property
    def placeholders(self) -> frozenset[str]:
        """The menu's string placeholders of these fields, and its slots (``<int>``): a value
        equal to one, or a text holding one, was copied. (A slot without its brackets,
        ``"int"``, is no copy: it may be a text field's answer.)"""
        slots = {
            slot.text
            for f in self.fields
            if f.type.choices is None
            for slot in slots_of(f.type.placeholder())
        }
        return self._texts | slots

    @functools.cached_property
    def bare_placeholders(self) -> dict[str, str]:
        """Each string placeholder without its brackets (``str``, ``date yyyy-mm-dd``),
        casefolded: a value equal to one was copied too (a grammar that forbids a leading
        ``<`` leaves the rest)."""
        return {p[1:-1].strip().casefold(): p for p in self._texts}

    @functools.cached_property
    def copy_marks(self) -> tuple[str, ...]:
        """Words at least one of which a reply holding a copy contains (``str``, ``date``...):
        a reply without any is not searched."""
        return tuple(sorted({bare.split()[0] for bare in self.bare_placeholders}))

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (an object with the fields as properties).

        The definitions of pydantic models and dataclasses are gathered in the root's
        ``$defs``, where their ``$ref`` point.
        """
        defs: dict[str, Any] = {}
        schema = {
            "type": "object",
            "properties": {f.name: _hoisted(f.json_schema(), defs) for f in self.fields},
            "required": [f.name for f in self.fields if self.all_required or f.required],
        }
        if defs:
            schema["$defs"] = defs
        return schema

    def validate(self, args: dict[str, Any], *, from_json: bool) -> dict[str, Any]:
        """Validated and converted arguments (only the fields, in order).

        Args:
            args: The arguments the model sent.
            from_json: ``args`` holds only what JSON makes (it was parsed from reply text).

        Raises:
            pydantic.ValidationError: The arguments do not fit (see :func:`explain`).
        """
        if self._plain:
            return self._checked_plainly(args if type(args) is dict else dict(args))
        if self.native:
            return self._python(args, strict=True)  # type: ignore[no-any-return]
        if not from_json:
            try:
                text = to_json(args)
            except PydanticSerializationError:  # Python objects JSON cannot carry
                return self._python(args, strict=True)  # type: ignore[no-any-return]
        else:
            text = to_json(args)
        return self._json(text, strict=True)  # type: ignore[no-any-return]

    def copied_placeholder(self, args: Mapping[str, Any]) -> ParseFailure | None:
        """The failure of a value copied from the menu's ``Call:`` example, if any: a
        placeholder exactly (``"<str>"``), without its brackets (``"str"``, ``"Date
        YYYY-MM-DD"``), or inside a longer text (``"boxes: [<str>]"``)."""
        for f in self.fields:
            if f.name in args and f.type.choices is None:
                found = _find_string(args[f.name], self._copied)
                if found is not None:
                    keys, value = found
                    path = _path([f.name, *reversed(keys)])
                    return ParseFailure("invalid_value", self._copy_message(path, value))
        return None

    def _copied(self, value: str) -> bool:
        if value in self.placeholders or value.strip().casefold() in self.bare_placeholders:
            return True
        return "<" in value and any(p in value for p in self.placeholders)

    def _copy_message(self, path: str, value: str) -> str:
        shown = json_dumps(value if len(value) <= 60 else value[:57] + "...")
        if value in self.placeholders:
            return (
                f"Field '{path}' is {shown}, the placeholder copied from the Call: example; "
                "send a real value instead"
            )
        bare = self.bare_placeholders.get(value.strip().casefold())
        if bare is not None:
            return (
                f"Field '{path}' is {shown}, the placeholder {json_dumps(bare)} of the Call: "
                "example without its brackets; send a real value instead"
            )
        inside = next(p for p in sorted(self.placeholders) if p in value)
        return (
            f"Field '{path}' is {shown}, which holds the placeholder {json_dumps(inside)} "
            "copied from the Call: example; send a real value instead"
        )


_PLAIN_TEXTS = frozenset({"<str>"})


class _PlainArgsValidator(ArgsValidator):
    """An :class:`ArgsValidator` of plain fields (see :meth:`ArgsValidator.of_plain`): what a
    pick's check reads off it is the same for any such fields, so it is the class's, not
    computed on each option's first pick; and its hot path is a method, not a bound method
    kept by the validator (which would make a reference cycle of every option picked)."""

    _texts = _PLAIN_TEXTS
    bare_placeholders = {"str": "<str>"}  # noqa: RUF012 (read only, as the base's)
    copy_marks = ("str",)

    def validate_parsed(self, args: dict[str, Any]) -> dict[str, Any]:
        """:meth:`ArgsValidator.validate` of arguments parsed from reply text."""
        return self._checked_plainly(args)


def _placeholder_texts(fields: tuple[FieldSpec, ...]) -> frozenset[str]:
    """The string placeholders of ``fields`` in the menu's ``Call:`` examples, and ``<str>``."""
    placeholders: set[str] = {"<str>"}
    for f in fields:
        if f.type.choices is None:
            _string_placeholders(f.type.placeholder(), placeholders)
    return frozenset(p for p in placeholders if p.startswith("<"))


def _hoisted(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` without its nested ``$defs``, which are moved to ``defs``."""
    if isinstance(schema, dict):
        for name, definition in schema.get("$defs", {}).items():
            defs.setdefault(name, _hoisted(definition, defs))
        return {k: _hoisted(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_hoisted(item, defs) for item in schema]
    return schema


def _find_string(value: Any, copied: Callable[[str], bool]) -> tuple[list[Any], str] | None:
    """The location (innermost key first) and value of the first string ``copied`` says is
    a copy."""
    if type(value) is str:  # exactly: a subclass may hash in its own way
        return ([], value) if copied(value) else None
    if type(value) is list:
        items: Any = enumerate(value)
    elif type(value) is dict:
        items = value.items()
    else:
        return None
    for key, item in items:
        found = _find_string(item, copied)
        if found is not None:
            found[0].append(key)
            return found
    return None


# --- explaining a failure in the reference's words ----------------------------------------------

_TYPE_WORDS = {
    "string_type": "str",
    "int_type": "int",
    "float_type": "float",
    "bool_type": "bool",
    "none_required": "null",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "frozen_set_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "dataclass_exact_type": "an object",
}
_SHOULD_BE = "Input should be "


def _wrong_type(kind: str) -> bool:
    return kind in _TYPE_WORDS or kind.endswith("_type") or kind == "is_instance_of"


def _shallow(errors: list[Any], depth: int) -> bool:
    """Whether a union member failed only on the value's type (nothing deeper to report)."""
    return all(len(e["loc"]) == depth and _wrong_type(e["type"]) for e in errors)


def _at(value: Any, loc: Sequence[Any]) -> Any:
    for key in loc:
        value = value[key]
    return value


def _path(loc: Sequence[Any]) -> str:
    text = ""
    for key in loc:
        if isinstance(key, int):
            text += f"[{key}]"
        else:
            text += f".{key}" if text else str(key)
    return text


def explain(
    exc: pydantic.ValidationError,
    args: Mapping[str, Any],
    validator: ArgsValidator,
    missing_message: str,
) -> ParseFailure:
    """A validation failure as the model reads it, in the reference's words where it has them.

    Missing required arguments come first, all of them, listed after ``missing_message``
    (``Call 'greet' is missing required arguments: ``); then
    the first failing field: ``Field 'n' must be int, got str ('3')``, ``Field 'steps' must be
    a list, got dict``, ``Field 'plan' is missing nested field 'sub'``, ``Field 'mode' must be
    one of ['fast', 'slow'], got 'medium'``; for a union, the one member that failed deeper
    than the value's type, else ``Field 'v' must be int | str, got list``.
    """
    errors: list[Any] = list(exc.errors(include_url=False))
    order: dict[Any, int] = {name: i for i, name in enumerate(validator.by_name)}
    missing: list[Any] = sorted(
        (e["loc"][0] for e in errors if e["type"] == "missing" and len(e["loc"]) == 1),
        key=lambda name: order.get(name, len(order)),
    )
    if missing:
        return ParseFailure("missing_required", missing_message + repr(missing))
    errors.sort(key=lambda e: order.get(e["loc"][0], len(order)) if e["loc"] else -1)
    first = errors[0]
    field = validator.by_name.get(first["loc"][0]) if first["loc"] else None
    spec: TypeSpec | None = None if field is None else field.type
    depth = 1
    while True:
        loc = first["loc"]
        if isinstance(spec, UnionSpec) and spec.optional is None and depth < len(loc):
            prefix = loc[:depth]
            by_member: dict[Any, list[Any]] = {}
            for e in errors:
                if tuple(e["loc"][:depth]) == tuple(prefix) and len(e["loc"]) > depth:
                    by_member.setdefault(e["loc"][depth], []).append(e)
            deep = [tag for tag, errs in by_member.items() if not _shallow(errs, depth + 1)]
            if len(deep) != 1:
                try:
                    value = _at(args, prefix)
                except Exception:
                    value = first["input"]
                return ParseFailure(
                    "type_mismatch",
                    f"Field '{_path(prefix)}' must be {spec.label}, got {_got(value)}",
                )
            tag = deep[0]
            errors = [
                {**e, "loc": (*e["loc"][:depth], *e["loc"][depth + 1 :])} for e in by_member[tag]
            ]
            first = errors[0]
            # Members fail in order: the n-th tag is the n-th member (also for pydantic's tags).
            position = list(by_member).index(tag)
            spec = spec.members[position] if position < len(spec.members) else None
            continue
        if depth >= len(loc):
            break
        spec = None if spec is None else spec.child(loc[depth])
        depth += 1
    return _leaf_failure(first, spec)


def _leaf_failure(error: Any, spec: TypeSpec | None) -> ParseFailure:
    kind, loc, value = error["type"], error["loc"], error["input"]
    path = _path(loc)
    message: str = error["msg"]
    if kind == "missing":
        return ParseFailure(
            "missing_required",
            f"Field '{_path(loc[:-1])}' is missing nested field '{loc[-1]}'",
        )
    if kind in ("literal_error", "enum"):
        if spec is not None and spec.choices is not None:
            allowed = repr(list(spec.choices))
        else:
            allowed = str(error.get("ctx", {}).get("expected", "an allowed value"))
        return ParseFailure(
            "enum_violation", f"Field '{path}' must be one of {allowed}, got {safe_repr(value)}"
        )
    if _wrong_type(kind):
        expected = spec.expected() if spec is not None else _TYPE_WORDS.get(kind)
        if expected is None:
            expected = message[len(_SHOULD_BE) :] if message.startswith(_SHOULD_BE) else "valid"
        got = _type_name(value) if expected in ("a list", "an object") else _got(value)
        text = f"Field '{path}' must be {expected}, got {got}"
        if kind == "float_type" and type(value) is int:
            text += ", too large for a float"
        return ParseFailure("type_mismatch", text)
    if kind.endswith("_parsing"):
        # The value has the right JSON type but not the format: say what the format is.
        expected = spec.expected() if spec is not None else "valid"
        return ParseFailure(
            "type_mismatch", f"Field '{path}' must be {expected}, got {_got(value)}: {message}"
        )
    if message.startswith(_SHOULD_BE):
        text = f"Field '{path}' must be {message[len(_SHOULD_BE) :]}, got {safe_repr(value)}"
    else:
        text = f"Field '{path}' is invalid: {message} (got {safe_repr(value)})"
    return ParseFailure("invalid_value", text)
