"""The menu as a JSON schema: what a server may hold the model's reply to (structured decisions).

The schema has one branch per option, under ``anyOf``::

    {"anyOf": [
        {"type": "object",
         "properties": {"call": {"type": "string", "enum": ["greet"]},
                        "args": {"type": "object",
                                 "properties": {"name": {"type": "string"}},
                                 "required": ["name"],
                                 "additionalProperties": false}},
         "required": ["call", "args"],
         "additionalProperties": false},
        {"type": "object",
         "properties": {"call": {"type": "string", "enum": ["done"]}},
         "required": ["call"],
         "additionalProperties": false}]}

``call`` is fixed to the option's name, ``args`` is the option's argument schema (from pydantic
for function options, from the declared fields for schema options), required as the option
requires (``args`` itself only when a field is); an option without arguments has no ``args``.
A menu of one option is that branch alone. Definitions that ``$ref`` points to (pydantic
models, dataclasses) are gathered at the root's ``$defs``.

The schema keeps to what servers that turn a schema into a grammar agree on (llama.cpp and
llama-cpp-python, vLLM, Ollama, LM Studio) and what OpenAI's ``json_schema`` response format
accepts: ``anyOf`` (never ``oneOf``), a single-value ``enum`` for a constant, every object closed
with ``additionalProperties: false``, ``$ref`` only into the root's ``$defs``. It only narrows
what the model can write: the reply is still parsed and validated by pydantic, so a constraint a
grammar cannot express is left out rather than risked (a server that cannot compile part of a
schema may drop all of it without saying so):

- A ``pattern`` of the option's is left out: each server supports its own subset of regular
  expressions. Free text fields get one of ours instead (:func:`text_pattern`): one line
  that does not start with ``<``, so that the model cannot copy a placeholder of the menu, and
  at most ``maxLength`` characters (the field's own, else :data:`MAX_TEXT_LENGTH`), written
  into the pattern itself: llama.cpp's converter reads a ``pattern`` and ignores the lengths
  beside it, and a text without a bound lets a weak model write until its tokens run out.
- ``format`` is kept for ``date`` and ``uuid`` only. JSON Schema's ``date-time`` and ``time``
  require a UTC offset, which would turn every naive time the model sends into an aware one;
  other formats (``path``, ``duration``...) mean nothing to a grammar.
- An integer bounded on both sides by few values also lists them (:data:`SMALL_RANGE`).
- Titles, descriptions, defaults and examples are left out: the text menu carries them.
- A field of any type (``Any``) lists every JSON type: an empty schema is read as "an object"
  by llama.cpp's converter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

if TYPE_CHECKING:
    from pytest_opdecide._nextstep._options import Option

__all__ = [
    "ANY_TYPES",
    "MAX_TEXT_LENGTH",
    "NOT_A_PLACEHOLDER",
    "SMALL_RANGE",
    "json_schema_format",
    "menu_schema",
    "portable_schema",
    "text_pattern",
]

ANY_TYPES = ("string", "number", "boolean", "object", "array", "null")
"""The types of a value that may be anything."""

NOT_A_PLACEHOLDER = '^([^<"\\\\\\n\\r\\t][^"\\\\\\n\\r\\t]*)?$'
"""The pattern of a free text field: any one-line text that does not start with ``<``, the
start of every menu placeholder (``"<str>"``, ``"<date YYYY-MM-DD>"``...), which a weak model
copies from the ``Call:`` line (and copies again at its re-pick). Quotes, backslashes and line
breaks are left out too: a grammar would have to escape them. A plain, anchored
character-class pattern, which every grammar converter takes."""

MAX_TEXT_LENGTH = 200
"""The most characters a free text field of the schema takes when the field sets no
``max_length`` of its own (``Param(max_length=...)``, pydantic's ``Field(max_length=...)``).
Only the schema is bounded: a longer text sent without one (the text menu) still validates."""

_TEXT_CHAR = r'[^"\\\n\r\t]'
_FIRST_CHAR = r'[^<"\\\n\r\t]'


def text_pattern(min_length: int = 0, max_length: int = MAX_TEXT_LENGTH) -> str:
    r"""The pattern of a free text field of ``min_length`` to ``max_length`` characters: one
    line that does not start with ``<`` (see :data:`NOT_A_PLACEHOLDER`) and is not ``str`` in
    any case, what is left of a copied ``"<str>"`` when ``<`` is forbidden (the local model
    wrote it at its first reply and again at its re-pick). Written with character classes and
    alternatives only: grammar converters take no look-ahead.

    Example:
        >>> print(text_pattern(0, 8))
        ^([^<"\\\n\r\t][^"\\\n\r\t]{0,1}|[^<"\\\n\r\t][^"\\\n\r\t]{3,7}|[^<sS"\\\n\r\t][^"\\\n\r\t]{2}|[sS][^tT"\\\n\r\t][^"\\\n\r\t]|[sS][tT][^rR"\\\n\r\t])?$
    """
    high = max(max_length, 1)
    low = min(max(min_length, 0), high)
    ranges = [(max(low, 1), min(high, 2)), (max(low, 4), high)]
    branches = [f"{_FIRST_CHAR}{_TEXT_CHAR}{{{a - 1},{b - 1}}}" for a, b in ranges if a <= b]
    if low <= 3 <= high:  # three characters, but not "str" in any case
        branches += [
            rf'[^<sS"\\\n\r\t]{_TEXT_CHAR}{{2}}',
            rf'[sS][^tT"\\\n\r\t]{_TEXT_CHAR}',
            r'[sS][tT][^rR"\\\n\r\t]',
        ]
    body = "|".join(branches)
    return f"^({body})$" if low else f"^({body})?$"


SMALL_RANGE = 100
"""An integer field bounded on both sides by at most this many values also lists them as an
``enum``: llama.cpp's Python converter (llama-cpp-python's) ignores ``minimum`` and
``maximum``, and a weak model copies the placeholder ``0`` whatever the bounds."""

_KEPT_FORMATS = {"date": "date", "uuid": "uuid"} | {f"uuid{n}": "uuid" for n in range(1, 6)}
_NUMBERS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_SHAPING = frozenset(
    {"type", "enum", "$ref", "anyOf", "allOf", "properties", "items", "prefixItems"}
)
"""Keywords that say what a value is: a schema with none of them takes any value."""
_MAX_DEPTH = 64


def json_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` that asks for a reply matching ``schema``.

    Sent without ``strict``: OpenAI's strict mode refuses a schema whose root is ``anyOf``,
    which every menu of two options or more has.
    """
    return {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema}}


def menu_schema(options: Iterable[Option]) -> dict[str, Any]:
    """The JSON schema of a valid pick from ``options`` (see the module docstring)."""
    defs: dict[str, Any] = {}
    branches = [_branch(option, defs) for option in options]
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if defs:
        schema["$defs"] = defs
    return schema


def _branch(option: Option, defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {"call": {"type": "string", "enum": [option.name]}}
    required = ["call"]
    validator = option.validator
    if validator is not None:
        args = _with_defs(validator.json_schema(), defs)
        properties["args"] = args
        if args.get("required"):  # a pick without args means no arguments
            required.append("args")
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _with_defs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` made portable, its definitions added to ``defs`` (renamed where a different
    definition of the same name is there already, with the ``$ref`` that point to them)."""
    own = {name: portable_schema(value) for name, value in schema.pop("$defs", {}).items()}
    body: dict[str, Any] = portable_schema(schema)
    renamed: dict[str, str] = {}
    for name, definition in own.items():
        if name in defs and defs[name] != definition:
            number = 2
            while f"{name}_{number}" in defs or f"{name}_{number}" in own:
                number += 1
            renamed[name] = f"{name}_{number}"
    if renamed:
        body = _renamed_refs(body, renamed)
        own = {
            renamed.get(name, name): _renamed_refs(value, renamed) for name, value in own.items()
        }
    for name, definition in own.items():
        defs.setdefault(name, definition)
    return body


def _renamed_refs(schema: Any, renamed: Mapping[str, str]) -> Any:
    if isinstance(schema, dict):
        out = {key: _renamed_refs(value, renamed) for key, value in schema.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/") :]
            out["$ref"] = f"#/$defs/{renamed.get(name, name)}"
        return out
    if isinstance(schema, list):
        return [_renamed_refs(item, renamed) for item in schema]
    return schema


def portable_schema(schema: Any, depth: int = 0) -> Any:
    """``schema`` (pydantic's JSON schema, or ours) in the subset every server takes.

    Keeps what constrains a value (``type``, ``enum``, ``properties``, ``required``,
    ``items``, ``prefixItems``, ``anyOf``, ``allOf``, ``$ref``, bounds, ``date`` and ``uuid``
    formats), turns ``oneOf`` into ``anyOf`` and ``const`` into a single-value ``enum``, closes
    every object with ``additionalProperties: false`` unless it says otherwise, and leaves out
    the rest (see the module docstring). ``$defs`` are left to the caller.
    """
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return {"type": list(ANY_TYPES)}
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) or (isinstance(kind, list) and all(isinstance(t, str) for t in kind)):
        out["type"] = kind
    allowed = _json_values(schema["enum"]) if isinstance(schema.get("enum"), list) else None
    if "const" in schema:
        allowed = _json_values([schema["const"]])
    if allowed:
        out["enum"] = allowed
    form = schema.get("format")
    if isinstance(form, str) and form in _KEPT_FORMATS:
        out["format"] = _KEPT_FORMATS[form]
    for key in _NUMBERS:
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    if schema.get("uniqueItems") is True:
        out["uniqueItems"] = True
    ref = schema.get("$ref")
    if isinstance(ref, str):
        out["$ref"] = ref
    members = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(members, list) and members:
        out["anyOf"] = [portable_schema(m, depth + 1) for m in members]
    every = schema.get("allOf")
    if isinstance(every, list) and every:
        parts = [portable_schema(m, depth + 1) for m in every]
        if len(parts) == 1 and isinstance(parts[0], dict) and not set(parts[0]) & set(out):
            out.update(parts[0])
        else:
            out["allOf"] = parts
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {
            str(name): portable_schema(value, depth + 1) for name, value in properties.items()
        }
        required = schema.get("required")
        if isinstance(required, list):
            out["required"] = [name for name in required if name in out["properties"]]
    extra = schema.get("additionalProperties")
    if isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif isinstance(extra, Mapping):
        out["additionalProperties"] = portable_schema(extra, depth + 1)
    elif "properties" in out:
        out["additionalProperties"] = False  # extra keys would be dropped anyway
    items = schema.get("items")
    if isinstance(items, list):  # the old spelling of prefixItems
        out["prefixItems"] = [portable_schema(item, depth + 1) for item in items]
    elif isinstance(items, bool | Mapping):
        out["items"] = portable_schema(items, depth + 1)
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        out["prefixItems"] = [portable_schema(item, depth + 1) for item in prefix]
    if not _SHAPING & set(out):
        out["type"] = list(ANY_TYPES)
    elif out.get("type") == "string" and "enum" not in out and "format" not in out:
        high = out.get("maxLength")
        high = MAX_TEXT_LENGTH if not isinstance(high, int) else high
        out["maxLength"] = high
        out["pattern"] = text_pattern(int(out.get("minLength", 0)), high)
    elif out.get("type") == "integer" and "enum" not in out:
        values = _integer_range(out)
        if values is not None:
            out["enum"] = values
    return out


def _integer_range(schema: Mapping[str, Any]) -> list[int] | None:
    """Every integer a schema with both bounds allows, when there are few of them."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is None or high is None or "multipleOf" in schema:
        return None
    first = math.ceil(low) + (1 if "minimum" not in schema and low == math.ceil(low) else 0)
    last = math.floor(high) - (1 if "maximum" not in schema and high == math.floor(high) else 0)
    if last < first or last - first >= SMALL_RANGE:
        return None
    return list(range(first, last + 1))


def _json_values(values: list[Any]) -> list[Any] | None:
    """``values`` as JSON values, or ``None`` when one of them has no JSON form."""
    try:
        converted = to_jsonable_python(values)
        json.dumps(converted)
    except (PydanticSerializationError, TypeError, ValueError):
        return None
    return converted  # type: ignore[no-any-return]
