"""Scrubbing's rules on JSON and event streams (:mod:`~._scrub` applies them to a cassette).

* by name: :func:`secret_field` says which JSON fields hold a secret; :func:`by_name` replaces
  them at any depth, in JSON documents held in strings too, and remembers each value;
* by value: :func:`by_value` replaces every form of every known secret in every string of a
  JSON value (keys too);
* streams: :func:`stream_by_value` searches the text each field of a stream's events adds up
  to, as sent, then each event; :func:`names_lack_secrets` proves on a stream's text that
  scrubbing by name finds nothing in it, without parsing its events.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pytest_opdecide._cassettes._yaml_format import parse_events, render_events
from pytest_opdecide._http._secrets import PLACEHOLDER, Secrets, json_strings_lack

__all__ = [
    "SECRET_FIELD_ENDINGS",
    "by_name",
    "by_value",
    "json_document",
    "json_documents",
    "names_lack_secrets",
    "reframe",
    "secret_field",
    "stream_by_value",
    "stream_fields",
    "unframe",
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
def _named_secret(name: str, extra: frozenset[str], in_logprobs: bool) -> bool:
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
                and _named_secret(name, fields, in_logprobs)
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
    """The object or array a string holds as JSON, else ``None``."""
    if text.lstrip()[:1] not in ("{", "["):
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
    if isinstance(value, str):
        new = secrets.text(value)
        return value if new == value else new
    if isinstance(value, dict):
        out = {}
        changed = False
        for key, item in value.items():
            new_key = by_value(key, secrets) if isinstance(key, str) else key
            new_item = by_value(item, secrets)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    if isinstance(value, list):
        items = [by_value(item, secrets) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value


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
    text: str, secrets: Secrets, streams: dict[str, list[Any]] | None = None
) -> str:
    """An event stream's text with every secret replaced: across the events first (see
    :func:`stream_fields`), then in each event (its keys, what no field groups).

    Across first, on the text as the server sent it: a secret cut into pieces is whole only
    there. A pass over each event alone would find a part that looks like a key on its own
    (:data:`~pytest_opdecide._http._secrets.KEYLIKE` takes ``sk-`` and 16 more characters),
    replace it, and leave the rest of the key in the next event for no rule to find.

    ``streams``: events already parsed (:meth:`Scrubber.parsed_streams`), given back when
    nothing changed.
    """
    events = streams.pop(text, None) if streams is not None else None
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
    if "\\" in text or "\r" in text or "\n\n\n" in text or not text.startswith("data: {"):
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
    if any(_named_secret(key, fields, False) for key in keys):
        return False
    counted = sum(text.count(f'"{key}":') for key in keys)
    return counted == text.count('":') and _SPACED_KEY.search(text) is None
