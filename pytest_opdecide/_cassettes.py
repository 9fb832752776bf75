"""Cassettes: real model replies recorded once (vcrpy underneath) and replayed offline.

What this layer adds to vcrpy, each answering a complaint of its users:

* **Safe by default.** Credentials in headers, key-like query parameters and configured JSON
  body fields are replaced by a placeholder before anything is written, and the serialised
  text is searched once more for every secret value seen, so an echoed key cannot land either.
* **Readable.** JSON bodies are stored as structured YAML, compressed bodies decoded, long
  prompts as literal blocks, server-sent event streams event by event (and replayed as a stream).
* **Matching that explains itself.** JSON request bodies match by content (key order ignored,
  volatile paths ignored); a request that matches nothing fails with a diff against the nearest
  recorded request; interactions never replayed fail the test at teardown.
* **Atomic.** A cassette is written whole (temporary file, then rename) or not at all: a test
  that fails while recording writes nothing, and a corrupt file is reported with how to fix it.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import functools
import gc
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest
import yaml
from vcr.errors import CannotOverwriteExistingCassetteException

from pytest_opdecide._files import write_atomic
from pytest_opdecide._settings import Settings

__all__ = [
    "PLACEHOLDER",
    "CassetteCorrupt",
    "CassetteMismatch",
    "ReadableYaml",
    "UnplayedInteractions",
    "cassette_for",
    "cassette_path",
    "use_cassette",
]

PLACEHOLDER = "<REDACTED>"
SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
_SECRET_NAME = re.compile(
    r"(api[-_]?key|token|secret|password|passwd|auth|signature|session)", re.I
)
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,})")
DEFAULT_BODY_FIELDS = ("api_key", "apiKey", "access_token", "password", "secret")
_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
NOISE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "date",
        "host",
        "keep-alive",
        "server",
        "transfer-encoding",
        "user-agent",
    }
)
"""Transport details left out of cassettes: they change with the client's version or the clock,
make every re-recording a noisy diff, and replay needs none of them."""


class CassetteCorrupt(ValueError):
    """A cassette file cannot be read; the message names it and how to re-record it."""


class UnplayedInteractions(AssertionError):
    """Recorded interactions were never replayed by the test."""


# --- paths -------------------------------------------------------------------------------------


def _short(name: str, limit: int = 80) -> str:
    """A file-name-safe, stable form of a test name; long parametrised ids get a hash."""
    cleaned = _ID_SAFE.sub("_", name).strip("_") or "test"
    if len(cleaned) <= limit and cleaned == name:
        return cleaned
    import hashlib

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    base, _, _ = name.partition("[")
    base = _ID_SAFE.sub("_", base).strip("_") or "test"
    room = max(8, limit - len(base) - 10)
    param = _ID_SAFE.sub("_", name[len(base) :]).strip("_")[:room]
    return f"{base}-{param}-{digest}" if param else f"{base}-{digest}"


def cassette_path(rootdir: Path, node: Any, settings: Settings) -> Path:
    """``<rootdir>/<cassette_dir>/<test module>/<[Class.]test name>.yaml``."""
    module = Path(str(node.path)).stem
    name = node.name
    cls = getattr(node, "cls", None)
    if cls is not None:
        name = f"{cls.__name__}.{name}"
    base = Path(settings.cassette_dir)
    if not base.is_absolute():
        base = rootdir / base
    return base / module / f"{_short(name)}.yaml"


# --- readable serialisation --------------------------------------------------------------------


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


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, list):
                return str(value[0]) if value else ""
            return str(value)
    return ""


def _text(body: Any) -> str | None:
    if body is None:
        return None
    if isinstance(body, bytes):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(body)


def _parse_events(text: str) -> list[Any] | None:
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


def _render_events(events: list[Any]) -> str:
    out = []
    for event in events:
        if "raw" in event:
            out.append(f"{event['raw']}\n\n")
        else:
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            out.append(f"data: {text}\n\n")
    return "".join(out)


def _readable_body(body: Any, headers: Mapping[str, Any]) -> Any:
    text = _text(body)
    if text is None:
        return body
    kind = _header(headers, "content-type")
    if "event-stream" in kind:
        events = _parse_events(text)
        if events is not None:
            return {"events": events}
    if text[:1] in "{[":
        try:
            return {"json": json.loads(text)}
        except ValueError:
            pass
    return text


def _raw_body(body: Any) -> Any:
    if isinstance(body, dict):
        if "json" in body:  # compact, as servers send it
            return json.dumps(body["json"], ensure_ascii=False, separators=(",", ":"))
        if "events" in body:
            return _render_events(body["events"])
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
            req["body"] = _readable_body(req.get("body"), req.get("headers", {}))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = _readable_body(body["string"], resp.get("headers", {}))
        return yaml.dump(out, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)

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
            req["body"] = _raw_body(req.get("body"))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = _raw_body(body["string"])
                _fix_content_length(resp.get("headers"), body["string"])
        return data


# --- scrubbing ---------------------------------------------------------------------------------


def _secret_param(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) or name.lower() in {"key", "sig", "code"}


class Scrubber:
    """Replaces secrets with :data:`PLACEHOLDER` and remembers every value it replaced."""

    def __init__(self, body_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS) -> None:
        self.body_fields = frozenset(body_fields)
        self.seen: set[str] = set()

    def _keep(self, value: Any) -> None:
        text = str(value)
        if len(text) >= 6 and text != PLACEHOLDER:
            self.seen.add(text)
            if text.lower().startswith("bearer "):
                self.seen.add(text[7:].strip())

    def headers(self, headers: Any) -> None:
        for name in list(headers.keys()):
            if name.lower() in SECRET_HEADERS or _SECRET_NAME.search(name):
                value = headers[name]
                for v in value if isinstance(value, list) else [value]:
                    self._keep(v)
                headers[name] = [PLACEHOLDER] if isinstance(value, list) else PLACEHOLDER

    @staticmethod
    def drop_noise(headers: Any) -> None:
        """Remove the transport headers of :data:`NOISE_HEADERS`."""
        for name in list(headers.keys()):
            if name.lower() in NOISE_HEADERS:
                del headers[name]

    def query_pairs(self, query: str) -> list[tuple[str, str]]:
        """The query's parameters with key-like values replaced by the placeholder."""
        pairs = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            if _secret_param(key):
                self._keep(value)
                value = PLACEHOLDER
            pairs.append((key, value))
        return pairs

    def uri(self, uri: str) -> str:
        parts = urlsplit(uri)
        if not parts.query:
            return uri
        query = urlencode(self.query_pairs(parts.query), safe="<>")  # a readable placeholder
        return urlunsplit(parts._replace(query=query))

    def json_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key in self.body_fields and item not in (None, ""):
                    self._keep(item)
                    out[key] = PLACEHOLDER
                else:
                    out[key] = self.json_value(item)
            return out
        if isinstance(value, list):
            return [self.json_value(v) for v in value]
        return value

    def body(self, body: Any) -> Any:
        text = _text(body)
        if text is None or text[:1] not in "{[":
            return body
        try:
            parsed = json.loads(text)
        except ValueError:
            return body
        scrubbed = self.json_value(parsed)
        if scrubbed == parsed:
            return body
        out = json.dumps(scrubbed, ensure_ascii=False)
        return out.encode() if isinstance(body, bytes) else out

    def text(self, text: str) -> str:
        """The safety net over the serialised cassette."""
        for secret in sorted(self.seen, key=len, reverse=True):
            text = text.replace(secret, PLACEHOLDER)
        return _KEYLIKE.sub(PLACEHOLDER, text)


# --- persistence -------------------------------------------------------------------------------


def _rerecord_hint(path: Path, nodeid: str) -> str:
    return (
        "re-record it with the model server running at base_url (--opdecide-base-url=URL, or "
        "opdecide_base_url in the ini file):\n"
        f"    pytest '{nodeid}' --opdecide-record=rewrite\n"
        f"(or delete {path} and run with --opdecide-record=once)"
    )


class AtomicPersister:
    """vcrpy persister: atomic writes, scrubbing safety net, clear errors for bad files."""

    def __init__(self, scrubber: Scrubber, nodeid: str, ignore_existing: bool) -> None:
        self.scrubber = scrubber
        self.nodeid = nodeid
        self.ignore_existing = ignore_existing

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.request import Request
        from vcr.serializers import compat

        path = Path(cassette_path)
        if self.ignore_existing or not path.is_file():
            raise CassetteNotFoundError()
        try:
            text = path.read_text(encoding="utf-8")
            data = serializer.deserialize(text)
            requests = [Request._from_dict(i["request"]) for i in data["interactions"]]
            responses = [compat.convert_to_bytes(i["response"]) for i in data["interactions"]]
        except Exception as exc:
            raise CassetteCorrupt(
                f"cassette {path} is corrupt or truncated ({type(exc).__name__}: {exc}).\n"
                + _rerecord_hint(path, self.nodeid)
            ) from None
        return requests, responses

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        path = Path(cassette_path)
        text = self.scrubber.text(serialize(cassette_dict, serializer))
        write_atomic(path, text)


# --- matching ----------------------------------------------------------------------------------


def _drop_path(value: Any, path: list[str]) -> Any:
    """``value`` without what ``path`` names; ``*`` stands for every key or list item, and a
    number for a list index (``messages.*.id``, ``messages.0.name``)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        if head == "*":
            indexes = range(len(value))
        elif head.isdigit() and int(head) < len(value):
            indexes = range(int(head), int(head) + 1)
        else:
            return value
        if not rest:
            return [item for i, item in enumerate(value) if i not in indexes]
        return [_drop_path(item, rest) if i in indexes else item for i, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    keys = list(value) if head == "*" else [head] if head in value else []
    if not keys:
        return value
    out = dict(value)
    for key in keys:
        if rest:
            out[key] = _drop_path(out[key], rest)
        else:
            del out[key]
    return out


def _as_stored(value: Any, fields: frozenset[str]) -> Any:
    """A JSON value as a cassette stores it: scrubbed fields and key-like text as the
    placeholder. Copy on write: a value with nothing to scrub comes back as it is."""
    if isinstance(value, str):
        if "sk-" in value or "Bearer" in value:  # cheap test before the expression
            return _KEYLIKE.sub(PLACEHOLDER, value)
        return value
    if isinstance(value, dict):
        out = None
        for key, item in value.items():
            if key in fields and item not in (None, ""):
                new = PLACEHOLDER
            else:
                new = _as_stored(item, fields)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items = [_as_stored(item, fields) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value


def comparable_body(
    body: Any, volatile: tuple[str, ...], scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS
) -> Any:
    """A request body as compared: parsed JSON without the volatile paths, else the text.

    Both sides are compared as they are stored: the scrubbed body fields and key-like text
    stand as the placeholder, so a recorded request still matches the request that carries
    the real secret. The result is shared (cached): never change it.
    """
    if isinstance(body, bytes | str):
        return _comparable(body, volatile, scrub_fields)
    text = _text(body)
    return body if text is None else _comparable(text, volatile, scrub_fields)


@functools.lru_cache(maxsize=1024)
def _comparable(body: bytes | str, volatile: tuple[str, ...], scrub_fields: tuple[str, ...]) -> Any:
    # Cached: vcrpy matches each request against every recorded one, so the same bodies are
    # compared over and over (quadratic in the cassette's length without the cache).
    text = _text(body)
    if text is None:
        return body
    if text[:1] in "{[":
        try:
            value = json.loads(text)
        except ValueError:
            return _KEYLIKE.sub(PLACEHOLDER, text)
        value = _as_stored(value, frozenset(scrub_fields))
        for dotted in volatile:
            value = _drop_path(value, dotted.split("."))
        return value
    return _KEYLIKE.sub(PLACEHOLDER, text)


def json_body_matcher(
    volatile: tuple[str, ...], scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS
) -> Any:
    """A vcrpy matcher comparing bodies by JSON content (key order and volatile paths ignored)."""

    def json_body(r1: Any, r2: Any) -> None:
        a = comparable_body(r1.body, volatile, scrub_fields)
        b = comparable_body(r2.body, volatile, scrub_fields)
        if a != b:
            raise AssertionError("the request bodies differ")

    return json_body


def scrubbed_query_matcher(r1: Any, r2: Any) -> None:
    """A vcrpy matcher comparing query strings with key-like values as the placeholder."""
    a = sorted(Scrubber().query_pairs(urlsplit(r1.uri).query))
    b = sorted(Scrubber().query_pairs(urlsplit(r2.uri).query))
    if a != b:
        raise AssertionError(f"the query strings differ: {a} != {b}")


def _shown_uri(uri: str) -> str:
    """A URI as error messages show it: key-like query values redacted."""
    return Scrubber().uri(uri)


def _pretty(body: Any) -> list[str]:
    """A body as the diff shows it: YAML as in the cassette (keys sorted, prompts as blocks)."""
    if isinstance(body, dict | list):
        return yaml.dump(
            body, Dumper=_Dumper, allow_unicode=True, sort_keys=True, width=100
        ).splitlines()
    if isinstance(body, bytes):
        return [repr(body[:2000])]
    return str(body if body is not None else "").splitlines()


def _differing(a: Any, b: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """The values that differ between two JSON values, by dotted path (``messages.0.id``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[tuple[str, Any, Any]] = []
        for key in sorted(set(a) | set(b), key=str):
            where = f"{prefix}{key}"
            if key not in a or key not in b:
                found.append((where, a.get(key), b.get(key)))
            else:
                found.extend(_differing(a[key], b[key], f"{where}."))
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            entry
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for entry in _differing(x, y, f"{prefix}{i}.")
        ]
    return [] if a == b else [(prefix.rstrip("."), a, b)]


def _looks_volatile(value: Any) -> bool:
    """An id or a timestamp: a number or a short one-line string (a prompt is neither)."""
    if isinstance(value, str):
        return len(value) <= 64 and "\n" not in value
    return value is None or isinstance(value, int | float)


def _volatile_hint(recorded: Any, sent: Any, volatile: tuple[str, ...]) -> str:
    ignored = f"Volatile body paths ignored: {list(volatile)}\n" if volatile else ""
    found = _differing(recorded, sent) if isinstance(recorded, dict) else []
    if (
        found
        and len(found) <= 5
        and all(_looks_volatile(a) and _looks_volatile(b) for _, a, b in found)
    ):
        paths = [path for path, _, _ in found]
        suggested = sorted({*volatile, *paths})
        return (
            ignored + f"Fields that differ: {', '.join(paths)}. If they change on every run (an "
            f"id, a timestamp), ignore them with @pytest.mark.opdecide(volatile={suggested!r}) "
            "(a * matches every list item or key).\n"
        )
    return ignored or (
        "If a field changes on every run (an id, a timestamp), ignore it with "
        "@pytest.mark.opdecide(volatile=['path.to.field']).\n"
    )


def _route(request: Any) -> str:
    """Method, path and (scrubbed) query: what matching compares besides the body."""
    parts = urlsplit(request.uri)
    query = urlencode(sorted(Scrubber().query_pairs(parts.query)), safe="<>")
    return f"{request.method} {parts.path}" + (f"?{query}" if query else "")


def mismatch_message(
    cassette: Any,
    request: Any,
    volatile: tuple[str, ...],
    nodeid: str,
    mode: str,
    scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS,
) -> str:
    """Why ``request`` matched nothing, with a diff against the nearest recorded request."""
    path = Path(cassette._path)
    head = (
        f"the test sent a request that is not in cassette {path} (record mode {mode}):\n"
        f"    {request.method} {_shown_uri(request.uri)}\n"
    )
    recorded = [r for r, _ in cassette.data]
    if not recorded:
        return head + "The cassette holds no interactions.\n" + _rerecord_hint(path, nodeid)
    wanted = comparable_body(request.body, volatile, scrub_fields)
    bodies = [comparable_body(other.body, volatile, scrub_fields) for other in recorded]

    def distance(index: int) -> tuple[int, float, int]:
        other = recorded[index]
        same_route = int(other.method == request.method) + int(other.path == request.path)
        ratio = difflib.SequenceMatcher(
            None, "\n".join(_pretty(bodies[index])), "\n".join(_pretty(wanted))
        ).ratio()
        # Among equally near requests, one not replayed yet is the likelier counterpart.
        return (-same_route, -round(ratio, 3), int(cassette.play_counts[index] > 0))

    nearest = min(range(len(recorded)), key=distance)
    other = recorded[nearest]
    played = cassette.play_counts[nearest] > 0
    lines: list[str] = []
    if _route(other) != _route(request):
        lines.append(f"-   {_route(other)}")
        lines.append(f"+   {_route(request)}")
    diff = list(
        difflib.unified_diff(
            _pretty(bodies[nearest]),
            _pretty(wanted),
            fromfile=f"recorded #{nearest}",
            tofile="sent now",
            lineterm="",
            n=2,
        )
    )
    if diff:
        body = "\n".join(diff)
    elif lines:
        body = "(the bodies are the same)"
    else:
        body = "(the same request: the code sent it more often than when it was recorded)"
    return (
        head
        + f"Nearest recorded request: #{nearest} of {len(recorded)}"
        + (" (already replayed)" if played else "")
        + ":\n"
        + ("\n".join(lines) + "\n" if lines else "")
        + body
        + "\n"
        + _volatile_hint(bodies[nearest], wanted, volatile)
        + "If the code changed on purpose, "
        + _rerecord_hint(path, nodeid)
    )


class CassetteMismatch(CannotOverwriteExistingCassetteException):  # type: ignore[misc]
    """A request matched nothing in the cassette; the message diffs it against the nearest."""

    def __init__(self, cassette: Any, failed_request: Any, message: str) -> None:
        self.cassette = cassette
        self.failed_request = failed_request
        self.similar_requests: list[Any] = []
        self.reason = "no_match"
        Exception.__init__(self, message)


def _same(request: Any) -> Any:
    return request


def _cassette_class(
    volatile: tuple[str, ...], nodeid: str, scrub_fields: tuple[str, ...], mode: str
) -> type[Any]:
    from vcr.cassette import Cassette
    from vcr.record_mode import RecordMode

    def route_key(
        method: str, uri: str, body: Any
    ) -> tuple[str, str, tuple[tuple[str, str], ...], Any]:
        # Everything the matchers compare (method, path, scrubbed query, body by content),
        # as one value: a request is compared with each recorded one by a tuple comparison.
        parts = urlsplit(uri)
        query = tuple(sorted(Scrubber().query_pairs(parts.query))) if parts.query else ()
        # Parsed JSON compares by content: key order does not matter.
        return (method, parts.path, query, comparable_body(body, volatile, scrub_fields))

    def key(request: Any) -> tuple[str, str, tuple[tuple[str, str], ...], Any]:
        known = request.__dict__.get("_opdecide_key")
        if known is not None and known[0] == (request.uri, request.body):
            return known[1]  # type: ignore[no-any-return]
        found = route_key(request.method, request.uri, request.body)
        request.__dict__["_opdecide_key"] = ((request.uri, request.body), found)
        return found

    class OpdecideCassette(Cassette):  # type: ignore[misc]
        _keys: dict[int, tuple[Any, Any]]

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # vcrpy deep-copies every request before its request filters, on every lookup;
            # this cassette configures none (scrubbing happens when saving), so skip the copy.
            self._before_record_request = _same
            self._loading = False
            self._keys = {}

        def _load(self) -> None:
            self._loading = True
            try:
                super()._load()
            finally:
                self._loading = False

        def append(self, request: Any, response: Any) -> None:
            if not self._loading:
                super().append(request, response)
                return
            # Loaded interactions were decoded when recorded and are read fresh from the file:
            # no copy and no response filter needed (vcrpy does both for each).
            self.data.append((request, response))

        def _stored_key(self, index: int, stored: Any) -> Any:
            known = self._keys.get(index)
            if known is None or known[0] is not stored:
                known = self._keys[index] = (stored, key(stored))
            return known[1]

        def _playable(self, method: str, uri: str, body: Any, request: Any = None) -> int | None:
            """The first recorded interaction that matches and may still be played.

            vcrpy runs every matcher against every recorded request, for each request and
            several times over: the same outcome as comparing the keys, at many times the cost.
            A recorded request with the very same method, URL and body bytes matches without
            parsing either body (its key is made of those): the usual case when a test sends
            what it sent while recording.
            """
            counts, repeats = self.play_counts, self.allow_playback_repeats
            wanted: Any = None
            for index, (stored, _) in enumerate(self.data):
                if not (repeats or counts[index] == 0):
                    continue
                if stored.body == body and stored.uri == uri and stored.method == method:
                    return index
                if wanted is None:
                    wanted = key(request) if request is not None else route_key(method, uri, body)
                if self._stored_key(index, stored) == wanted:
                    return index
            return None

        def _play(self, index: int) -> Any:
            stored, response = self.data[index]
            if self.play_counts[index] == 0 and index < self._loaded_count:
                self._played_interactions.append((stored, response))
            self.play_counts[index] += 1
            return response

        def replay(self, method: str, uri: str, body: Any) -> Any:
            """The recorded response for a request, marked as played; ``None`` when no
            recorded interaction can answer it (vcrpy's own path then decides: record it,
            or fail with a diff).

            What vcrpy's ``can_play_response_for`` and ``play_response`` do together, straight
            from the request's method, URL and body: without building vcrpy's request object
            (two header copies per request) and without looking the request up twice.
            """
            if self.record_mode == RecordMode.ALL or not (
                self.rewound or self.allow_playback_repeats
            ):
                return None
            index = self._playable(method, uri, body)
            return None if index is None else self._play(index)

        def _responses(self, request: Any) -> Iterator[tuple[int, Any]]:
            request = self._before_record_request(request)
            if not request:
                return
            wanted = key(request)
            for index, (stored, response) in enumerate(self.data):
                if self._stored_key(index, stored) == wanted:
                    yield index, response

        def __contains__(self, request: Any) -> bool:
            index = self._playable(request.method, request.uri, request.body, request)
            if index is None:
                return False
            request.__dict__["_opdecide_next"] = index  # for play_response, next
            return True

        def play_response(self, request: Any) -> Any:
            # vcrpy looks the request up twice (can it play? then play): use the first answer.
            index = request.__dict__.pop("_opdecide_next", None)
            if index is None or not (self.play_counts[index] == 0 or self.allow_playback_repeats):
                return super().play_response(request)
            return self._play(index)

        def can_play_response_for(self, request: Any) -> bool:
            playable = bool(super().can_play_response_for(request))
            if not playable and self.write_protected and self.filter_request(request):
                message = mismatch_message(self, request, volatile, nodeid, mode, scrub_fields)
                # pytest shows this frame's arguments: never with a key in the query string.
                request.uri = _shown_uri(request.uri)
                raise CassetteMismatch(self, request, message)
            return playable

    return OpdecideCassette


# --- streamed replay ---------------------------------------------------------------------------


class _EventStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An httpx byte stream that yields a recorded event stream one event at a time.

    A subclass of both httpx stream types: httpx checks the type before it reads a response
    (``iter_raw`` refuses anything that is not a ``SyncByteStream``).
    """

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def event_chunks(body: bytes) -> list[bytes]:
    """A recorded event-stream body cut into its events, each with its blank line."""
    return [part + b"\n\n" for part in body.split(b"\n\n") if part.strip()]


@contextlib.contextmanager
def _httpx_replay() -> Iterator[None]:
    """Two seams in vcrpy's httpx stub, for the time a cassette is in use.

    * Replay ``text/event-stream`` bodies chunk by chunk (one chunk per event), as the server
      streamed them.
    * Answer a request the cassette can play straight from the httpx request (see
      ``OpdecideCassette.replay``); anything else (recording, a mismatch) takes vcrpy's path.
    """
    try:
        from vcr.stubs import httpx_stubs
    except ImportError:  # pragma: no cover
        yield
        return
    deserialize_original = getattr(httpx_stubs, "_deserialize_response", None)
    request_original = getattr(httpx_stubs, "_vcr_request", None)
    if deserialize_original is None or request_original is None:  # pragma: no cover
        yield  # a vcrpy without these seams replays the slower way, in one chunk
        return

    def deserialize(vcr_response: Any, httpx_module: Any) -> Any:
        response = deserialize_original(vcr_response, httpx_module)
        headers = vcr_response.get("headers", {})
        if "event-stream" in _header(headers, "content-type"):
            body = vcr_response["body"]["string"]
            raw = body if isinstance(body, bytes) else str(body).encode()
            response.stream = _EventStream(event_chunks(raw))
        return response

    def vcr_request(cassette: Any, real_request: Any, body: bytes, httpx_module: Any) -> Any:
        replay = getattr(cassette, "replay", None)
        if replay is not None:
            recorded = replay(real_request.method, str(real_request.url), body)
            if recorded is not None:
                return None, deserialize(recorded, httpx_module)
        return request_original(cassette, real_request, body, httpx_module)

    httpx_stubs._deserialize_response = deserialize
    httpx_stubs._vcr_request = vcr_request
    try:
        yield
    finally:
        httpx_stubs._deserialize_response = deserialize_original
        httpx_stubs._vcr_request = request_original


# --- the cassette of one test ------------------------------------------------------------------


def _run_user_scrub(
    request: Any, response: Any, hook: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> Any:
    """Run a scrub hook on the interaction as the cassette stores it: text, JSON bodies as
    data (``body["json"]``), event streams as ``body["events"]``."""
    from vcr.request import Request
    from vcr.serializers import compat

    stored = request._to_dict()
    stored["body"] = _readable_body(stored.get("body"), stored.get("headers", {}))
    response = compat.convert_to_unicode(response)
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = _readable_body(body["string"], response.get("headers", {}))
    interaction = {"request": stored, "response": response}
    interaction = hook(interaction) or interaction
    stored, response = interaction["request"], interaction["response"]
    stored["body"] = _raw_body(stored.get("body"))
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = _raw_body(body["string"])
    return Request._from_dict(stored), response


_PATCHER_MODULES = {
    "requests": "requests",
    "urllib3": "urllib3",
    "boto3": "botocore",
    "tornado": "tornado",
    "aiohttp": "aiohttp",
    "httplib2": "httplib2",
    "httpx2": "httpx2",
}


@functools.cache
def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (asked once: libraries are not installed mid-run)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _absent_patchers() -> tuple[str, ...]:
    """vcrpy's patcher groups for libraries that are not installed.

    vcrpy tries to import each of them whenever a cassette opens; a failed import searches the
    whole path again every time. Absent libraries cannot send requests, so skipping their
    patchers changes nothing but the cost.
    """
    return tuple(
        sorted(group for group, module in _PATCHER_MODULES.items() if not _installed(module))
    )


_OPTIONAL_TRANSPORTS = ("httpx_curl_cffi", "pyreqwest")
"""Transports for httpx that vcrpy's httpx patcher tries to import whenever a cassette opens."""


def _absent_transports() -> tuple[str, ...]:
    return tuple(name for name in _OPTIONAL_TRANSPORTS if not _installed(name))


@contextlib.contextmanager
def _imports_known_absent() -> Iterator[None]:
    """While vcrpy builds its patches, let imports of the absent optional transports fail
    at once (a ``None`` in ``sys.modules``): the same ImportError, without searching every
    folder of the import path for both of them each time a cassette opens."""
    import sys

    marked = [name for name in _absent_transports() if name not in sys.modules]
    for name in marked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in marked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


class _NotSaved(Exception):
    """Passed to vcrpy's exit so that it removes its patches without saving: the cassette is
    saved afterwards, by :func:`cassette_for`, once no request can reach it any more."""


def _unplayed_message(cassette: Any, path: Path, nodeid: str) -> str:
    unplayed = [i for i in range(cassette._loaded_count) if cassette.play_counts[i] == 0]
    if not unplayed:
        return ""
    shown = "\n".join(
        f"    #{i}: {cassette.data[i][0].method} {_shown_uri(cassette.data[i][0].uri)}"
        for i in unplayed[:10]
    )
    more = f"\n    ... and {len(unplayed) - 10} more" if len(unplayed) > 10 else ""
    return (
        f"{len(unplayed)} of {cassette._loaded_count} recorded interaction(s) in {path} "
        f"were never replayed:\n{shown}{more}\n"
        "The code made fewer requests than when the cassette was recorded. If that is "
        "intended, " + _rerecord_hint(path, nodeid) + "\nor allow it with "
        "@pytest.mark.opdecide(allow_unused=True)."
    )


@contextlib.contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record: str = "none",
    volatile: tuple[str, ...] = (),
    scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS,
    allow_unused: bool = False,
    nodeid: str = "",
    scrub_hook: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
    passed: Callable[[], bool] | None = None,
) -> Iterator[Any]:
    """Wire every httpx request made inside the ``with`` block to the cassette at ``path``.

    The plain-Python core of the plugin's cassettes (the ``runtime`` fixture of a
    ``cassette=True`` test uses it), usable from any test runner.

    Args:
        path: The cassette file.
        record: ``none`` (replay only: a request not in the cassette raises
            :class:`CassetteMismatch`), ``once``, ``new_episodes``, ``all`` or ``rewrite``.
        volatile: Dotted JSON body paths ignored when matching (``*`` matches every key or
            list item).
        scrub_fields: JSON body fields replaced by the placeholder before writing.
        allow_unused: Do not raise :class:`UnplayedInteractions` for interactions never replayed.
        nodeid: The test's id, for the "re-record it" hints of messages.
        scrub_hook: Called with each interaction before it is written (as the cassette stores
            it); may change it in place or return a replacement.
        passed: Whether the block's work succeeded, asked at its end (pytest fixtures cannot see
            the test's exception); by default, whether the block raised. Nothing is written, and
            unplayed interactions are not reported, when it did not.

    Yields:
        The vcrpy cassette.

    Raises:
        CassetteCorrupt: The file cannot be read (at the start).
        UnplayedInteractions: At the end, when recorded interactions were never replayed.
    """
    import vcr
    from vcr.record_mode import RecordMode

    if record not in ("none", "once", "new_episodes", "all", "rewrite"):
        raise ValueError(f"record must be none, once, new_episodes, all or rewrite, got {record!r}")
    where = Path(path)
    scrubber = Scrubber(scrub_fields)

    def before_save(req: Any, resp: Any) -> Any:
        scrubber.headers(req.headers)
        scrubber.drop_noise(req.headers)
        req.uri = scrubber.uri(req.uri)
        req.body = scrubber.body(req.body)
        headers = resp.get("headers", {})
        scrubber.headers(headers)
        scrubber.drop_noise(headers)
        body = resp.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = scrubber.body(body["string"])
        if scrub_hook is None:
            return req, resp
        return _run_user_scrub(req, resp, scrub_hook)

    machine = vcr.VCR(
        skip_patchers=_absent_patchers(),
        serializer="opdecide",
        record_mode=RecordMode.ALL if record == "rewrite" else RecordMode(record),
        # Not scheme, host and port: the server's address is the recording machine's (a
        # local model on another port, a proxy), and one test's cassette holds one server.
        match_on=["method", "path", "opdecide_query", "opdecide_body"],
        decode_compressed_response=True,
        record_on_exception=False,
        before_save_interaction=before_save,
    )
    machine.register_serializer("opdecide", ReadableYaml)
    machine.register_matcher("opdecide_query", scrubbed_query_matcher)
    machine.register_matcher("opdecide_body", json_body_matcher(volatile, scrub_fields))
    persister = AtomicPersister(scrubber, nodeid, ignore_existing=record == "rewrite")
    config = machine.get_merged_config(path=str(where), persister=persister)
    context = _cassette_class(volatile, nodeid, scrub_fields, record).use(**config)
    with _httpx_replay():
        with _imports_known_absent():
            cassette = context.__enter__()
        try:
            yield cassette  # an exception here leaves without saving anything
        finally:
            # Always unpatch first: vcrpy leaves its patches in place when saving raises.
            context.__exit__(_NotSaved, _NotSaved(), None)
    if passed is not None and not passed():
        return  # a failure records nothing, and its unplayed interactions prove nothing
    if record != "none":
        cassette._save(force=record == "rewrite" or not where.is_file())
    if record in ("none", "once") and cassette._loaded_count and not allow_unused:
        message = _unplayed_message(cassette, where, nodeid)
        if message:
            raise UnplayedInteractions(message)


_folder_owners = pytest.StashKey[dict[Path, Path]]()


def _claim_folder(config: pytest.Config, folder: Path, module: Path) -> None:
    """Fail the test when another test module of this run already uses its cassette folder.

    The folder is named after the module's file name alone, so ``tests/a/test_x.py`` and
    ``tests/b/test_x.py`` would read and write each other's cassettes.
    """
    owners = config.stash.setdefault(_folder_owners, {})
    owner = owners.setdefault(folder, module)
    if owner != module:
        pytest.fail(
            f"two test modules share the cassette folder {folder}:\n"
            f"    {owner}\n    {module}\n"
            "Cassettes are named after the module's file name and the test's name, so tests "
            "of the same name would replay and overwrite each other's cassettes. Rename one "
            "module, or give one module a folder of its own:\n"
            f'    pytestmark = pytest.mark.opdecide(cassette_dir="cassettes/{module.parent.name}")',
            pytrace=False,
        )


@contextlib.contextmanager
def cassette_for(request: pytest.FixtureRequest, settings: Settings, mode: str) -> Iterator[Any]:
    """Wire every HTTP request of the test to its cassette (replay or record).

    Replay (``record=none``): requests not in the cassette fail with a diff; interactions
    never replayed fail the test at teardown unless ``allow_unused``. Record: new interactions
    are scrubbed and written atomically at teardown, only when the test passed (a test that
    passed without any request gets an empty cassette, so that its replay finds one).
    """
    from pytest_opdecide.plugin import call_passed

    node = request.node
    path = cassette_path(request.config.rootpath, node, settings)
    _claim_folder(request.config, path.parent, Path(str(node.path)))
    record = "none" if mode == "replay" else settings.record
    hook = request.config.hook
    if mode == "replay" and not path.is_file():
        pytest.fail(
            f"no cassette at {path} for {node.nodeid}.\n"
            "Record it once with the model server running at base_url (--opdecide-base-url=URL, "
            "or opdecide_base_url in the ini file):\n"
            f"    pytest '{node.nodeid}' --opdecide-record=once",
            pytrace=False,
        )

    def scrub_hook(interaction: dict[str, Any]) -> dict[str, Any] | None:
        results = hook.pytest_opdecide_scrub_interaction(interaction=interaction, settings=settings)
        for result in results:
            if result is not None:
                interaction = result
        return interaction

    with use_cassette(
        path,
        record=record,
        volatile=tuple(settings.volatile),
        # Configured fields add to the defaults: naming one field must not unprotect the rest.
        scrub_fields=tuple(dict.fromkeys((*DEFAULT_BODY_FIELDS, *settings.scrub_fields))),
        allow_unused=settings.allow_unused,
        nodeid=node.nodeid,
        scrub_hook=scrub_hook,
        passed=lambda: call_passed(node),
    ) as cassette:
        yield cassette
