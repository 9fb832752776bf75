"""``extract_action``: linear time on hostile replies, a few microseconds on typical ones.

The first two figures are the targets of the design (1 MB of ``{``; 1 MB of random braces,
quotes and backslashes). Neither holds a call key, so both are settled by the anchor check
before any scan; the ``+ pick`` figures append a pick to the same text, which defeats that
check and makes the whole scan and search run, as does the deep nest. The scaling figure is the
exponent ``k`` in ``time ~ size**k`` between 250 kB and 1 MB of junk with a pick: 1 is linear,
2 quadratic. The baseline of the ``10,000 {`` row restarts ``raw_decode`` at every ``{``, the
quadratic approach this module replaces.

Against the reference (issue 22): :func:`reference_extract` reads a reply the way the reference
implementation is described to (``/work/shared/reference/next-step-decision.md``, written here
from that description): a fenced block first, else the first ``{`` that decodes to an object
carrying a call key, restarting at the next ``{`` after each one that does not. On the reply
shapes both read in linear time (a plain JSON reply; a fenced pick after prose; a reply quoting
many JSON objects before its fenced pick; a pick whose string arguments hold braces), at 10 kB,
100 kB and 1 MB, ``extract_action`` takes at most 2x the reference's time; and its time per
character at 1 MB is at most 2x that at 10 kB (linear growth).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from typing import Any

from benchmarks import Measurement, median_seconds
from pytest_opdecide._nextstep._extract import extract_action

MEGABYTE = 1_000_000
PICK = {"call": "greet", "args": {"name": "ada"}}
PICK_TEXT = json.dumps(PICK)

TYPICAL_REPLY = (
    'The user said "hello" and nothing else, so the only useful next step is to greet them '
    "back by name. Asking a question first would stall the chat, and ending it now would be "
    "rude. Greeting is cheap, friendly and reversible, so I pick it.\n\n"
    f"```json\n{PICK_TEXT}\n```\n"
)


def _junk(size: int, seed: int = 20240601) -> str:
    rng = random.Random(seed)
    return "".join(rng.choices('{}"\\', k=size))


def _restart_at_every_brace(text: str) -> dict[str, Any] | None:
    """The naive extraction: try ``raw_decode`` at every ``{``, keep the last pick."""
    decoder = json.JSONDecoder()
    found = None
    pos = text.find("{")
    while pos >= 0:
        try:
            value, _ = decoder.raw_decode(text, pos)
        except ValueError:
            pass
        else:
            if isinstance(value, dict) and "call" in value:
                found = value
        pos = text.find("{", pos + 1)
    return found


_FENCED = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_CALL_KEYS = ("call", "action", "function", "tool")


def _first_pick(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and any(key in value for key in _CALL_KEYS):
            return value
        start = text.find("{", start + 1)
    return None


def reference_extract(text: str) -> dict[str, Any] | None:
    """The reference's reading: the first pick in a fenced block, else the first in the text."""
    for block in _FENCED.findall(text):
        found = _first_pick(block)
        if found is not None:
            return found
    return _first_pick(text)


def _plain_reply(size: int) -> str:
    return json.dumps({"call": "write", "args": {"text": "x" * size}})


def _prose_then_fence(size: int) -> str:
    line = "The customer asked twice about the refund, so I route the ticket to billing.\n"
    return (line * (size // len(line) + 1))[:size] + f"\n```json\n{PICK_TEXT}\n```\n"


def _quoting_then_fence(size: int) -> str:
    lines, total, number = [], 0, 0
    while total < size:
        record = {"id": number, "name": f"order {number}", "items": [{"sku": number, "qty": 1}]}
        lines.append(f"Record {number}: {json.dumps(record)}\n")
        total += len(lines[-1])
        number += 1
    return "".join(lines) + f"\n```json\n{PICK_TEXT}\n```\n"


def _braces_in_strings(size: int) -> str:
    code = "function f(x) { if (x) { return {a: [1, {b: 2}]}; } }\n"
    return json.dumps({"call": "write", "args": {"code": (code * (size // len(code) + 1))[:size]}})


SHAPES: dict[str, Callable[[int], str]] = {
    "a plain JSON reply": _plain_reply,
    "a fenced pick after prose": _prose_then_fence,
    "a reply quoting many JSON objects before its fenced pick": _quoting_then_fence,
    "a pick whose string arguments hold braces": _braces_in_strings,
}
SIZES = (10_000, 100_000, MEGABYTE)


def reference_rows() -> list[Measurement]:
    rows = []
    for label, shape in SHAPES.items():
        per_character = {}
        for size in SIZES:
            text = shape(size)
            expected = reference_extract(text)
            if expected is None or extract_action(text) != expected:
                raise AssertionError(f"the two readings disagree on {label} ({size:,} chars)")
            number = max(1, 200_000 // size)
            ours = median_seconds(lambda: extract_action(text), repeat=7, number=number)  # noqa: B023
            theirs = median_seconds(lambda: reference_extract(text), repeat=7, number=number)  # noqa: B023
            per_character[size] = ours / len(text)
            rows.append(
                Measurement(
                    f"{label}, {size // 1000:,} kB / the reference",
                    ours / theirs,
                    "x",
                    2.0,
                    note=f"extract_action {ours * 1e6:.1f} us, reference {theirs * 1e6:.1f} us",
                )
            )
        growth = per_character[MEGABYTE] / per_character[SIZES[0]]
        rows.append(
            Measurement(
                f"{label}: time per character at 1 MB / at 10 kB (1: linear)",
                growth,
                "x",
                2.0,
            )
        )
    return rows


def _seconds(text: str, expected: object, *, repeat: int) -> float:
    if extract_action(text) != expected:  # a fast wrong answer is no figure
        raise AssertionError(f"extract_action gave a wrong answer on {text[:40]!r}...")
    return median_seconds(lambda: extract_action(text), repeat=repeat)


def run() -> list[Measurement]:
    braces = "{" * MEGABYTE
    junk = _junk(MEGABYTE)
    junk_quarter = _junk(MEGABYTE // 4)
    deep = 100_000
    deep_broken = '{"call": ' * deep + "x" + "}" * deep
    small = "{" * 10_000 + PICK_TEXT

    typical = median_seconds(lambda: extract_action(TYPICAL_REPLY), repeat=9, number=2000)
    floor = median_seconds(lambda: json.loads(PICK_TEXT), repeat=9, number=2000)
    junk_pick = _seconds(junk + "\n" + PICK_TEXT, PICK, repeat=3)
    junk_quarter_pick = _seconds(junk_quarter + "\n" + PICK_TEXT, PICK, repeat=3)
    exponent = math.log(junk_pick / junk_quarter_pick) / math.log(4)
    if _restart_at_every_brace(small) != PICK:
        raise AssertionError("the naive baseline gave a wrong answer")
    naive_small = median_seconds(lambda: _restart_at_every_brace(small), repeat=3)

    return [
        *reference_rows(),
        Measurement(
            "1 MB of '{'",
            _seconds(braces, None, repeat=5),
            "s",
            0.1,
            note="no anchor: early exit",
        ),
        Measurement(
            "1 MB of random '{', '}', '\"', '\\\\'",
            _seconds(junk, None, repeat=5),
            "s",
            0.1,
            note="no anchor: early exit",
        ),
        Measurement(
            f"typical {len(TYPICAL_REPLY)}-char reply with a fenced pick",
            typical * 1e6,
            "us",
            10.0,
            baseline=floor * 1e6,
            note="baseline: json.loads of the pick alone",
        ),
        Measurement(
            "10,000 '{' + pick",
            _seconds(small, PICK, repeat=5),
            "s",
            0.01,
            baseline=naive_small,
            note="baseline: raw_decode restarted at every '{'",
        ),
        Measurement(
            "1 MB of '{' + pick",
            _seconds(braces + PICK_TEXT, PICK, repeat=3),
            "s",
            0.5,
            note="full scan and search",
        ),
        Measurement(
            "1 MB of random junk + pick",
            junk_pick,
            "s",
            1.0,
            note="full scan and search",
        ),
        Measurement(
            f"{deep:,} nested objects with call keys, broken at the bottom",
            _seconds(deep_broken, None, repeat=3),
            "s",
            1.0,
            note="one failure position serves the whole chain",
        ),
        Measurement(
            "scaling exponent, 250 kB -> 1 MB of junk + pick",
            exponent,
            "",
            1.3,
            note="1 = linear, 2 = quadratic",
        ),
    ]
