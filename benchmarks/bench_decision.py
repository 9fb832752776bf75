"""``decision.make`` on the menus real code builds (issue 22), and on a reused menu (2 and 12).

The headline: each shape of :mod:`benchmarks.decision_shapes` (closures defined per call,
descriptions carrying the ticket id, schema options, 2 to 1,000 options), the menu built anew
on every call as the seed writes it, through a ``FunctionRuntime`` with ``pick(...)`` (a user's
fake, its default settings), against the two anchors of :mod:`benchmarks.decision_anchors` in
the same run, round by round: the reference's per-call work (target: at most 1.0 times) and a
hand-written minimal decision (target: at most 2.0 times). How cost grows from 100 to 1,000
options is a row of its own (linear: 10 times; target at most 12). The cold first call (every
cache cleared) is compared with the reference's per-call work on the closures shape.

The older figures follow:

The menu: 2 function options, 1 schema option (a nested list of objects with an enum field) and
7 value options; the reply is prose plus a fenced JSON pick of the schema option.

Three figures, each with a baseline measured in the same run:

- **Reused menu**: the options dict built once, at module level. Target: at most 40 µs per call
  (median); the baseline is the same call with every cache cleared first.
- **Fresh dict per call**: the menu written as the seed writes it, a dict literal inside a
  method, so that every call builds a new dict (the same functions and schema specs, new dict
  and tuples). Target: at most 1.3 times the reused menu.
- **pydantic's share**: the validation of the pick's arguments by the option's pydantic
  validator, timed alone, against the whole reused call. Target: at most 10%.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from benchmarks import Measurement, median_ratio, median_seconds, paired_rounds
from benchmarks.decision_anchors import minimal_make, reference_make
from benchmarks.decision_shapes import SHAPES
from fake_runtimes import FunctionRuntime, pick
from pytest_opdecide import ModelReply, ModelRequest, Runtime, decision
from pytest_opdecide._nextstep import _options

PICK: dict[str, Any] = {
    "call": "emit_plan",
    "args": {
        "steps": [
            {"action": "backup", "target": "db", "priority": "high"},
            {"action": "migrate", "target": "db", "priority": "low"},
        ],
        "rationale": "Back up before migrating.",
    },
}
REPLY = ModelReply(
    text=(
        "The customer wants a plan for the migration, so I will lay out the steps and say why.\n"
        f"```json\n{json.dumps(PICK)}\n```\n"
    )
)


class FixedRuntime(Runtime):
    def call_model(self, request: ModelRequest) -> ModelReply:
        return REPLY


def lookup_order(order_id: str, verbose: bool = False) -> dict[str, Any]:
    """Look up an order by id."""
    return {"order_id": order_id}


def issue_refund(amount: float, reason: str) -> str:
    """Refund the customer."""
    return f"refunded {amount}"


OPTIONS: dict[str, Any] = {
    "lookup_order": lookup_order,
    "issue_refund": issue_refund,
    "emit_plan": (
        "Return a structured plan.",
        {
            "steps": [
                {
                    "action": str,
                    "target": str,
                    "priority": {"type": str, "options": ["low", "high"]},
                }
            ],
            "rationale": str,
        },
    ),
    "close": ("CLOSED", "Nothing left to do."),
    "escalate": ("ESCALATED", "A human must look."),
    "wait": "WAITING",
    "spam": "SPAM",
    "duplicate": ("DUPLICATE", "Already handled elsewhere."),
    "reopen": "REOPENED",
    "ask": ("ASKED", "Ask the customer a question."),
}


class Router:
    """The code under test as the seed writes it: the menu is a literal inside the method."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def route(self) -> Any:
        return decision.make(
            "Decide the next step for this ticket.",
            {
                "lookup_order": lookup_order,
                "issue_refund": issue_refund,
                "emit_plan": (
                    "Return a structured plan.",
                    {
                        "steps": [
                            {
                                "action": str,
                                "target": str,
                                "priority": {"type": str, "options": ["low", "high"]},
                            }
                        ],
                        "rationale": str,
                    },
                ),
                "close": ("CLOSED", "Nothing left to do."),
                "escalate": ("ESCALATED", "A human must look."),
                "wait": "WAITING",
                "spam": "SPAM",
                "duplicate": ("DUPLICATE", "Already handled elsewhere."),
                "reopen": "REOPENED",
                "ask": ("ASKED", "Ask the customer a question."),
            },
            runtime=self.runtime,
        )


def _once(runtime: FixedRuntime) -> Any:
    return decision.make("Decide the next step for this ticket.", OPTIONS, runtime=runtime)


def _cold(runtime: FixedRuntime) -> Any:
    _options.clear_caches()
    return _once(runtime)


PROMPT = "Decide the next step for ticket {ticket}."
_TICKETS = itertools.count()  # a new ticket id on every call


def _shape_rows() -> list[Measurement]:
    rows: list[Measurement] = []
    per_call: dict[str, dict[str, float]] = {}
    for title, build, (name, args) in SHAPES:

        def step(call: Any, name: str = name, args: dict[str, Any] = args) -> Any:
            return pick(name, **args)

        runtime = FunctionRuntime(step)
        text = f"I pick this.\n```json\n{json.dumps({'call': name, 'args': args})}\n```\n"

        def model(prompt: str, text: str = text) -> str:
            return text

        def ours(build: Any = build, runtime: FunctionRuntime = runtime) -> Any:
            ticket = f"T-{next(_TICKETS)}"
            return decision.make(PROMPT.format(ticket=ticket), build(ticket), runtime=runtime)

        def reference(build: Any = build, model: Any = model) -> Any:
            ticket = f"T-{next(_TICKETS)}"
            return reference_make(PROMPT.format(ticket=ticket), build(ticket), model)

        def minimal(build: Any = build, model: Any = model) -> Any:
            ticket = f"T-{next(_TICKETS)}"
            return minimal_make(PROMPT.format(ticket=ticket), build(ticket), model)

        expected = ours()
        if reference() != expected or minimal() != expected:  # a fast wrong answer is no figure
            raise AssertionError(f"{title}: the anchors resolve the pick differently")
        number = max(5, 2000 // len(build("T")))
        for fn in (ours, reference, minimal):
            for _ in range(number):
                fn()
        # 15 rounds of a fifth of the calls each, the three back to back in every round, so
        # that all three see the same machine load; a ratio is the median of the rounds' own.
        # The trace grows over the 15 rounds as it did over 3 runs of all the calls (a runtime
        # outside a test keeps the latest 1,000).
        runtime.trace.clear()
        medians, times = paired_rounds(
            {"ours": ours, "reference": reference, "minimal": minimal},
            rounds=15,
            number=max(5, number // 5),
        )
        us = {key: value * 1e6 for key, value in medians.items()}
        per_call[title] = us
        rows.append(
            Measurement(
                f"decision.make, {title} / reference's per-call work",
                median_ratio(times, "ours", "reference"),
                "x",
                1.0,
                baseline=1.0,
                note=f"ours {us['ours']:.1f} µs, reference {us['reference']:.1f} µs",
            )
        )
        rows.append(
            Measurement(
                f"decision.make, {title} / hand-written minimal",
                median_ratio(times, "ours", "minimal"),
                "x",
                2.0,
                baseline=1.0,
                note=f"ours {us['ours']:.1f} µs, minimal {us['minimal']:.1f} µs",
            )
        )
    # How cost grows: 10 times the options should cost at most about 10 times (linear); the
    # reference's own growth, in the same run, is the baseline.
    small, large = per_call["100 options"], per_call["1,000 options"]
    rows.append(
        Measurement(
            "decision.make, 1,000 options / 100 options (growth; linear is 10)",
            large["ours"] / small["ours"],
            "x",
            12.0,
            baseline=large["reference"] / small["reference"],
            note=f"2 options {per_call['2 options']['ours']:.1f} µs, 100 options "
            f"{small['ours']:.1f} µs, 1,000 options {large['ours']:.1f} µs; baseline: the "
            "reference's growth",
        )
    )
    return rows


def _cold_row() -> Measurement:
    title, build, (name, args) = SHAPES[0]
    runtime = FunctionRuntime(lambda call: pick(name, **args))
    text = f"```json\n{json.dumps({'call': name, 'args': args})}\n```\n"

    def cold() -> Any:
        _options.clear_caches()
        return decision.make(PROMPT.format(ticket="T-1"), build("T-1"), runtime=runtime)

    def reference() -> Any:
        return reference_make(PROMPT.format(ticket="T-1"), build("T-1"), lambda prompt: text)

    rounds = itertools.count()

    def every_fifth_round() -> None:  # the trace keeps the calls of 5 rounds, 150 at most
        if next(rounds) % 5 == 0:
            runtime.trace.clear()

    medians, times = paired_rounds(
        {"cold": cold, "reference": reference}, rounds=25, number=30, between=every_fifth_round
    )
    ours, theirs = medians["cold"] * 1e6, medians["reference"] * 1e6
    return Measurement(
        f"decision.make, cold first call ({title}) / reference's per-call work",
        median_ratio(times, "cold", "reference"),
        "x",
        1.0,
        baseline=1.0,
        note=f"cold {ours:.1f} µs, reference {theirs:.1f} µs",
    )


def run() -> list[Measurement]:
    rows = _shape_rows()
    rows.append(_cold_row())
    return rows + _reused_rows()


def _reused_rows() -> list[Measurement]:
    runtime = FixedRuntime()
    router = Router(runtime)
    assert _once(runtime)["decision"] == "emit_plan"
    assert router.route() == _once(runtime)
    for _ in range(2000):
        _once(runtime)
        router.route()
    validator_of = _options.normalize_options(OPTIONS).by_name["emit_plan"].validator
    assert validator_of is not None
    args = PICK["args"]
    validate = validator_of.validate_parsed  # what a pick parsed from reply text goes through
    # The trace keeps every call (tens of thousands here, a few MB); it is cleared between the
    # measurements, not inside them, so that what is timed is decision.make alone. The reused
    # and fresh figures alternate, round by round, so that both see the same machine load.
    reused_rounds, fresh_rounds = [], []
    for _ in range(5):
        runtime.trace.clear()
        reused_rounds.append(median_seconds(lambda: _once(runtime), repeat=3, number=2000))
        runtime.trace.clear()
        fresh_rounds.append(median_seconds(router.route, repeat=3, number=2000))
    runtime.trace.clear()
    reused = sorted(reused_rounds)[2]
    fresh = sorted(fresh_rounds)[2]
    pydantic = median_seconds(lambda: validate(args), repeat=15, number=20000)
    cold = median_seconds(lambda: _cold(runtime), repeat=7, number=300)
    return [
        Measurement(
            "decision.make, 10 options, schema pick, reused menu (median per call)",
            reused * 1e6,
            "µs",
            40.0,
            baseline=cold * 1e6,
            note="baseline: every cache cleared before each call",
        ),
        Measurement(
            "decision.make, menu as a fresh dict per call / reused menu",
            fresh / reused,
            "x",
            1.3,
            baseline=1.0,
            note=f"fresh {fresh * 1e6:.2f} µs, reused {reused * 1e6:.2f} µs (same run)",
        ),
        Measurement(
            "pydantic validation of the pick's arguments / decision.make (reused)",
            pydantic / reused,
            "share",
            0.10,
            baseline=1.0,
            note=f"validation {pydantic * 1e6:.2f} µs of {reused * 1e6:.2f} µs",
        ),
    ]
