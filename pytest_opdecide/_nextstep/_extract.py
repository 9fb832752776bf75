"""Find the model's pick in a reply: the last JSON object that carries a call key.

The work is linear in the length of the reply, whatever the reply contains.

- **Anchors.** An object that carries a call key contains ``"call"``, ``"action"``,
  ``"function"`` or ``"tool"`` (or a ``\\u`` escape, which could spell one). A reply without a
  ``{`` or without an anchor is answered at C speed, and so is the tail of a reply after its
  last anchor.
- **Fenced last.** A long reply whose last fenced block opens with a pick, and has no anchor
  after it, is answered from that block alone (see ``_fenced_last``): a reply quoting many JSON
  objects before its fenced pick costs no more than one that does not.
- **Groups.** A ``{`` outside every brace opens a *group* that ends where it closes. Groups are
  read in order and a later pick replaces an earlier one. A group without quotes, backslashes
  or nested braces (prose like ``{name}``) is passed over; any other is first handed whole to
  the JSON parser, which settles the usual reply (prose, then a valid pick) at C speed. A group
  that fails is scanned into spans; after ``_PARSE_FIRST_MISSES`` failed groups the reply is
  taken for junk and the rest of it is scanned at once.
- **Scan.** A compiled regular expression jumps from one run of braces to the next, skipping
  JSON strings and whatever lies between, so Python code runs once per run of braces rather
  than once per character. Quotes are only tracked inside braces (prose quotes never matter),
  and a string that meets a raw newline, never valid inside a JSON string, ends there, which
  resynchronises the scan after a stray quote. Spans are numbered in closing order, so the
  descendants of a span are the spans numbered just before it and the tree is flat lists.
- **Search.** Spans are tried from the end backwards, parents before children. A span that
  parses is the answer (it carries a call key) or hides its inside (it does not); a span that
  does not parse is looked inside. Spans without an anchor are skipped whole.
- **No re-reading.** When a span fails at position ``p``, the text before ``p`` is a valid JSON
  prefix in which every brace opens an object, so the spans inside that contain ``p`` fail at
  ``p`` too and are not parsed again. Each character is read by at most one failing parse, and
  a long span is parsed through a growing window, so a parse that fails early costs little.
  Nesting deeper than the parser supports is measured once and then skipped by height. A
  budget of characters handed to the parser bounds what is left (failures without a position:
  ``NaN``, integers too long to convert).
- **Fallback.** When a group yields no pick and the scan took braces for string content, the
  group is read again for braces only, which rescues a pick behind an unbalanced prose quote.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from json.scanner import make_scanner
from typing import Any, Final, NoReturn

__all__ = ["CALL_KEYS", "extract_action"]

CALL_KEYS: Final = ("call", "action", "function", "tool")
"""Keys naming the picked option, in order of precedence (``call`` and its aliases)."""

_ANCHORS: Final = ('"call"', '"action"', '"function"', '"tool"', "\\u")
"""Text that every object carrying a call key contains (a key may be spelt with escapes)."""

_STRING: Final = r'"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+"?'
"""A JSON string. It ends at its closing quote, or before a raw newline (never valid in one)."""

_TOKEN: Final = re.compile(rf'(\{{+|\}}+)(?:[^{{}}"]++|{_STRING})*+')
"""A run of braces, then everything up to the next brace outside strings."""

_TOKEN_BRACES_ONLY: Final = re.compile(r"(\{+|\}+)[^{}]*+")
"""A run of braces, then everything up to the next brace (the fallback ignores strings)."""

_OBJECT_SECOND: Final = frozenset('"} \t\n\r')
"""The characters that may follow the ``{`` of a JSON object."""

_OBJECT_OPENING: Final = re.compile(
    r'\{[ \t\n\r]*(?:\}|"[^"\\]*+(?:\\.[^"\\]*+)*+"[ \t\n\r]*:)', re.DOTALL
)
"""How every JSON object starts: ``{}``, or ``{"key":`` (give or take whitespace)."""

_WINDOW: Final = 4096
"""Characters of the first window through which a span is parsed (see ``_decode_span``)."""

_TAIL: Final = 9
"""A syntax error this close to a window's end may be the window's fault (``-Infinity``)."""

_BUDGET_PER_CHARACTER: Final = 4
_BUDGET_SLACK: Final = 1 << 16

_PARSE_FIRST_MISSES: Final = 32
"""Groups that may fail to parse whole before the rest of a reply is scanned at once."""

_DEPTH_PROBE_LIMIT: Final = 1 << 14

_SHORTCUT_FROM: Final = 2048
"""Replies this long are first tried for a last fenced pick (see ``_fenced_last``); a shorter
one is read whole sooner than the shortcut checks it."""

# Outcomes of a failed parse, besides the position of the failure.
_UNKNOWN: Final = -1
_TOO_DEEP: Final = -2


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_parse_at: Final = make_scanner(json.JSONDecoder(parse_constant=_reject_constant))  # type: ignore[arg-type]
"""``_parse_at(text, index) -> (value, end)`` parses the JSON value at ``text[index]``.

The C scanner behind ``json.loads``, without its wrapper: it raises ``StopIteration(index)``
for "Expecting value" and ``json.JSONDecodeError`` for the other syntax errors.
"""


def extract_action(text: object) -> dict[str, Any] | None:
    """Return the model's pick: the last JSON object in ``text`` that carries a call key.

    An object carries a call key when it has one of the keys ``call``, ``action``, ``function``
    or ``tool``. The reply is read like this:

    - Fenced (```` ```json ````) and bare JSON count alike, in reply order, and **the last pick
      wins**: the finish instruction asks for the pick last, and a reply may quote or discuss
      other objects before it.
    - Only whole objects count. A ``{...}`` span that parses as JSON but carries no call key
      hides what is inside it (``{"result": {"call": "x"}}`` is data, not a pick). A span that
      does not parse is looked inside, so prose braces around a pick do not hide it
      (``{see {"call": "a"}}`` picks ``a``).
    - Quotes count only inside braces. If a stray quote there swallows the pick, that part of
      the reply is read again for braces alone.
    - Strict JSON only: ``NaN`` and ``Infinity``, raw control characters inside strings, and
      nesting deeper than the ``json`` module can parse do not count.
    - The object is returned as parsed: aliases and arguments are the caller's to normalise.

    The time taken is linear in the length of ``text`` whatever it contains (runs of braces,
    deep nesting, unbalanced quotes). A budget of characters handed to the JSON parser, four
    per character of the reply, guarantees it: only a reply built to defeat every shortcut can
    spend it, and then yields ``None``.

    Args:
        text: The reply. A ``str`` is scanned; ``bytes`` and ``bytearray`` are decoded as UTF-8
            (invalid bytes replaced) and scanned; a ``dict`` that carries a call key is the pick
            itself (a shallow copy is returned). Anything else yields ``None``.

    Returns:
        The pick as a new ``dict``, or ``None`` when there is none. Never raises.

    Example:
        >>> extract_action('I will greet.\\n```json\\n{"call": "greet", "args": {"x": 1}}\\n```')
        {'call': 'greet', 'args': {'x': 1}}
        >>> extract_action('{"call": "a"} on second thought {"call": "b"}')
        {'call': 'b'}
        >>> extract_action("no pick here") is None
        True
    """
    if type(text) is str:
        reply = text
    elif isinstance(text, str):
        reply = str.__str__(text)  # an exact str, whatever the subclass overrides
    elif isinstance(text, bytes):
        reply = bytes.decode(text, "utf-8", "replace")
    elif isinstance(text, bytearray):
        reply = bytearray.decode(text, "utf-8", "replace")
    elif isinstance(text, dict):
        return _from_dict(text)
    else:
        return None
    start = reply.find("{")
    if start < 0:
        return None
    if len(reply) >= _SHORTCUT_FROM:
        fenced = _fenced_last(reply)
        if fenced is not None:
            return fenced
    return _extract(reply, start)


def _fenced_last(reply: str) -> dict[str, Any] | None:
    """The pick when it is a long reply's last fenced block, found without reading the rest.

    The object that opens the last fenced block (```` ```json ````, or the block a closing fence
    never ended) is the answer when it parses, carries a call key and no anchor follows it: no
    pick comes after it, and no object before it can hold it (a fence line stands between, which
    is no JSON), so reading the reply group by group would end at the same object. A reply that
    quotes many objects before its pick is settled this way at C speed. Anything else (no fence,
    a block that does not parse, an anchor after it) returns ``None``: read the whole reply.
    """
    close = reply.rfind("```")
    if close < 0:
        return None
    opening = reply.rfind("```", 0, close)
    for fence in (close, opening) if opening >= 0 else (close,):
        line_end = reply.find("\n", fence + 3)
        if line_end < 0:
            continue
        language = reply[fence + 3 : line_end].strip()
        if language and not language.isalnum():
            continue
        start = line_end + 1
        while start < len(reply) and reply[start] in " \t\r\n":
            start += 1
        if start == len(reply) or reply[start] != "{":
            continue
        found, failed_at, end = _decode_group(reply, start, [len(reply)])
        if found is None or failed_at != _UNKNOWN or not _carries(found):
            return None
        if any(reply.find(anchor, end) >= 0 for anchor in _ANCHORS):
            return None
        return found
    return None


def _carries(value: dict[str, Any]) -> bool:
    return "call" in value or "action" in value or "function" in value or "tool" in value


def _from_dict(value: dict[Any, Any]) -> dict[str, Any] | None:
    """A shallow copy of an already parsed pick, or ``None`` when it carries no call key."""
    try:
        if any(dict.__contains__(value, key) for key in CALL_KEYS):
            return dict(dict.items(value))
    except Exception:  # a hostile key or subclass: not a pick, and never an error
        return None
    return None


def _extract(reply: str, pos: int) -> dict[str, Any] | None:
    """The last pick in ``reply``, whose first ``{`` is at ``pos``: group by group, in order."""
    find = reply.find
    # Some anchor at or after ``pos``; past it, the next of each anchor is looked up again
    # (each search starts where the previous one ended, so all of them take linear time).
    next_anchor = find('"call"', pos)
    upcoming: list[int] = []
    if next_anchor < 0:
        upcoming = [find(anchor, pos) for anchor in _ANCHORS]
        next_anchor = max(upcoming)
        if next_anchor < 0:
            return None
    budget = [_BUDGET_PER_CHARACTER * len(reply) + _BUDGET_SLACK]
    best: dict[str, Any] | None = None
    misses = 0
    while True:
        # Here ``pos`` is a "{" outside every brace: the start of a group.
        if next_anchor < pos:
            if not upcoming:
                upcoming = [next_anchor] * len(_ANCHORS)
            for index, at in enumerate(upcoming):
                if 0 <= at < pos:
                    upcoming[index] = find(_ANCHORS[index], pos)
            next_anchor = max(upcoming)
            if next_anchor < 0:
                return best  # no anchor from here on: nothing further can be a pick
        if misses == _PARSE_FIRST_MISSES:
            found, _ = _pick_in(reply, pos, len(reply), False, _UNKNOWN, budget)
            return best if found is None else found
        end = find("}", pos) + 1
        if (
            end
            and find('"', pos, end) < 0
            and find("{", pos + 1, end) < 0
            and find("\\", pos, end) < 0
        ):
            # Prose like "{name}": no string, no nested brace, no anchor, so no pick.
            pos = find("{", end)
            if pos < 0:
                return best
            continue
        found, failed_at, end = _decode_group(reply, pos, budget)
        if found is not None:
            if _carries(found):
                best = found
        else:
            misses += 1
            if budget[0] >= 0:
                found, end = _pick_in(reply, pos, len(reply), True, failed_at, budget)
                if found is not None:
                    best = found
            if budget[0] < 0:
                return best
        pos = find("{", end)
        if pos < 0:
            return best


def _pick_in(
    text: str, pos: int, stop: int, one_group: bool, failed_at: int, budget: list[int]
) -> tuple[dict[str, Any] | None, int]:
    """The last pick in the group at ``pos``, or in the groups of ``text[pos:stop]``.

    Args:
        text: The reply.
        pos: A ``{`` outside every brace.
        stop: Where to stop at the latest.
        one_group: Read only the group at ``pos``.
        failed_at: Where parsing the group at ``pos`` as a whole failed, if known.
        budget: Characters the parser may still be handed, in a one-item list.

    Returns:
        The pick or ``None``, and where the scan stopped.
    """
    starts, ends, first, groups = _scan(text, pos, stop, True, one_group)
    end = groups[-1][1]
    anchors = _anchors(text, pos, end)
    top = len(starts) - 1
    high = len(anchors)
    for group_start, group_end, lowest, handled in reversed(groups):
        low = bisect_left(anchors, group_start, 0, high)
        high = bisect_left(anchors, group_end, low, high)
        if low < high:  # the group holds anchors[low:high]
            found = _search(
                text, starts, ends, first, lowest, top, anchors, low, high, failed_at, budget
            )
            if found is None and budget[0] >= 0:
                braces = text.count("{", group_start, group_end)
                braces += text.count("}", group_start, group_end)
                if braces > handled:
                    # The scan took braces for string content, and a stray quote may have
                    # swallowed the pick that way: read the group again for braces only.
                    found = _search_braces_only(
                        text, group_start, group_end, anchors, low, high, budget
                    )
            if found is not None or budget[0] < 0:
                return found, end
        top = lowest - 1
        high = low
    return None, end


def _search_braces_only(
    text: str, start: int, stop: int, anchors: list[int], low: int, high: int, budget: list[int]
) -> dict[str, Any] | None:
    starts, ends, first, _ = _scan(text, start, stop, False, False)
    top = len(starts) - 1
    return _search(text, starts, ends, first, 0, top, anchors, low, high, _UNKNOWN, budget, False)


def _anchors(text: str, start: int, stop: int) -> list[int]:
    """The positions of all anchors in ``text[start:stop]``, in order."""
    found: list[int] = []
    find = text.find
    for anchor in _ANCHORS:
        at = find(anchor, start, stop)
        while at >= 0:
            found.append(at)
            at = find(anchor, at + 1, stop)
    found.sort()
    return found


def _scan(
    text: str, pos: int, stop: int, aware: bool, one_group: bool
) -> tuple[list[int], list[int], list[int], list[tuple[int, int, int, int]]]:
    """The tree of balanced brace spans in ``text[pos:stop]``, where ``text[pos]`` is ``{``.

    Args:
        text: The reply.
        pos: Where to start: a ``{`` outside every brace.
        stop: Where to stop at the latest.
        aware: Skip JSON strings (inside braces only: outside them, quotes are prose).
        one_group: Stop where the brace at ``pos`` closes.

    Returns:
        ``(starts, ends, first, groups)``. Span ``k`` runs from the ``{`` at ``starts[k]`` to
        the ``}`` at ``ends[k]``; spans are numbered in closing order, so the descendants of
        span ``k`` are the spans ``first[k]`` to ``k - 1``. ``groups`` lists, for each brace
        opened outside every brace, ``(start, end, first span, braces taken as braces)``,
        where ``end`` is just after its closing brace (``stop`` when it does not close).
    """
    starts: list[int] = []
    ends: list[int] = []
    first: list[int] = []
    groups: list[tuple[int, int, int, int]] = []
    open_at: list[int] = []  # positions of the unclosed braces, innermost last
    open_first: list[int] = []  # the number of spans recorded when each was opened
    finditer = (_TOKEN if aware else _TOKEN_BRACES_ONLY).finditer
    find = text.find
    group_start = pos
    handled = 0  # braces taken as braces since the group started
    matches = finditer(text, pos, stop)
    while True:
        restart = -1
        for match in matches:
            begin, after = match.span(1)
            size = after - begin
            if text[begin] == "{":
                if not open_at:
                    group_start = begin
                    handled = 0
                handled += size
                if size == 1:
                    open_at.append(begin)
                    open_first.append(len(starts))
                else:
                    open_at.extend(range(begin, after))
                    open_first.extend([len(starts)] * size)
                continue
            depth = len(open_at)
            if size == 1 and depth:
                starts.append(open_at.pop())
                first.append(open_first.pop())
                ends.append(begin)
                handled += 1
                if open_at:
                    continue
                closed = 1
            elif depth:
                closed = size if size < depth else depth
                cut = depth - closed
                starts.extend(reversed(open_at[cut:]))
                first.extend(reversed(open_first[cut:]))
                ends.extend(range(begin, begin + closed))
                del open_at[cut:], open_first[cut:]
                handled += closed
                if cut:
                    continue
            else:  # closing braces outside every brace mean nothing
                if aware and match.end() > after and find('"', after, match.end()) >= 0:
                    restart = after
                    break
                continue
            # The group is closed: we are outside every brace again.
            groups.append((group_start, begin + closed, first[-1], handled))
            if one_group:
                return starts, ends, first, groups
            if aware and match.end() > after and find('"', after, match.end()) >= 0:
                restart = after  # the token took a prose quote for a string: go back
                break
        if restart < 0:
            break
        pos = find("{", restart, stop)
        if pos < 0:
            break
        matches = finditer(text, pos, stop)
    if open_at:  # the last group never closes
        groups.append((group_start, stop, open_first[0], handled))
    return starts, ends, first, groups


def _search(
    text: str,
    starts: list[int],
    ends: list[int],
    first: list[int],
    lowest: int,
    top: int,
    anchors: list[int],
    low: int,
    high: int,
    failed_at: int,
    budget: list[int],
    infer: bool = True,
) -> dict[str, Any] | None:
    """The last pick among the spans ``lowest`` to ``top`` (one group), parents first.

    Args:
        text: The reply.
        starts: Where each span starts (see ``_scan``).
        ends: Where each span ends.
        first: The first descendant of each span.
        lowest: The lowest span of the group.
        top: The highest span of the group (its root, when it closes).
        anchors: Anchor positions; ``anchors[low:high]`` are the group's.
        low: See ``anchors``.
        high: See ``anchors``.
        failed_at: Where parsing the group as a whole failed, if known.
        budget: Characters the parser may still be handed, in a one-item list.
        infer: Spans come from a string-aware scan, so a span that contains the position where
            an enclosing span failed fails there too (see the module docstring).
    """
    node = top
    anchor = high - 1
    # Failed spans around the current one, innermost last: their first descendant and the
    # position where they failed (or _UNKNOWN).
    failed_first: list[int] = []
    failed_pos: list[int] = []
    if infer and failed_at >= 0:
        failed_first.append(lowest)
        failed_pos.append(failed_at)
    heights: list[int] | None = None
    max_height = 0
    while node >= lowest:
        end = ends[node]
        # Spans come in decreasing order of their end: move to the last anchor before it.
        while anchor >= low and anchors[anchor] >= end:
            anchor -= 1
        if anchor < low:
            return None  # no anchor before this span: nothing earlier can be a pick
        start = starts[node]
        if anchors[anchor] < start:
            node = first[node] - 1  # no anchor inside: skip the span and its descendants
            continue
        while failed_first and failed_first[-1] > node:
            del failed_first[-1], failed_pos[-1]
        if failed_first and start < failed_pos[-1] <= end:
            # An enclosing span failed at a position inside this one: so does this one.
            failed_first.append(first[node])
            failed_pos.append(failed_pos[-1])
            node -= 1
            continue
        if text[start + 1] not in _OBJECT_SECOND:
            failed = start + 1  # what the parser would say, for much less
        elif first[node] == node and not _OBJECT_OPENING.match(text, start, end + 1):
            failed = _UNKNOWN  # not an object; with no span inside, where it fails is moot
        elif heights is not None and heights[node] > max_height:
            failed = _UNKNOWN  # nested deeper than the parser goes
        else:
            found, failed = _decode_span(text, start, end + 1, budget)
            if found is not None:
                if _carries(found):
                    return found
                node = first[node] - 1  # valid data without a call key hides its inside
                continue
            if budget[0] < 0:
                return None
            if failed == _TOO_DEEP:
                if heights is None:
                    heights = _heights(first)
                    max_height = _parsable_depth()
                failed = _UNKNOWN
        if infer and first[node] < node:
            failed_first.append(first[node])
            failed_pos.append(failed)
        node -= 1
    return None


def _decode_group(
    text: str, start: int, budget: list[int]
) -> tuple[dict[str, Any] | None, int, int]:
    """Parse the JSON object at ``text[start]`` in place, however far it goes.

    In place, a syntax error costs a count of the lines before it (``JSONDecodeError`` keeps
    a line number): at most ``_PARSE_FIRST_MISSES`` failures per reply pay it.

    Returns:
        ``(value, _UNKNOWN, end)`` on success; otherwise ``(None, failure, start)`` where
        ``failure`` is the absolute position where the parse failed, or ``_UNKNOWN`` or
        ``_TOO_DEEP``. The characters parsed are taken from ``budget[0]``.
    """
    try:
        value, end = _parse_at(text, start)
    except StopIteration as error:
        failed: int = error.value
    except json.JSONDecodeError as error:
        failed = error.pos
    except RecursionError:
        return None, _TOO_DEEP, start
    except ValueError:  # NaN or Infinity, or an integer too long to convert
        return None, _UNKNOWN, start
    else:
        budget[0] -= end - start
        return value, _UNKNOWN, end
    budget[0] -= failed - start
    return None, failed, start


def _decode_span(
    text: str, start: int, stop: int, budget: list[int]
) -> tuple[dict[str, Any] | None, int]:
    """Parse ``text[start:stop]`` as one JSON object.

    A slice is parsed, since a syntax error in place would cost a count of all the lines before
    it; a long one through a window that grows fourfold while the parse fails near the window's
    end, so the cost follows how far the parse got rather than the length of the span. Every
    character handed to the parser is taken from ``budget[0]``.

    Returns:
        ``(object, _UNKNOWN)`` on success; otherwise ``(None, failure)`` where ``failure`` is
        the absolute position where the parse failed, or ``_UNKNOWN`` or ``_TOO_DEEP``. When the
        budget runs out the failure is ``_UNKNOWN`` and ``budget[0]`` is negative.
    """
    size = _WINDOW
    while True:
        cut = start + size
        if cut > stop:
            cut = stop
        budget[0] -= cut - start
        if budget[0] < 0:
            return None, _UNKNOWN
        try:
            value, end = _parse_at(text[start:cut], 0)
        except StopIteration as error:
            failed: int = error.value
            unterminated = False
        except json.JSONDecodeError as error:
            failed = error.pos
            unterminated = error.msg.startswith("Unterminated")
        except RecursionError:
            return None, _TOO_DEEP
        except ValueError:  # NaN or Infinity, or an integer too long to convert
            return None, _UNKNOWN
        else:
            if cut == stop and end == cut - start:
                return value, _UNKNOWN
            return None, _UNKNOWN  # cannot happen: the scan and the parser agree on strings
        if cut < stop and (unterminated or failed > cut - start - _TAIL):
            size *= 4  # the window may have cut the object short: widen it
            continue
        return None, start + failed


def _heights(first: list[int]) -> list[int]:
    """The nesting height of every span (1 for a span with no spans inside)."""
    heights = [1] * len(first)
    pending: list[int] = []  # spans whose parent is not recorded yet
    for node, lowest in enumerate(first):
        tallest = 0
        while pending and pending[-1] >= lowest:
            child = heights[pending.pop()]
            if child > tallest:
                tallest = child
        heights[node] = tallest + 1
        pending.append(node)
    return heights


def _parsable_depth() -> int:
    """The deepest nesting the JSON parser accepts here (it depends on the call stack)."""
    low, high = 0, 1
    while high <= _DEPTH_PROBE_LIMIT and _nests(high):
        low, high = high, high * 2
    if high > _DEPTH_PROBE_LIMIT:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        if _nests(middle):
            low = middle
        else:
            high = middle
    return low


def _nests(depth: int) -> bool:
    try:
        _parse_at("[" * depth + "]" * depth, 0)
    except RecursionError:
        return False
    return True
