"""Scrubbing's rules on JSON and event streams (:mod:`~._scrub` applies them to a cassette).

* by name: :func:`secret_field` says which JSON fields hold a secret; :func:`by_name` replaces
  them at any depth, in JSON documents held in strings too, and remembers each value;
* by value: :func:`by_value` replaces every form of every known secret in every string of a
  JSON value (keys too);
* streams: :func:`stream_by_value` searches the text each field of a stream's events adds up
  to, as sent, then each event; :func:`names_lack_secrets` proves on a stream's text that
  scrubbing by name finds nothing in it, without parsing its events; :func:`uniform_stream`
  reads the keys and fields of a long stream made of runs of events of one shape, a pattern
  per run, for both passes (a stream whose fields and keys hold nothing to replace is left
  unparsed).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pytest_opdecide._cassettes._machine_paths import strings_replaced
from pytest_opdecide._cassettes._yaml_format import (
    STREAM_BLOCK_EVENTS,
    held_as_is,
    holds_lone_surrogates,
    parse_events,
    render_events,
)
from pytest_opdecide._http._secrets import (
    PLACEHOLDER,
    Secrets,
    contains,
    holds_any,
    json_strings_lack,
)

__all__ = [
    "SECRET_FIELD_ENDINGS",
    "UNIFORM_MIN",
    "UniformStream",
    "by_name",
    "by_value",
    "json_document",
    "json_documents",
    "named_secret",
    "names_lack_secrets",
    "reframe",
    "secret_field",
    "stream_by_value",
    "stream_fields",
    "unframe",
    "uniform_stream",
]

SECRET_FIELD_ENDINGS = (
    "apikey",
    "apitoken",
    "accesskey",
    "accesstoken",
    "authkey",
    "authtoken",
    "bearertoken",
    "clientkey",
    "cookie",
    "credential",
    "credentials",
    "encryptionkey",
    "idtoken",
    "licensekey",
    "masterkey",
    "passphrase",
    "passwd",
    "password",
    "privatekey",
    "refreshtoken",
    "secret",
    "secretkey",
    "securitytoken",
    "sessionkey",
    "sessiontoken",
    "signingkey",
    "subscriptionkey",
)
"""JSON field names are secret when, lower case and without ``_``, ``-`` or ``.``, they end in one
of these (``api_key``, ``x-api-key``, ``clientSecret``, ``AWS_SECRET_ACCESS_KEY``...)."""
_SECRET_FIELD_NAMES = frozenset({"auth", "authorization", "token"})
_LOGPROB_WORDS = ("logprob", "probabilities")
"""A bare ``token`` under a key holding these words is a token of text, not a credential."""


# --- names ---------------------------------------------------------------------------------


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def secret_field(
    name: str, extra: frozenset[str] = frozenset(), *, in_logprobs: bool = False
) -> bool:
    """Whether a JSON field's value is a secret, by its name (``extra``: exact names more).

    ``token`` alone is one, except under a ``logprobs`` key, where it is a token of text.
    """
    if name in extra:
        return True
    normal = _normal(name)
    if normal in _SECRET_FIELD_NAMES:
        return not (normal == "token" and in_logprobs)
    return normal.endswith(SECRET_FIELD_ENDINGS)


@functools.lru_cache(maxsize=4096)
def named_secret(name: str, extra: frozenset[str], in_logprobs: bool) -> bool:
    """:func:`secret_field`, once per name (every event of a stream has the same ones)."""
    return secret_field(name, extra, in_logprobs=in_logprobs)


@functools.lru_cache(maxsize=4096)
def _logprobs(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _LOGPROB_WORDS)


# --- JSON, by name -------------------------------------------------------------------------


def by_name(
    value: Any, fields: frozenset[str], remember: Callable[[Any], None], in_logprobs: bool = False
) -> Any:
    """A JSON value with secret-named fields replaced, at any depth and inside JSON-encoded
    strings; the very object when nothing changes (copy on write)."""
    if isinstance(value, dict):
        out = None
        for key, item in value.items():
            name = str(key)
            if (
                isinstance(item, str | int | float)
                and not isinstance(item, bool)
                and item != ""
                and named_secret(name, fields, in_logprobs)
            ):
                remember(item)
                new: Any = PLACEHOLDER
            else:
                new = by_name(item, fields, remember, in_logprobs or _logprobs(name))
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items = [by_name(item, fields, remember, in_logprobs) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, str):
        return _json_string_by_name(value, fields, remember)
    return value


def json_document(text: str) -> Any:
    """The object or array a string holds as JSON, else ``None``. Text that does not end in
    a bracket is not parsed (a streamed tool call's every piece starts with ``{``)."""
    if text.lstrip()[:1] not in ("{", "[") or text.rstrip()[-1:] not in ("}", "]"):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _json_string_by_name(text: str, fields: frozenset[str], remember: Callable[[Any], None]) -> str:
    parsed = json_document(text)
    if parsed is None:
        return text
    scrubbed = by_name(parsed, fields, remember)
    return text if scrubbed is parsed else json.dumps(scrubbed, ensure_ascii=False)


def json_documents(text: str) -> Iterator[Any]:
    """The JSON documents written one after the other in ``text``, from its start (the pieces
    of a streamed tool call's arguments add up to one, or to several for several calls); none
    when it does not start with one. Linear: each character is read once."""
    decoder = json.JSONDecoder()
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index == len(text) or text[index] not in "{[":
            return
        try:
            document, index = decoder.raw_decode(text, index)
        except ValueError:
            return
        yield document


# --- JSON, by value ------------------------------------------------------------------------


def by_value(value: Any, secrets: Secrets) -> Any:
    """A JSON value with every string (keys too) scrubbed by value; the very object when
    nothing changes."""
    return strings_replaced(value, secrets.text)


def _string_leaves(
    value: Any, path: tuple[Any, ...], into: dict[tuple[Any, ...], list[tuple[Any, Any]]]
) -> None:
    """Add ``(container, key)`` of every string in a JSON value to the group of its path
    (``path`` and the keys and indexes down to it), in order."""
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(item, str):
            group = into.get((*path, key))
            if group is None:
                group = into[(*path, key)] = []
            group.append((value, key))
        elif isinstance(item, dict | list):
            _string_leaves(item, (*path, key), into)


def _replace_across(texts: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """``texts`` (pieces of one text) with each span of their concatenation replaced: the
    placeholder where the span begins, nothing in the pieces it continues into."""
    out = []
    offset = 0
    for text in texts:
        end_of_piece = offset + len(text)
        kept = []
        cursor = offset
        for start, end in spans:
            if end <= offset or start >= end_of_piece:
                continue
            kept.append(text[cursor - offset : max(start, offset) - offset])
            if start >= offset:
                kept.append(PLACEHOLDER)
            cursor = min(end, end_of_piece)
        kept.append(text[cursor - offset :])
        out.append("".join(kept))
        offset = end_of_piece
    return out


# --- streams -------------------------------------------------------------------------------


_Framed = tuple[int, list[str], list[int], Any]
"""A framed event taken apart: its index, its lines, which are ``data:`` lines, its data."""


def unframe(events: list[dict[str, Any]]) -> list[_Framed]:
    """Give each framed event (stored raw: it has ``event:`` or ``id:`` lines, or its data
    spans several lines) whose data is one JSON object or array that data, in place, to be
    scrubbed as every other event's: a key sent in pieces across framed events (as Anthropic's
    API frames its events) is then whole in the text the pieces add up to. What it takes to
    put the events back (:func:`reframe`)."""
    framed = []
    for index, event in enumerate(events):
        raw = event.get("raw")
        if not isinstance(raw, str):
            continue
        lines = raw.split("\n")
        at = [number for number, line in enumerate(lines) if line.startswith("data:")]
        data = "\n".join(lines[number][5:].removeprefix(" ") for number in at)
        parsed = json_document(data) if at else None
        if parsed is not None:
            framed.append((index, lines, at, json.loads(data)))  # a copy, to compare
            events[index] = {"data": parsed}
    return framed


def reframe(events: list[dict[str, Any]], framed: list[_Framed]) -> None:
    """Put framed events back as raw text (see :func:`unframe`): as they were, or with their
    data lines as one line of the scrubbed data."""
    for index, lines, at, original in framed:
        data = events[index]["data"]
        if data != original:
            lines = [line for number, line in enumerate(lines) if number not in at[1:]]
            lines[at[0]] = "data: " + json.dumps(data, ensure_ascii=False)
        events[index] = {"raw": "\n".join(lines)}


def stream_fields(events: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[tuple[Any, Any]]]:
    """The strings of a stream's events, grouped by where they are in an event (a field's
    path, or the text of events that are not JSON), in order: each group is one text sent in
    pieces (a reply's content, a tool call's arguments)."""
    groups: dict[tuple[Any, ...], list[tuple[Any, Any]]] = {}
    for event in events:
        if "raw" in event:
            groups.setdefault(("<raw>",), []).append((event, "raw"))
        elif isinstance(event.get("data"), str):
            groups.setdefault(("<data>",), []).append((event, "data"))
        else:
            _string_leaves(event.get("data"), (), groups)
    return groups


def stream_by_value(
    text: str,
    secrets: Secrets,
    streams: dict[str, list[Any]] | None = None,
    views: Sequence[tuple[str, UniformStream]] = (),
) -> str:
    """An event stream's text with every secret replaced: across the events first (see
    :func:`stream_fields`), then in each event (its keys, what no field groups).

    Across first, on the text as the server sent it: a secret cut into pieces is whole only
    there. A pass over each event alone would find a part that looks like a key on its own
    (:data:`~pytest_opdecide._http._secrets.KEYLIKE` takes ``sk-`` and 16 more characters),
    replace it, and leave the rest of the key in the next event for no rule to find.

    ``streams``: events already parsed (:meth:`Scrubber.parsed_streams`), given back when
    nothing changed. ``views``: streams of runs of one shape already read
    (:func:`uniform_stream`), with their texts:
    one whose fields hold no secret and whose strings can hold none is left as it is, unparsed.
    """
    events = streams.pop(text, None) if streams is not None else None
    view = next((v for t, v in views if t == text), None) if events is None else None
    if view is not None:
        needles = secrets.needles
        if needles is not None and view.lacks(needles):
            return text
    if events is None:
        events = parse_events(text)
    if events is None:
        return secrets.text(text)
    framed = unframe(events)
    changed = False
    for pieces in stream_fields(events).values():
        texts = [container[key] for container, key in pieces]
        spans = secrets.spans("".join(texts))
        if spans:
            changed = True
            for (container, key), new in zip(pieces, _replace_across(texts, spans), strict=True):
                container[key] = new
    # Each event's own strings lie in the text: when nothing was replaced across and none can
    # hold a form or a mark (json_strings_lack), no event needs its walk. (Across events no
    # such proof holds: a key sent in pieces is in no one place of the text.)
    needles = secrets.needles
    if changed or needles is None or not json_strings_lack(text, needles):
        for event in events:
            data = event.get("data")
            if isinstance(data, dict | list):
                event["data"] = by_value(data, secrets)
                changed = changed or event["data"] is not data
    reframe(events, framed)
    if changed:
        return render_events(events)
    if streams is not None:
        streams[text] = events
    return text


# --- long streams of runs of one shape ------------------------------------------------------


UNIFORM_MIN = 32_768
"""Streams from this length on are read as runs of one shape first (:func:`uniform_stream`):
below it, parsing each event costs about as much, and the events parsed are written as they
are (a short stream is stored event by event)."""
_MAX_ODD = 16
"""At most this many events may be of no run of one shape (the first delta names the role,
the last ones the finish reason, the usage and ``[DONE]``; one between two phases)."""
_MAX_RUNS = 8
"""At most this many runs of events of one shape (a reasoning model's reasoning, then its
reply)."""
_MAX_SLOTS = 64
"""A shape with more strings than this is not matched (read event by event instead)."""


class UniformStream:
    """The keys and the fields of an event stream made of runs of events of one shape, read
    off its text with one pattern per run rather than parsed event by event
    (:func:`uniform_stream`).

    Attributes:
        keys: Every key of every event's JSON.
        named: Each of them with whether it is under a key of log-probabilities (where
            :func:`by_name` takes ``token`` for text).
        block: Whether a literal block holds the text byte for byte and the stream is long
            enough to be written as one (what :func:`~._yaml_format.readable_body` would find,
            here known without reading the text again).
        escaped: Whether the text has a backslash: without one, no string holds a quote, so
            none is JSON with a key.
        texts: What the pieces of each field add up to (a tool call's arguments, a reply), in
            the order of :attr:`fields`.
        counts: How many pieces each field has, in the same order.
    """

    __slots__ = ("_fields", "_runs", "block", "counts", "escaped", "keys", "named", "texts")

    def __init__(
        self,
        named: set[tuple[str, bool]],
        runs: dict[tuple[Any, ...], _Field],
        block: bool,
        texts: list[str],
        *,
        escaped: bool,
    ) -> None:
        self.named = named
        self.keys = {key for key, _ in named}
        self._runs = runs
        self.block = block
        self.escaped = escaped
        self.texts = texts
        self.counts = [run.count() for run in runs.values()]
        self._fields: dict[tuple[Any, ...], list[str]] | None = None

    @property
    def fields(self) -> dict[tuple[Any, ...], list[str]]:
        """The strings of the events, grouped as :func:`stream_fields` groups them (a field's
        path, ``("<data>",)`` for data that is not JSON), in order; decoded when first asked
        for (scrubbing needs only :meth:`closing_pieces`)."""
        if self._fields is None:
            self._fields = {path: run.pieces() for path, run in self._runs.items()}
        return self._fields

    def closing_pieces(self) -> Iterator[list[str]]:
        """By field, in the order of :attr:`fields`, the pieces that may be a JSON document
        (each holds a closing bracket, or an escape that may write one); the others cannot
        (a document ends in one), and are not decoded."""
        for run in self._runs.values():
            yield run.may_close()

    def lacks(self, needles: tuple[str, ...]) -> bool:
        """Whether scrubbing by value finds nothing: none of ``needles``
        (:attr:`Secrets.needles`: what every replacement takes in) in what the pieces of any
        field add up to (across the events), nor in any key; each string of an event is part
        of its field's text (within one event)."""
        # Joined by a newline: a needle found across two fields is only a needless slow read.
        return not holds_any("\n".join([*self.texts, *self.keys]), needles)


_MAY_CLOSE = ("}", "]", "\\u")
"""What in a string value's text as written may be a closing bracket once decoded: one, or a
``\\u`` escape."""


class _Field:
    """One field of a :class:`UniformStream`: its pieces, segment by segment in the order of
    the events (a run's as written, ``raw`` when they hold escapes; an odd event's decoded),
    each with what they add up to as written."""

    __slots__ = ("segments",)

    def __init__(self) -> None:
        self.segments: list[tuple[list[str], str, bool]] = []

    def add(self, pieces: list[str], joined: str | None = None) -> None:
        """Add a segment: a run's ``pieces`` and ``joined`` as written, or decoded ones."""
        if joined is None:
            self.segments.append((pieces, "".join(pieces), False))
        else:
            self.segments.append((pieces, joined, "\\" in joined))

    def count(self) -> int:
        return sum(len(pieces) for pieces, _, _ in self.segments)

    def text(self) -> str:
        """What the field's pieces add up to, as JSON reads them: each run's text decoded at
        once (each piece is a JSON string's text with no escaped half of a UTF-16 pair, so
        the pieces decoded one by one add up to the same)."""
        texts = [json.loads(f'"{joined}"') if raw else joined for _, joined, raw in self.segments]
        return texts[0] if len(texts) == 1 else "".join(texts)

    def pieces(self) -> list[str]:
        """Every piece, as JSON reads it."""
        return [piece for pieces, _, raw in self.segments for piece in _decoded(pieces, raw)]

    def may_close(self) -> list[str]:
        """The pieces, as JSON reads them, that hold what :data:`_MAY_CLOSE` lists as written
        (the others cannot be a JSON document)."""
        out: list[str] = []
        for pieces, joined, raw in self.segments:
            out += _decoded(_holding_marks(pieces, joined), raw)
        return out


def _decoded(pieces: list[str], raw: bool) -> list[str]:
    """``pieces`` of a run as JSON reads them (``raw``: with escapes): all of them in one
    array, at C speed."""
    if not raw or not pieces:
        return pieces
    decoded: list[str] = json.loads('["' + '","'.join(pieces) + '"]')
    return decoded


def _holding_marks(pieces: list[str], joined: str) -> list[str]:
    """The ``pieces`` (which add up to ``joined``) that hold what :data:`_MAY_CLOSE` lists."""
    hits = sum(joined.count(mark) for mark in _MAY_CLOSE)
    if not hits:
        return []
    if hits * 4 >= len(pieces):
        return pieces  # finding the pieces costs more than reading them all
    ends = list(itertools.accumulate(map(len, pieces)))
    found: dict[int, None] = {}
    for mark in _MAY_CLOSE:
        at = joined.find(mark)
        while at >= 0:
            found[bisect.bisect_right(ends, at)] = None
            at = joined.find(mark, at + 1)
    return [pieces[i] for i in sorted(found)]


def _slots(
    value: Any, path: tuple[Any, ...], out: list[tuple[str, Any]], in_logprobs: bool = False
) -> None:
    """The strings and numbers of a JSON value in the order its text writes them:
    ``("key", (key, in_logprobs))`` for a key (and whether it is under a key that
    :func:`by_name` takes for log-probabilities), ``("string", path)`` for a string value and
    the path :func:`stream_fields` groups it by, ``("number", path)`` for a number."""
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
        keyed = True
    elif isinstance(value, list):
        items, keyed = enumerate(value), False
    else:
        return
    for key, item in items:
        under = in_logprobs
        if keyed:
            out.append(("key", (key, in_logprobs)))
            under = in_logprobs or _logprobs(key)
        if isinstance(item, str):
            out.append(("string", (*path, key)))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            out.append(("number", (*path, key)))
        elif isinstance(item, dict | list):
            _slots(item, (*path, key), out, under)


_Shape = tuple[tuple[str, ...], tuple[tuple[Any, ...] | None, ...], frozenset[tuple[str, bool]]]
"""A line's text around its string values and numbers (the first part from the line's
start, the last one to its end), the paths of those values (``None`` for a number: no field
of the stream), and its keys (each with whether it is under log-probabilities)."""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*')
"""A JSON string in a line of valid JSON (its quotes, and escapes within), or a number (out
of strings, JSON writes digits only in numbers)."""


def _shape(line: str) -> _Shape | None:
    """The shape of one ``data: {...}`` line of a stream, or ``None`` when it is no JSON
    object (or repeats a key, or holds more than :data:`_MAX_SLOTS` strings and numbers)."""
    if not line.startswith("data: {"):
        return None
    try:
        data = json.loads(line[6:])
    except (ValueError, RecursionError):
        return None
    if holds_lone_surrogates(line, data):
        return None  # parsing stores such an event as its text
    slots: list[tuple[str, Any]] = []
    _slots(data, (), slots)
    tokens = list(_TOKEN.finditer(line)) if len(slots) <= _MAX_SLOTS else []
    # A repeated key is written twice and read once: the line holds more strings than slots.
    if len(tokens) != len(slots):
        return None
    around: list[str] = []
    paths: list[tuple[Any, ...] | None] = []
    keys: set[tuple[str, bool]] = set()
    start = 0
    for (kind, what), token in zip(slots, tokens, strict=True):
        if kind == "key":
            keys.add(what)
        elif kind == "string":  # the text from the last value's end to this one's opening quote
            around.append(line[start : token.start() + 1])
            paths.append(what)
            start = token.end() - 1
        else:  # a number: the text up to its first character
            around.append(line[start : token.start()])
            paths.append(None)
            start = token.end()
    around.append(line[start:])
    return tuple(around), tuple(paths), frozenset(keys)


def uniform_stream(text: str) -> UniformStream | None:
    """The keys and fields of an event stream made of runs of events that are one JSON object
    each with the same text around their strings and numbers (what OpenAI-compatible servers
    send: one run, or a reasoning model's reasoning and then its reply), and a few other
    events (:data:`_MAX_ODD`), read without parsing each event of a run; ``None`` for any
    other stream.

    The stream must have no CR, and each event one line followed by one blank line. An event
    followed by one of its shape (:func:`_shape`) begins a run: its text, with each string
    value as what a JSON string holds (characters that are no quote, backslash or control
    character, and escapes; no escaped half of a UTF-16 pair, which parsing stores apart) and
    each number as what JSON writes as one, is a pattern; the run is as many events as it
    matches, one after the other (none of its parts can match across a line). Each of them
    is then that event with other strings and numbers, which JSON reads as its keys and
    fields (a value with escapes is decoded as JSON decodes it). Any other event is parsed as
    :func:`parse_events` parses it.
    """
    if "\r" in text or not text.endswith("\n\n"):
        return None
    escaped = "\\" in text
    value = _VALUE if escaped else _PLAIN_VALUE  # the same matches without a backslash
    named: set[tuple[str, bool]] = set()
    fields: dict[tuple[Any, ...], _Field] = {}
    held: list[str] = []  # one line of each run, and each odd line: what the block must hold
    events = odd = runs = 0
    patterns: dict[tuple[_Shape, tuple[str | None, ...]], re.Pattern[str]] = {}
    ends = _last_lines(text)
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n\n", start)
        line = text[start:end]
        shape = _shape(line)
        next_line = text[end + 2 : text.find("\n\n", end + 2)]
        if shape is not None and shape == _shape(next_line):
            found = _run(text, start, line, next_line, shape, ends, value, patterns)
            if found is not None:
                runs += 1
                if runs > _MAX_RUNS:
                    return None
                events_of_run, start = found
                _add_run(shape, events_of_run, fields, named)
                held.append(line)
                events += len(events_of_run)
                continue
        if "\n" in line or not line.startswith("data:"):
            return None  # framed, or no stream: read as parsing reads it
        odd += 1
        if odd > _MAX_ODD:
            return None
        _add_fields(line, fields, named)
        held.append(line)
        events += 1
        start = end + 2
    block = (
        events > STREAM_BLOCK_EVENTS
        and text.isascii()
        and "\x7f" not in text  # the strings of the matched events hold no other control
        and all(_line_held(line) for line in held)
    )
    texts = [field.text() for field in fields.values()]
    return UniformStream(named, fields, block, texts, escaped=escaped)


def _last_lines(text: str) -> list[tuple[int, str, _Shape | None]]:
    """Where each of the last lines of ``text`` (:data:`_MAX_ODD` and one) ends, with the
    line and its shape, the last first."""
    out: list[tuple[int, str, _Shape | None]] = []
    stop = len(text)
    while stop > 0 and len(out) <= _MAX_ODD:
        begins = text.rfind("\n\n", 0, stop - 2)
        line = text[begins + 2 if begins >= 0 else 0 : stop - 2]
        out.append((stop, line, _shape(line)))
        stop = begins + 2 if begins >= 0 else 0
    return out


def _run(
    text: str,
    start: int,
    line: str,
    next_line: str,
    shape: _Shape,
    ends: list[tuple[int, str, _Shape | None]],
    value: str,
    patterns: dict[tuple[_Shape, tuple[str | None, ...]], re.Pattern[str]],
) -> tuple[list[Any], int] | None:
    """The run of events of ``shape`` that begins at ``start`` with ``line`` and
    ``next_line`` (a match of each event, its strings as written) and where it ends; ``None``
    when the pattern does not take ``line`` (an escaped pair of UTF-16 halves, which parsing
    reads as one character).

    Tried first to the last event of the shape among the last lines (one run, the usual
    stream), with each number that this event, ``line`` and ``next_line`` write alike written
    as it is (an index: matched faster than any number), then with every number matched;
    else the run is as many events as match one after the other."""
    numbers = _numbers(line)
    every: tuple[str | None, ...] = (None,) * len(numbers)
    last = next(((stop, other) for stop, other, kind in ends if kind == shape), None)
    if last is not None:
        stop, other = last
        kept = tuple(
            a if a == b == c else None
            for a, b, c in zip(numbers, _numbers(next_line), _numbers(other), strict=True)
        )
        for written in dict.fromkeys([kept, every]):
            found = _run_to(text, start, stop, _pattern(shape, written, value, patterns))
            if found is not None:
                return found
    # The events of the run one after the other: each begins where the last one ended.
    row = _pattern(shape, every, value, patterns)
    matched = re.compile(f"(?:{row.pattern.replace(value, _uncaptured(value))})++").match(
        text, start
    )
    return None if matched is None else _run_to(text, start, matched.end(), row)


def _numbers(line: str) -> list[str]:
    """The numbers of a line of valid JSON, as written, in order."""
    return [token for token in _TOKEN.findall(line) if token[0] != '"']


def _uncaptured(value: str) -> str:
    """A value's pattern, its group not captured."""
    return f"(?:{value[1:-1]})"


def _run_to(text: str, start: int, stop: int, row: re.Pattern[str]) -> tuple[list[Any], int] | None:
    """The matches of ``row`` (one event) in ``text[start:stop]``, and ``stop``, when they
    are the events there, one each; else ``None``. A match begins at a line's start and ends
    in the blank line after it, and none of its parts holds a line break: matches that hold
    every line break of the text hold all of it (any other text between them would hold
    one)."""
    if stop <= start:
        return None
    found = row.findall(text, start, stop)
    return (found, stop) if 2 * len(found) == text.count("\n", start, stop) else None


def _pattern(
    shape: _Shape,
    numbers: tuple[str | None, ...],
    value: str,
    patterns: dict[tuple[_Shape, tuple[str | None, ...]], re.Pattern[str]],
) -> re.Pattern[str]:
    """The pattern of one event of ``shape`` at a line's start, with a group for each string
    value (``value``: :data:`_VALUE` or :data:`_PLAIN_VALUE`); each number as ``numbers``
    writes it, or any number (``None``)."""
    key = (shape, numbers)
    made = patterns.get(key)
    if made is None:
        around, slots, _ = shape
        parts = [re.escape(part) for part in (*around[:-1], around[-1] + "\n\n")]
        written = iter(numbers)
        row = [_LINE_START, parts[0]]
        for path, part in zip(slots, parts[1:], strict=True):
            if path is not None:
                row.append(value)
            else:
                number = next(written)
                row.append(_NUMBER if number is None else re.escape(number))
            row.append(part)
        made = patterns[key] = re.compile("".join(row))
    return made


_LINE_START = r"(?<![^\n])"
"""At the start of the text or of a line."""


def _add_run(
    shape: _Shape,
    found: list[Any],
    fields: dict[tuple[Any, ...], _Field],
    named: set[tuple[str, bool]],
) -> None:
    """Add the strings of a run's events (``found``: a match of each, its strings as
    written), by field, and the shape's keys."""
    _, slots, keys = shape
    paths = [path for path in slots if path is not None]
    named.update(keys)
    if not paths:
        return
    columns: list[Any] = [found] if len(paths) == 1 else list(zip(*found, strict=True))
    for path, column in zip(paths, columns, strict=True):
        pieces = column if type(column) is list else list(column)
        fields.setdefault(path, _Field()).add(pieces, "".join(pieces))


_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
"""A number in :func:`uniform_stream`'s pattern, not captured: what JSON writes as one (the
next character of an event is never a digit: a comma, a bracket, a blank)."""
_PLAIN_VALUE = r'([^"\\\x00-\x1f]*)'
""":data:`_VALUE` for a text without a backslash (a tenth faster to match)."""
_VALUE = (
    r'([^"\\\x00-\x1f]*+(?:(?:\\["\\/bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})'
    r'[^"\\\x00-\x1f]*+)*+)'
)
"""A string value's text in :func:`uniform_stream`'s pattern: characters that are no quote,
no backslash, no control character (LF included), and JSON's escapes but those of a half of a
UTF-16 pair (the runs between escapes possessive: never tried again another way, so
linear)."""


def _line_held(line: str) -> bool:
    """Whether a literal block holds one line of a stream as it is (and the matched events,
    when it is the middle one: they differ from it only in strings free of control
    characters, and end as it ends)."""
    return not line.endswith(" ") and held_as_is(line)


def _add_fields(
    line: str, fields: dict[tuple[Any, ...], _Field], keys: set[tuple[str, bool]]
) -> None:
    """Add the fields and keys (see :func:`_slots`) of one odd line's event, parsed as
    :func:`parse_events` does."""
    events = parse_events(line + "\n\n") or []
    for path, pieces in stream_fields(events).items():
        fields.setdefault(path, _Field()).add([container[key] for container, key in pieces])
    for event in events:
        slots: list[tuple[str, Any]] = []
        _slots(event.get("data"), (), slots)
        keys.update(what for kind, what in slots if kind == "key")


_SPACED_KEY = re.compile(r'"[ \t]+:')
"""A quote, blanks, a colon: a JSON key written with blanks before its colon."""
_DONE = "data: [DONE]"


def _keys(value: Any, into: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            into.add(key)
            _keys(item, into)
    elif isinstance(value, list):
        for item in value:
            _keys(item, into)


def names_lack_secrets(text: str, fields: frozenset[str]) -> bool:
    """Whether scrubbing by name finds nothing in the event stream ``text``: no event has a
    secret-named field, and no text that the events add up to is JSON with one. Proven on the
    text, without parsing its events (``False``: it may find something).

    The proof takes a stream without a backslash or a CR whose every line is blank, ``data: {``
    or ``data: [DONE]`` (what OpenAI-compatible servers send). There each string of an event's
    JSON, keys too, is the text between two quotes of its line (a string holds no quote and no
    JSON document with a key), and each key ends in ``":`` or in blanks and a colon (looked
    for). The keys of the first and the last event are read, none may be secret, and every
    ``":`` of the text must end one of them: then every event's keys are among them. A key of
    a JSON document that several events add up to (the text of events that are not JSON) is on
    one line too, since each piece begins with ``{`` or ``[``; one cut between two events would
    end in a ``":`` whose key holds the newlines between them, and no event's key does. A
    ``"k":`` is counted once: its opening quote is the last quote before its colon."""
    if "\\" in text or "\r" in text or contains(text, "\n\n\n") or not text.startswith("data: {"):
        return False
    if not text.endswith("\n"):
        return False
    followed = text.count("\ndata: {") + text.count("\n" + _DONE) + text.count("\n\n")
    if followed + 1 != text.count("\n"):  # the last newline ends the text
        return False
    last = text.rfind("\ndata: {") + 1
    keys: set[str] = set()
    for line in {text[: text.find("\n")], text[last : text.find("\n", last)]}:
        try:
            _keys(json.loads(line[6:]), keys)
        except (ValueError, RecursionError):
            return False
    if any(named_secret(key, fields, False) for key in keys):
        return False
    counted = sum(text.count(f'"{key}":') for key in keys)
    return counted == text.count('":') and _SPACED_KEY.search(text) is None
