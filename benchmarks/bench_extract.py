"""``extract_action``: linear time on hostile replies, a few microseconds on typical ones.

The first two figures are the targets of the design (1 MB of ``{``; 1 MB of random braces,
quotes and backslashes). Neither holds a call key, so both are settled by the anchor check
before any scan; the ``+ pick`` figures append a pick to the same text, which defeats that
check and makes the whole scan and search run, as does the deep nest. The scaling figure is the
exponent ``k`` in ``time ~ size**k`` between 250 kB and 1 MB of junk with a pick: 1 is linear,
2 quadratic. The baseline of the ``10,000 {`` row restarts ``raw_decode`` at every ``{``, the
quadratic approach this module replaces.
"""

from __future__ import annotations

import json
import math
import random
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
