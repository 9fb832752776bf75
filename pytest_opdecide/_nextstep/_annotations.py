"""Annotations and schema notation read into field types.

:func:`spec_from_annotation` turns a resolved Python annotation into a
:class:`~pytest_opdecide._nextstep._field_types.TypeSpec` (``typing.Annotated`` metadata, unions,
``Literal`` and ``Enum`` values, containers, ``TypedDict``, dataclasses and pydantic models, any
other type handed to pydantic whole); :func:`field_from_notation` and
:func:`object_from_notation` read schema notation (``str``, ``"a description"``,
``[template]``, ``{field: ...}``, meta-specs whose keys are :data:`META_KEYS`).

:class:`Param` and :class:`FromContext` are the ``Annotated`` markers of function parameters: a
description and allowed values for the model, or a value taken from the caller's context.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import threading
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

import annotated_types
import pydantic

from pytest_opdecide._nextstep._field_types import (
    MAX_DEPTH,
    SCALAR_PLACEHOLDERS,
    ChoiceSpec,
    DictSpec,
    FieldSpec,
    ListSpec,
    ModelSpec,
    NoneSpec,
    ObjectSpec,
    PydanticSpec,
    ScalarSpec,
    SequenceSpec,
    TypeSpec,
    UnionSpec,
    UnknownSpec,
    UnsupportedType,
)

__all__ = [
    "META_KEYS",
    "FromContext",
    "Param",
    "annotation_label",
    "bounded",
    "field_from_notation",
    "object_from_notation",
    "param_max_length",
    "spec_from_annotation",
]

META_KEYS = frozenset({"type", "description", "options", "fields", "items"})
"""Keys of a schema meta-spec; a dict whose keys all fall in this set is a meta-spec."""

_NONE_TYPE = type(None)


@dataclass(frozen=True)
class Param:
    """Describe a function parameter for the model, via ``typing.Annotated``.

    Example:
        ``def escalate(team: Annotated[str, Param("Team to page", options=["ops", "billing"])])``
        renders ``team: Team to page (options: "ops", "billing")`` and rejects any other team.

    Attributes:
        description: Shown after the field name in the menu.
        options: The allowed values (an enum); the model's value must be one of them.
        max_length: The most characters a text value (or items a list) may have: validated,
            and the bound of what the model may write in a structured decision (without it,
            a text field of the menu's JSON schema is bounded at ``MAX_TEXT_LENGTH``).
    """

    description: str | None = None
    options: Sequence[Any] | None = None
    max_length: int | None = None

    def __post_init__(self) -> None:
        # Annotated hashes its metadata: keep Param hashable whatever sequence was given.
        if self.options is not None:
            object.__setattr__(self, "options", tuple(self.options))
        bound = self.max_length
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
            raise TypeError(f"Param(max_length=...) must be an int >= 1, got {bound!r}")
        if bound is not None and bound < 1:
            raise ValueError(f"Param(max_length=...) must be >= 1, got {bound}")


def bounded(spec: TypeSpec, annotation: Any, max_length: int | None) -> TypeSpec:
    """``spec`` with at most ``max_length`` characters (or items), validated by pydantic;
    ``spec`` itself when there is no bound."""
    if max_length is None:
        return spec
    if not _text_or_list(spec.json_schema()):
        raise TypeError(
            f"Param(max_length={max_length}) bounds a text or a list, but the parameter is "
            f"{spec.label}: drop max_length, or bound a number with pydantic's Field(le=...)"
        )
    try:
        limited = typing.Annotated[annotation, annotated_types.MaxLen(max_length)]
        return PydanticSpec(limited, spec.label, spec)
    except UnsupportedType as exc:
        raise TypeError(
            f"Param(max_length={max_length}) does not fit the type {spec.label} ({exc}): "
            "give it to a text or a list parameter"
        ) from None


def _text_or_list(schema: Any) -> bool:
    """Whether a JSON schema takes a string or an array (itself, or a member of a union)."""
    if not isinstance(schema, Mapping):
        return False
    kinds = schema.get("type")
    if kinds in ("string", "array") or (
        isinstance(kinds, list) and {"string", "array"} & set(kinds)
    ):
        return True
    return any(_text_or_list(member) for member in schema.get("anyOf", ()))


def param_max_length(hint: Any) -> int | None:
    """The ``max_length`` of an ``Annotated[..., Param(max_length=...)]`` hint, if any."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    found = next((m for m in hint.__metadata__ if isinstance(m, Param)), None)
    return None if found is None else found.max_length


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


# --- annotations -------------------------------------------------------------------------------


def _literal_base(values: tuple[Any, ...]) -> TypeSpec:
    kinds = {type(v) for v in values}
    if len(kinds) == 1:
        (only,) = kinds
        if only in SCALAR_PLACEHOLDERS:
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
    """The name an annotation is shown by: its ``__name__`` (or its origin's), else its text."""
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
    if depth > MAX_DEPTH:
        raise UnsupportedType(f"the annotation nests more than {MAX_DEPTH} levels deep")
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
    if isinstance(tp, type) and tp in SCALAR_PLACEHOLDERS:
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
            spec = bounded(spec_from_annotation(hint, depth + 1), hint, param_max_length(hint))
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
    if depth > MAX_DEPTH:
        raise ValueError(f"Schema for field '{name}' is nested more than {MAX_DEPTH} levels deep")
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
            spec = bounded(
                spec_from_annotation(notation, depth), notation, param_max_length(notation)
            )
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
