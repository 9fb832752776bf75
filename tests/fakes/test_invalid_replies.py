"""``invalid_replies``: replies that must each end in ``DecisionError`` of the advertised kind."""

from __future__ import annotations

from typing import Any

import pytest

from fake_runtimes import InvalidReply, ScriptedRuntime, every_option, invalid_replies
from pytest_opdecide import DecisionError, decision

from ._fresh_process import json_from_fresh_process
from ._typed_options import TYPED_OPTIONS

CONTEXT = {"ticket_id": "T-42"}
ALL_KINDS = [
    "no_action",
    "unknown_call",
    "bad_args",
    "missing_required",
    "type_mismatch",
    "enum_violation",
]
RATING: dict[str, Any] = {
    "rate": ("Rate the answer.", {"stars": {"type": int, "options": [1, 2, 3]}}),
    "skip": ("SKIP", "Pick when there is nothing to rate."),
}


def test_rich_options_give_every_kind_and_a_wrong_type_per_field() -> None:
    cases = invalid_replies(TYPED_OPTIONS)
    assert list(dict.fromkeys(case.kind for case in cases)) == ALL_KINDS
    wrong_types = [(c.option, c.field) for c in cases if c.kind == "type_mismatch"]
    parameters = [
        "title",
        "count",
        "ratio",
        "urgent",
        "tags",
        "extra",
        "kind",
        "color",
        "priority",
        "assignee",
        "ref",
        "address",
        "item",
        "customer",
        "items",
        "counts",
        "team",
        "note",
        "limit",
    ]
    assert wrong_types == [
        *(("update_ticket", name) for name in parameters),
        ("plan", "steps"),
        ("plan", "rationale"),
        ("classify", "label"),
        ("classify", "score"),
        ("classify", "evidence"),
        ("classify", "meta"),
    ]


def test_options_without_fields_give_the_kinds_they_allow() -> None:
    assert [case.kind for case in invalid_replies(["close", "wait"])] == ALL_KINDS[:3]


def test_the_replies_and_descriptions_of_a_small_menu() -> None:
    cases = [(c.kind, c.reply, c.description) for c in invalid_replies(RATING)]
    assert cases == [
        ("no_action", "I am not sure which option fits best here.", "no JSON pick"),
        ("unknown_call", '{"call": "made_up_option"}', "an option not offered"),
        ("bad_args", '{"call": "rate", "args": [1, 2]}', "args not an object"),
        ("missing_required", '{"call": "rate", "args": {}}', "rate without 'stars'"),
        (
            "type_mismatch",
            '{"call": "rate", "args": {"stars": "not a number"}}',
            "rate.stars = 'not a number'",
        ),
        ("enum_violation", '{"call": "rate", "args": {"stars": 4}}', "rate.stars = 4"),
    ]


def test_str_is_the_kind_and_the_field_for_readable_test_ids() -> None:
    assert [str(case) for case in invalid_replies(RATING)] == [
        "no_action",
        "unknown_call",
        "bad_args",
        "missing_required:rate.stars",
        "type_mismatch:rate.stars",
        "enum_violation:rate.stars",
    ]


@pytest.mark.parametrize("case", invalid_replies(TYPED_OPTIONS), ids=str)
def test_each_ends_in_decision_error_of_its_kind(case: InvalidReply) -> None:
    runtime = ScriptedRuntime(case.reply)
    with pytest.raises(DecisionError) as caught:
        decision.make("Decide.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT, max_retries=0)
    assert caught.value.kind == case.kind
    assert caught.value.replies == [case.reply]


@pytest.mark.parametrize("case", invalid_replies(TYPED_OPTIONS), ids=str)
async def test_each_ends_in_decision_error_on_the_async_path(case: InvalidReply) -> None:
    runtime = ScriptedRuntime(case.reply)
    with pytest.raises(DecisionError) as caught:
        await decision.make_async(
            "Decide.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT, max_retries=0
        )
    assert caught.value.kind == case.kind


@pytest.mark.parametrize("case", invalid_replies(TYPED_OPTIONS), ids=str)
def test_each_fails_a_working_turn_after_its_repick(case: InvalidReply) -> None:
    runtime = ScriptedRuntime(case.reply, case.reply)
    with pytest.raises(DecisionError) as caught:
        runtime.exec("Work, then decide.", choices=TYPED_OPTIONS, context=CONTEXT)
    assert caught.value.kind == case.kind
    assert caught.value.attempts == 2


@pytest.mark.parametrize("case", invalid_replies(RATING), ids=str)
def test_the_code_recovers_when_the_repick_is_valid(case: InvalidReply) -> None:
    runtime = ScriptedRuntime(case.reply, *every_option(RATING)[1:])
    assert decision.make("Rate.", RATING, runtime=runtime) == "SKIP"
    repick = runtime.calls[1]
    assert repick.kind == "repick"
    assert repick.prompt.startswith(f"Previous reply:\n{case.reply}\n\nProblem: ")


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no_action", "Reply contained no parseable JSON with a 'call' field."),
        (
            "unknown_call",
            "Picked 'made_up_option', which is not an available option. "
            "Valid options: ['rate', 'skip']",
        ),
        ("bad_args", "args must be an object, got list"),
        ("missing_required", "Option 'rate' is missing required fields: ['stars']"),
        ("type_mismatch", "Field 'stars' must be int, got str ('not a number')"),
        ("enum_violation", "Field 'stars' must be one of [1, 2, 3], got 4"),
    ],
)
def test_the_messages_users_see(case: str, message: str) -> None:
    (reply,) = [c for c in invalid_replies(RATING) if c.kind == case]
    with pytest.raises(DecisionError) as caught:
        decision.make("Rate.", RATING, runtime=ScriptedRuntime(reply.reply), max_retries=0)
    assert caught.value.message == message


def test_the_made_up_option_is_never_a_real_one() -> None:
    options = {"made_up_option": "A", "made_up_option_": "B"}
    (unknown,) = [c for c in invalid_replies(options) if c.kind == "unknown_call"]
    assert unknown.reply == '{"call": "made_up_option__"}'


def test_the_value_outside_the_allowed_ones_is_never_allowed() -> None:
    options = {"tag": ("Tag.", {"label": {"type": str, "options": ["not_an_allowed_value"]}})}
    (outside,) = [c for c in invalid_replies(options) if c.kind == "enum_violation"]
    assert outside.reply == '{"call": "tag", "args": {"label": "not_an_allowed_value_"}}'


def test_deterministic_by_seed_and_across_processes() -> None:
    assert invalid_replies(TYPED_OPTIONS, seed=5) == invalid_replies(TYPED_OPTIONS, seed=5)
    code = """
        import json
        from fake_runtimes import invalid_replies
        from fakes._typed_options import TYPED_OPTIONS
        print(json.dumps([c.reply for c in invalid_replies(TYPED_OPTIONS, seed=5)]))
    """
    expected = [c.reply for c in invalid_replies(TYPED_OPTIONS, seed=5)]
    assert json_from_fresh_process(code, hash_seed="7") == expected
