"""Field types: what the menu shows of an option field, and the pydantic-core schema that checks it.

Every option field (a function parameter or a schema entry) is a :class:`FieldSpec` whose
:class:`TypeSpec` knows what the menu shows (the name in the signature, the placeholder in the
``Call:`` example, the allowed values), its JSON schema (for native tool definitions) and the
pydantic-core schema that validates and converts what the model sent, strictly.

The structural types the reference renders (scalars, lists, nested objects, allowed values,
unions, ``TypedDict``, which pydantic refuses from ``typing`` before Python 3.12) have specs of
their own; every other type is handed to pydantic whole (:class:`PydanticSpec`), and a type
pydantic cannot validate from JSON is refused (:class:`UnsupportedType`) when the menu is built.

The sections, in order: the specs, from :class:`TypeSpec` down; whether a pydantic schema
validates a value parsed from JSON alike in Python and JSON mode (``native``); the placeholders
of the types pydantic validates whole; :class:`FieldSpec` and the schema of a group of fields.

Around this module: ``_annotations`` reads annotations and schema notation into these types,
``_validation`` compiles the fields of one option into one validator, and ``_values`` draws
values of every type (for the seeded fakes and the strategies).
"""

from __future__ import annotations

import datetime
import decimal
import functools
import inspect
import ipaddress
import json
import pathlib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import pydantic
from pydantic_core import CoreSchema, PydanticSerializationError, SchemaValidator, to_json
from pydantic_core import core_schema as cs

__all__ = [
    "MAX_DEPTH",
    "SCALAR_PLACEHOLDERS",
    "ChoiceSpec",
    "DictSpec",
    "FieldSpec",
    "ListSpec",
    "ModelSpec",
    "NoneSpec",
    "ObjectSpec",
    "PydanticSpec",
    "ScalarSpec",
    "SequenceSpec",
    "Slot",
    "TypeSpec",
    "UnionSpec",
    "UnknownSpec",
    "UnsupportedType",
    "call_example",
    "fields_core_schema",
    "json_dumps",
    "pydantic_gist",
    "shown_choice",
]

MAX_DEPTH = 32
"""How deep an annotation or a schema may nest (deeper ones are refused when read)."""

_NONE_TYPE = type(None)


class UnsupportedType(TypeError):
    """An annotation the model cannot fill with JSON that pydantic validates."""


_MENU_JSON = json.JSONEncoder(ensure_ascii=False)  # one encoder: json.dumps builds one per call


def json_dumps(value: Any) -> str:
    """JSON as rendered in menus: ``", "`` and ``": "`` separators, non-ASCII kept."""
    return _MENU_JSON.encode(value)


@dataclass(frozen=True)
class Slot:
    """The placeholder of a number or a boolean in the ``Call:`` example, written bare:
    ``<int>``, ``<float>``, ``<bool>``.

    The reference writes ``0``, ``0.0`` and ``false`` there, which a weak model copies, and a
    copied ``0`` or ``false`` cannot be told from an answer. A slot is no JSON value: a model
    held to the schema cannot write it, and a reply that copies it is told so and re-asked
    (see ``docs/explanation/differences.md``).

    Attributes:
        text: What the example shows (``<int>``).
        wanted: What the model is asked to write in its place (``an integer``).
    """

    text: str
    wanted: str


INT_SLOT = Slot("<int>", "an integer")
FLOAT_SLOT = Slot("<float>", "a number")
BOOL_SLOT = Slot("<bool>", "true or false")
SLOTS = (INT_SLOT, FLOAT_SLOT, BOOL_SLOT)
"""Every slot a ``Call:`` example may show."""
_SLOT_MARK = "\ue000"  # a private-use character: never in a name or a placeholder
_SLOT_TEXT = re.compile(f'"{_SLOT_MARK}(<[a-z]+>){_SLOT_MARK}"')


def _slot_default(value: Any) -> Any:
    if isinstance(value, Slot):
        return f"{_SLOT_MARK}{value.text}{_SLOT_MARK}"
    raise TypeError(f"{type(value).__name__} is not JSON")


# One encoder for the examples too: ``json.dumps`` with ``default=`` builds one per call, once
# per option of every menu rendered anew.
_CALL_JSON = json.JSONEncoder(ensure_ascii=False, default=_slot_default)


def _plain_string(value: Any) -> str | None:
    """An exact string as JSON writes it, or ``None`` (another type, or one holding the slot
    mark, which the general path handles)."""
    if type(value) is not str or _SLOT_MARK in value:
        return None
    return _MENU_JSON.encode(value)


def _plain_example(call: Mapping[str, Any]) -> str | None:
    """The usual example, written without an encoder (``JSONEncoder.encode`` of a dict builds
    one on every call): a name, and arguments whose placeholders are strings or slots; what
    the encoder and :data:`_SLOT_TEXT` make of it, byte for byte. ``None`` for anything else."""
    if type(call) is not dict or next(iter(call), None) != "call" or len(call) > 2:
        return None
    name = _plain_string(call.get("call"))
    if name is None:
        return None
    if len(call) == 1:
        return f'{{"call": {name}}}'
    args = call.get("args")
    if type(args) is not dict:
        return None
    parts = []
    for key, value in args.items():
        field = _plain_string(key)
        if field is None:
            return None
        if type(value) is Slot and value in SLOTS:
            shown = value.text
        else:
            shown = _plain_string(value)  # type: ignore[assignment]
            if shown is None:
                return None
        parts.append(f"{field}: {shown}")
    return f'{{"call": {name}, "args": {{{", ".join(parts)}}}}}'


def call_example(call: Mapping[str, Any]) -> str:
    """A ``Call:`` example as the menu writes it: JSON, with each :class:`Slot` bare.

    Example:
        >>> call_example({"call": "scan", "args": {"pages": INT_SLOT, "note": "<str>"}})
        '{"call": "scan", "args": {"pages": <int>, "note": "<str>"}}'
    """
    written = _plain_example(call)
    if written is not None:
        return written
    text = _CALL_JSON.encode(call)
    return _SLOT_TEXT.sub(r"\1", text) if _SLOT_MARK in text else text


def slots_of(placeholder: Any) -> list[Slot]:
    """The slots in a placeholder (nested ones too), in order."""
    if isinstance(placeholder, Slot):
        return [placeholder]
    if isinstance(placeholder, list):
        return [slot for item in placeholder for slot in slots_of(item)]
    if isinstance(placeholder, dict):
        return [slot for item in placeholder.values() for slot in slots_of(item)]
    return []


def shown_choice(value: Any) -> str:
    """An allowed value as the menu lists it: a string in double quotes (``"fast"``, as the
    reference prints every value), any other value as the JSON the validator accepts (``300``,
    ``2.5``, ``true``, ``null``): the reference's ``"300"`` for an ``int`` is a string, which
    the validator refuses. A value JSON cannot carry is shown quoted, as the reference does."""
    if isinstance(value, str):
        return f'"{value}"'
    plain = _json_choice(value)
    return f'"{value}"' if plain is _NO_JSON else json_dumps(plain)


_NO_JSON = object()


def _json_choice(value: Any) -> Any:
    """``value`` as a JSON scalar (an ``Enum`` member by its value), else :data:`_NO_JSON`."""
    if isinstance(value, bool | int | float) or value is None:
        return value
    return _NO_JSON


def pydantic_gist(exc: BaseException) -> str:
    """The gist of pydantic's error: its first sentence (the rest advises on pydantic models)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0].split(". ")[0].rstrip(".")


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


SCALAR_PLACEHOLDERS: dict[type, Any] = {
    str: "<str>",
    int: INT_SLOT,
    float: FLOAT_SLOT,
    bool: BOOL_SLOT,
    list: [],
    dict: {},
}
"""The scalar types (:class:`ScalarSpec`), with their placeholders in the ``Call:`` example
(numbers and booleans as a :class:`Slot`, where the reference writes ``0``, ``0.0``,
``false``)."""

_SCALAR_SCHEMA: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}
_SCALAR_CORE: dict[type, CoreSchema] = {
    str: cs.str_schema(strict=True),
    int: cs.int_schema(strict=True),
    float: cs.float_schema(strict=True),
    bool: cs.bool_schema(strict=True),
    list: cs.list_schema(strict=True),
    dict: cs.dict_schema(strict=True),
}
"""The scalars' schemas, built once (pydantic-core's builders sift every keyword they take on
each call): each validator gets a copy of its own."""


class ScalarSpec(TypeSpec):
    """``str``, ``int``, ``float``, ``bool``, untyped ``list`` and untyped ``dict``."""

    def __init__(self, pytype: type) -> None:
        self.pytype = pytype
        self.label = pytype.__name__

    def placeholder(self) -> Any:
        value = SCALAR_PLACEHOLDERS[self.pytype]
        kind = type(value)  # a new list or dict for each caller; strings and slots are shared
        return [] if kind is list else {} if kind is dict else value

    def json_schema(self) -> dict[str, Any]:
        return {"type": _SCALAR_SCHEMA[self.pytype]}

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return cast(CoreSchema, dict(_SCALAR_CORE[self.pytype]))

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
        return fields_core_schema(self.fields, defs, all_required=False)

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
            raise UnsupportedType(pydantic_gist(exc)) from None
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
        # A value the validator accepts: the first allowed value when it is no string (the
        # base type's 0 or false is seldom allowed); a string keeps the reference's "<str>".
        first = self.choices[0] if self.choices else None
        if self.choices and not isinstance(first, str) and _json_choice(first) is not _NO_JSON:
            return first
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
            raise UnsupportedType(pydantic_gist(exc)) from None
        if shape is not None:
            self.choices = shape.choices
        self.native = _native(self.adapter.core_schema)

    def placeholder(self) -> Any:
        if self.shape is not None:
            return self.shape.placeholder()
        return _placeholder_of(self.annotation, self._json_schema)

    def json_schema(self) -> dict[str, Any]:
        return dict(self._json_schema)

    def core_schema(self, defs: dict[str, CoreSchema]) -> CoreSchema:
        return _embedded(self.annotation, defs)

    def child(self, key: Any) -> TypeSpec | None:
        return None if self.shape is None else self.shape.child(key)

    def expected(self) -> str:
        return self.label if self.shape is None else self.shape.expected()


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
    if depth > MAX_DEPTH:
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
        return INT_SLOT
    if kind == "number":
        return FLOAT_SLOT
    if kind == "boolean":
        return BOOL_SLOT
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


@dataclass(frozen=True, eq=False, slots=True)
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

    @classmethod
    def shown(
        cls,
        name: str,
        type: TypeSpec,
        description: str,
        required: bool,
        default: Any,
        positional_only: bool,
    ) -> FieldSpec:
        """A field the model fills, made at once: what ``__init__`` sets, past the frozen
        dataclass's ``object.__setattr__`` per field (a function's first sight makes one per
        parameter)."""
        made = object.__new__(cls)
        s_name, s_type, s_description, s_required, s_source, s_context_key, s_default, \
            s_positional_only = _SET_FIELD  # fmt: skip
        s_name(made, name)
        s_type(made, type)
        s_description(made, description)
        s_required(made, required)
        s_source(made, "llm")
        s_context_key(made, "")
        s_default(made, default)
        s_positional_only(made, positional_only)
        return made


_SET_FIELD = tuple(getattr(FieldSpec, name).__set__ for name in FieldSpec.__slots__)
"""Each slot's setter, in the order of the fields (what :meth:`FieldSpec.shown` sets)."""


def fields_core_schema(
    fields: Sequence[FieldSpec], defs: dict[str, CoreSchema], *, all_required: bool
) -> CoreSchema:
    """The pydantic-core schema of a group of fields: an object with them as keys.

    Args:
        fields: The fields, in order.
        defs: Where shared definitions (of pydantic models) are collected, by reference.
        all_required: Every field must be sent, or only the required ones.
    """
    entries = {
        f.name: cs.typed_dict_field(f.type.core_schema(defs), required=all_required or f.required)
        for f in fields
    }
    # Only the named fields come out, in their order; other keys are ignored (dropped).
    return cs.typed_dict_schema(entries, extra_behavior="ignore", strict=True)
