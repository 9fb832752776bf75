"""Field types: annotations and schema notation turned into renderable specs, validated by pydantic.

Every option field (a function parameter or a schema entry) becomes a :class:`FieldSpec` whose
:class:`TypeSpec` knows what the menu shows (the name in the signature, the placeholder in the
``Call:`` example, the allowed values) and gives the pydantic-core schema that validates and
converts what the model sent. The fields of one option compile into one :class:`ArgsValidator`,
built once per option and cached with it.

Validation follows pydantic's strict mode for JSON input: an ISO string becomes a ``date``, a
``UUID`` or a ``Decimal``, an array a ``set`` or a ``tuple``, but ``"42"`` is not an ``int``.
The arguments of an option whose types validate alike in pydantic's Python and JSON modes
(strings, numbers, lists, objects, allowed values...) are validated as parsed; any other's go
through JSON text, which costs about a microsecond more per pick (see
``benchmarks/bench_decision.py``).
Failures are reported in the reference implementation's words where it has them (see
:func:`explain`), so the model reads the same problems as with the reference.

The structural types the reference renders (scalars, lists, nested objects, allowed values,
unions, ``TypedDict``, which pydantic refuses from ``typing`` before Python 3.12) have specs of
their own; every other type is handed to pydantic whole (:class:`PydanticSpec`), and a type
pydantic cannot validate from JSON is refused when the menu is built.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import inspect
import ipaddress
import json
import pathlib
import random
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

import annotated_types
import pydantic
from pydantic_core import CoreSchema, PydanticSerializationError, SchemaValidator, to_json
from pydantic_core import core_schema as cs

from pytest_opdecide._nextstep._examples import example_from_json_schema

__all__ = [
    "META_KEYS",
    "ArgsValidator",
    "FieldSpec",
    "FromContext",
    "Param",
    "ParseFailure",
    "TypeSpec",
    "UnsupportedType",
    "annotation_label",
    "field_from_notation",
    "spec_from_annotation",
]

META_KEYS = frozenset({"type", "description", "options", "fields", "items"})
"""Keys of a schema meta-spec; a dict whose keys all fall in this set is a meta-spec."""

_MAX_DEPTH = 32
_NONE_TYPE = type(None)


class ParseFailure(Exception):
    """A reply failed to parse or validate; ``kind`` is one of the documented error kinds."""

    __module__ = "pytest_opdecide.options"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class UnsupportedType(TypeError):
    """An annotation the model cannot fill with JSON that pydantic validates."""


@dataclass(frozen=True)
class Param:
    """Describe a function parameter for the model, via ``typing.Annotated``.

    Example:
        ``def escalate(team: Annotated[str, Param("Team to page", options=["ops", "billing"])])``
        renders ``team: Team to page (options: "ops", "billing")`` and rejects any other team.

    Attributes:
        description: Shown after the field name in the menu.
        options: The allowed values (an enum); the model's value must be one of them.
    """

    description: str | None = None
    options: Sequence[Any] | None = None

    def __post_init__(self) -> None:
        # Annotated hashes its metadata: keep Param hashable whatever sequence was given.
        if self.options is not None:
            object.__setattr__(self, "options", tuple(self.options))


@dataclass(frozen=True)
class FromContext:
    """Mark a function parameter as filled from ``context=`` and hidden from the model.

    Example:
        ``def refund(amount: float, order_id: Annotated[str, FromContext()])`` is shown to the
        model as ``refund(amount: float)``; ``order_id`` comes from ``context["order_id"]``. A
        value the model sends for ``order_id`` is ignored: the caller's context always wins.

    Attributes:
        key: The context key to read; defaults to the parameter name.
    """

    key: str | None = None


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


# --- specs -------------------------------------------------------------------------------------


class TypeSpec:
    """Base class of field types. Subclasses are immutable after construction.

    Attributes:
        label: The name shown in the menu signature (``str``, ``list``, ``date``...).
        choices: The allowed values, when the type restricts them (rendered as options).
        native: Whether validating a value parsed from JSON in pydantic's Python mode gives what
            its JSON mode gives. Only then can a pick skip the round trip through JSON text.
    """

    label: str = "any"
    choices: tuple[Any, ...] | None = None
    native: bool = True

    def placeholder(self) -> Any:
        """The native JSON placeholder shown in the ``Call:`` example."""
        return None

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of this type, for native tool definitions."""
        return {}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        """The pydantic-core schema that validates (and converts) this type, strictly.

        Args:
            defs: Where shared definitions (of pydantic models) are collected, by reference.
        """
        return cs.any_schema()

    def child(self, key: Any) -> TypeSpec | None:
        """The type found one step down an error location (a field name, a list index), or
        ``None`` when pydantic reports inside on its own terms."""
        return None

    def expected(self) -> str:
        """What a wrong value is told it must be: ``int``, ``a list``, ``an object``..."""
        return self.label

    @functools.cached_property
    def _json_check(self) -> Callable[..., Any]:
        defs: dict[str, CoreSchema] = {}
        schema = self.core_schema(defs)
        if defs:
            schema = cs.definitions_schema(schema, list(defs.values()))
        return SchemaValidator(schema).validate_json

    def accepts(self, value: Any) -> bool:
        """Whether a JSON value passes this type's validation (for generated values)."""
        try:
            self._json_check(to_json(value), strict=True)
        except (pydantic.ValidationError, PydanticSerializationError):
            return False
        return True


class UnknownSpec(TypeSpec):
    """``Any``, ``object`` or no annotation: rendered by name, any value accepted."""

    def __init__(self, label: str) -> None:
        self.label = label


_SCALAR_PLACEHOLDERS: dict[type, Any] = {
    str: "<str>",
    int: 0,
    float: 0.0,
    bool: False,
    list: [],
    dict: {},
}
_SCALAR_SCHEMA: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}
_SCALAR_CORE: dict[type, Callable[[], CoreSchema]] = {
    str: lambda: cs.str_schema(strict=True),
    int: lambda: cs.int_schema(strict=True),
    float: lambda: cs.float_schema(strict=True),
    bool: lambda: cs.bool_schema(strict=True),
    list: lambda: cs.list_schema(strict=True),
    dict: lambda: cs.dict_schema(strict=True),
}


class ScalarSpec(TypeSpec):
    """``str``, ``int``, ``float``, ``bool``, untyped ``list`` and untyped ``dict``."""

    def __init__(self, pytype: type) -> None:
        self.pytype = pytype
        self.label = pytype.__name__

    def placeholder(self) -> Any:
        value = _SCALAR_PLACEHOLDERS[self.pytype]
        return [] if value == [] else {} if value == {} else value

    def json_schema(self) -> dict[str, Any]:
        return {"type": _SCALAR_SCHEMA[self.pytype]}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return _SCALAR_CORE[self.pytype]()

    def expected(self) -> str:
        return (
            "a list" if self.pytype is list else "an object" if self.pytype is dict else self.label
        )


class NoneSpec(TypeSpec):
    """``None`` as a member of a union."""

    label = "None"

    def json_schema(self) -> dict[str, Any]:
        return {"type": "null"}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return cs.none_schema()

    def expected(self) -> str:
        return "null"


class ListSpec(TypeSpec):
    """A list whose every element matches one item template."""

    label = "list"

    def __init__(self, item: TypeSpec) -> None:
        self.item = item
        self.native = item.native

    def placeholder(self) -> Any:
        return [self.item.placeholder()]

    def json_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.json_schema()}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return cs.list_schema(self.item.core_schema(defs), strict=True)

    def child(self, key: Any) -> TypeSpec | None:
        return self.item if isinstance(key, int) else None

    def expected(self) -> str:
        return "a list"


class SequenceSpec(TypeSpec):
    """``set[T]``, ``frozenset[T]``, ``tuple[T, ...]`` and ``tuple[A, B]``: JSON arrays that
    pydantic turns into the Python type (never native: Python mode wants the type itself).

    Attributes:
        kind: ``set``, ``frozenset`` or ``tuple``.
        items: The item type (one, for sets and ``tuple[T, ...]``), or each position's type.
        variadic: Whether ``items[0]`` repeats (sets and ``tuple[T, ...]``).
    """

    native = False

    def __init__(self, kind: str, items: tuple[TypeSpec, ...], variadic: bool) -> None:
        self.kind = kind
        self.label = kind
        self.items = items
        self.variadic = variadic

    def placeholder(self) -> Any:
        return [item.placeholder() for item in self.items]

    def json_schema(self) -> dict[str, Any]:
        if self.variadic:
            schema: dict[str, Any] = {"type": "array", "items": self.items[0].json_schema()}
            if self.kind != "tuple":
                schema["uniqueItems"] = True
            return schema
        size = len(self.items)
        prefix = [item.json_schema() for item in self.items]
        return {"type": "array", "prefixItems": prefix, "minItems": size, "maxItems": size}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        items = [item.core_schema(defs) for item in self.items]
        if self.kind == "set":
            return cs.set_schema(items[0])
        if self.kind == "frozenset":
            return cs.frozenset_schema(items[0])
        if self.variadic:
            return cs.tuple_schema(items, variadic_item_index=0)
        return cs.tuple_schema(items)

    def child(self, key: Any) -> TypeSpec | None:
        if not isinstance(key, int):
            return None
        if self.variadic:
            return self.items[0]
        return self.items[key] if 0 <= key < len(self.items) else None

    def expected(self) -> str:
        return "a list"


class DictSpec(TypeSpec):
    """``dict[str, T]``: an object with free keys and values of one type."""

    label = "dict"

    def __init__(self, value: TypeSpec) -> None:
        self.value = value
        self.native = value.native

    def placeholder(self) -> Any:
        return {}

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.json_schema()}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return cs.dict_schema(cs.str_schema(strict=True), self.value.core_schema(defs), strict=True)

    def child(self, key: Any) -> TypeSpec | None:
        return self.value if isinstance(key, str) else None

    def expected(self) -> str:
        return "an object"


class ObjectSpec(TypeSpec):
    """A nested object with named fields: schema notation, or a ``TypedDict``."""

    def __init__(self, fields: tuple[FieldSpec, ...], label: str = "dict") -> None:
        self.fields = fields
        self.label = label
        self.native = all(f.type.native for f in fields)
        self._by_name = {f.name: f for f in fields}

    def placeholder(self) -> Any:
        return {f.name: f.type.placeholder() for f in self.fields}

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {f.name: f.json_schema() for f in self.fields},
            "required": [f.name for f in self.fields if f.required],
        }

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return _fields_schema(self.fields, defs, all_required=False)

    def child(self, key: Any) -> TypeSpec | None:
        found = self._by_name.get(key) if isinstance(key, str) else None
        return None if found is None else found.type

    def expected(self) -> str:
        return "an object"


def _embedded(annotation: Any, defs: dict[str, CoreSchema]) -> CoreSchema:
    """pydantic's own schema of ``annotation``, its shared definitions moved to ``defs`` (one
    validator holds each definition once, however many fields use it)."""
    schema: Any = pydantic.TypeAdapter(annotation).core_schema
    if schema["type"] == "definitions":
        for definition in schema["definitions"]:
            defs.setdefault(definition["ref"], definition)
        return schema["schema"]  # type: ignore[no-any-return]
    return schema  # type: ignore[no-any-return]


class ModelSpec(TypeSpec):
    """A pydantic model or a dataclass: rendered from its fields, validated by pydantic,
    passed as an instance."""

    def __init__(self, model: type[Any], shape: ObjectSpec) -> None:
        self.model = model
        self.shape = shape
        self.label = model.__name__
        try:
            adapter = pydantic.TypeAdapter(model)
            adapter.json_schema()
        except Exception as exc:
            raise UnsupportedType(_first_line(exc)) from None
        self.native = _native(adapter.core_schema)

    def placeholder(self) -> Any:
        return self.shape.placeholder()

    def json_schema(self) -> dict[str, Any]:
        return pydantic.TypeAdapter(self.model).json_schema()

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return _embedded(self.model, defs)

    def child(self, key: Any) -> TypeSpec | None:
        return self.shape.child(key)

    def expected(self) -> str:
        return "an object"


class UnionSpec(TypeSpec):
    """``X | Y`` and ``Optional[X]``: the first member that accepts the value wins."""

    def __init__(self, members: tuple[TypeSpec, ...]) -> None:
        self.members = members
        self.label = " | ".join(m.label for m in members)
        self.native = all(m.native for m in members)
        valued = [m for m in members if not isinstance(m, NoneSpec)]
        # Optional[X]: None or X, reported as X (errors inside X keep their own paths).
        self.optional = valued[0] if len(valued) == 1 and len(members) == 2 else None
        if valued and all(m.choices is not None for m in valued):
            # Optional[Literal[...]] / Optional[Enum]: the menu lists the allowed values.
            self.choices = tuple(v for m in valued for v in (m.choices or ()))

    def placeholder(self) -> Any:
        for m in self.members:
            if not isinstance(m, NoneSpec):
                return m.placeholder()
        return None

    def json_schema(self) -> dict[str, Any]:
        return {"anyOf": [m.json_schema() for m in self.members]}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        if self.optional is not None:
            return cs.nullable_schema(self.optional.core_schema(defs), strict=True)
        # Members are tagged by position, so that an error location names the member.
        choices = [(m.core_schema(defs), str(i)) for i, m in enumerate(self.members)]
        return cs.union_schema(choices, mode="left_to_right")  # type: ignore[arg-type]

    def child(self, key: Any) -> TypeSpec | None:
        if self.optional is not None:
            return self.optional.child(key)
        return None


class ChoiceSpec(TypeSpec):
    """Allowed values (``Literal``, ``Enum``, ``Param(options=...)``, meta-spec ``options``).

    A value is checked against the base type first (``"2"`` is not an ``int``), then against
    the allowed values; an ``Enum`` converts its value to the member.
    """

    def __init__(
        self, base: TypeSpec, values: tuple[Any, ...], convert: Callable[[Any], Any] | None = None
    ) -> None:
        self.base = base
        self.choices = values
        self.label = base.label
        self.convert = convert
        self.native = base.native

    def placeholder(self) -> Any:
        return self.base.placeholder()

    def json_schema(self) -> dict[str, Any]:
        return {**self.base.json_schema(), "enum": list(self.choices or ())}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        allowed = cs.literal_schema(list(self.choices or ()))
        schema = cs.chain_schema([self.base.core_schema(defs), allowed])
        if self.convert is None:
            return schema
        return cs.no_info_after_validator_function(self.convert, schema)

    def child(self, key: Any) -> TypeSpec | None:
        return self.base.child(key)

    def expected(self) -> str:
        return self.base.expected()


class PydanticSpec(TypeSpec):
    """A type pydantic validates whole: ``date``, ``UUID``, ``Decimal``, ``Path``, constrained
    types (``Annotated[int, Field(ge=1)]``)...

    Args:
        annotation: What pydantic validates.
        label: The name in the menu.
        shape: The spec the menu is rendered from, when the type is a constrained one.
    """

    def __init__(self, annotation: Any, label: str, shape: TypeSpec | None = None) -> None:
        self.annotation = annotation
        self.label = label
        self.shape = shape
        try:
            self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
            self._json_schema = self.adapter.json_schema()
        except Exception as exc:
            raise UnsupportedType(_first_line(exc)) from None
        if shape is not None:
            self.choices = shape.choices
        self.native = _native(self.adapter.core_schema)

    def placeholder(self) -> Any:
        if self.shape is not None:
            return self.shape.placeholder()
        return _placeholder_of(self.annotation, self._json_schema)

    def json_schema(self) -> dict[str, Any]:
        return dict(self._json_schema)

    def example(self, rng: random.Random) -> Any:
        """A JSON value this type accepts, drawn from ``rng`` (from its JSON schema, checked;
        the last draw when none passes in ten)."""
        value = None
        for _ in range(10):
            value = example_from_json_schema(self._json_schema, rng)
            if self.accepts(value):
                break
        return value

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return _embedded(self.annotation, defs)

    def child(self, key: Any) -> TypeSpec | None:
        return None if self.shape is None else self.shape.child(key)

    def expected(self) -> str:
        return self.label if self.shape is None else self.shape.expected()


def _first_line(exc: BaseException) -> str:
    """The gist of pydantic's error: its first sentence (the rest advises on pydantic models)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0].split(". ")[0].rstrip(".")


# Core schema types that validate a value parsed from JSON alike in Python and JSON mode.
_NATIVE_CORE = frozenset(
    {
        "any", "none", "bool", "int", "float", "str", "list", "dict", "typed-dict",
        "typed-dict-field", "nullable", "union", "tagged-union", "default", "chain", "model",
        "model-fields", "model-field", "definitions", "definition-ref", "function-after",
        "function-before", "function-wrap", "function-plain", "literal",
    }
)  # fmt: skip
_SKIPPED_KEYS = frozenset({"metadata", "serialization", "ref", "function", "cls", "config"})


def _native(schema: Any) -> bool:
    """Whether a pydantic-core schema validates JSON values alike in Python and JSON mode."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            if kind not in _NATIVE_CORE:
                return False
            if kind == "literal" and not all(
                type(v) in (str, int, float, bool, _NONE_TYPE) for v in schema["expected"]
            ):
                return False
        return all(_native(v) for k, v in schema.items() if k not in _SKIPPED_KEYS)
    if isinstance(schema, list | tuple):
        return all(_native(v) for v in schema)
    return True


_FORMAT_PLACEHOLDERS: dict[type, str] = {
    datetime.datetime: "<datetime YYYY-MM-DDTHH:MM:SS>",
    datetime.date: "<date YYYY-MM-DD>",
    datetime.time: "<time HH:MM:SS>",
    datetime.timedelta: "<duration ISO 8601, e.g. P1DT2H30M>",
    decimal.Decimal: "<decimal>",
    uuid.UUID: "<uuid>",
    pathlib.PurePath: "<path>",
    bytes: "<str>",
    ipaddress.IPv4Address: "<ipv4>",
    ipaddress.IPv6Address: "<ipv6>",
}
"""Placeholders of the types the reference renders as ``null``: the format to copy."""


def _placeholder_of(annotation: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(annotation, type):
        for kind, text in _FORMAT_PLACEHOLDERS.items():
            if issubclass(annotation, kind):
                return text
    return _placeholder_from_json_schema(schema, schema.get("$defs", {}), 0)


def _placeholder_from_json_schema(
    schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int
) -> Any:
    """A placeholder of the right JSON shape, for types without one of their own."""
    if depth > _MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _placeholder_from_json_schema(defs.get(ref[len("#/$defs/") :], {}), defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        members = [m for m in schema.get(key, ()) if m.get("type") != "null"]
        if members:
            return _placeholder_from_json_schema(members[0], defs, depth + 1)
    kind = schema.get("type")
    if schema.get("enum"):
        kind = kind or {str: "string", bool: "boolean", int: "integer", float: "number"}.get(
            type(schema["enum"][0])
        )
    if kind == "string":
        form = schema.get("format")
        return f"<{form}>" if isinstance(form, str) else "<str>"
    if kind == "integer":
        return 0
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return False
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return [_placeholder_from_json_schema(p, defs, depth + 1) for p in prefix]
        items = schema.get("items")
        return [_placeholder_from_json_schema(items, defs, depth + 1)] if items else []
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: _placeholder_from_json_schema(v, defs, depth + 1) for k, v in properties.items()}
    return None


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One field the model fills (or, for functions, one hidden parameter).

    Attributes:
        name: Field or parameter name.
        type: Its type spec.
        description: Shown after the name in the menu; empty for none.
        required: Whether the model must send it.
        source: ``"llm"`` (the model fills it), ``"context"`` (from ``context=``) or
            ``"runtime"`` (the active runtime is injected).
        context_key: For ``source="context"``: the key read from the context mapping.
        default: The parameter default, for optional function parameters.
        positional_only: Whether the parameter must be passed positionally.
    """

    name: str
    type: TypeSpec
    description: str = ""
    required: bool = True
    source: Literal["llm", "context", "runtime"] = "llm"
    context_key: str = ""
    default: Any = inspect.Parameter.empty
    positional_only: bool = False

    def json_schema(self) -> dict[str, Any]:
        schema = dict(self.type.json_schema())
        if self.description:
            schema["description"] = self.description
        return schema


def _fields_schema(
    fields: Sequence[FieldSpec], defs: dict[str, CoreSchema], *, all_required: bool
) -> CoreSchema:
    entries = {
        f.name: cs.typed_dict_field(f.type.core_schema(defs), required=all_required or f.required)
        for f in fields
    }
    # Only the named fields come out, in their order; other keys are ignored (dropped).
    return cs.typed_dict_schema(entries, extra_behavior="ignore", strict=True)


# --- validation --------------------------------------------------------------------------------


def _string_placeholders(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, list):
        for item in value:
            _string_placeholders(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _string_placeholders(item, found)


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
        self.native = all(f.type.native for f in fields)
        """Whether a pick parsed from JSON is validated as it is (else through JSON text)."""
        self.by_name = {f.name: f for f in fields}
        defs: dict[str, CoreSchema] = {}
        schema = _fields_schema(fields, defs, all_required=all_required)
        if defs:
            schema = cs.definitions_schema(schema, list(defs.values()))
        self.core_schema: CoreSchema = schema
        """The pydantic-core schema of the arguments (a typed dict of the fields)."""
        try:
            validator = SchemaValidator(schema)
        except Exception as exc:  # a field name or a combination pydantic-core refuses
            raise UnsupportedType(_first_line(exc)) from None
        self._python = validator.validate_python
        self._json = validator.validate_json
        self.validate_parsed: Callable[[dict[str, Any]], dict[str, Any]] = (
            functools.partial(self._python, strict=True)  # in C: no Python frame per pick
            if self.native
            else functools.partial(self.validate, from_json=True)
        )
        """:meth:`validate` of arguments parsed from reply text (the hot path)."""
        placeholders: set[str] = {"<str>"}
        for f in fields:
            if f.type.choices is None:
                _string_placeholders(f.type.placeholder(), placeholders)
        self.placeholders = frozenset(p for p in placeholders if p.startswith("<"))
        """The menu's string placeholders of these fields: a value equal to one was copied."""

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
        """The failure of a value copied from the menu's ``Call:`` example, if any."""
        for f in self.fields:
            if f.name in args and f.type.choices is None:
                found = _find_string(args[f.name], self.placeholders)
                if found is not None:
                    keys, value = found
                    return ParseFailure(
                        "invalid_value",
                        f"Field '{_path([f.name, *reversed(keys)])}' is {json_dumps(value)}, the "
                        "placeholder copied from the Call: example; send a real value instead",
                    )
        return None


def _hoisted(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` without its nested ``$defs``, which are moved to ``defs``."""
    if isinstance(schema, dict):
        for name, definition in schema.get("$defs", {}).items():
            defs.setdefault(name, _hoisted(definition, defs))
        return {k: _hoisted(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_hoisted(item, defs) for item in schema]
    return schema


def _find_string(value: Any, strings: frozenset[str]) -> tuple[list[Any], str] | None:
    """The location (innermost key first) and value of the first string in ``strings``."""
    if type(value) is str:  # exactly: a subclass may hash in its own way
        return ([], value) if value in strings else None
    if type(value) is list:
        items: Any = enumerate(value)
    elif type(value) is dict:
        items = value.items()
    else:
        return None
    for key, item in items:
        found = _find_string(item, strings)
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


# --- annotations -------------------------------------------------------------------------------


def _literal_base(values: tuple[Any, ...]) -> TypeSpec:
    kinds = {type(v) for v in values}
    if len(kinds) == 1:
        (only,) = kinds
        if only in _SCALAR_PLACEHOLDERS:
            return ScalarSpec(only)
    return UnknownSpec("literal")


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _hints(tp: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:
        return dict(getattr(tp, "__annotations__", {}))


def annotation_label(tp: Any) -> str:
    for candidate in (tp, typing.get_origin(tp)):
        name = getattr(candidate, "__name__", None)
        if isinstance(name, str) and name:
            return name
    return str(tp)


def _validates(meta: Any) -> bool:
    """Whether pydantic validates differently for this ``Annotated`` metadata: a constraint
    (``Field(ge=1)``, ``annotated_types.Gt``), a validator; not a description or a note."""
    if isinstance(meta, pydantic.fields.FieldInfo):
        return bool(meta.metadata) or meta.discriminator is not None
    return isinstance(
        meta, annotated_types.BaseMetadata | annotated_types.GroupedMetadata
    ) or hasattr(meta, "__get_pydantic_core_schema__")


def spec_from_annotation(tp: Any, depth: int = 0) -> TypeSpec:
    """Turn a resolved Python annotation into a :class:`TypeSpec`.

    Raises:
        UnsupportedType: pydantic cannot validate the annotation from JSON (or it names
            nothing that could be resolved).
    """
    if depth > _MAX_DEPTH:
        raise UnsupportedType(f"the annotation nests more than {_MAX_DEPTH} levels deep")
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return UnknownSpec("any")
    if tp is None or tp is _NONE_TYPE:
        return NoneSpec()
    if isinstance(tp, str | typing.ForwardRef):
        name = tp if isinstance(tp, str) else tp.__forward_arg__
        raise UnsupportedType(f"the annotation {name!r} names nothing that can be resolved here")
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        inner = spec_from_annotation(args[0], depth + 1)
        extra = [m for m in tp.__metadata__ if _validates(m)]
        if not extra:
            return inner
        return PydanticSpec(typing.Annotated[(args[0], *extra)], inner.label, inner)
    if origin in (typing.Required, typing.NotRequired):
        return spec_from_annotation(args[0], depth + 1)
    if isinstance(tp, type) and tp in _SCALAR_PLACEHOLDERS:
        return ScalarSpec(tp)
    if origin is Union or origin is types.UnionType:
        return UnionSpec(tuple(spec_from_annotation(a, depth + 1) for a in args))
    if origin is Literal:
        return ChoiceSpec(_literal_base(args), tuple(args))
    if origin in (list, Sequence, typing.Sequence):
        return ListSpec(spec_from_annotation(args[0], depth + 1) if args else UnknownSpec("any"))
    if origin in (dict, Mapping, typing.Mapping) and (not args or args[0] in (str, Any)):
        return DictSpec(spec_from_annotation(args[1], depth + 1)) if args else ScalarSpec(dict)
    if origin in (set, frozenset) or tp in (set, frozenset):
        item = spec_from_annotation(args[0], depth + 1) if args else UnknownSpec("any")
        return SequenceSpec(annotation_label(tp), (item,), variadic=True)
    if origin is tuple or tp is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item = spec_from_annotation(args[0], depth + 1) if args else UnknownSpec("any")
            return SequenceSpec("tuple", (item,), variadic=True)
        if args == ((),):  # tuple[()]
            return SequenceSpec("tuple", (), variadic=False)
        members = tuple(spec_from_annotation(a, depth + 1) for a in args)
        return SequenceSpec("tuple", members, variadic=False)
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            values = tuple(m.value for m in tp)
            return ChoiceSpec(
                _literal_base(values) if values else UnknownSpec(tp.__name__), values, tp
            )
        if _is_typeddict(tp):
            hints = _hints(tp)
            total = bool(getattr(tp, "__total__", True))
            required = {name for name, hint in hints.items() if _typeddict_required(hint, total)}
            return _object_from_hints(tp, hints, required, depth)
        if issubclass(tp, pydantic.BaseModel):
            fields = tp.model_fields
            shape = _object_from_hints(
                tp,
                {
                    (f.alias if isinstance(f.alias, str) else n): f.annotation
                    for n, f in fields.items()
                },
                {
                    (f.alias if isinstance(f.alias, str) else n)
                    for n, f in fields.items()
                    if f.is_required()
                },
                depth,
            )
            return ModelSpec(tp, shape)
        if dataclasses.is_dataclass(tp):
            required = {
                f.name
                for f in dataclasses.fields(tp)
                if f.init
                and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            }
            hints = _hints(tp)
            names = [f.name for f in dataclasses.fields(tp) if f.init]
            shape = _object_from_hints(tp, {n: hints.get(n, Any) for n in names}, required, depth)
            return ModelSpec(tp, shape)
    return PydanticSpec(tp, annotation_label(tp))


def _typeddict_required(hint: Any, total: bool) -> bool:
    """Whether a TypedDict key is required, from its resolved hint (not ``__required_keys__``,
    which Python 3.11 gets wrong under ``from __future__ import annotations``)."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Required:
            return True
        if origin is typing.NotRequired:
            return False
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
            continue
        return total


_local = threading.local()


def _object_from_hints(
    owner: type, hints: Mapping[str, Any], required: set[str], depth: int
) -> ObjectSpec:
    """The object spec of a TypedDict, dataclass or pydantic model (recursion-safe)."""
    expanding: set[Any] = _local.__dict__.setdefault("expanding", set())
    if owner in expanding:
        # A recursive type: inside itself it is rendered by name and taken as a plain object.
        opaque = ScalarSpec(dict)
        opaque.label = owner.__name__
        return opaque  # type: ignore[return-value]
    expanding.add(owner)
    try:
        fields = []
        for name, hint in hints.items():
            description, choices = _annotated_param(hint)
            spec = spec_from_annotation(hint, depth + 1)
            if choices is not None:
                spec = ChoiceSpec(spec, choices)
            fields.append(FieldSpec(name, spec, description, required=name in required))
        return ObjectSpec(tuple(fields), label=owner.__name__)
    finally:
        expanding.discard(owner)


def _annotated_param(hint: Any) -> tuple[str, tuple[Any, ...] | None]:
    """Description and allowed values from ``Annotated[..., Param(...)]`` metadata (or a
    pydantic ``Field(description=...)``)."""
    if typing.get_origin(hint) is not typing.Annotated:
        return "", None
    description = ""
    for meta in hint.__metadata__:
        if isinstance(meta, Param):
            opts = tuple(meta.options) if meta.options is not None else None
            return meta.description or "", opts
        if isinstance(meta, pydantic.fields.FieldInfo) and meta.description and not description:
            description = meta.description
    return description, None


# --- schema notation ---------------------------------------------------------------------------


def field_from_notation(name: str, notation: Any, depth: int = 0) -> FieldSpec:
    """One schema-notation field (``str``, ``"description"``, ``[...]``, ``{...}``, meta-spec)."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"Schema for field '{name}' is nested more than {_MAX_DEPTH} levels deep")
    if isinstance(notation, str):
        return FieldSpec(name, ScalarSpec(str), notation)
    if isinstance(notation, list):
        return FieldSpec(name, _list_notation(name, notation, depth))
    if isinstance(notation, dict):
        if notation and all(isinstance(k, str) for k in notation) and set(notation) <= META_KEYS:
            return _meta_field(name, notation, depth)
        return FieldSpec(name, object_from_notation(notation, depth + 1, where=name))
    if isinstance(notation, type) or typing.get_origin(notation) is not None:
        description, choices = _annotated_param(notation)
        try:
            spec = spec_from_annotation(notation, depth)
        except UnsupportedType as exc:
            raise TypeError(
                f"Schema field '{name}' has the type {annotation_label(notation)}, which cannot "
                f"be checked ({exc}): use a type pydantic validates from JSON (str, int, date, "
                "Decimal, a TypedDict, a pydantic model...), or Any to take any value unchecked"
            ) from None
        return FieldSpec(name, ChoiceSpec(spec, choices) if choices else spec, description)
    raise TypeError(
        f"Schema field '{name}' has an unsupported type {notation!r}: use a type (str, int, ...),"
        ' a description string, [template], {nested: ...} or {"type": ..., "description": ...}'
    )


def _list_notation(name: str, notation: list[Any], depth: int) -> ListSpec:
    if len(notation) != 1:
        raise TypeError("A list schema needs exactly one item template, e.g. [str] or [{...}]")
    return ListSpec(field_from_notation(name, notation[0], depth + 1).type)


def _meta_field(name: str, meta: dict[str, Any], depth: int) -> FieldSpec:
    description = meta.get("description") or ""
    if not isinstance(description, str):
        raise TypeError(f"Schema field '{name}': 'description' must be a string")
    spec: TypeSpec
    if "fields" in meta:
        if not isinstance(meta["fields"], dict):
            raise TypeError(f"Schema field '{name}': 'fields' must be a dict of nested fields")
        spec = object_from_notation(meta["fields"], depth + 1, where=name)
    elif "items" in meta:
        spec = ListSpec(field_from_notation(name, meta["items"], depth + 1).type)
    elif "type" in meta:
        spec = field_from_notation(name, meta["type"], depth + 1).type
    elif isinstance(meta.get("options"), list | tuple) and meta["options"]:
        spec = _literal_base(tuple(meta["options"]))
    else:
        spec = ScalarSpec(str)
    if "options" in meta:
        opts = meta["options"]
        if not isinstance(opts, list | tuple) or not opts:
            raise TypeError(f"Schema field '{name}': 'options' must be a non-empty list of values")
        spec = ChoiceSpec(spec, tuple(opts))
    return FieldSpec(name, spec, description)


def object_from_notation(schema: Mapping[Any, Any], depth: int = 0, where: str = "") -> ObjectSpec:
    """A schema dict ``{field: notation}`` as an object spec (every field required)."""
    fields = []
    for key, notation in schema.items():
        if not isinstance(key, str) or not key:
            place = f" in '{where}'" if where else ""
            raise TypeError(f"Schema field names must be non-empty strings{place}, got {key!r}")
        fields.append(field_from_notation(key, notation, depth))
    return ObjectSpec(tuple(fields))


def json_dumps(value: Any) -> str:
    """JSON as rendered in menus: ``", "`` and ``": "`` separators, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)
