"""Matching a request with the recorded ones, and the diff shown when nothing matches.

A request matches a recorded one when its method, URL path, query string (secret values as
stored) and body agree. JSON bodies compare by content: key order is ignored, and so are the
*volatile* paths a test names (``messages.*.id``: an id or a timestamp that changes on every
run). Both sides are compared as the cassette stores them (see :mod:`._scrub`), so a recorded
request holding a placeholder matches the request that carries the real secret. The scheme,
host and port are not compared: they are the recording machine's (a local model on another
port, a proxy), and one test's cassette talks to one server.

A request that matches nothing fails with :class:`CassetteMismatch`, whose message diffs it
against the nearest recorded request and suggests what to do.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

from vcr.errors import CannotOverwriteExistingCassetteException

from pytest_opdecide._cassettes._scrub import Redaction, as_stored, shown_uri, stored_route
from pytest_opdecide._cassettes._yaml_format import body_text, dump_yaml

__all__ = [
    "CassetteMismatch",
    "RequestKey",
    "SentRequest",
    "comparable_body",
    "drop_path",
    "forget_parsed_bodies",
    "hashable_key",
    "mismatch_message",
    "request_key",
    "rerecord_hint",
]


class SentRequest(Protocol):
    """A request as matching sees it: a recorded one, or one being sent."""

    @property
    def method(self) -> str: ...

    @property
    def uri(self) -> str: ...

    @property
    def body(self) -> Any: ...


RequestKey = tuple[str, str, tuple[tuple[str, str], ...], Any]
"""Everything matching compares, as one value: method, path, scrubbed query, comparable body."""


def rerecord_hint(path: Path, nodeid: str) -> str:
    """How to record the cassette at ``path`` of test ``nodeid`` again."""
    return (
        "re-record it with the model server running at base_url (--opdecide-base-url=URL, or "
        "opdecide_base_url in the ini file):\n"
        f"    pytest '{nodeid}' --opdecide-record=rewrite\n"
        f"(or delete {path} and run with --opdecide-record=once)"
    )


def drop_path(value: Any, path: list[str]) -> Any:
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
        return [drop_path(item, rest) if i in indexes else item for i, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    keys = list(value) if head == "*" else [head] if head in value else []
    if not keys:
        return value
    out = dict(value)
    for key in keys:
        if rest:
            out[key] = drop_path(out[key], rest)
        else:
            del out[key]
    return out


def comparable_body(
    body: Any, volatile: tuple[str, ...], redaction: Redaction | None = None
) -> Any:
    """A request body as compared: parsed JSON without the volatile paths, else the text (or
    the bytes, for a body that is not UTF-8).

    Both sides are compared as they are stored (see :func:`~._scrub.as_stored`): secrets
    stand as the placeholder, so a recorded request still matches the request that carries
    the real secret. The result is shared (cached): never change it.
    """
    redaction = Redaction() if redaction is None else redaction
    if isinstance(body, bytes | str):
        return _comparable(body, volatile, redaction)
    text = body_text(body)
    return body if text is None else _comparable(text, volatile, redaction)


@functools.lru_cache(maxsize=1024)
def _comparable(body: bytes | str, volatile: tuple[str, ...], redaction: Redaction) -> Any:
    # Cached: a request is compared with every recorded one, and each recorded body with every
    # request, so the same bodies come back over and over.
    text = body_text(body)
    if text is None:
        return as_stored(body, redaction)
    if text[:1] in "{[":
        try:
            value = json.loads(text)
        except ValueError:
            return as_stored(text, redaction)
        value = as_stored(value, redaction)
        for dotted in volatile:
            value = drop_path(value, dotted.split("."))
        return value
    return as_stored(text, redaction)


def forget_parsed_bodies() -> None:
    """Empty the cache of parsed bodies (a benchmark's runs must not help each other)."""
    _comparable.cache_clear()


def request_key(
    method: str,
    uri: str,
    body: Any,
    volatile: tuple[str, ...],
    redaction: Redaction | None = None,
) -> RequestKey:
    """What matching compares of a request, as one value (equal keys: the requests match)."""
    redaction = Redaction() if redaction is None else redaction
    path, query = stored_route(uri, redaction.secrets, redaction.paths)
    return (method, path, query, comparable_body(body, volatile, redaction))


class _Tag:
    """Marks a frozen JSON object or array, so that neither equals the other or a scalar."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_OBJECT, _ARRAY = _Tag("object"), _Tag("array")


def _frozen(value: Any) -> Hashable:
    """``value`` as a hashable value equal (``==``) to another's exactly when the two values
    are equal: objects as their items sorted by key (key order never matters), arrays as
    tuples, each tagged with its kind."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=_first)
        return (_OBJECT, tuple((key, _frozen(item)) for key, item in items))
    if isinstance(value, list):
        return (_ARRAY, tuple(_frozen(item) for item in value))
    if isinstance(value, bytearray):
        return bytes(value)
    return value  # type: ignore[no-any-return]  # text, numbers, booleans, None, bytes


def _first(item: tuple[Any, Any]) -> str:
    return str(item[0])


def hashable_key(key: RequestKey) -> Hashable:
    """A :data:`RequestKey` as a dictionary key: equal for exactly the keys that are equal, so
    that an index finds a request's matches without comparing it with every recorded one."""
    method, path, query, body = key
    return (method, path, query, _frozen(body))


DIFF_LINES = 40
"""How many lines of diff a mismatch shows at most (the rest is counted, not shown)."""
LINE_WIDTH = 200
"""How many characters of one line a mismatch shows at most (around where it differs)."""
_COMPARED_LINES = 400
"""How many lines of each body's differing middle are diffed (enough for :data:`DIFF_LINES`)."""
_RUN_LINES = 12
"""How many removed (or added) lines in a row a mismatch shows; the rest is counted."""
_RUN_WORDS = {"-": "removed", "+": "added"}
_COMPARED_CHARS = 2000
"""How many characters of two bodies' differing middles are compared to find the nearest."""


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start (slices compared: fast)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _similarity(a: str, b: str) -> float:
    """How alike two texts are, from 0 to 1, in time linear in their length: the characters
    they share at both ends, and how alike the start of what lies between is."""
    if not a and not b:
        return 1.0
    head = _common_prefix(a, b)
    tail = _common_prefix(a[head:][::-1], b[head:][::-1])
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    ratio = difflib.SequenceMatcher(
        None, middle_a[:_COMPARED_CHARS], middle_b[:_COMPARED_CHARS]
    ).ratio()
    return (2 * (head + tail) + ratio * (len(middle_a) + len(middle_b))) / (len(a) + len(b))


def _clipped(line: str, focus: int = 0) -> str:
    """``line`` cut to :data:`LINE_WIDTH` characters around ``focus`` (where it differs),
    saying how many characters were left out on each side. Its first character (a diff's
    ``-``, ``+`` or space) is always kept."""
    if len(line) <= LINE_WIDTH:
        return line
    marker, text = line[:1], line[1:]
    start = max(0, min(focus - 1 - LINE_WIDTH // 4, len(text) - LINE_WIDTH))
    end = start + LINE_WIDTH
    before = f"[{start:,} characters]..." if start else ""
    after = f"...[{len(text) - end:,} more characters]" if end < len(text) else ""
    return marker + before + text[start:end] + after


def _focus(lines: list[str]) -> list[int]:
    """Where each line of a diff differs from its counterpart: a removed line and the added
    line that takes its place (in order) differ after the characters they share."""
    focus = [0] * len(lines)
    index = 0
    while index < len(lines):
        if not lines[index].startswith("-"):
            index += 1
            continue
        added = removed_end = index
        while removed_end < len(lines) and lines[removed_end].startswith("-"):
            removed_end += 1
        added = removed_end
        while added < len(lines) and lines[added].startswith("+"):
            added += 1
        for old, new in zip(range(index, removed_end), range(removed_end, added), strict=False):
            focus[old] = focus[new] = _common_prefix(lines[old][1:], lines[new][1:]) + 1
        index = added
    return focus


_HUNK = re.compile(r"@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


def bounded_diff(old: list[str], new: list[str], fromfile: str, tofile: str) -> list[str]:
    """A unified diff of two bodies' lines that stays short whatever their size.

    Lines both bodies share at their start and end are left out (but for two lines of
    context), the differing middles are compared on at most :data:`_COMPARED_LINES` lines
    each, at most :data:`DIFF_LINES` lines are shown, each cut to :data:`LINE_WIDTH` characters
    around where it differs; a last line says how much was left out. ``[]``: no difference.
    """
    if old == new:
        return []
    head = 0
    shortest = min(len(old), len(new))
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - 2)
    keep = max(0, tail - 2)
    old_middle, new_middle = old[start : len(old) - keep], new[start : len(new) - keep]
    unseen = max(0, len(old_middle) - _COMPARED_LINES) + max(0, len(new_middle) - _COMPARED_LINES)
    diff = list(
        difflib.unified_diff(
            old_middle[:_COMPARED_LINES],
            new_middle[:_COMPARED_LINES],
            fromfile=fromfile,
            tofile=tofile,
            lineterm="",
            n=2,
        )
    )
    shown = diff[:2]  # the file names
    body = diff[2:]
    focus = _focus(body)
    elided_chars = 0
    index = left = 0
    while index < len(body):
        if len(shown) - 2 >= DIFF_LINES:
            left = len(body) - index
            break
        marker = body[index][:1]
        end = index + 1
        if marker in ("-", "+"):  # a run of removed (or added) lines: its first lines only
            while end < len(body) and body[end][:1] == marker:
                end += 1
        for position in range(index, min(end, index + _RUN_LINES)):
            line = body[position]
            if line.startswith("@@"):
                line = _HUNK.sub(
                    lambda m: f"@@ -{int(m[1]) + start}{m[2]} +{int(m[3]) + start}{m[4]} @@",
                    line,
                )
            clipped = _clipped(line, focus[position])
            elided_chars += len(line) - len(clipped)
            shown.append(clipped)
        if end - index > _RUN_LINES:
            more = end - index - _RUN_LINES
            shown.append(f"{marker}... {more:,} more {_RUN_WORDS[marker]} lines")
        index = end
    notes = []
    if left > 0:
        notes.append(f"{left:,} more lines of the diff")
    if unseen:
        notes.append(f"{unseen:,} lines further on, not compared")
    if start or keep:
        notes.append(f"{start + keep:,} equal lines around it")
    if elided_chars:
        notes.append(f"{elided_chars:,} characters of long lines")
    if left > 0 or unseen or elided_chars:
        shown.append(f"(left out: {'; '.join(notes)})")
    return shown


def _pretty(body: Any) -> list[str]:
    """A body as the diff shows it: YAML as in the cassette (keys sorted, prompts as blocks)."""
    if isinstance(body, dict | list):
        return dump_yaml(body, sort_keys=True).splitlines()
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


def _schema_hint(recorded: Any, sent: Any) -> str:
    """Why a body now carries a ``response_format`` its recording lacks: structured decisions."""
    if not (isinstance(recorded, dict) and isinstance(sent, dict)):
        return ""
    if "response_format" in recorded or not isinstance(sent.get("response_format"), dict):
        return ""
    return (
        "The request now carries a response_format that the recording lacks: the runtime sends "
        "the menu's JSON schema with decision calls (structured decisions). To replay the "
        "recording as it is, send the text menu alone: --opdecide-structured-decisions=never "
        "(opdecide_structured_decisions = never in the ini file, or "
        "OpenAICompatibleRuntime(structured_decisions='never')).\n"
    )


def _route(request: SentRequest, redaction: Redaction) -> str:
    """Method, path and (scrubbed) query: what matching compares besides the body."""
    path, query = stored_route(request.uri, redaction.secrets, redaction.paths)
    shown = urlencode(query, safe="<>")
    return f"{request.method} {path}" + (f"?{shown}" if shown else "")


def mismatch_message(
    path: Path,
    recorded: Sequence[SentRequest],
    played: Sequence[bool],
    request: SentRequest,
    *,
    volatile: tuple[str, ...],
    nodeid: str,
    mode: str,
    redaction: Redaction,
) -> str:
    """Why ``request`` matched nothing, with a diff against the nearest recorded request.

    Args:
        path: The cassette file.
        recorded: Its recorded requests, in order.
        played: Whether each of them has been replayed already.
        request: The request that matched nothing.
        volatile: The body paths ignored when matching.
        nodeid: The test's id, for the "re-record it" hint.
        mode: The record mode, as the message names it.
        redaction: How requests are compared as stored (and shown: never a secret).
    """
    head = (
        f"the test sent a request that is not in cassette {path} (record mode {mode}):\n"
        + _clipped(f"    {request.method} {shown_uri(request.uri, redaction.secrets)}")
        + "\n"
    )
    if not recorded:
        return head + "The cassette holds no interactions.\n" + rerecord_hint(path, nodeid)
    wanted = comparable_body(request.body, volatile, redaction)
    bodies = [comparable_body(other.body, volatile, redaction) for other in recorded]
    wanted_path = urlsplit(request.uri).path
    wanted_lines = _pretty(wanted)
    wanted_text = "\n".join(wanted_lines)
    pretty: dict[int, list[str]] = {}  # each body written out once (a long prompt is slow)

    def lines_of(index: int) -> list[str]:
        if index not in pretty:
            pretty[index] = _pretty(bodies[index])
        return pretty[index]

    def distance(index: int) -> tuple[int, float, int]:
        other = recorded[index]
        same_route = int(other.method == request.method) + int(
            urlsplit(other.uri).path == wanted_path
        )
        ratio = _similarity("\n".join(lines_of(index)), wanted_text)
        # Among equally near requests, one not replayed yet is the likelier counterpart.
        return (-same_route, -round(ratio, 3), int(played[index]))

    nearest = 0 if len(recorded) == 1 else min(range(len(recorded)), key=distance)
    other = recorded[nearest]
    lines: list[str] = []
    if _route(other, redaction) != _route(request, redaction):
        lines.append(_clipped(f"-   {_route(other, redaction)}"))
        lines.append(_clipped(f"+   {_route(request, redaction)}"))
    diff = bounded_diff(lines_of(nearest), wanted_lines, f"recorded #{nearest}", "sent now")
    if diff:
        body = "\n".join(diff)
    elif lines:
        body = "(the bodies are the same)"
    else:
        body = "(the same request: the code sent it more often than when it was recorded)"
    return (
        head
        + f"Nearest recorded request: #{nearest} of {len(recorded)}"
        + (" (already replayed)" if played[nearest] else "")
        + ":\n"
        + ("\n".join(lines) + "\n" if lines else "")
        + body
        + "\n"
        + (
            _schema_hint(bodies[nearest], wanted)
            or _volatile_hint(bodies[nearest], wanted, volatile)
        )
        + "If the code changed on purpose, "
        + rerecord_hint(path, nodeid)
    )


class CassetteMismatch(CannotOverwriteExistingCassetteException):  # type: ignore[misc]
    """A request matched nothing in the cassette; the message diffs it against the nearest.

    A vcrpy ``CannotOverwriteExistingCassetteException`` too, so that code written for vcrpy
    catches it.

    Attributes:
        path: The cassette file.
        method: The request's method.
        uri: The request's URL, with key-like query values redacted.
    """

    __module__ = "pytest_opdecide"

    def __init__(self, message: str, *, path: Path, method: str, uri: str) -> None:
        self.path = path
        self.method = method
        self.uri = shown_uri(uri)
        # vcrpy's attributes (its own constructor needs a vcrpy cassette).
        self.cassette = None
        self.failed_request = None
        self.similar_requests: list[Any] = []
        self.reason = "no_match"
        Exception.__init__(self, message)
