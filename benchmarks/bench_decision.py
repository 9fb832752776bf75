"""``decision.make`` through a fixed-reply runtime on a 10-option menu (issue 2).

The menu: 2 function options, 1 schema option (a nested list of objects with an enum field) and
7 value options; the reply is prose plus a fenced JSON pick of the schema option. Target: at
most 40 µs per call (median). The baseline is the same call with every cache cleared first.
"""

from __future__ import annotations

from typing import Any

from benchmarks import Measurement, median_seconds
from pytest_opdecide import ModelReply, ModelRequest, Runtime, _options, decision

REPLY = ModelReply(
    text=(
        "The customer wants a plan for the migration, so I will lay out the steps and say why.\n"
        "```json\n"
        '{"call": "emit_plan", "args": {"steps": [{"action": "backup", "target": "db", '
        '"priority": "high"}, {"action": "migrate", "target": "db", "priority": "low"}], '
        '"rationale": "Back up before migrating."}}\n'
        "```\n"
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


def _once(runtime: FixedRuntime) -> Any:
    return decision.make("Decide the next step for this ticket.", OPTIONS, runtime=runtime)


def _cold(runtime: FixedRuntime) -> Any:
    _options._menu_cache.clear()
    _options._menu_text_cache.clear()
    _options._schema_cache.clear()
    _options._function_cache.clear()
    return _once(runtime)


def run() -> list[Measurement]:
    runtime = FixedRuntime()
    assert _once(runtime)["decision"] == "emit_plan"
    for _ in range(2000):
        _once(runtime)
    # The trace keeps every call (30,000 here, a few MB); it is cleared between the two
    # measurements, not inside them, so that what is timed is decision.make alone.
    runtime.trace.clear()
    warm = median_seconds(lambda: _once(runtime), repeat=15, number=2000)
    runtime.trace.clear()
    cold = median_seconds(lambda: _cold(runtime), repeat=7, number=300)
    assert len(runtime.trace) == 7 * 300
    return [
        Measurement(
            "decision.make, 10 options, schema pick (median per call)",
            warm * 1e6,
            "µs",
            40.0,
            baseline=cold * 1e6,
            note="baseline: every cache cleared before each call",
        )
    ]
