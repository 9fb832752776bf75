"""The readable YAML form of a cassette: structured JSON, event streams, literal blocks.

A cassette file is YAML that a person can read and review in a diff:

* JSON bodies are stored as data under ``json:`` (compact again when replayed);
* server-sent event streams are stored event by event under ``events:`` (JSON data as data,
  anything else as the text the server sent), and replayed as the same bytes;
* text with line breaks (prompts) is written as literal blocks;
* headers with one value are written as ``name: value``.

The ``version`` key is written last and required when reading: a file cut short anywhere (a
truncated copy, a bad merge) lacks it and is refused rather than replayed with half of it.
Reading is the largest part of what replaying a cassette costs, so :func:`load_yaml` builds the
data straight from libyaml's events (see there).
"""

from __future__ import annotations

import copy
import gc
import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

__all__ = [
    "ReadableYaml",
    "body_text",
    "dump_yaml",
    "header",
    "load_yaml",
    "parse_events",
    "raw_body",
    "readable_body",
    "render_events",
]


class _Dumper(yaml.SafeDumper):
    pass


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (about ten times faster), else the Python one."""

_TAG = "tag:yaml.org,2002:"


class _Unusual(Exception):
    """YAML that the fast path leaves to PyYAML's own loader (tags on collections, merge keys,
    several documents, errors): rare in a cassette, and read the usual way."""


_RESOLVED_FIRST = frozenset(key for key in yaml.SafeLoader.yaml_implicit_resolvers if key)
"""First characters of plain scalars that may be something else than text (numbers, null,
booleans, ...): any other plain scalar is text, with no resolver to ask."""
_ANY_FIRST = None in yaml.SafeLoader.yaml_implicit_resolvers
_WORDS = frozenset(
    {
        *("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE"),
        *("false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"),
        *("null", "Null", "NULL", "~"),
    }
)
"""The plain scalars starting with a letter that YAML 1.1 reads as booleans or null."""
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_WORD_FIRST = (
    frozenset("yYnNtTfFoO")
    if all(
        {tag for tag, _ in yaml.SafeLoader.yaml_implicit_resolvers.get(first, [])}
        <= {_TAG + "bool", _TAG + "null"}
        for first in "yYnNtTfFoO"
    )
    else frozenset()
)
"""First letters whose only readings are the words above (unless a library added resolvers)."""


def _scalar(event: Any, loader: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        value = event.value
        if not event.implicit[0]:  # quoted or block text
            return value
        if value and value[0] not in _RESOLVED_FIRST and not _ANY_FIRST:
            return value
        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
    if tag == _TAG + "str":
        return event.value
    if tag == _TAG + "null":
        return None
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    if tag == _TAG + "int":
        return loader.construct_yaml_int(node)
    if tag == _TAG + "float":
        return loader.construct_yaml_float(node)
    if tag == _TAG + "bool":
        return loader.construct_yaml_bool(node)
    if tag == _TAG + "merge":
        raise _Unusual
    return loader.construct_object(node)  # !!binary, !!timestamp...; unknown tags raise


_COLLECTION_TAGS = (None, "!", _TAG + "seq", _TAG + "map")


def _fast_load(text: str) -> Any:
    """Build the data straight from libyaml's events, without composing nodes first."""
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    seq_start, map_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
    seq_end, map_end = yaml.SequenceEndEvent, yaml.MappingEndEvent
    stream_end, document_start = yaml.StreamEndEvent, yaml.DocumentStartEvent
    words_first, words, resolved_first, decimal = _WORD_FIRST, _WORDS, _RESOLVED_FIRST, _DECIMAL
    no_key = _NO_KEY
    loader = _SafeLoader(text)
    get_event = loader.get_event
    try:
        # The open container, whether it is a list, and the key waiting for its value; the
        # enclosing ones on the stack.
        container: Any = None
        is_list = False
        pending: Any = no_key
        stack: list[tuple[Any, bool, Any]] = []
        anchors: dict[str, Any] = {}
        result: Any = None
        documents = 0
        while True:
            event = get_event()
            kind = event.__class__
            if kind is scalar:
                value = event.value
                if event.tag is not None:
                    value = _scalar(event, loader)
                elif event.implicit[0]:  # a plain scalar: text, or a number, a bool, null...
                    if not value:
                        value = None
                    else:
                        first = value[0]
                        if first in words_first:
                            if value in words:
                                value = _scalar(event, loader)
                        elif first in resolved_first:
                            value = int(value) if decimal.match(value) else _scalar(event, loader)
                if event.anchor is not None:
                    anchors[event.anchor] = value
            elif kind is map_start or kind is seq_start:
                if event.tag not in _COLLECTION_TAGS:
                    raise _Unusual
                opened: Any = [] if kind is seq_start else {}
                if event.anchor is not None:
                    anchors[event.anchor] = opened
                stack.append((container, is_list, pending))
                container, is_list, pending = opened, kind is seq_start, no_key
                continue
            elif kind is map_end or kind is seq_end:
                value = container
                container, is_list, pending = stack.pop()
            elif kind is alias:
                if event.anchor not in anchors:
                    raise _Unusual
                value = anchors[event.anchor]
            elif kind is stream_end:
                return result
            elif kind is document_start:
                documents += 1
                if documents > 1:
                    raise _Unusual
                continue
            else:  # the stream's start, a document's end
                continue
            if container is None:
                result = value
            elif is_list:
                container.append(value)
            elif pending is no_key:
                pending = value
            else:
                container[pending] = value  # an unhashable key: TypeError, as in PyYAML
                pending = no_key
    finally:
        loader.dispose()


_NO_KEY = object()


def load_yaml(text: str) -> Any:
    """Parse YAML safely (as ``yaml.safe_load`` does), about twice as fast for plain data.

    A cassette's loading time is most of what replaying it costs: PyYAML composes a node for
    every value before building the data; this builds the data from libyaml's events directly.
    Anything unusual (and every error, for its message) goes through the safe loader itself.
    """
    if _SafeLoader is yaml.SafeLoader or _ANY_FIRST:  # no libyaml, or unusual resolvers
        return yaml.load(text, Loader=_SafeLoader)  # a safe loader
    # Parsing allocates thousands of objects and no cycle: the cycle collector would only run
    # over and over on the growing tree (a third of the parsing time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _fast_load(text)
    except (_Unusual, yaml.YAMLError, TypeError, ValueError):
        return yaml.load(text, Loader=_SafeLoader)  # a safe loader (C)
    finally:
        if collecting:
            gc.enable()


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any, *, sort_keys: bool = False) -> str:
    """``data`` as cassette YAML: text with line breaks as literal blocks, unicode as is."""
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=sort_keys, width=100)


def header(headers: Mapping[str, Any], name: str) -> str:
    """The first value of header ``name`` (lower case), whatever its case in ``headers``."""
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, list):
                return str(value[0]) if value else ""
            return str(value)
    return ""


def body_text(body: Any) -> str | None:
    """A body as text: ``None`` for no body and for bytes that are not UTF-8."""
    if body is None:
        return None
    if isinstance(body, bytes):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(body)


def parse_events(text: str) -> list[Any] | None:
    """A server-sent event stream's events: ``{"data": ...}`` for a one-line ``data:`` event
    (objects and arrays parsed), ``{"raw": text}`` for any other; ``None`` when the text is not
    an event stream."""
    events: list[Any] = []
    # Servers may end lines with CRLF (sse-starlette does): the same events to a client.
    text = text.replace("\r\n", "\n")
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        if not all(line.startswith(("data:", "event:", "id:", ":", "retry:")) for line in lines):
            return None
        if len(lines) == 1 and lines[0].startswith("data:"):
            data = lines[0][5:]
            data = data[1:] if data.startswith(" ") else data  # the one space SSE ignores
            try:
                parsed = json.loads(data)
            except ValueError:
                parsed = None
            # Only objects and arrays are stored structured: a string stays the text it was
            # ("[DONE]"), so that replay sends exactly what the server sent.
            events.append({"data": parsed if isinstance(parsed, dict | list) else data})
        else:
            events.append({"raw": block})
    return events


def render_events(events: list[Any]) -> str:
    """The text of the events :func:`parse_events` read (the same events to a client)."""
    out = []
    for event in events:
        if "raw" in event:
            out.append(f"{event['raw']}\n\n")
        else:
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            out.append(f"data: {text}\n\n")
    return "".join(out)


def readable_body(body: Any, headers: Mapping[str, Any]) -> Any:
    """A raw body as the cassette stores it: ``{"events": [...]}`` for an event stream,
    ``{"json": data}`` for JSON, else the text (or the bytes, when they are not text)."""
    text = body_text(body)
    if text is None:
        return body
    kind = header(headers, "content-type")
    if "event-stream" in kind:
        events = parse_events(text)
        if events is not None:
            return {"events": events}
    if text[:1] in "{[":
        try:
            return {"json": json.loads(text)}
        except ValueError:
            pass
    return text


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building an encoder
for every body (a cassette's loading turns each JSON body back into text)."""


def raw_body(body: Any) -> Any:
    """The inverse of :func:`readable_body`: the text to send or replay."""
    if isinstance(body, dict):
        if "json" in body:  # compact, as servers send it
            return _compact_json(body["json"])
        if "events" in body:
            return render_events(body["events"])
    return body


def _folded(headers: dict[str, Any]) -> dict[str, Any]:
    """Headers with one value as ``name: value`` (vcrpy keeps a list for every header)."""
    return {
        name: value[0] if isinstance(value, list) and len(value) == 1 else value
        for name, value in headers.items()
    }


def _unfolded(headers: dict[str, Any]) -> dict[str, Any]:
    return {name: value if isinstance(value, list) else [value] for name, value in headers.items()}


def _fix_content_length(headers: Any, body: Any) -> None:
    """Make a stored ``Content-Length`` agree with the body as replayed (bodies are re-encoded
    from their readable form, and scrubbing changes their length)."""
    if not isinstance(headers, dict):
        return
    for name in list(headers):
        if name.lower() == "content-length":
            size = len(body) if isinstance(body, bytes) else len(str(body or "").encode())
            headers[name] = [str(size)] if isinstance(headers[name], list) else str(size)


def _share_repeats(interactions: list[Any]) -> None:
    """Make the parts that requests repeat one object, which YAML writes once.

    Requests of one test often repeat whole parts of their JSON body: the menu's JSON schema
    under ``response_format``, the ``tools`` of an agent's turn. Each part that equals one
    written before (in the same key order, so that it is sent as the same bytes) becomes that
    same object: the file holds it once, under an anchor (``&id001``), and an alias
    (``*id001``) wherever it comes again. Reading it back gives equal values, and the file is
    shorter to read and faster to load.
    """
    seen: dict[tuple[str, str], Any] = {}
    for interaction in interactions:
        body = interaction.get("request", {}).get("body")
        if not (isinstance(body, dict) and isinstance(body.get("json"), dict)):
            continue
        data = body["json"]
        for key, value in data.items():
            if not (isinstance(value, dict | list) and value):
                continue
            try:
                shape = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            except (TypeError, ValueError):
                continue
            data[key] = seen.setdefault((key, shape), value)


class ReadableYaml:
    """vcrpy serializer: structured JSON, SSE events and literal blocks, read back losslessly.

    The ``version`` key is written last and required when reading: a file cut short anywhere
    (a truncated copy, a bad merge) lacks it and is reported as truncated rather than replayed
    with half its interactions.
    """

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        out = {key: copy.deepcopy(value) for key, value in data.items() if key != "version"}
        out["version"] = data.get("version", 1)
        for interaction in out.get("interactions", []):
            req, resp = interaction["request"], interaction["response"]
            for part in (req, resp):
                if isinstance(part.get("headers"), dict):
                    part["headers"] = _folded(part["headers"])
            req["body"] = readable_body(req.get("body"), req.get("headers", {}))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = readable_body(body["string"], resp.get("headers", {}))
        _share_repeats(out.get("interactions", []))
        return dump_yaml(out)

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data = load_yaml(text)
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ValueError("not a cassette: expected a mapping with an 'interactions' list")
        if "version" not in data:
            raise ValueError("truncated: the final 'version' line is missing")
        for interaction in data["interactions"]:
            req, resp = interaction["request"], interaction["response"]
            for part in (req, resp):
                if isinstance(part.get("headers"), dict):
                    part["headers"] = _unfolded(part["headers"])
            req["body"] = raw_body(req.get("body"))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = raw_body(body["string"])
                _fix_content_length(resp.get("headers"), body["string"])
        return data
