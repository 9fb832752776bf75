"""The hypothesis strategies of ``pytest_opdecide.strategies``: what they draw is what they say.

Each property runs the library on what a strategy draws: option sets normalise and render,
valid replies resolve to the option they pick, invalid replies end in the ``DecisionError`` of
their kind, requests validate and round-trip their wire JSON, results validate, and the fake
provider answers every generated request.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_runtimes import FakeDecisionProvider, ScriptedRuntime
from pytest_opdecide import DecisionError, decision, strategies
from pytest_opdecide._nextstep._options import normalize_options
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    InvalidResultError,
    Rule,
    ScoreQuestion,
    validate_request,
    validate_result,
)

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- options and replies --------------------------------------------------------------------


@SETTINGS
@given(strategies.option_sets())
def test_option_sets_normalise_and_render_every_option(options: Any) -> None:
    menu = normalize_options(options)
    text = decision.render_options(options)
    assert isinstance(options, dict | list)
    for name in menu.names:
        assert f'"call": "{name}"' in text or f'"call": {json.dumps(name)}' in text


@SETTINGS
@given(st.sampled_from(["dict", "list"]), st.data())
def test_option_sets_keep_to_the_form_and_kinds_asked(form: Any, data: st.DataObject) -> None:
    options = data.draw(strategies.option_sets(form=form, kinds=["schema"], max_size=3))
    assert isinstance(options, dict if form == "dict" else list)
    assert {option.kind for option in normalize_options(options).options} == {"schema"}


def test_option_sets_cover_every_kind_and_nested_schemas() -> None:
    kinds: set[str] = set()
    nested = False

    @settings(max_examples=60, deadline=None, database=None)
    @given(strategies.option_sets())
    def collect(options: Any) -> None:
        nonlocal nested
        for option in normalize_options(options).options:
            kinds.add(option.kind)
            nested = nested or any(
                type(f.type).__name__ in ("ObjectSpec", "ListSpec") for f in option.fields
            )

    collect()
    assert kinds == {"function", "value", "schema"}
    assert nested


@SETTINGS
@given(st.data())
def test_valid_replies_resolve_to_the_picked_option(data: st.DataObject) -> None:
    options = data.draw(strategies.option_sets())
    reply = data.draw(strategies.valid_replies(options))
    chosen, kwargs = decision.parse_args(reply.text, options, max_retries=0)
    picked = chosen if isinstance(chosen, str) else chosen.__name__
    menu = normalize_options(options)
    if menu.by_name[reply.option].kind == "function":
        assert chosen is menu.by_name[reply.option].handler
    else:
        assert picked == reply.option
    assert set(kwargs) <= set(reply.args) | {f.name for f in menu.by_name[reply.option].hidden}


@SETTINGS
@given(st.data())
def test_a_scripted_runtime_resolves_every_valid_reply(data: st.DataObject) -> None:
    options = data.draw(strategies.option_sets(kinds=["value", "schema"]))
    reply = data.draw(strategies.valid_replies(options))
    runtime = ScriptedRuntime(reply.text)
    result = decision.make("Pick the next step.", options, runtime=runtime)
    option = normalize_options(options).by_name[reply.option]
    if option.kind == "schema":
        assert result["decision"] == reply.option
    else:
        assert result == option.value
    runtime.assert_complete()


@SETTINGS
@given(st.data())
def test_invalid_replies_end_in_a_decision_error_of_their_kind(data: st.DataObject) -> None:
    options = data.draw(strategies.option_sets())
    bad = data.draw(strategies.invalid_replies(options))
    with pytest.raises(DecisionError) as caught:
        decision.parse_args(bad.reply, options, max_retries=0)
    assert caught.value.kind == bad.kind


# --- questions, requests and results --------------------------------------------------------


@SETTINGS
@given(strategies.decision_requests(max_questions=4))
def test_requests_are_valid_and_round_trip_their_wire_json(request: DecisionRequest) -> None:
    assert validate_request(request) is request
    wire = request.model_dump(by_alias=True, mode="json")
    again = DecisionRequest.model_validate(json.loads(json.dumps(wire)))
    assert again.model_dump(by_alias=True, mode="json") == wire


@SETTINGS
@given(
    strategies.decision_requests(
        ["choice"], min_questions=2, max_questions=2, max_options=26, model="m-1"
    )
)
def test_requests_keep_to_the_limits_asked(request: DecisionRequest) -> None:
    assert len(request.questions) == 2
    assert request.model == "m-1"
    for question in request.questions.values():
        assert isinstance(question, ChoiceQuestion)
        assert 2 <= len(question.options) <= 26


@SETTINGS
@given(strategies.questions(["score", "boolean"], max_levels=3))
def test_questions_of_the_types_asked(question: Any) -> None:
    assert isinstance(question, ScoreQuestion | BooleanQuestion)
    if isinstance(question, ScoreQuestion):
        assert 2 <= len(question.levels) <= 3


@SETTINGS
@given(st.data())
def test_results_are_valid_for_their_request(data: st.DataObject) -> None:
    request = data.draw(strategies.decision_requests())
    result = data.draw(strategies.decision_results(request))
    assert isinstance(result, DecisionResult)
    assert validate_result(request, result) is result
    for answer in result.answers.values():
        if answer.type != "boolean":
            assert math.isclose(math.fsum(answer.probabilities.values()), 1.0, abs_tol=1e-3)


@SETTINGS
@given(st.data())
def test_a_result_missing_an_answer_breaks_the_rule(data: st.DataObject) -> None:
    request = data.draw(strategies.decision_requests(min_questions=2))
    result = data.draw(strategies.decision_results(request))
    dropped = data.draw(st.sampled_from(sorted(result.answers)))
    broken = result.model_copy(
        update={"answers": {k: v for k, v in result.answers.items() if k != dropped}}
    )
    with pytest.raises(InvalidResultError) as caught:
        validate_result(request, broken)
    assert caught.value.rule is Rule.ANSWERS_MISSING
    assert caught.value.question == dropped


@SETTINGS
@given(strategies.decision_requests(max_questions=3))
def test_the_fake_provider_answers_every_generated_request(request: DecisionRequest) -> None:
    provider = FakeDecisionProvider(seed=1)
    result = provider.decide_sync(request)
    validate_result(request, result)
    assert provider.requests == [request]


# --- contexts and realistic text ------------------------------------------------------------


@SETTINGS
@given(strategies.contexts())
def test_contexts_are_json_and_keep_their_structure_in_a_request(context: Any) -> None:
    request = DecisionRequest(
        model="m",
        context=context,
        questions={"q": BooleanQuestion(instructions="Is it about an order?")},
    )
    assert request.context == json.loads(json.dumps(context))


@SETTINGS
@given(strategies.contexts(text=False))
def test_structured_contexts_are_objects_or_arrays(context: Any) -> None:
    assert isinstance(context, dict | list)


@pytest.mark.parametrize("kind", sorted(strategies.TEXT_KINDS))
def test_realistic_text_is_the_same_for_the_same_example(kind: str) -> None:
    drawn: list[str] = []

    @settings(max_examples=5, deadline=None, database=None, derandomize=True)
    @given(strategies.realistic_text(kind))
    def collect(text: str) -> None:
        assert text.strip()
        drawn.append(text)

    collect()
    first = list(drawn)
    drawn.clear()
    collect()
    assert drawn == first


def test_strategy_arguments_are_checked_when_the_strategy_is_made() -> None:
    with pytest.raises(ValueError, match="unknown text kind"):
        strategies.realistic_text("haiku")
    with pytest.raises(ValueError, match="at least 2 options"):
        strategies.choice_questions(min_options=1)
    with pytest.raises(ValueError, match="question types"):
        strategies.questions(["poll"])
    with pytest.raises(ValueError, match="kinds"):
        strategies.option_sets(kinds=["macro"])
    with pytest.raises(ValueError, match="structured=True or text=True"):
        strategies.contexts(structured=False, text=False)
    with pytest.raises(ValueError, match="options must offer at least one option"):
        strategies.valid_replies({})
