"""The pydantic models: camelCase wire JSON, lossless round trips, JSON structure kept exactly."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_opdecide.questions import (
    AbortController,
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderUsage,
    ProviderUsagePricing,
    ScoreAnswer,
    ScoreQuestion,
)
from pytest_opdecide.questions._json import json_identical

WIRE_REQUEST: dict[str, Any] = {
    "model": "m",
    "context": {"b": "1", "a": [1, 1.0, True, None, {"z": False, "y": []}]},
    "questions": {
        "route": {
            "type": "choice",
            "instructions": ["Pick", {"strict": True}],
            "options": {"zeta": None, "alpha": {"price": "10"}, "mid": "text"},
        },
        "level": {"type": "score", "instructions": "Rate", "levels": ["bad", {"ok": 1}, ["x"]]},
        "flag": {"type": "boolean", "instructions": {"q": "?"}, "criteria": {"true": "yes!"}},
        "bare": {"type": "boolean", "instructions": "plain"},
    },
}

WIRE_RESULT: dict[str, Any] = {
    "model": "m-2024",
    "answers": {
        "route": {
            "type": "choice",
            "choice": "alpha",
            "probabilities": {"zeta": 0.1, "alpha": 0.7, "mid": 0.2},
            "confidence": 0.5,
        },
        "level": {
            "type": "score",
            "score": 1.0,
            "probabilities": {"0": 0.25, "1": 0.5, "2": 0.25},
            "legend": {"0": "bad", "1": {"ok": 1}, "2": ["x"]},
        },
        "flag": {"type": "boolean", "probability": 0.25},
    },
    "usage": {
        "promptTokens": 10,
        "completionTokens": 2,
        "totalTokens": 12,
        "reasoningTokens": 1,
        "cachedTokens": 4,
        "cost": 0.5,
        "provider": "p",
        "pricing": {"inputPerMillion": 1.0, "outputPerMillion": 2.0, "cachedInputPerMillion": 0.5},
    },
    "metadata": {"questions": {"route": {"method": "logprobs"}}},
}


def test_request_wire_round_trip_is_exact() -> None:
    request = DecisionRequest.model_validate(WIRE_REQUEST)
    dumped = request.model_dump(by_alias=True, mode="json")
    assert json.dumps(dumped) == json.dumps(WIRE_REQUEST)  # same text: same order and types
    assert DecisionRequest.model_validate(dumped) == request


def test_result_wire_round_trip_is_exact_and_camel_case() -> None:
    result = DecisionResult.model_validate(WIRE_RESULT)
    assert result.usage.prompt_tokens == 10
    assert result.usage.pricing is not None
    assert result.usage.pricing.cached_input_per_million == 0.5
    dumped = result.model_dump(by_alias=True, mode="json")
    assert json.dumps(dumped) == json.dumps(WIRE_RESULT)
    assert DecisionResult.model_validate_json(json.dumps(dumped)) == result


def test_snake_case_names_are_accepted_too() -> None:
    usage = ProviderUsage.model_validate({"prompt_tokens": 3, "completionTokens": 4})
    assert (usage.prompt_tokens, usage.completion_tokens) == (3, 4)
    assert usage.model_dump(by_alias=True) == {
        "promptTokens": 3,
        "completionTokens": 4,
        "totalTokens": 0,
    }


def test_structure_is_kept_without_coercion() -> None:
    request = DecisionRequest.model_validate(WIRE_REQUEST)
    context = request.context
    assert isinstance(context, dict)
    assert list(context) == ["b", "a"]
    assert context["b"] == "1"
    assert isinstance(context["b"], str)
    items = context["a"]
    assert isinstance(items, list)
    assert [type(item) for item in items[:4]] == [int, float, bool, type(None)]
    route = request.questions["route"]
    assert isinstance(route, ChoiceQuestion)
    assert list(route.options) == ["zeta", "alpha", "mid"]
    assert route.options["zeta"] is None
    assert route.options["alpha"] == {"price": "10"}


def test_structured_values_are_copied_not_shared() -> None:
    context: dict[str, Any] = {"items": [1]}
    request = DecisionRequest(model="m", context=context, questions={})
    context["items"].append(2)
    assert request.context == {"items": [1]}


def test_null_option_description_survives_the_round_trip() -> None:
    question = ChoiceQuestion(instructions="x", options={"a": None, "b": None})
    dumped = question.model_dump(by_alias=True, mode="json")
    assert dumped["options"] == {"a": None, "b": None}
    assert ChoiceQuestion.model_validate(dumped).options == {"a": None, "b": None}


def test_absent_optional_fields_stay_absent_on_the_wire() -> None:
    flag = BooleanQuestion(instructions="x", criteria=BooleanCriteria(false="no"))
    assert flag.model_dump(by_alias=True, mode="json") == {
        "type": "boolean",
        "instructions": "x",
        "criteria": {"false": "no"},
    }
    answer = ChoiceAnswer(choice="a", probabilities={"a": 1.0})
    assert "confidence" not in answer.model_dump(by_alias=True)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"s": {1, 2}}, "a set"),
        ({"t": (1, 2)}, "a tuple"),
        ({"b": b"raw"}, "a bytes"),
        ({"o": object()}, "a object"),
        ({"n": math.nan}, "nan"),
        ({"i": [math.inf]}, "inf"),
        ({1: "int key"}, "key 1 is not a string"),
        (5, "got int"),
        (None, "got NoneType"),
    ],
)
def test_non_json_context_is_refused(value: object, problem: str) -> None:
    with pytest.raises(ValidationError, match=problem) as caught:
        DecisionRequest(model="m", context=value, questions={})  # type: ignore[arg-type]
    assert caught.value.errors()[0]["type"] == "decision_json"


def test_unknown_question_type_and_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="rating"):
        DecisionRequest.model_validate(
            {
                "model": "m",
                "context": "",
                "questions": {"q": {"type": "rating", "instructions": ""}},
            }
        )
    with pytest.raises(ValidationError, match="option"):
        ChoiceQuestion.model_validate({"instructions": "x", "option": {"a": None}})


def test_questions_are_told_apart_by_type() -> None:
    request = DecisionRequest.model_validate(WIRE_REQUEST)
    assert isinstance(request.questions["route"], ChoiceQuestion)
    assert isinstance(request.questions["level"], ScoreQuestion)
    assert isinstance(request.questions["flag"], BooleanQuestion)


@pytest.mark.parametrize("value", [True, False, "0.5", math.nan, math.inf, None])
def test_boolean_probability_is_a_strict_finite_float(value: object) -> None:
    with pytest.raises(ValidationError):
        BooleanAnswer(probability=value)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        BooleanAnswer.model_validate_json(json.dumps({"type": "boolean", "probability": value}))


def test_boolean_probability_accepts_floats_and_integral_json_numbers() -> None:
    assert BooleanAnswer(probability=0.25).probability == 0.25
    answer = BooleanAnswer.model_validate_json('{"type": "boolean", "probability": 1}')
    assert answer.probability == 1.0
    assert type(answer.probability) is float


def test_distribution_values_refuse_bools() -> None:
    with pytest.raises(ValidationError):
        ChoiceAnswer(choice="a", probabilities={"a": True, "b": 0.0})  # type: ignore[dict-item]


def test_signal_is_carried_but_never_serialised() -> None:
    controller = AbortController()
    request = DecisionRequest(model="m", context="", questions={}, signal=controller.signal)
    assert request.signal is controller.signal
    assert "signal" not in request.model_dump(by_alias=True, mode="json")


def test_typed_accessors() -> None:
    result = DecisionResult.model_validate(WIRE_RESULT)
    assert result.choice("route").choice == "alpha"
    assert result.score("level").score == 1.0
    assert result.boolean("flag").probability == 0.25
    assert isinstance(result.answer("route", ChoiceAnswer), ChoiceAnswer)
    with pytest.raises(TypeError, match="'route' has a choice answer, not a ScoreAnswer"):
        result.score("route")
    with pytest.raises(KeyError, match="no answer for question 'nope'"):
        result.choice("nope")


def test_usage_adds_up() -> None:
    total = ProviderUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3) + ProviderUsage(
        prompt_tokens=10, completion_tokens=20, total_tokens=30, cached_tokens=5, cost=0.25
    )
    assert (total.prompt_tokens, total.completion_tokens, total.total_tokens) == (11, 22, 33)
    assert total.cached_tokens == 5
    assert total.reasoning_tokens is None
    assert total.cost is None  # the left side's cost is unknown: 0.25 would understate the sum
    both = ProviderUsage(cost=0.5) + ProviderUsage(cost=0.25)
    assert both.cost == 0.75


def test_cost_follows_the_pricing_formula() -> None:
    usage = ProviderUsage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=200_000)
    pricing = ProviderUsagePricing(
        input_per_million=2.0, output_per_million=8.0, cached_input_per_million=0.5
    )
    # uncached 800k * 2 + cached 200k * 0.5 + completion 500k * 8
    assert pricing.cost(usage) == pytest.approx(1.6 + 0.1 + 4.0)
    no_cache_price = ProviderUsagePricing(input_per_million=2.0, output_per_million=8.0)
    assert no_cache_price.cost(usage) == pytest.approx(1.6 + 0.4 + 4.0)
    priced = usage.priced(pricing)
    assert priced.cost == pytest.approx(5.7)
    assert priced.pricing == pricing


@pytest.mark.parametrize("count", ["3", True, -1, 1.5])
def test_usage_counts_are_strict_non_negative_integers(count: object) -> None:
    with pytest.raises(ValidationError):
        ProviderUsage(prompt_tokens=count)  # type: ignore[arg-type]


def test_score_answer_keeps_legend_structure() -> None:
    answer = ScoreAnswer(
        score=0.5, probabilities={"0": 0.5, "1": 0.5}, legend={"0": "a", "1": {"x": [1, "1"]}}
    )
    assert answer.model_dump(mode="json")["legend"]["1"] == {"x": [1, "1"]}


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
contexts = (
    st.text(max_size=20)
    | st.lists(json_values, max_size=4)
    | st.dictionaries(st.text(max_size=6), json_values, max_size=4)
)


@given(context=contexts, option=contexts, level=contexts)
def test_any_json_structure_round_trips_exactly(context: Any, option: Any, level: Any) -> None:
    wire = {
        "model": "m",
        "context": context,
        "questions": {
            "c": {"type": "choice", "instructions": context, "options": {"a": option, "b": None}},
            "s": {"type": "score", "instructions": "x", "levels": [level, option]},
        },
    }
    request = DecisionRequest.model_validate_json(json.dumps(wire))
    dumped = request.model_dump(by_alias=True, mode="json")
    assert json_identical(dumped, wire)
    assert json.dumps(dumped) == json.dumps(wire)
