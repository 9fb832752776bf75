"""Scrubbing's rules on JSON and event streams (:mod:`~._scrub` applies them to a cassette).

* by name: :func:`secret_field` says which JSON fields hold a secret; :func:`by_name` replaces
  them at any depth, in JSON documents held in strings too, and remembers each value;
* by value: :func:`by_value` replaces every form of every known secret in every string of a
  JSON value (keys too);
* streams: :func:`stream_by_value` searches the text each field of a stream's events adds up
  to, as sent, then each event; :func:`names_lack_secrets` proves on a stream's text that
  scrubbing by name finds nothing in it, without parsing its events; :func:`uniform_stream`
  reads the keys and fields of a long stream whose events share one shape with one pattern,
  for both passes (a stream whose fields and keys hold nothing to replace is left unparsed).
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
    nothing changed. ``views``: streams of one shape already read (:func:`uniform_stream`),
    with their texts:
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


# --- long streams of one shape -------------------------------------------------------------


UNIFORM_MIN = 32_768
"""Streams from this length on are read as streams of one shape first (:func:`uniform_stream`):
below it, parsing each event costs about as much, and the events parsed are written as they
are (a short stream is stored event by event)."""
_ODD_EVENTS = 8
"""At most this many events at each end of a stream may differ from the shape of the others
(the first delta names the role, the last ones the finish reason, the usage and ``[DONE]``)."""
_MAX_SLOTS = 64
"""A shape with more strings than this is not matched (read event by event instead)."""


class UniformStream:
    """The keys and the fields of an event stream whose events share one shape, read off its
    text with one pattern rather than parsed event by event (:func:`uniform_stream`).

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
        runs: dict[tuple[Any, ...], _Run],
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
        self.counts = [len(run.early) + len(run.column) + len(run.late) for run in runs.values()]
        self._fields: dict[tuple[Any, ...], list[str]] | None = None

    @property
    def fields(self) -> dict[tuple[Any, ...], list[str]]:
        """The strings of the events, grouped as :func:`stream_fields` groups them (a field's
        path, ``("<data>",)`` for data that is not JSON), in order; decoded when first asked
        for (scrubbing needs only :meth:`closing_pieces`)."""
        if self._fields is None:
            self._fields = {
                path: [*run.early, *run.decoded(run.column), *run.late]
                for path, run in self._runs.items()
            }
        return self._fields

    def closing_pieces(self) -> Iterator[list[str]]:
        """By field, in the order of :attr:`fields`, the pieces that may be a JSON document
        (each holds a closing bracket, or an escape that may write one); the others cannot
        (a document ends in one), and are not decoded."""
        for run in self._runs.values():
            yield [*run.early, *run.decoded(run.may_close()), *run.late]

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


class _Run:
    """One field of a :class:`UniformStream`: its pieces in the matched events as written
    (:attr:`raw`: with escapes), what they add up to as written, and its pieces in the odd
    events before and after them (decoded)."""

    __slots__ = ("column", "early", "joined", "late", "raw")

    def __init__(self, column: list[str], joined: str) -> None:
        self.column, self.joined, self.raw = column, joined, "\\" in joined
        self.early: list[str] = []
        self.late: list[str] = []

    def text(self) -> str:
        """What the field's pieces add up to, as JSON reads them: the matched ones' text
        decoded at once (each piece is a JSON string's text with no escaped half of a UTF-16
        pair, so the pieces decoded one by one add up to the same)."""
        run: str = json.loads(f'"{self.joined}"') if self.raw else self.joined
        if not self.early and not self.late:
            return run
        return "".join([*self.early, run, *self.late])

    def decoded(self, pieces: list[str]) -> list[str]:
        """``pieces`` of :attr:`column` as JSON reads them: all of them in one array, at C
        speed."""
        if not self.raw or not pieces:
            return pieces
        decoded: list[str] = json.loads('["' + '","'.join(pieces) + '"]')
        return decoded

    def may_close(self) -> list[str]:
        """The pieces of :attr:`column` that hold what :data:`_MAY_CLOSE` lists, as written."""
        joined = self.joined
        hits = sum(joined.count(mark) for mark in _MAY_CLOSE)
        if not hits:
            return []
        if hits * 4 >= len(self.column):
            return self.column  # finding the pieces costs more than reading them all
        ends = list(itertools.accumulate(map(len, self.column)))
        found: dict[int, None] = {}
        for mark in _MAY_CLOSE:
            at = joined.find(mark)
            while at >= 0:
                found[bisect.bisect_right(ends, at)] = None
                at = joined.find(mark, at + 1)
        return [self.column[i] for i in sorted(found)]


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
    """The keys and fields of an event stream whose events, but for a few at each end
    (:data:`_ODD_EVENTS`), are one JSON object each with the same text around their string
    values (what OpenAI-compatible servers send), read without parsing each event; ``None``
    for any other stream.

    The stream must have no CR, and each event one line followed by one blank line. The shape
    of its middle event (:func:`_shape`) makes a pattern: its text with each string value as
    what a JSON string holds (characters that are no quote, backslash or control character,
    and escapes; no escaped half of a UTF-16 pair, which parsing stores apart). The pattern's
    matches must tile the events between the odd ones (each match starts where the last one
    ended: their lengths add up to the text of those events). Each of those events is then
    the middle one with other strings as values, which JSON reads as the middle one's keys and
    fields (a value with escapes is decoded as JSON decodes it); the odd events are parsed as
    :func:`parse_events` parses them.
    """
    if "\r" in text or not text.endswith("\n\n"):
        return None
    head = _odd_lines(text)
    if head is None:
        return None
    lines, shape, start, middle = head
    tail = _odd_lines_from_end(text, shape, start)
    if tail is None:
        return None
    ends, stop = tail
    around, slots, keys = shape
    parts = (*around[:-1], around[-1] + "\n\n")
    escaped = "\\" in text
    # A number the same in the first, the middle and the last event is most likely the same
    # in all (an index): written as it is in the pattern; any other is matched as a number.
    # Should one differ elsewhere, the matches do not tile the events, and all are matched.
    first = text[start : text.find("\n\n", start)]
    begins = text.rfind("\n\n", start, stop - 2)  # the last event of the shape
    last = text[begins + 2 if begins >= 0 else start : stop - 2]
    numbers = _numbers(middle)
    same = [a == b == c for a, b, c in zip(_numbers(first), numbers, _numbers(last), strict=True)]
    tiled = _tiles(text, start, stop, parts, slots, numbers, same, escaped)
    if tiled is None and any(same):
        tiled = _tiles(text, start, stop, parts, slots, numbers, [False] * len(same), escaped)
    if tiled is None:  # the matches do not tile the events: not all of this shape
        return None
    found, paths, columns, joined = tiled
    events = len(found) + len(lines) + len(ends)
    block = (
        events > STREAM_BLOCK_EVENTS
        and text.isascii()
        and "\x7f" not in text  # the strings of the matched events hold no other control
        and all(_line_held(line) for line in (*lines, middle, *ends))
    )
    all_keys = set(keys)
    before: dict[tuple[Any, ...], list[str]] = {}
    after: dict[tuple[Any, ...], list[str]] = {}
    for line in lines:
        _add_fields(line, before, all_keys)
    for line in ends:
        _add_fields(line, after, all_keys)
    matched_runs = {
        path: _Run(column if type(column) is list else list(column), as_written)
        for path, column, as_written in zip(paths, columns, joined, strict=True)
    }
    runs: dict[tuple[Any, ...], _Run] = {}
    for path in dict.fromkeys([*before, *matched_runs, *after]):
        run = matched_runs.get(path) or _Run([], "")
        run.early, run.late = before.get(path, []), after.get(path, [])
        runs[path] = run
    texts = [run.text() for run in runs.values()]
    return UniformStream(all_keys, runs, block, texts, escaped=escaped)


def _numbers(line: str) -> list[str]:
    """The numbers of a line of valid JSON, as written, in order."""
    return [token for token in _TOKEN.findall(line) if token[0] != '"']


def _tiles(
    text: str,
    start: int,
    stop: int,
    parts: tuple[str, ...],
    slots: tuple[tuple[Any, ...] | None, ...],
    numbers: list[str],
    same: list[bool],
    escaped: bool,
) -> tuple[list[Any], list[tuple[Any, ...]], list[Any], list[str]] | None:
    """The matches of the shape's pattern over ``text[start:stop]``, the paths of the strings
    they read, each string's column of values and what it adds up to; ``None`` unless the
    matches tile that text. ``numbers``: the middle event's, as written; ``same``: for each,
    whether the pattern writes it so rather than matching any number there."""
    value = _VALUE if escaped else _PLAIN_VALUE  # the same matches without a backslash
    written = iter(zip(numbers, same, strict=True))
    pattern = [re.escape(parts[0])]
    grouped: list[tuple[Any, ...] | None] = []  # by group: a string's path, None for a number
    fixed = 0  # the length of the numbers written as they are, in each event
    for path, part in zip(slots, parts[1:], strict=True):
        if path is not None:
            pattern.append(value)
            grouped.append(path)
        else:
            number, kept = next(written)
            if kept:
                pattern.append(re.escape(number))
                fixed += len(number)
            else:
                pattern.append(_NUMBER)
                grouped.append(None)
        pattern.append(re.escape(part))
    found = re.compile("".join(pattern)).findall(text, start, stop)
    if not grouped:
        columns: list[Any] = []
    elif len(grouped) == 1:
        columns = [found]
    else:
        columns = list(zip(*found, strict=True))
    joined = ["".join(column) for column in columns]
    matched = len(found) * (sum(map(len, parts)) + fixed) + sum(map(len, joined))
    if matched != stop - start:
        return None
    strings = [
        (path, column, as_written)
        for path, column, as_written in zip(grouped, columns, joined, strict=True)
        if path is not None
    ]
    return (
        found,
        [path for path, _, _ in strings],
        [column for _, column, _ in strings],
        [as_written for _, _, as_written in strings],
    )


_NUMBER = r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
"""A number in :func:`uniform_stream`'s pattern: what JSON writes as one (the next character
of an event is never a digit: a comma, a bracket, a blank)."""
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


def _odd_lines(text: str) -> tuple[list[str], _Shape, int, str] | None:
    """The lines before the first event of the middle one's shape, that shape, where that
    event starts, and the middle event's line; ``None`` past :data:`_ODD_EVENTS` lines, or for
    a line that is no ``data:`` event of one line."""
    middle = text.find("\n\n", len(text) // 2)
    if middle < 0:
        middle = len(text) - 2
    begins = text.rfind("\n\n", 0, middle)
    line = text[begins + 2 if begins >= 0 else 0 : middle]
    shape = _shape(line)
    if shape is None:
        return None
    middle_line = line
    lines: list[str] = []
    start = 0
    while len(lines) <= _ODD_EVENTS:
        end = text.find("\n\n", start)
        line = text[start:end]
        if _shape(line) == shape:
            return lines, shape, start, middle_line
        if "\n" in line or not line.startswith("data:"):
            return None  # framed, or no stream: read as parsing reads it
        lines.append(line)
        start = end + 2
    return None


def _odd_lines_from_end(text: str, shape: _Shape, first: int) -> tuple[list[str], int] | None:
    """:func:`_odd_lines` from the end: the lines after the last event of ``shape`` (which
    starts at or after ``first``), in order, and where they start."""
    lines: list[str] = []
    stop = len(text)
    while len(lines) <= _ODD_EVENTS:
        begins = text.rfind("\n\n", first, stop - 2)
        start = first if begins < 0 else begins + 2
        line = text[start : stop - 2]
        if _shape(line) == shape:
            return lines[::-1], stop
        if "\n" in line or not line.startswith("data:"):
            return None
        lines.append(line)
        stop = start
    return None


def _line_held(line: str) -> bool:
    """Whether a literal block holds one line of a stream as it is (and the matched events,
    when it is the middle one: they differ from it only in strings free of control
    characters, and end as it ends)."""
    return not line.endswith(" ") and held_as_is(line)


def _add_fields(
    line: str, fields: dict[tuple[Any, ...], list[str]], keys: set[tuple[str, bool]]
) -> None:
    """Add the fields and keys (see :func:`_slots`) of one odd line's event, parsed as
    :func:`parse_events` does."""
    events = parse_events(line + "\n\n") or []
    for path, pieces in stream_fields(events).items():
        fields.setdefault(path, []).extend(container[key] for container, key in pieces)
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
