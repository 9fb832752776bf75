"""Field types: Python annotations and schema notation turned into checkable, renderable specs.

Every option field (a function parameter or a schema entry) becomes a :class:`FieldSpec` whose
:class:`TypeSpec` knows three things: the name shown in the menu signature, the placeholder shown
in the ``Call:`` example, and how to validate (and convert) a value the model sent. The same specs
give the JSON schema of a native tool, so menus, validation and tools never disagree.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import json
import threading
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

import pydantic
from pydantic_core import CoreSchema, SchemaValidator
from pydantic_core import core_schema as cs

__all__ = [
    "META_KEYS",
    "FieldSpec",
    "FromContext",
    "Param",
    "ParseFailure",
    "TypeSpec",
    "field_from_notation",
    "spec_from_annotation",
]

META_KEYS = frozenset({"type", "description", "options", "fields", "items"})
"""Keys of a schema meta-spec; a dict whose keys all fall in this set is a meta-spec."""

_MAX_DEPTH = 32
_NONE_TYPE = type(None)


class ParseFailure(Exception):
    """A reply failed to parse or validate; ``kind`` is one of the documented error kinds."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


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


class TypeSpec:
    """Base class of field types. Subclasses are immutable after construction."""

    label: str = "any"
    choices: tuple[Any, ...] | None = None

    def placeholder(self) -> Any:
        """The native JSON placeholder shown in the ``Call:`` example."""
        return None

    def validate(self, value: Any, path: str) -> Any:
        """Return the (possibly converted) value, or raise :class:`ParseFailure`."""
        return value

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of this type, for native tool definitions."""
        return {}

    def core_schema(self) -> CoreSchema | None:
        """A pydantic-core schema that accepts exactly the JSON values :meth:`validate` accepts
        and returns what it returns for them, or ``None`` when there is none (see
        :func:`fast_validator`)."""
        return None


class UnknownSpec(TypeSpec):
    """A type we cannot check: rendered by name, any value accepted."""

    def __init__(self, label: str) -> None:
        self.label = label

    def core_schema(self) -> CoreSchema | None:
        return cs.any_schema()


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

    def validate(self, value: Any, path: str) -> Any:
        t = self.pytype
        if type(value) is t:  # the common case, decided without isinstance chains
            return value
        if t is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                try:
                    return float(value)
                except OverflowError:  # an int of hundreds of digits
                    raise ParseFailure(
                        "type_mismatch",
                        f"Field '{path}' must be float, got int ({safe_repr(value)}), "
                        "too large for a float",
                    ) from None
        elif t is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif isinstance(value, t):
            return value
        if t is list:
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be a list, got {_type_name(value)}"
            )
        if t is dict:
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be an object, got {_type_name(value)}"
            )
        raise ParseFailure(
            "type_mismatch", f"Field '{path}' must be {t.__name__}, got {_got(value)}"
        )

    def json_schema(self) -> dict[str, Any]:
        return {"type": _SCALAR_SCHEMA[self.pytype]}

    def core_schema(self) -> CoreSchema | None:
        return _SCALAR_CORE[self.pytype]()


class NoneSpec(TypeSpec):
    """``None`` as a member of a union."""

    label = "None"

    def validate(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        raise ParseFailure("type_mismatch", f"Field '{path}' must be null, got {_got(value)}")

    def json_schema(self) -> dict[str, Any]:
        return {"type": "null"}

    def core_schema(self) -> CoreSchema | None:
        return cs.none_schema()


class ListSpec(TypeSpec):
    """A list whose every element matches one item template."""

    label = "list"

    def __init__(self, item: TypeSpec) -> None:
        self.item = item

    def placeholder(self) -> Any:
        return [self.item.placeholder()]

    def validate(self, value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be a list, got {_type_name(value)}"
            )
        # Items are checked under one shared path; only a failing item is checked again under
        # its exact path (validation is deterministic), so the message names its index while
        # a valid list formats no path per item.
        check = self.item.validate
        shared = path + "[]"
        out = []
        for v in value:
            try:
                out.append(check(v, shared))
            except ParseFailure:
                check(v, f"{path}[{len(out)}]")
                raise
        return out

    def json_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.json_schema()}

    def core_schema(self) -> CoreSchema | None:
        item = self.item.core_schema()
        return None if item is None else cs.list_schema(item, strict=True)


class DictSpec(TypeSpec):
    """``dict[str, T]``: an object with free keys and values of one type."""

    label = "dict"

    def __init__(self, value: TypeSpec) -> None:
        self.value = value

    def placeholder(self) -> Any:
        return {}

    def validate(self, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be an object, got {_type_name(value)}"
            )
        spec = self.value
        return {k: spec.validate(v, f"{path}.{k}") for k, v in value.items()}

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.json_schema()}

    def core_schema(self) -> CoreSchema | None:
        value = self.value.core_schema()
        return None if value is None else cs.dict_schema(values_schema=value, strict=True)


class ObjectSpec(TypeSpec):
    """A nested object with named fields (schema dicts, ``TypedDict``, dataclasses)."""

    def __init__(
        self,
        fields: tuple[FieldSpec, ...],
        label: str = "dict",
        build: Callable[..., Any] | None = None,
    ) -> None:
        self.fields = fields
        self.label = label
        self.build = build
        self._plan = tuple((f.name, f.type, f.required) for f in fields)

    def placeholder(self) -> Any:
        return {f.name: f.type.placeholder() for f in self.fields}

    def validate(self, value: Any, path: str) -> Any:
        if type(value) is not dict and not isinstance(value, dict):
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be an object, got {_type_name(value)}"
            )
        out: dict[str, Any] = {}
        prefix = path + "."
        for name, spec, required in self._plan:
            if name in value:
                out[name] = spec.validate(value[name], prefix + name)
            elif required:
                raise ParseFailure(
                    "missing_required", f"Field '{path}' is missing nested field '{name}'"
                )
        return self.build(**out) if self.build is not None else out

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {f.name: f.json_schema() for f in self.fields},
            "required": [f.name for f in self.fields if f.required],
        }

    def core_schema(self) -> CoreSchema | None:
        if self.build is not None:  # a TypedDict or dataclass instance is built: not here
            return None
        return _fields_schema(self.fields, all_required=False)


class ModelSpec(TypeSpec):
    """A pydantic model: rendered from its fields, validated by pydantic, passed as an instance."""

    def __init__(self, model: type[pydantic.BaseModel], shape: ObjectSpec) -> None:
        self.model = model
        self.shape = shape
        self.label = model.__name__

    def placeholder(self) -> Any:
        return self.shape.placeholder()

    def validate(self, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise ParseFailure(
                "type_mismatch", f"Field '{path}' must be an object, got {_type_name(value)}"
            )
        try:
            return self.model.model_validate(value)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = path
            for part in first["loc"][:-1]:
                where += f"[{part}]" if isinstance(part, int) else f".{part}"
            leaf = first["loc"][-1] if first["loc"] else ""
            if first["type"] == "missing":
                raise ParseFailure(
                    "missing_required", f"Field '{where}' is missing nested field '{leaf}'"
                ) from None
            if first["loc"]:
                where += f"[{leaf}]" if isinstance(leaf, int) else f".{leaf}"
            raise ParseFailure(
                "type_mismatch", f"Field '{where}' is invalid: {first['msg']}"
            ) from None

    def json_schema(self) -> dict[str, Any]:
        return self.model.model_json_schema()


class UnionSpec(TypeSpec):
    """``X | Y`` and ``Optional[X]``: the first member that accepts the value wins."""

    def __init__(self, members: tuple[TypeSpec, ...]) -> None:
        self.members = members
        self.label = " | ".join(m.label for m in members)
        valued = [m for m in members if not isinstance(m, NoneSpec)]
        if valued and all(m.choices is not None for m in valued):
            # Optional[Literal[...]] / Optional[Enum]: the menu lists the allowed values.
            self.choices = tuple(v for m in valued for v in (m.choices or ()))

    def placeholder(self) -> Any:
        for m in self.members:
            if not isinstance(m, NoneSpec):
                return m.placeholder()
        return None

    def validate(self, value: Any, path: str) -> Any:
        failures: list[ParseFailure] = []
        for m in self.members:
            try:
                return m.validate(value, path)
            except ParseFailure as exc:
                failures.append(exc)
        # A value of the right shape that failed deeper explains itself better than a summary.
        deep = [f for f in failures if f.kind != "type_mismatch" or f"'{path}'" not in f.message]
        if len(deep) == 1:
            raise deep[0]
        raise ParseFailure(
            "type_mismatch", f"Field '{path}' must be {self.label}, got {_got(value)}"
        )

    def json_schema(self) -> dict[str, Any]:
        return {"anyOf": [m.json_schema() for m in self.members]}

    def core_schema(self) -> CoreSchema | None:
        members = [m.core_schema() for m in self.members]
        if any(m is None for m in members):
            return None
        # The first member that accepts the value wins, as in validate().
        return cs.union_schema([m for m in members if m is not None], mode="left_to_right")


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same kind: ``True`` is not ``1``, but ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


_MISSING = object()


def _choice_key(value: Any) -> tuple[type, Any]:
    """A hashable key equal exactly when :func:`_same` holds (1 and 1.0 share one key)."""
    kind = type(value)
    if kind is int or kind is float:
        return (float, value)
    if kind is bool or kind is str:
        return (kind, value)
    if isinstance(value, bool):
        return (bool, bool(value))
    if isinstance(value, int | float):
        return (float, value)
    return (kind, value)


class ChoiceSpec(TypeSpec):
    """Allowed values (``Literal``, ``Enum``, ``Param(options=...)``, meta-spec ``options``)."""

    def __init__(
        self, base: TypeSpec, values: tuple[Any, ...], convert: Callable[[Any], Any] | None = None
    ) -> None:
        self.base = base
        self.choices = values
        self.label = base.label
        self.convert = convert
        # (kind, value) -> allowed value: O(1) membership with _same's notion of equality.
        self._index: dict[Any, Any] = {}
        self._str_base = isinstance(base, ScalarSpec) and base.pytype is str
        for allowed in values:
            # Unhashable allowed values are found by the slow path in validate().
            with contextlib.suppress(TypeError):
                self._index.setdefault(_choice_key(allowed), allowed)

    def placeholder(self) -> Any:
        return self.base.placeholder()

    def validate(self, value: Any, path: str) -> Any:
        if type(value) is str and self._str_base:  # the common case, without two calls
            allowed = self._index.get((str, value), _MISSING)
            if allowed is not _MISSING:
                return self.convert(allowed) if self.convert is not None else value
        value = self.base.validate(value, path)
        try:
            allowed = self._index.get(_choice_key(value), _MISSING)
        except TypeError:  # an unhashable value: compare one by one
            allowed = _MISSING
            for candidate in self.choices or ():
                try:
                    if _same(candidate, value):
                        allowed = candidate
                        break
                except Exception:
                    continue
        if allowed is not _MISSING:
            return self.convert(allowed) if self.convert is not None else value
        raise ParseFailure(
            "enum_violation",
            f"Field '{path}' must be one of {list(self.choices or ())!r}, got {safe_repr(value)}",
        )

    def json_schema(self) -> dict[str, Any]:
        return {**self.base.json_schema(), "enum": list(self.choices or ())}

    def core_schema(self) -> CoreSchema | None:
        # Text choices only: numbers compare across int and float here (1 is 1.0, True is
        # not 1), and enums convert; those keep to validate().
        choices = self.choices or ()
        if self.convert is not None or not self._str_base or not choices:
            return None
        if any(type(c) is not str for c in choices):
            return None
        return cs.literal_schema(list(choices))


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


# --- the fast check ----------------------------------------------------------------------------


def _fields_schema(fields: Sequence[FieldSpec], *, all_required: bool) -> CoreSchema | None:
    entries: dict[str, Any] = {}
    for f in fields:
        schema = f.type.core_schema()
        if schema is None:
            return None
        entries[f.name] = cs.typed_dict_field(schema, required=all_required or f.required)
    # Only the named fields come out, in their order; other keys are ignored, as in validate().
    return cs.typed_dict_schema(entries, extra_behavior="ignore", strict=True)


_fast_validators: dict[tuple[int, bool], tuple[tuple[FieldSpec, ...], Any]] = {}
_FAST_VALIDATORS_MAX = 2048


def fast_validator(
    fields: tuple[FieldSpec, ...], *, all_required: bool
) -> Callable[[Any], dict[str, Any]] | None:
    """pydantic-core's compiled check of a pick's arguments, or ``None`` when the fields have
    a type it cannot check exactly as :meth:`TypeSpec.validate` does.

    For values parsed from JSON, it accepts what validating each field accepts and returns the
    same values, about five times faster. It says nothing about why a value is refused: on any
    failure, validate the fields the usual way, whose messages the model reads. Compiled once
    per fields tuple (option fields are cached, so that is once per option shape).

    Args:
        fields: The fields of an option, in order.
        all_required: Whether every field must be sent (schema options), or only the required
            ones (function options).
    """
    key = (id(fields), all_required)
    entry = _fast_validators.get(key)
    if entry is not None and entry[0] is fields:
        return entry[1]  # type: ignore[no-any-return]
    validator = None
    try:
        schema = _fields_schema(fields, all_required=all_required)
        if schema is not None:
            validator = SchemaValidator(schema).validate_python
    except Exception:  # a schema pydantic-core refuses (a field name it cannot hold...)
        validator = None
    if len(_fast_validators) >= _FAST_VALIDATORS_MAX:
        _fast_validators.clear()
    _fast_validators[key] = (fields, validator)  # holding the tuple keeps its id unique
    return validator


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


def spec_from_annotation(tp: Any, depth: int = 0) -> TypeSpec:
    """Turn a resolved Python annotation into a :class:`TypeSpec`."""
    if depth > _MAX_DEPTH:
        return UnknownSpec(getattr(tp, "__name__", "object"))
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return UnknownSpec("any")
    if tp is None or tp is _NONE_TYPE:
        return NoneSpec()
    if isinstance(tp, str):
        return UnknownSpec(tp)
    if isinstance(tp, typing.ForwardRef):
        return UnknownSpec(tp.__forward_arg__)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated or origin in (typing.Required, typing.NotRequired):
        return spec_from_annotation(args[0], depth + 1)
    if isinstance(tp, type) and tp in _SCALAR_PLACEHOLDERS:
        return ScalarSpec(tp)
    if origin is Union or origin is types.UnionType:
        return UnionSpec(tuple(spec_from_annotation(a, depth + 1) for a in args))
    if origin is Literal:
        return ChoiceSpec(_literal_base(args), tuple(args))
    if origin in (list, Sequence, typing.Sequence) or origin is list:
        return ListSpec(spec_from_annotation(args[0], depth + 1) if args else UnknownSpec("any"))
    if origin in (dict, Mapping, typing.Mapping):
        if len(args) == 2:
            return DictSpec(spec_from_annotation(args[1], depth + 1))
        return ScalarSpec(dict)
    if origin is not None:
        return UnknownSpec(getattr(origin, "__name__", str(tp)))
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            values = tuple(m.value for m in tp)
            return _enum_spec(tp, values)
        if issubclass(tp, pydantic.BaseModel):
            shape = _object_from_hints(
                tp,
                {name: f.annotation for name, f in tp.model_fields.items()},
                {name for name, f in tp.model_fields.items() if f.is_required()},
                depth,
            )
            return ModelSpec(tp, shape)
        if _is_typeddict(tp):
            hints = _hints(tp)
            total = bool(getattr(tp, "__total__", True))
            required = {name for name, hint in hints.items() if _typeddict_required(hint, total)}
            return _object_from_hints(tp, hints, required, depth, build=None)
        if dataclasses.is_dataclass(tp):
            required = {
                f.name
                for f in dataclasses.fields(tp)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            }
            hints = _hints(tp)
            names = [f.name for f in dataclasses.fields(tp) if f.init]
            return _object_from_hints(
                tp, {n: hints.get(n, Any) for n in names}, required, depth, tp
            )
        return UnknownSpec(tp.__name__)
    return UnknownSpec(getattr(tp, "__name__", repr(tp)))


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


def _enum_spec(cls: type[enum.Enum], values: tuple[Any, ...]) -> ChoiceSpec:
    return ChoiceSpec(_literal_base(values) if values else UnknownSpec(cls.__name__), values, cls)


_local = threading.local()


def _object_from_hints(
    owner: type,
    hints: Mapping[str, Any],
    required: set[str],
    depth: int,
    build: Callable[..., Any] | None = None,
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
        return _object_fields(owner, hints, required, depth, build)
    finally:
        expanding.discard(owner)


def _object_fields(
    owner: type,
    hints: Mapping[str, Any],
    required: set[str],
    depth: int,
    build: Callable[..., Any] | None,
) -> ObjectSpec:
    fields = []
    for name, hint in hints.items():
        description, choices = _annotated_param(hint)
        spec = spec_from_annotation(hint, depth + 1)
        if choices is not None:
            spec = ChoiceSpec(spec, choices)
        fields.append(FieldSpec(name, spec, description, required=name in required))
    label = owner.__name__
    return ObjectSpec(tuple(fields), label=label, build=build)


def _annotated_param(hint: Any) -> tuple[str, tuple[Any, ...] | None]:
    """Description and allowed values from ``Annotated[..., Param(...)]`` metadata."""
    if typing.get_origin(hint) is not typing.Annotated:
        return "", None
    for meta in hint.__metadata__:
        if isinstance(meta, Param):
            opts = tuple(meta.options) if meta.options is not None else None
            return meta.description or "", opts
    return "", None


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
        spec = spec_from_annotation(notation, depth)
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
