"""The readable YAML form of a cassette: structured JSON, event streams, literal blocks.

A cassette file is YAML that a person can read and review in a diff:

* JSON bodies are stored as data under ``json:`` (compact again when replayed);
* server-sent event streams are stored event by event under ``events:`` (JSON data as data,
  anything else as the text the server sent), and replayed as the same bytes; a stream of more
  than :data:`STREAM_BLOCK_EVENTS` events is stored as one literal block under
  ``event_stream:``, its text as sent, when a literal block holds that text exactly;
* text with line breaks (prompts) is written as literal blocks;
* headers with one value are written as ``name: value``.

libyaml writes the file, but for the lines of long literal blocks (a stream, a prompt): it
writes a token in their place, and the lines are put there afterwards as libyaml writes them
(:func:`_spliced`: the same text, at a fraction of libyaml's time per character).

The ``version`` key is written last and required when reading: a file cut short anywhere (a
truncated copy, a bad merge) lacks it and is refused rather than replayed with half of it.
Reading checks the whole file before anything replays it: :func:`load_yaml` (of
:mod:`._yaml_loader`) reads the YAML in time and memory at most linear in its size, and
:mod:`._shape` refuses anything outside the layout the library writes.
"""

from __future__ import annotations

import copy
import io
import json
import re
from collections.abc import Container, Mapping
from typing import Any

import yaml

from pytest_opdecide._cassettes._shape import check_encodings, check_layout
from pytest_opdecide._cassettes._yaml_loader import MAX_DEPTH, Refused, load_yaml
from pytest_opdecide._http._secrets import contains

__all__ = [
    "STREAM_BLOCK_EVENTS",
    "ReadableYaml",
    "Refused",
    "body_text",
    "dump_yaml",
    "header",
    "held_as_is",
    "holds_lone_surrogates",
    "load_yaml",
    "parse_events",
    "raw_body",
    "readable_body",
    "render_events",
]


_SafeDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter where PyYAML has it (the pure-Python one is some 100 times slower on a long
prompt); both accept the same styles, and their texts read back as the same data."""


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Dumper(_SafeDumper):  # type: ignore[misc]
    """The cassette dumper: PyYAML's safe representer, with text that has line breaks as
    literal blocks, and each distinct scalar's implicit tag worked out once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[tuple[bool, bool], dict[str, str]] = {}

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        # The emitter asks this twice for every scalar it writes (a few regular expressions
        # each, in Python); an answer depends only on the text, and a cassette repeats its
        # texts (field names, a stream's ids): asked once per distinct text (one table for
        # each of the two questions, so that no key is built for every scalar).
        if kind is not yaml.ScalarNode:
            return str(super().resolve(kind, value, implicit))
        known = self._resolved.get(implicit)
        if known is None:
            known = self._resolved[implicit] = {}
        tag = known.get(value)
        if tag is None:
            tag = known[value] = str(super().resolve(kind, value, implicit))
        return tag


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar(_STR, value, style=style)


_Dumper.add_representer(str, _str_representer)


class _UnsharedDumper(_Dumper):
    """Writes every value out, even one the data holds twice (no anchors, no aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _nodes(
    dumper: Any,
    data: Any,
    *,
    shared: bool,
    blocks: list[tuple[str, int]] | None = None,
    held: Container[int] = (),
) -> tuple[yaml.Node, bool]:
    """The YAML node tree of ``data``, as PyYAML's safe representer builds it for
    :class:`_Dumper` (the same tags, styles and order; a dict or list the data holds twice is
    one node, which the serializer anchors, unless not ``shared``), built without the
    representer's bookkeeping for every node: for the plain data a cassette holds, it is most
    of the time spent writing one. Any other value (floats, bytes) goes to the representer.

    And whether the text may hold an anchor: ``False`` when no node is in the tree twice (the
    serializer anchors only those) and the representer was handed nothing but floats.

    ``blocks``: each long text that a literal block holds as it is (:func:`_splices`) is
    written as a token instead, and added to it with its line breaks at the end, in the order
    of the tree (see :func:`_spliced`); ``held``: the ids of texts known to be held as they
    are."""
    seen: dict[int, yaml.Node] = {}
    scalar, mapping, sequence = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
    anchored = False

    def node(value: Any) -> yaml.Node:
        nonlocal anchored
        kind = type(value)
        if kind is str:
            if "\n" not in value:
                return scalar(_STR, value)
            if blocks is not None and len(value) >= _SPLICED_MIN:
                tail = _splices(value, id(value) in held)
                if tail is not None:
                    blocks.append((value, tail))
                    return scalar(_STR, _token(len(blocks) - 1, tail), style="|")
            return scalar(_STR, value, style="|")
        if kind is dict or kind is list:
            made = seen.get(id(value)) if shared else None
            if made is not None:
                anchored = True
                return made
            if kind is dict:
                made = mapping(_MAP, [], flow_style=False)
            else:
                made = sequence(_SEQ, [], flow_style=False)
            if shared:
                seen[id(value)] = made
            if kind is dict:
                made.value.extend((node(key), node(item)) for key, item in value.items())
            else:
                made.value.extend(node(item) for item in value)
            return made
        if kind is int:
            return scalar(_INT, str(value))
        if kind is bool:
            return scalar(_BOOL, "true" if value else "false")
        if value is None:
            return scalar(_NULL, "null")
        if kind is not float:
            anchored = True  # the representer keeps its own aliases
        return dumper.represent_data(value)  # type: ignore[no-any-return]

    tree = node(data)
    return tree, anchored


def dump_yaml(data: Any, *, sort_keys: bool = False) -> str:
    """``data`` as cassette YAML: text with line breaks as literal blocks, unicode as is."""
    if sort_keys:  # diffs of bodies only: small
        text = yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=True, width=100)
        return _without_end_marker(data, text)
    return _dumped(data, _Dumper)[0]


def _dumped(
    data: Any, dumper: Any, *, splice: bool = False, held: Container[int] = ()
) -> tuple[str, bool]:
    """The text of ``data`` in the key order it has, and whether it may hold an anchor (see
    :func:`_nodes`). ``splice``: long literal blocks' lines are put in by :func:`_spliced`
    (the same text; ``held``: as :func:`_nodes` takes it)."""
    blocks: list[tuple[str, int]] | None = [] if splice else None
    stream = io.StringIO()
    writer = dumper(
        stream, allow_unicode=True, sort_keys=False, width=100, default_flow_style=False
    )
    try:
        writer.open()
        shared = not writer.ignore_aliases({})
        tree, anchored = _nodes(writer, data, shared=shared, blocks=blocks, held=held)
        writer.serialize(tree)
        writer.close()
    finally:
        writer.dispose()
    text = stream.getvalue()
    if blocks:
        whole = _spliced(text, blocks)
        if whole is None:  # a token where libyaml did not write it: libyaml writes them all
            return _dumped(data, dumper)
        text = whole
    return _without_end_marker(data, text), anchored


def _without_end_marker(data: Any, text: str) -> str:
    # libyaml closes a mapping that ends in a block of kept line breaks (``|+``) with a
    # document end marker, which the pure-Python emitter leaves out: the same document.
    if isinstance(data, dict | list) and text.endswith("\n...\n"):
        return text.removesuffix("...\n")
    return text


_BLOCK_TOKEN = "opdecide-block-"
"""What a long text is written as, for libyaml, numbered; its lines are put in its place
afterwards (:func:`_spliced`)."""
_TOKEN_LINE = re.compile(re.escape(_BLOCK_TOKEN) + r"([0-9]+)\n")
_SPLICED_MIN = 4_096
"""Texts from this length on are spliced: below it, libyaml writes them as fast."""


def _splices(text: str, held: bool = False) -> int | None:
    """How many line breaks end ``text`` (``0`` for none) when :func:`_spliced` writes it as
    libyaml would, else ``None``: a literal block must hold it as it is (:func:`held_as_is`:
    no space ends a line, the last one either), with its header alone (a first line neither
    empty nor starting with a space: libyaml would add an indentation indicator). ``held``:
    :func:`held_as_is` is known (a stream :func:`readable_body` stores as a block)."""
    if text[:1] in (" ", "\n") or text.endswith(" ") or not (held or held_as_is(text)):
        return None
    tail = 0
    while text.endswith("\n", 0, len(text) - tail):
        tail += 1
    return tail


def _token(number: int, tail: int) -> str:
    """What libyaml writes in the place of a block's lines: the numbered token as its only line,
    with the line breaks that end the text (none: a second line of one ``-``, so that the token
    is still a block's, with the header of a block without a line break at its end)."""
    return f"{_BLOCK_TOKEN}{number}" + ("\n" * tail if tail else "\n-")


def _indented(core: str, indent: str) -> str:
    """The lines of ``core`` (no empty line first or last) as a literal block writes them:
    each line behind ``indent``, an empty line as a line break alone."""
    if core.count("\n") == 2 * core.count("\n\n") and not contains(core, "\n\n\n"):
        return indent + core.replace("\n\n", "\n\n" + indent)  # a blank line after each
    lines = core.replace("\n", "\n" + indent)
    if "\n\n" in core:
        blank = f"\n{indent}\n"
        while blank in lines:  # empty lines in a row: each pass takes every other one
            lines = lines.replace(blank, "\n\n")
    return indent + lines


def _spliced(text: str, blocks: list[tuple[str, int]]) -> str | None:
    """``text`` with the lines of each ``(text, tail)`` of ``blocks`` where libyaml wrote its
    token as the only line of a literal block, as libyaml writes them: each line behind the
    block's indent, an empty line empty (the token was written with the text's line breaks at
    its end: the block's header and what follows it are the text's). libyaml spends some 7 ms
    on each MB of a block's lines, character by character; this, 1 to 2. ``None`` unless the
    tokens are in ``text`` once each, in order, each the only line of its block."""
    found = list(_TOKEN_LINE.finditer(text))
    if [int(token.group(1)) for token in found] != list(range(len(blocks))):
        return None
    pieces: list[str] = []
    start = 0
    for token, (block, tail) in zip(found, blocks, strict=True):
        at, end = token.start(), token.end() - 1  # the line break is the block's
        line = text.rfind("\n", 0, at) + 1
        indent = text[line:at]
        header: tuple[str, ...]
        if tail:
            header, ending = ("|\n", "|+\n"), "\n" * tail
        else:  # the token's second line goes too
            header, ending, end = ("|-\n",), "\n", end + len(indent) + 2
            if not text.startswith(f"\n{indent}-", token.end() - 1):
                return None
        if (
            not indent
            or indent.strip(" ")
            or not text.endswith(header, 0, line)
            or not text.startswith(ending, end)
            or text.startswith("\n", end + len(ending))
        ):
            return None
        pieces += (text[start:line], _indented(block[: len(block) - tail], indent))
        start = end
    pieces.append(text[start:])
    return "".join(pieces)


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


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""The JSON escape of a UTF-16 surrogate (``\\ud83d``): a pair of them is one character, one
alone is text that no UTF-8 file can hold."""


def holds_lone_surrogates(text: str, data: Any) -> bool:
    """Whether JSON ``data`` parsed from ``text`` holds a lone surrogate (a half of a UTF-16
    pair, escaped in the text): YAML data cannot carry it, the text as it came can."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return False
    try:
        _compact_json(data).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_FIELDS = ("data:", "event:", "id:", ":", "retry:")
"""The SSE fields a line of an event may start with: what :func:`parse_events` reads, and what
every line of a stream stored as one block starts with (:func:`_lines_are_fields`)."""


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
        if not all(line.startswith(_FIELDS) for line in lines):
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
            if isinstance(parsed, dict | list) and holds_lone_surrogates(data, parsed):
                parsed = None  # stored as the text it came as
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


STREAM_BLOCK_EVENTS = 1_000
"""An event stream of more than this many events is written as one literal block
(``event_stream:``) rather than event by event: parsing and writing each event of a long reply
costs some fifty times what writing its text does, and a reviewer reads its text as well."""

_UNHELD_CHAR = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
"""What a literal block cannot hold as it is (libyaml would quote the text instead): tabs, CR
and other control characters, U+0085, U+2028, U+2029, the BOM, characters past U+FFFF (and,
looked for apart, a space that ends a line)."""
_HELD_ASCII = bytes(range(0x20, 0x7F)) + b"\n"
"""The ASCII a literal block holds as it is: an ASCII text is checked by deleting these."""


def held_as_is(text: str) -> bool:
    """Whether a literal block holds ``text`` byte for byte: no character of
    :data:`_UNHELD_CHAR` and no space that ends a line. An ASCII text (the usual stream) is
    checked at ``bytes.translate`` speed rather than by a pattern tried at every character."""
    if contains(text, " \n"):
        return False
    if text.isascii():
        return not text.encode("ascii").translate(None, _HELD_ASCII)
    return _UNHELD_CHAR.search(text) is None


def _lines_are_fields(text: str, pairs: int | None = None) -> bool:
    """Whether every line of ``text`` (which holds no three newlines in a row) is an SSE
    field or the blank line between events: every newline is followed by a field, by the
    blank line's newline or by the end. The prefixes begin with different characters, so
    each newline is counted once; two newlines in a row never overlap (no three in a row).
    ``pairs``: ``text.count("\\n\\n")``, when the caller has counted them."""
    if not text.startswith(_FIELDS):
        return False
    newlines = text.count("\n")
    blank = (text.count("\n\n") if pairs is None else pairs) + text.endswith("\n")
    if text.count("\ndata:") + blank == newlines:  # data lines alone: the others not looked for
        return True
    followed = sum(text.count("\n" + field) for field in _FIELDS)
    return followed + blank == newlines


def _event_block_holds(text: str) -> bool:
    """Whether ``text`` is an event stream of more than :data:`STREAM_BLOCK_EVENTS` events that
    a literal block holds byte for byte: its first line neither empty nor starting with a
    space, every line of its events an SSE field (what :func:`parse_events` reads), nothing in
    it that a literal block would change (:func:`held_as_is`)."""
    pairs = text.count("\n\n")
    if pairs <= STREAM_BLOCK_EVENTS or text[:1] in ("", " ", "\n"):
        return False
    if contains(text, "\n\n\n") or not held_as_is(text):
        return False
    return _lines_are_fields(text, pairs)


def readable_body(
    body: Any,
    headers: Mapping[str, Any],
    streams: dict[str, list[Any]] | None = None,
    *,
    blocks: bool = False,
    documents: dict[str, Any] | None = None,
    held: Container[str] = (),
) -> Any:
    """A raw body as the cassette stores it: ``{"events": [...]}`` for an event stream,
    ``{"json": data}`` for JSON, else the text (or the bytes, when they are not text).

    ``streams``: the events of stream texts already parsed (:func:`parse_events` of each);
    this body's are taken from it (``pop``) rather than parsed again. ``documents``: the same
    for JSON texts (``json.loads`` of each, unchanged since). ``blocks``: a long stream that a
    literal block holds is ``{"event_stream": text}`` (how the file is written; scrub hooks get
    the events). ``held``: stream texts already known to be such streams (see
    :attr:`~._scrub_json.UniformStream.block`), not read again."""
    text = body_text(body)
    if text is None:
        return body
    kind = header(headers, "content-type")
    if "event-stream" in kind:
        if blocks and (text in held or _event_block_holds(text)):
            if streams:
                streams.pop(text, None)
            return {"event_stream": text}
        events = streams.pop(text, None) if streams else None
        if events is None:
            events = parse_events(text)
        if events is not None:
            return {"events": events}
    if text[:1] in "{[":
        data = documents.pop(text, _UNPARSED) if documents else _UNPARSED
        if data is _UNPARSED:
            try:
                data = json.loads(text)
            except ValueError:
                return text
        if not holds_lone_surrogates(text, data):
            return {"json": data}
    return text


_UNPARSED = object()


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
        if "event_stream" in body:
            return body["event_stream"]
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


def _share_repeats(interactions: list[Any]) -> list[tuple[dict[str, Any], str, Any]]:
    """Make the parts that requests repeat one object, which YAML writes once.

    Requests of one test often repeat whole parts of their JSON body: the menu's JSON schema
    under ``response_format``, the ``tools`` of an agent's turn. Each part that equals one
    written before (in the same key order, so that it is sent as the same bytes) becomes that
    same object: the file holds it once, under an anchor (``&id001``), and an alias
    (``*id001``) wherever it comes again. Reading it back gives equal values, and the file is
    shorter to read and faster to load.

    Returns:
        What was replaced, as ``(object, key, value it held)``: to undo it, put each back.
    """
    seen: dict[tuple[str, Any], list[Any]] = {}
    texts: dict[int, str | None] = {}
    replaced: list[tuple[dict[str, Any], str, Any]] = []
    for interaction in interactions:
        body = interaction.get("request", {}).get("body")
        if not (isinstance(body, dict) and isinstance(body.get("json"), dict)):
            continue
        data = body["json"]
        for key, value in data.items():
            if not (isinstance(value, dict | list) and value):
                continue
            summary = _summary(value)
            if summary is None:
                summary = _compact_text(value, texts)
                if summary is None:
                    continue
            earlier = seen.setdefault((key, summary), [])
            for shared in earlier:  # one, unless two summaries of different values agree
                text = _compact_text(value, texts)
                if text is not None and text == _compact_text(shared, texts):
                    replaced.append((data, key, value))
                    data[key] = shared
                    break
            else:
                earlier.append(value)
    return replaced


_SUMMARY_NODES = 256
"""Values with more containers and scalars than this are summed up by their JSON text."""


class _TooLarge(Exception):
    pass


def _summary(value: Any) -> Any:
    """A hashable summary of a JSON value, its keys in their order: values that are the same
    JSON text (what :func:`_share_repeats` shares) have equal summaries. Hashing its strings
    is many times faster than writing a long prompt as JSON; equal summaries are confirmed by
    the JSON texts (``True`` and ``1`` sum up alike). ``None`` past :data:`_SUMMARY_NODES`."""
    budget = [_SUMMARY_NODES]

    def walk(item: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooLarge
        if isinstance(item, dict):
            return (dict, tuple((name, walk(inner)) for name, inner in item.items()))
        if isinstance(item, list):
            return (list, tuple(walk(inner) for inner in item))
        return item

    try:
        summary = walk(value)
        hash(summary)
    except (_TooLarge, TypeError, RecursionError):
        return None
    return summary


def _compact_text(value: Any, texts: dict[int, str | None]) -> str | None:
    """``value`` as compact JSON (``None`` when it is not JSON), written once per object."""
    key = id(value)
    if key not in texts:
        try:
            texts[key] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            texts[key] = None
    return texts[key]


def _plain_within(value: Any, depth: int) -> bool:
    """Whether ``value``'s mappings and lists are nested at most ``depth`` deep, and every
    key of its mappings is text."""
    if isinstance(value, dict):
        if depth == 0:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            if isinstance(item, _CONTAINERS) and not _plain_within(item, depth - 1):
                return False
    elif isinstance(value, list):
        if depth == 0:
            return False
        for item in value:
            if isinstance(item, _CONTAINERS) and not _plain_within(item, depth - 1):
                return False
    return True


_CONTAINERS = (dict, list)


def _block_backslashes(data: Any) -> int:
    """The backslashes of the streams ``data`` stores as literal blocks (``event_stream``)."""
    total = 0
    for interaction in data.get("interactions") or ():
        if not isinstance(interaction, dict):
            continue
        request, response = interaction.get("request"), interaction.get("response")
        bodies = [request.get("body") if isinstance(request, dict) else None]
        body = response.get("body") if isinstance(response, dict) else None
        bodies.append(body.get("string") if isinstance(body, dict) else None)
        for stored in bodies:
            if isinstance(stored, dict) and isinstance(stored.get("event_stream"), str):
                total += stored["event_stream"].count("\\")
    return total


class ReadableYaml:
    """vcrpy serializer: structured JSON, SSE events and literal blocks, read back losslessly.

    The ``version`` key is written last and required when reading: a file cut short anywhere
    (a truncated copy, a bad merge) lacks it and is reported as truncated rather than replayed
    with half its interactions.
    """

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        """The cassette's text. Parts that requests repeat are written once (see
        :func:`_share_repeats`), unless that would make the text expand, as it is read, past the
        loader's bound: then every part is written out."""
        return ReadableYaml.serialize_owned({key: copy.deepcopy(v) for key, v in data.items()})

    @staticmethod
    def serialize_owned(
        data: dict[str, Any],
        streams: dict[str, list[Any]] | None = None,
        documents: dict[str, Any] | None = None,
        held: Container[str] = (),
    ) -> str:
        """:meth:`serialize` for data the caller owns and will not use again: it is changed as
        it is written, not copied first (recording writes its own copies). ``streams``,
        ``documents`` and ``held``: the events of stream texts and the data of JSON texts
        already parsed, and the streams known to be written as blocks (see
        :func:`readable_body`)."""
        return ReadableYaml.written_owned(data, streams, documents, held)[0]

    @staticmethod
    def written_owned(
        data: dict[str, Any],
        streams: dict[str, list[Any]] | None = None,
        documents: dict[str, Any] | None = None,
        held: Container[str] = (),
    ) -> tuple[str, bool]:
        """:meth:`serialize_owned`, and whether the text may hold an anchor (``False``: the
        writer made none, as :meth:`check_own` is told)."""
        out = {key: value for key, value in data.items() if key != "version"}
        out["version"] = data.get("version", 1)
        held_streams: set[int] = set()  # ids of the streams stored as blocks: held as is
        for interaction in out.get("interactions", []):
            req, resp = interaction["request"], interaction["response"]
            for part in (req, resp):
                if isinstance(part.get("headers"), dict):
                    part["headers"] = _folded(part["headers"])
            req["body"] = readable_body(
                req.get("body"),
                req.get("headers", {}),
                streams,
                blocks=True,
                documents=documents,
                held=held,
            )
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = readable_body(
                    body["string"],
                    resp.get("headers", {}),
                    streams,
                    blocks=True,
                    documents=documents,
                    held=held,
                )
            for stored in (req["body"], body.get("string") if isinstance(body, dict) else None):
                if isinstance(stored, dict) and "event_stream" in stored:
                    held_streams.add(id(stored["event_stream"]))
        replaced = _share_repeats(out.get("interactions", []))
        text, anchored = _dumped(out, _Dumper, splice=True, held=held_streams)
        if anchored:
            try:
                load_yaml(text)
            except Refused:  # the repeats expand it past the bound: write them out
                for holder, key, value in replaced:
                    holder[key] = value
                text, anchored = _dumped(out, _UnsharedDumper, splice=True, held=held_streams)
        return text, anchored

    @staticmethod
    def check(text: str) -> None:
        """Refuse ``text`` when :meth:`deserialize` would, without building replay's data
        (bodies turned back into the text sent) unless a response names a
        ``Content-Encoding``, whose body must be checked as replay reads it.

        Raises:
            Refused: As :meth:`deserialize`.
            yaml.YAMLError: The text is not YAML.
        """
        data: dict[str, Any] = load_yaml(text)
        check_layout(data, text)
        for interaction in data["interactions"]:
            headers = interaction["response"].get("headers") or {}
            if any(name.lower() == "content-encoding" for name in headers):
                ReadableYaml.deserialize(text)
                return

    @staticmethod
    def check_own(data: dict[str, Any], text: str, anchored: bool = True) -> None:
        """:meth:`check` for the ``text`` that :meth:`serialize_owned` just wrote from
        ``data`` (the same object, as it left it), without reading the text back when
        checking the data is proof enough:

        * the text has no alias (``&id``: expansion is the loader's to bound; not looked for
          when the writer says it made no anchor, ``anchored=False``: see
          :meth:`written_owned`) and no escape (each scalar is its characters as written,
          which the loader reads back as they were): every backslash of the text is one of a
          stream stored as a block (``event_stream``), where it is a character (a
          double-quoted scalar's escapes, or a stream's backslashes doubled in one, would be
          more);
        * no mapping or list is nested as deep as the loader's bound, and every key is text
          (two keys of one mapping are then two keys of the file);
        * no response names a ``Content-Encoding`` (its body is checked as replay decodes it);
        * the data is in the layout replay reads (:func:`check_layout`).

        Anything else, or a refusal, is decided by :meth:`check` on the text itself (a refusal
        then names its line).

        Raises:
            Refused: As :meth:`check`.
            yaml.YAMLError: The text is not YAML.
        """
        if (
            (anchored and contains(text, "&id"))
            or ("\\" in text and text.count("\\") != _block_backslashes(data))
            or not _plain_within(data, MAX_DEPTH - 1)
        ):
            ReadableYaml.check(text)
            return
        for interaction in data.get("interactions") or ():
            response = interaction.get("response") if isinstance(interaction, dict) else None
            headers = response.get("headers") if isinstance(response, dict) else None
            if isinstance(headers, dict) and any(
                isinstance(name, str) and name.lower() == "content-encoding" for name in headers
            ):
                ReadableYaml.check(text)
                return
        try:
            check_layout(data, text)
        except Refused:
            ReadableYaml.check(text)

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        """The cassette's data as vcrpy records it (bodies raw, headers as lists), once the
        whole text has been checked.

        Raises:
            Refused: The text is not a cassette this library reads (see :mod:`._shape`),
                naming the line and the fix.
            yaml.YAMLError: The text is not YAML.
        """
        data: dict[str, Any] = load_yaml(text)
        check_layout(data, text)
        for interaction in data["interactions"]:
            req, resp = interaction["request"], interaction["response"]
            for part in (req, resp):
                if isinstance(part.get("headers"), dict):
                    part["headers"] = _unfolded(part["headers"])
            req["body"] = raw_body(req.get("body"))
            body = resp["body"]
            body["string"] = raw_body(body["string"])
            _fix_content_length(resp.get("headers"), body["string"])
        check_encodings(data, text)
        return data
