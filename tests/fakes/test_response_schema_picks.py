"""The menu's JSON schema against the picks the fakes make: every valid pick matches it, every
invalid reply that is JSON does not (checked with jsonschema, draft 2020-12, formats included)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_runtimes import every_option, invalid_replies
from pytest_opdecide import decision, strategies

from ._typed_options import BOOKING_OPTIONS, TYPED_OPTIONS

MENUS = {"typed": TYPED_OPTIONS, "booking": BOOKING_OPTIONS}


def validator(options: Any) -> jsonschema.Draft202012Validator:
    schema = decision.response_schema(options)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@pytest.mark.parametrize("menu", sorted(MENUS))
@pytest.mark.parametrize("seed", range(5))
def test_every_option_pick_matches_the_schema(menu: str, seed: int) -> None:
    check = validator(MENUS[menu])
    picks = every_option(MENUS[menu], seed=seed)
    assert len(picks) == len(decision.response_schema(MENUS[menu])["anyOf"])
    for step in picks:
        errors = [error.message for error in check.iter_errors(json.loads(step.text))]
        assert errors == [], step


@pytest.mark.parametrize("menu", sorted(MENUS))
def test_every_invalid_reply_that_is_json_breaks_the_schema(menu: str) -> None:
    check = validator(MENUS[menu])
    tried = 0
    for case in invalid_replies(MENUS[menu]):
        if case.kind == "no_action":
            continue
        tried += 1
        assert not check.is_valid(json.loads(case.reply)), case
    assert tried >= 5


def test_a_pick_of_one_option_with_another_options_arguments_breaks_it() -> None:
    check = validator(BOOKING_OPTIONS)
    assert check.is_valid({"call": "cancel"})
    assert not check.is_valid({"call": "cancel", "args": {"until": "2024-05-01", "fare": 1}})
    assert check.is_valid({"call": "hold", "args": {"until": "2024-05-01", "fare": "12.50"}})
    assert not check.is_valid({"call": "hold", "args": {"until": "May 1st", "fare": 1}})
    assert not check.is_valid({"call": "hold"})
    assert not check.is_valid({"call": "book_flight"})
    assert not check.is_valid({"call": "cancel", "reason": "extra keys are closed out"})


def branch(options: Any, name: str) -> jsonschema.Draft202012Validator:
    """A validator of the schema's branch for one option (the root's definitions kept), so
    that its errors are the branch's own rather than "not valid under any of anyOf"."""
    schema = decision.response_schema(options)
    for found in schema.get("anyOf", [schema]):
        if found["properties"]["call"]["enum"] == [name]:
            return jsonschema.Draft202012Validator(
                {**found, "$defs": schema.get("$defs", {})},
                format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
            )
    raise AssertionError(f"no branch for {name!r}")


def canonical(text: str) -> dict[str, Any]:
    """A reply's pick as the menu's ``Call:`` line writes it (``args`` only when non-empty)."""
    action = decision.extract_action(text)
    assert action is not None
    pick: dict[str, Any] = {"call": action["call"]}
    if action["args"]:
        pick["args"] = action["args"]
    return pick


# Drawing a reply from a schema filters out what the schema refuses: on a busy machine
# (the lowest-versions run shares its 2 cores with the rest of `make test`) that is slow
# enough for Hypothesis's health check, though each example is checked as always.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_valid_replies_match_the_schema(data: st.DataObject) -> None:
    options = data.draw(strategies.option_sets())
    reply = data.draw(strategies.valid_replies(options))
    pick = canonical(reply.text)
    assert validator(options).is_valid(pick) or not branch(options, pick["call"]).is_valid(pick)
    for error in branch(options, pick["call"]).iter_errors(pick):
        assert _narrowing(error), (reply, error.message)


def _narrowing(error: Any) -> bool:
    """The one narrowing on purpose: free text that starts like a placeholder, or holds what a
    grammar would have to escape, refused by its pattern; for an optional field (``anyOf`` of
    the text and ``null``), one branch refused it by that pattern alone."""
    if error.validator == "pattern":
        text = error.instance
        return text.startswith("<") or any(c in text for c in '"\\\n\r\t')
    if error.validator in ("anyOf", "oneOf"):
        by_branch: dict[Any, list[Any]] = {}
        for sub in error.context:
            by_branch.setdefault(sub.schema_path[0], []).append(sub)
        return any(all(_narrowing(sub) for sub in subs) for subs in by_branch.values())
    return False
