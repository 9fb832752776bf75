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
import math
import random
import sys
import uuid
import weakref
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
    "CannotGenerate",
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


class CannotGenerate(ValueError):
    """A field's constraint is beyond the generator (a regex ``pattern``), or no value meets
    its constraints at all: refused at once, never tried again and again.

    Attributes:
        problem: What the field needs: ``must match the pattern '^[A-Z]{3}$', which ...``.
        path: Where the field is: ``code``, ``item.code``... (empty when unknown).
        option: The option whose arguments were drawn, when known.
    """

    def __init__(self, problem: str, path: str = "", option: str | None = None) -> None:
        self.problem = problem
        self.path = path
        self.option = option
        field = f"field {path!r}" if path else "the value"
        if option is None:
            message = f"Cannot generate a value: {field} {problem}"
        else:
            message = (
                f"Cannot generate valid arguments for option {option!r}: {field} {problem}; "
                "script its pick by hand"
            )
        super().__init__(message)

    def within(self, name: str) -> CannotGenerate:
        """The same error, one level up: under the field ``name``."""
        return CannotGenerate(self.problem, f"{name}.{self.path}" if self.path else name)

    def of_option(self, option: str) -> CannotGenerate:
        """The same error, for the arguments of ``option``."""
        return CannotGenerate(self.problem, self.path, option)


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
    values: dict[str, Any] = {}
    for f in fields:
        if f.required or source.coin():
            try:
                values[f.name] = _draw(f.type, source, depth + 1)
            except CannotGenerate as error:
                raise error.within(f.name) from None
    return values


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


_MODEL_SCHEMAS: weakref.WeakKeyDictionary[ModelSpec, dict[str, Any]] = weakref.WeakKeyDictionary()


def _model(spec: ModelSpec, source: ValueSource, depth: int) -> Any:
    # From the model's own JSON schema: its fields' constraints (``Field(ge=1)``...) are there,
    # and a recursive model is a ``$ref`` to itself, drawn smaller as it goes deeper.
    schema = _MODEL_SCHEMAS.get(spec)
    if schema is None:
        schema = _MODEL_SCHEMAS[spec] = spec.json_schema()
    return _accepted_from_schema(schema, spec.accepts, source)


def _accepted_from_schema(
    schema: dict[str, Any], accepts: Callable[[Any], bool], source: ValueSource
) -> Any:
    """A value drawn from ``schema`` that ``accepts`` takes, in a few tries."""
    value = None
    for _ in range(_SCHEMA_TRIES):
        value = _from_schema(schema, source, schema.get("$defs", {}), 0)
        if accepts(value):
            return value
    return source.unaccepted(value)


def _union(spec: UnionSpec, source: ValueSource, depth: int) -> Any:
    return _draw(source.pick(spec.members), source, depth + 1)


def _none(spec: NoneSpec, source: ValueSource, depth: int) -> None:
    return None


def _unknown(spec: UnknownSpec, source: ValueSource, depth: int) -> Any:
    return source.free_json("any")  # Any, object, no annotation: every value is accepted


_SCHEMA_TRIES = 10


def _pydantic(spec: PydanticSpec, source: ValueSource, depth: int) -> Any:
    return _accepted_from_schema(spec.json_schema(), spec.accepts, source)


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

_SCHEMA_DEPTH = 40
"""How deep a schema is followed at all (a recursive one whose every level is required)."""
_SCHEMA_SHALLOW = 6
"""From this depth on, values are drawn as small as their schema allows: no optional fields,
the fewest items, union members that do not recurse."""
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
    pattern = schema.get("pattern")
    if pattern is not None:
        raise CannotGenerate(
            f"must match the pattern {pattern!r}, and the value generator writes no text for "
            "regular expressions"
        )
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


def _limits(schema: Mapping[str, Any]) -> tuple[float, bool, float, bool]:
    """The range a number's schema allows: (low, low is open, high, high is open).

    A side the schema leaves free reaches to :data:`_SCHEMA_NUMBERS` (or a hundred past the
    other bound, when that one lies beyond it).
    """
    low: float | None = schema.get("minimum")
    low_open = False
    exclusive = schema.get("exclusiveMinimum")
    if exclusive is not None and (low is None or exclusive >= low):
        low, low_open = exclusive, True
    high: float | None = schema.get("maximum")
    high_open = False
    exclusive = schema.get("exclusiveMaximum")
    if exclusive is not None and (high is None or exclusive <= high):
        high, high_open = exclusive, True
    if low is None:
        low = _SCHEMA_NUMBERS[0] if high is None or high > _SCHEMA_NUMBERS[0] else high - 100
    if high is None:
        high = _SCHEMA_NUMBERS[1] if low < _SCHEMA_NUMBERS[1] else low + 100
    return low, low_open, high, high_open


def _shown(low: float, low_open: bool, high: float, high_open: bool) -> str:
    return f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"


def _integer(schema: Mapping[str, Any], source: ValueSource) -> int:
    low, low_open, high, high_open = _limits(schema)
    first = math.floor(low) + 1 if low_open else math.ceil(low)
    last = math.ceil(high) - 1 if high_open else math.floor(high)
    step = schema.get("multipleOf")
    if step is not None and step > 0:
        if float(step).is_integer():
            step = int(step)
            lowest, highest = -(-first // step), last // step
            if lowest > highest:
                raise CannotGenerate(
                    f"must be a multiple of {step} in "
                    f"{_shown(low, low_open, high, high_open)}, and none is"
                )
            return int(source.integer(lowest, highest) * step)
        whole: int = _multiple(float(step), float(first), False, float(last), False, source, True)
        return whole
    if first > last:
        raise CannotGenerate(
            f"must be an integer in {_shown(low, low_open, high, high_open)}, and none is"
        )
    return source.integer(first, last)


def _multiple(
    step: float,
    low: float,
    low_open: bool,
    high: float,
    high_open: bool,
    source: ValueSource,
    whole: bool = False,
) -> Any:
    """A multiple of ``step`` in the range (an integer one, with ``whole``)."""

    def inside(value: float) -> bool:
        above = value > low if low_open else value >= low
        return above and (value < high if high_open else value <= high)

    # The quotient's own rounding can be off by one either way (0.30000000000000004 / 0.1 is
    # 3.0000000000000004, whose ceiling 4 misses 3 * 0.1): each end is settled by its product.
    # At most two steps each way: past that, products of huge multiples of a tiny step stop
    # changing with k at all, and the range is left as the quotients give it.
    lowest, highest = math.ceil(low / step), math.floor(high / step)
    for _ in range(2):
        if inside((lowest - 1) * step):
            lowest -= 1
        elif not inside(lowest * step):
            lowest += 1
        if inside((highest + 1) * step):
            highest += 1
        elif not inside(highest * step):
            highest -= 1
    if whole:  # an integer field whose step is a fraction: the first whole multiple
        found = next(
            (k for k in range(lowest, min(highest, lowest + 1000) + 1) if (k * step).is_integer()),
            None,
        )
        if found is None:
            raise CannotGenerate(
                f"must be an integer multiple of {step} in "
                f"{_shown(low, low_open, high, high_open)}, and none is"
            )
        return int(found * step)
    if lowest > highest:
        raise CannotGenerate(
            f"must be a multiple of {step} in {_shown(low, low_open, high, high_open)}, and none is"
        )
    value = source.integer(lowest, highest) * step
    # Rounded past the step's own decimals (3 * 0.1 is 0.30000000000000004), unless that
    # crosses a bound the product itself is inside (127 * 0.1 with ge=12.700000000000001).
    decimals = 6 - math.floor(math.log10(step)) if step < 1 else 6
    rounded = round(value, decimals)
    return rounded if inside(rounded) else value


def _number(schema: Mapping[str, Any], source: ValueSource) -> float:
    low, low_open, high, high_open = _limits(schema)
    step = schema.get("multipleOf")
    if step is not None and step > 0:
        value: float = _multiple(float(step), low, low_open, high, high_open, source)
        return value
    if high < low or (high == low and (low_open or high_open)):
        raise CannotGenerate(
            f"must be a number in {_shown(low, low_open, high, high_open)}, and none is"
        )
    # Two decimals, which a ``decimal_places`` constraint of two or more accepts.
    value = round(source.real(low, high), 2)
    if value < low or value > high or (low_open and value <= low) or (high_open and value >= high):
        value = round(low + (high - low) / 2, 2)  # an open bound, or rounding, went past
        if not low < value < high:
            value = low + (high - low) / 2
    return value


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
            members = _generatable(schema[key], depth)
            return _from_schema(source.pick(members), source, defs, depth + 1)
    if schema.get("allOf"):
        return _from_schema(schema["allOf"][0], source, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = source.pick(kind)
    if kind == "string":
        return _string(schema, source)
    if kind == "integer":
        return _integer(schema, source)
    if kind == "number":
        return _number(schema, source)
    if kind == "boolean":
        return source.coin()
    if kind == "null":
        return None
    if kind == "array":
        return _array(schema, source, defs, depth)
    if kind == "object" or "properties" in schema:
        return _schema_object(schema, source, defs, depth)
    return source.free_json("any")  # a schema without a type accepts any value


def _generatable(members: Sequence[Any], depth: int) -> Sequence[Any]:
    """The members of a union worth drawing: none that needs a ``pattern`` while another does
    not, a number rather than its text form (a ``Decimal``); past :data:`_SCHEMA_SHALLOW`, none
    that refers to a definition (so a recursive model comes to an end) while another does not."""
    plain = [m for m in members if not (isinstance(m, Mapping) and "pattern" in m)]
    members = plain or members
    kinds = {m.get("type") for m in members if isinstance(m, Mapping)}
    if kinds & {"number", "integer"} and "string" in kinds:
        # A number or its text (a ``Decimal``): the text must spell a number, so draw the number.
        members = [m for m in members if not isinstance(m, Mapping) or m.get("type") != "string"]
    if depth >= _SCHEMA_SHALLOW:
        flat = [m for m in members if isinstance(m, Mapping) and not _refers(m)]
        members = flat or members
    return members


def _refers(schema: Mapping[str, Any]) -> bool:
    if "$ref" in schema:
        return True
    items = schema.get("items")
    return isinstance(items, Mapping) and "$ref" in items and schema.get("minItems", 0) > 0


def _array(
    schema: Mapping[str, Any], source: ValueSource, defs: Mapping[str, Any], depth: int
) -> list[Any]:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return [_from_schema(p, source, defs, depth + 1) for p in prefix]
    items = schema.get("items", {})
    low = int(schema.get("minItems", _SCHEMA_ITEMS[0]))
    high = int(schema.get("maxItems", max(low, _SCHEMA_ITEMS[1])))
    if depth >= _SCHEMA_SHALLOW:  # deep in a recursive model: as few items as allowed
        low = high = int(schema.get("minItems", 0))
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
    deep = depth >= _SCHEMA_SHALLOW  # deep in a recursive model: required fields only
    values: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        if name in required or (not deep and source.coin()):
            try:
                values[name] = _from_schema(sub, source, defs, depth + 1)
            except CannotGenerate as error:
                raise error.within(name) from None
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
