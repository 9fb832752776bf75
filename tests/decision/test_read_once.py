"""A strict fake's check of a scripted pick and the decision that reads it: one read.

A strict fake reads each scripted pick as the decision will (``options.parse_reply``) before it
sends it, so that a pick the option would refuse fails with what to fix. The decision then reads
the very same text against the very same menu: that pick is handed over, not read again, where
nothing but the text and the menu decides it (no hidden parameter, no argument that can be
changed in place), and once.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from fake_runtimes import FunctionRuntime, pick
from pytest_opdecide import FromContext, decision
from pytest_opdecide._nextstep import _procedure
from pytest_opdecide._nextstep._extract import extract_action as extract
from pytest_opdecide.options import normalize_options, parse_reply


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every reply text the decision library extracts a pick from."""
    seen: list[Any] = []

    def counted(reply: Any) -> Any:
        seen.append(reply)
        return extract(reply)

    monkeypatch.setattr(_procedure, "extract_action", counted)
    monkeypatch.setattr(_procedure, "_read_before", None)
    return seen


def _refund(amount: float, reason: str) -> str:
    return f"refunded {amount}: {reason}"


def test_a_checked_pick_is_read_once(reads: list[Any]) -> None:
    runtime = FunctionRuntime(lambda call: pick("refund", amount=3.5, reason="late"))
    assert decision.make("Route it.", {"refund": _refund, "close": "CLOSED"}, runtime=runtime) == (
        "refunded 3.5: late"
    )
    assert len(reads) == 1  # the fake's check; the decision took its pick


def test_a_pick_is_handed_over_once_and_only_for_the_same_objects(reads: list[Any]) -> None:
    menu = normalize_options({"refund": _refund, "close": "CLOSED"})
    text = '{"call": "refund", "args": {"amount": 2, "reason": "late"}}'
    option, args = parse_reply(text, menu)
    assert (option.name, args) == ("refund", {"amount": 2.0, "reason": "late"})
    # An equal text that is another object, and the same text against another menu: read anew.
    other_text = "".join(list(text))
    assert other_text == text
    assert other_text is not text
    assert _procedure.parse_once(other_text, menu, None, None)[1] == args
    assert (
        _procedure.parse_once(text, normalize_options({"refund": _refund}), None, None)[1] == args
    )
    assert len(reads) == 3
    # The very same objects: handed over, a copy the first caller's changes do not reach.
    args["amount"] = 99.0
    assert _procedure.parse_once(text, menu, None, None) == (
        option,
        {"amount": 2.0, "reason": "late"},
    )
    assert len(reads) == 3
    # Once: the next read of the same objects reads.
    assert _procedure.parse_once(text, menu, None, None)[1] == {"amount": 2.0, "reason": "late"}
    assert len(reads) == 4


def test_a_pick_with_a_context_parameter_is_read_with_the_decision_s_context(
    reads: list[Any],
) -> None:
    def note(text: str, user: Annotated[str, FromContext()]) -> str:
        return f"{user}: {text}"

    runtime = FunctionRuntime(lambda call: pick("note", text="hi"))
    # The fake checks the pick with any context (the parameter filled with None); the decision
    # fills it from its own.
    assert decision.make("Go.", {"note": note}, runtime=runtime, context={"user": "ada"}) == (
        "ada: hi"
    )
    assert len(reads) == 2


def test_a_pick_with_arguments_that_can_change_in_place_is_read_again(reads: list[Any]) -> None:
    options = {"plan": ("Return a plan.", {"steps": [str]}), "close": "CLOSED"}
    runtime = FunctionRuntime(lambda call: pick("plan", steps=["backup"]))
    assert decision.make("Plan.", options, runtime=runtime) == {
        "decision": "plan",
        "steps": ["backup"],
    }
    assert len(reads) == 2
