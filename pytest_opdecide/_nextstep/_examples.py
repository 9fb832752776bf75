"""Example values drawn from a JSON schema: what the seeded fakes and the strategies send for
types pydantic validates whole (``date``, ``UUID``, ``Decimal``, constrained types...).

A value is drawn for the schema's type, format and bounds (``minimum``, ``maxLength``,
``minItems``...); what the generator cannot honour (a ``pattern``) comes out wrong, and the
caller checks every value with the real validator before using it.
"""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["example_from_json_schema"]

_WORDS = (
    "order", "refund", "invoice", "parcel", "account", "delay", "billing", "support",
    "shipping", "return", "warranty", "upgrade", "login", "password", "receipt", "coupon",
)  # fmt: skip
_MAX_DEPTH = 8
_EPOCH = datetime.date(2020, 1, 1)


def _date(rng: random.Random) -> datetime.date:
    return _EPOCH + datetime.timedelta(days=rng.randint(0, 3650))


def _time(rng: random.Random) -> datetime.time:
    return datetime.time(rng.randint(0, 23), rng.randrange(0, 60, 5))


def _string(schema: Mapping[str, Any], rng: random.Random) -> str:
    form = schema.get("format")
    if form == "date":
        return _date(rng).isoformat()
    if form == "date-time":
        return datetime.datetime.combine(_date(rng), _time(rng)).isoformat()
    if form == "time":
        return _time(rng).isoformat()
    if form == "duration":
        return f"PT{rng.randint(1, 48)}H{rng.randrange(0, 60, 15)}M"
    if form == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if form == "path":
        return f"/tmp/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.txt"
    if form == "email":
        return f"{rng.choice(_WORDS)}@example.com"
    if form in ("uri", "url"):
        return f"https://example.com/{rng.choice(_WORDS)}"
    if form == "ipv4":
        return f"10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    if form == "ipv6":
        return f"fd00::{rng.randint(1, 0xFFFF):x}"
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
    low = int(schema.get("minLength", 0))
    high = int(schema.get("maxLength", max(low, len(text))))
    while len(text) < low:
        text += " " + rng.choice(_WORDS)
    return text[: max(high, low)]


def _bounds(schema: Mapping[str, Any], low: float, high: float) -> tuple[float, float]:
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


def example_from_json_schema(
    schema: Mapping[str, Any],
    rng: random.Random,
    defs: Mapping[str, Any] | None = None,
    depth: int = 0,
) -> Any:
    """A JSON value for ``schema`` (``$defs`` of the root are followed), drawn from ``rng``."""
    if defs is None:
        defs = schema.get("$defs", {})
    if depth > _MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref[len("#/$defs/") :], {})
        return example_from_json_schema(target, rng, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return example_from_json_schema(rng.choice(schema[key]), rng, defs, depth + 1)
    if schema.get("allOf"):
        return example_from_json_schema(schema["allOf"][0], rng, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "string":
        return _string(schema, rng)
    if kind == "integer":
        low, high = _bounds(schema, 0, 100)
        return rng.randint(int(low), int(high))
    if kind == "number":
        low, high = _bounds(schema, 0, 100)
        return round(rng.uniform(low, high), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return [example_from_json_schema(p, rng, defs, depth + 1) for p in prefix]
        items = schema.get("items", {})
        low = int(schema.get("minItems", 1))
        high = int(schema.get("maxItems", max(low, 3)))
        values: list[Any] = []
        for _ in range(rng.randint(low, max(low, high))):
            value = example_from_json_schema(items, rng, defs, depth + 1)
            if not schema.get("uniqueItems") or value not in values:
                values.append(value)
        return values
    if kind == "object" or "properties" in schema:
        required = set(schema.get("required", ()))
        out = {
            name: example_from_json_schema(sub, rng, defs, depth + 1)
            for name, sub in schema.get("properties", {}).items()
            if name in required or rng.random() < 0.5
        }
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not out:
            out[rng.choice(_WORDS)] = example_from_json_schema(extra, rng, defs, depth + 1)
        return out
    return rng.choice(_WORDS)  # any value is accepted
