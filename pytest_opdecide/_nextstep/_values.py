"""Values of option fields: one generator per field type, whatever source makes its choices.

The seeded fakes (``fake_runtimes``) and the Hypothesis strategies (``pytest_opdecide.strategies``)
draw the arguments of their picks here, from the field types the decision library validates
with (``_field_types``). Each type's generator is written once, against a :class:`ValueSource`:
the few choices a generator makes (an integer in a range, one item of a sequence, a coin toss, a
text of some length...). :class:`RandomSource` makes them with a seeded ``random.Random`` (the
fakes: the same seed gives the same values, in any process); the strategies make them with
Hypothesis draws, so that examples shrink and replay. A field type without a generator is an
error that names it, never a value of some other type.

The sections, in order:

* the source: :class:`ValueSource`, :class:`ValueLimits` (what a type that sets no bounds
  draws: an ``int``'s range, a list's length...) and :class:`RandomSource`;
* the generators: :func:`draw_value` and :func:`draw_arguments`, one generator per
  :class:`~pytest_opdecide._nextstep._field_types.TypeSpec` class in ``_GENERATORS``; values
  nested deeper than the limits allow are the smallest their types have (no more choices);
* values from a JSON schema, for the types pydantic validates whole (``date``, ``UUID``,
  ``Decimal``, constrained types): the one place where constraints are read (``minimum``,
  ``maxLength``, ``minItems``, formats...). What it cannot honour (a ``pattern``) comes out
  wrong; the generator tries again, then hands the value to the source
  (:meth:`ValueSource.unaccepted`);
* wrong values, for replies that must fail: :func:`wrong_type_value` (one per type, in
  ``_WRONG_TYPES``) and :func:`disallowed_value`.
"""

from __future__ import annotations

import datetime
import random
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from pytest_opdecide._nextstep._field_types import (
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
)

__all__ = [
    "RandomSource",
    "ValueLimits",
    "ValueSource",
    "disallowed_value",
    "draw_arguments",
    "draw_value",
    "wrong_type_value",
]

T = TypeVar("T")

FreeKind = Literal["any", "array", "object"]
"""What a type that accepts any content is: any value, any array, any object."""

# --- the source --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValueLimits:
    """What is drawn for a type that sets no bounds of its own (the defaults: the seeded fakes').

    Attributes:
        integers: The range of an ``int`` field.
        reals: The range of a ``float`` field.
        items: How many items a list, a set or a ``tuple[T, ...]`` gets.
        entries: How many entries a ``dict[str, T]`` gets.
        depth: How deep values are drawn; values nested deeper are the smallest their types
            allow (an empty list, the first allowed value, required fields only...).
    """

    integers: tuple[int, int] = (0, 100)
    reals: tuple[float, float] = (0.0, 100.0)
    items: tuple[int, int] = (1, 3)
    entries: tuple[int, int] = (1, 1)
    depth: int = 8


class ValueSource(Protocol):
    """The choices a value generator makes: each source makes them its own way.

    :class:`RandomSource` is the seeded fakes' source; ``pytest_opdecide.strategies`` has one
    over Hypothesis draws. A source of your own (for another test framework, say) implements
    these methods and :attr:`limits`, and passes itself to :func:`draw_value`.
    """

    @property
    def limits(self) -> ValueLimits:
        """The ranges of what a type that sets no bounds draws."""
        ...

    def integer(self, low: int, high: int) -> int:
        """An integer from ``low`` to ``high``, both included."""
        ...

    def bits(self, count: int) -> int:
        """An integer of ``count`` random bits (a UUID takes 128)."""
        ...

    def real(self, low: float, high: float) -> float:
        """A number from ``low`` to ``high``."""
        ...

    def coin(self) -> bool:
        """Yes or no, evenly: whether an optional field is sent, a bool field's value..."""
        ...

    def pick(self, values: Sequence[T]) -> T:
        """One of ``values`` (never empty)."""
        ...

    def text(self, min_length: int = 0, max_length: int | None = None) -> str:
        """A string of ``min_length`` to ``max_length`` characters (short, without a maximum)."""
        ...

    def key(self) -> str:
        """A key of an object whose keys are free (``dict[str, T]``)."""
        ...

    def free_json(self, kind: FreeKind) -> Any:
        """A value of a type that accepts any content: any JSON value, array or object."""
        ...

    def unaccepted(self, value: Any) -> Any:
        """What becomes of a value its type refused, once the generator's tries are spent.

        Return it, for the caller's check to report (the seeded fakes say which field they
        cannot fill), or refuse the draw (Hypothesis rejects the example).
        """
        ...


class RandomSource:
    """The choices of a seeded ``random.Random``: the same seed gives the same values anywhere.

    Text is one to three of :attr:`WORDS` (grown to a minimum length, cut to a maximum),
    numbers have two decimals, keys are words, and a free value is a word (a free array or
    object holds at most one).

    Args:
        rng: The generator every choice is drawn from.
    """

    WORDS = (
        "order", "refund", "invoice", "parcel", "account", "delay", "billing", "support",
        "shipping", "return", "warranty", "upgrade", "login", "password", "receipt", "coupon",
    )  # fmt: skip
    """The words text is made of."""

    limits = ValueLimits()
    """The defaults of :class:`ValueLimits`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        """``rng.randint(low, high)``."""
        return self.rng.randint(low, high)

    def bits(self, count: int) -> int:
        """``rng.getrandbits(count)``."""
        return self.rng.getrandbits(count)

    def real(self, low: float, high: float) -> float:
        """``rng.uniform(low, high)``, to two decimals."""
        return round(self.rng.uniform(low, high), 2)

    def coin(self) -> bool:
        """``rng.random() < 0.5``."""
        return self.rng.random() < 0.5

    def pick(self, values: Sequence[T]) -> T:
        """``rng.choice(values)``."""
        return self.rng.choice(values)

    def text(self, min_length: int = 0, max_length: int | None = None) -> str:
        """One to three words, more words up to ``min_length``, cut at ``max_length``."""
        text = " ".join(self.pick(self.WORDS) for _ in range(self.integer(1, 3)))
        high = max(min_length, len(text)) if max_length is None else max_length
        while len(text) < min_length:
            text += " " + self.pick(self.WORDS)
        return text[: max(high, min_length)]

    def key(self) -> str:
        """A word."""
        return self.pick(self.WORDS)

    def free_json(self, kind: FreeKind) -> Any:
        """A word; an array of one word or none; an object of one ``note`` or none."""
        if kind == "array":
            return [self.pick(self.WORDS)] if self.coin() else []
        if kind == "object":
            return {"note": self.pick(self.WORDS)} if self.coin() else {}
        return self.pick(self.WORDS)

    def unaccepted(self, value: Any) -> Any:
        """The value itself: the fakes check every pick, and say what they cannot fill."""
        return value


class _SmallestSource:
    """The choices that make the smallest value a type allows: none is left to chance."""

    limits = ValueLimits(
        integers=(0, 0), reals=(0.0, 0.0), items=(0, 0), entries=(0, 0), depth=sys.maxsize
    )

    def integer(self, low: int, high: int) -> int:
        return low

    def bits(self, count: int) -> int:
        return 0

    def real(self, low: float, high: float) -> float:
        return low

    def coin(self) -> bool:
        return False

    def pick(self, values: Sequence[T]) -> T:
        return values[0]

    def text(self, min_length: int = 0, max_length: int | None = None) -> str:
        return "x" * min_length

    def key(self) -> str:
        return "key"

    def free_json(self, kind: FreeKind) -> Any:
        return {"any": None, "array": [], "object": {}}[kind]

    def unaccepted(self, value: Any) -> Any:
        return value


_SMALLEST = _SmallestSource()

# --- the generators, one per field type ----------------------------------------------------------


def draw_value(spec: TypeSpec, source: ValueSource) -> Any:
    """A JSON value for a field of type ``spec``, every choice made by ``source``.

    The value is one ``spec`` accepts, except where a constraint is beyond the generator (a
    ``pattern``): then it is what :meth:`ValueSource.unaccepted` makes of the last try.

    Raises:
        TypeError: ``spec`` is of a field type that has no generator.
    """
    return _draw(spec, source, 0)


def draw_arguments(fields: Iterable[FieldSpec], source: ValueSource) -> dict[str, Any]:
    """The arguments of a pick: every required field, and each optional one if ``source.coin()``.

    Optional fields are sent only some of the time, so that the code that reads them and the
    code that does without both run.

    Raises:
        TypeError: A field is of a type that has no generator.
    """
    return _fields(fields, source, 0)


def _draw(spec: TypeSpec, source: ValueSource, depth: int) -> Any:
    if depth > source.limits.depth:
        source = _SMALLEST
    generator = _GENERATORS.get(type(spec))
    if generator is None:
        raise TypeError(
            f"Cannot draw a value of the field type {type(spec).__qualname__} "
            f"({spec.label!r}): it has no generator; add one to _GENERATORS in "
            f"{__name__}, and its wrong value to _WRONG_TYPES"
        )
    return generator(spec, source, depth)


def _fields(fields: Iterable[FieldSpec], source: ValueSource, depth: int) -> dict[str, Any]:
    return {f.name: _draw(f.type, source, depth + 1) for f in fields if f.required or source.coin()}


def _count(source: ValueSource, sizes: tuple[int, int]) -> int:
    low, high = sizes
    return low if low == high else source.integer(low, high)  # a fixed size takes no choice


def _scalar(spec: ScalarSpec, source: ValueSource, depth: int) -> Any:
    kind = spec.pytype
    if kind is str:
        return source.text()
    if kind is bool:
        return source.coin()
    if kind is int:
        return source.integer(*source.limits.integers)
    if kind is float:
        return source.real(*source.limits.reals)
    if kind is list:
        return source.free_json("array")
    if kind is dict:
        return source.free_json("object")
    raise TypeError(f"Cannot draw a value of the scalar type {kind.__name__}: it has no generator")


def _choice(spec: ChoiceSpec, source: ValueSource, depth: int) -> Any:
    return source.pick(spec.choices or (None,))


def _list(spec: ListSpec, source: ValueSource, depth: int) -> list[Any]:
    return [_draw(spec.item, source, depth + 1) for _ in range(_count(source, source.limits.items))]


def _sequence(spec: SequenceSpec, source: ValueSource, depth: int) -> list[Any]:
    if not spec.variadic:
        return [_draw(item, source, depth + 1) for item in spec.items]
    values: list[Any] = []
    for _ in range(_count(source, source.limits.items)):
        value = _draw(spec.items[0], source, depth + 1)
        if spec.kind == "tuple" or value not in values:  # a set's items are distinct
            values.append(value)
    return values


def _dict(spec: DictSpec, source: ValueSource, depth: int) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for _ in range(_count(source, source.limits.entries)):
        key = source.key()
        values[key] = _draw(spec.value, source, depth + 1)
    return values


def _object(spec: ObjectSpec, source: ValueSource, depth: int) -> dict[str, Any]:
    return _fields(spec.fields, source, depth)


def _model(spec: ModelSpec, source: ValueSource, depth: int) -> Any:
    value = _fields(spec.shape.fields, source, depth)
    return value if spec.accepts(value) else source.unaccepted(value)


def _union(spec: UnionSpec, source: ValueSource, depth: int) -> Any:
    return _draw(source.pick(spec.members), source, depth + 1)


def _none(spec: NoneSpec, source: ValueSource, depth: int) -> None:
    return None


def _unknown(spec: UnknownSpec, source: ValueSource, depth: int) -> Any:
    return source.free_json("any")  # Any, object, no annotation: every value is accepted


_SCHEMA_TRIES = 10


def _pydantic(spec: PydanticSpec, source: ValueSource, depth: int) -> Any:
    schema = spec.json_schema()
    value = None
    for _ in range(_SCHEMA_TRIES):
        value = _from_schema(schema, source, schema.get("$defs", {}), 0)
        if spec.accepts(value):
            return value
    return source.unaccepted(value)


_GENERATORS: dict[type[TypeSpec], Callable[[Any, ValueSource, int], Any]] = {
    ScalarSpec: _scalar,
    ChoiceSpec: _choice,
    ListSpec: _list,
    SequenceSpec: _sequence,
    DictSpec: _dict,
    ObjectSpec: _object,
    ModelSpec: _model,
    PydanticSpec: _pydantic,
    UnionSpec: _union,
    NoneSpec: _none,
    UnknownSpec: _unknown,
}
"""The generator of each field type, by exact class: a subclass is a type of its own."""

# --- values from a JSON schema: where constraints are read ---------------------------------------

_SCHEMA_DEPTH = 8
_SCHEMA_NUMBERS = (0, 100)
"""The range of a number whose schema bounds it on neither side (or one side, to here)."""
_SCHEMA_ITEMS = (1, 3)
"""How many items an array gets whose schema sets no ``minItems`` or ``maxItems``."""
_EPOCH = datetime.date(2020, 1, 1)


def _date(source: ValueSource) -> datetime.date:
    return _EPOCH + datetime.timedelta(days=source.integer(0, 3650))


def _time(source: ValueSource) -> datetime.time:
    return datetime.time(source.integer(0, 23), 5 * source.integer(0, 11))


def _string(schema: Mapping[str, Any], source: ValueSource) -> str:
    form = schema.get("format")
    words = RandomSource.WORDS
    if form == "date":
        return _date(source).isoformat()
    if form == "date-time":
        return datetime.datetime.combine(_date(source), _time(source)).isoformat()
    if form == "time":
        return _time(source).isoformat()
    if form == "duration":
        return f"PT{source.integer(1, 48)}H{15 * source.integer(0, 3)}M"
    if form == "uuid":
        return str(uuid.UUID(int=source.bits(128), version=4))
    if form == "path":
        return f"/tmp/{source.pick(words)}/{source.pick(words)}.txt"
    if form == "email":
        return f"{source.pick(words)}@example.com"
    if form in ("uri", "url"):
        return f"https://example.com/{source.pick(words)}"
    if form == "ipv4":
        return f"10.0.{source.integer(0, 255)}.{source.integer(1, 254)}"
    if form == "ipv6":
        return f"fd00::{source.integer(1, 0xFFFF):x}"
    maximum = schema.get("maxLength")
    return source.text(int(schema.get("minLength", 0)), None if maximum is None else int(maximum))


def _bounds(schema: Mapping[str, Any]) -> tuple[float, float]:
    low, high = _SCHEMA_NUMBERS
    if "minimum" in schema:
        low = schema["minimum"]
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + 1
    if "maximum" in schema:
        high = schema["maximum"]
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - 1
    if high < low:
        high = low + 100
    return low, high


def _from_schema(
    schema: Mapping[str, Any], source: ValueSource, defs: Mapping[str, Any], depth: int
) -> Any:
    """A JSON value for ``schema`` (its ``$ref`` looked up in ``defs``, the root's ``$defs``)."""
    if depth > _SCHEMA_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _from_schema(defs.get(ref[len("#/$defs/") :], {}), source, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return source.pick(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _from_schema(source.pick(schema[key]), source, defs, depth + 1)
    if schema.get("allOf"):
        return _from_schema(schema["allOf"][0], source, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = source.pick(kind)
    if kind == "string":
        return _string(schema, source)
    if kind == "integer":
        low, high = _bounds(schema)
        return source.integer(int(low), int(high))
    if kind == "number":
        # Two decimals, which a ``decimal_places`` constraint of two or more accepts.
        return round(source.real(*_bounds(schema)), 2)
    if kind == "boolean":
        return source.coin()
    if kind == "null":
        return None
    if kind == "array":
        return _array(schema, source, defs, depth)
    if kind == "object" or "properties" in schema:
        return _schema_object(schema, source, defs, depth)
    return source.free_json("any")  # a schema without a type accepts any value


def _array(
    schema: Mapping[str, Any], source: ValueSource, defs: Mapping[str, Any], depth: int
) -> list[Any]:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return [_from_schema(p, source, defs, depth + 1) for p in prefix]
    items = schema.get("items", {})
    low = int(schema.get("minItems", _SCHEMA_ITEMS[0]))
    high = int(schema.get("maxItems", max(low, _SCHEMA_ITEMS[1])))
    values: list[Any] = []
    for _ in range(source.integer(low, max(low, high))):
        value = _from_schema(items, source, defs, depth + 1)
        if not schema.get("uniqueItems") or value not in values:
            values.append(value)
    return values


def _schema_object(
    schema: Mapping[str, Any], source: ValueSource, defs: Mapping[str, Any], depth: int
) -> dict[str, Any]:
    required = set(schema.get("required", ()))
    values = {
        name: _from_schema(sub, source, defs, depth + 1)
        for name, sub in schema.get("properties", {}).items()
        if name in required or source.coin()
    }
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and not values:
        values[source.key()] = _from_schema(extra, source, defs, depth + 1)
    return values


# --- wrong values, for replies that must fail ----------------------------------------------------


def wrong_type_value(spec: TypeSpec) -> Any | None:
    """A value of the wrong JSON type for ``spec``, or ``None`` when it accepts every type.

    ``12345`` for a ``str``, text for a number, an object for a list, text for an object; for a
    type pydantic validates whole, a union or ``None``, a value of a JSON type its schema does
    not allow (a type error, not a broken constraint).

    Raises:
        TypeError: ``spec`` is of a field type that has no wrong value.
    """
    wrong = _WRONG_TYPES.get(type(spec))
    if wrong is None:
        raise TypeError(
            f"Cannot make a wrongly typed value for the field type {type(spec).__qualname__} "
            f"({spec.label!r}): add it to _WRONG_TYPES in {__name__}"
        )
    return wrong(spec)


_WRONG_SCALARS: dict[type, Any] = {
    str: 12345,
    int: "not a number",
    float: "not a number",
    bool: "yes",
    list: {"not": "a list"},
    dict: "not an object",
}

_WRONG_VALUES = (
    (12345, {"integer", "number"}),
    ("not a number", {"string"}),
    ({"not": "a list"}, {"object"}),
    (["not", "an", "object"], {"array"}),
)
"""Wrong values, with the JSON types they are."""


def _json_types(schema: Any, defs: Any, depth: int = 0) -> set[str]:
    """The JSON types a JSON schema accepts (every one, when it cannot tell)."""
    everything = {"integer", "number", "string", "object", "array", "boolean", "null"}
    if not isinstance(schema, dict) or depth > _SCHEMA_DEPTH:
        return everything
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _json_types(defs.get(ref[len("#/$defs/") :]), defs, depth + 1)
    members = schema.get("anyOf") or schema.get("oneOf")
    if members:
        return set().union(*(_json_types(m, defs, depth + 1) for m in members))
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind, "number"} if kind == "integer" else {kind}
    if "properties" in schema:
        return {"object"}
    return everything


def _wrong_for_schema(spec: TypeSpec) -> Any | None:
    schema = spec.json_schema()
    accepted = _json_types(schema, schema.get("$defs", {}))
    return next(
        (
            value
            for value, kinds in _WRONG_VALUES
            if not kinds & accepted and not spec.accepts(value)
        ),
        None,
    )


_WRONG_TYPES: dict[type[TypeSpec], Callable[[Any], Any | None]] = {
    ScalarSpec: lambda spec: _WRONG_SCALARS[spec.pytype],
    ChoiceSpec: lambda spec: wrong_type_value(spec.base),
    ListSpec: lambda spec: {"not": "a list"},
    SequenceSpec: lambda spec: {"not": "a list"},
    DictSpec: lambda spec: "not an object",
    ObjectSpec: lambda spec: "not an object",
    ModelSpec: lambda spec: "not an object",
    PydanticSpec: _wrong_for_schema,
    UnionSpec: _wrong_for_schema,
    NoneSpec: _wrong_for_schema,
    UnknownSpec: lambda spec: None,  # every value is accepted
}
"""The wrongly typed value of each field type, by exact class."""


def disallowed_value(spec: TypeSpec) -> Any | None:
    """A value of the right type outside the allowed values of a :class:`ChoiceSpec`.

    For allowed strings, one that is none of them; for allowed integers, one more than the
    largest. ``None`` for a type without allowed values, or with values of another kind.
    """
    if not isinstance(spec, ChoiceSpec):
        return None
    choices = spec.choices or ()
    if all(isinstance(c, str) for c in choices):
        candidate = "not_an_allowed_value"
        while candidate in choices:
            candidate += "_"
        return candidate
    if all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
        return max(choices) + 1
    return None
