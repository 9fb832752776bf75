"""validate_result: every result rule of section 3, each failure typed and named."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_opdecide.questions import (
    BooleanAnswer,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResult,
    InvalidResultError,
    ProviderUsage,
    Rule,
    ScoreAnswer,
    validate_result,
)
from pytest_opdecide.questions._validate import written_decimals

REQUEST = DecisionRequest.model_validate(
    {
        "model": "alias",
        "context": "ctx",
        "questions": {
            "route": {
                "type": "choice",
                "instructions": "x",
                "options": {"a": None, "b": None, "c": "C"},
            },
            "level": {
                "type": "score",
                "instructions": "x",
                "levels": ["low", {"mid": 1}, ["high", True]],
            },
            "flag": {"type": "boolean", "instructions": "x"},
        },
    }
)

GOOD: dict[str, Any] = {
    "model": "model-2024-01-01",
    "answers": {
        "route": {"type": "choice", "choice": "b", "probabilities": {"a": 0.2, "b": 0.5, "c": 0.3}},
        "level": {
            "type": "score",
            "score": 1.25,
            "probabilities": {"0": 0.25, "1": 0.25, "2": 0.5},
            "legend": {"0": "low", "1": {"mid": 1}, "2": ["high", True]},
            "confidence": 0.9,
        },
        "flag": {"type": "boolean", "probability": 0.5},
    },
    "usage": {"promptTokens": 1, "completionTokens": 1, "totalTokens": 2},
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """GOOD with the value at a dotted path replaced (``...DELETE`` removes it)."""
    data = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    target = data
    for part in parents:
        target = target[part]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return data


def test_a_good_result_passes_and_is_returned() -> None:
    result = DecisionResult.model_validate(GOOD)
    assert validate_result(REQUEST, result) is result
    assert validate_result(REQUEST, GOOD) == result


@pytest.mark.parametrize(
    ("path", "value", "rule", "question"),
    [
        ("model", "", Rule.RESULT_MODEL, None),
        ("model", "   ", Rule.RESULT_MODEL, None),
        ("answers.flag", ..., Rule.ANSWERS_MISSING, "flag"),
        (
            "answers.extra",
            {"type": "boolean", "probability": 0.5},
            Rule.ANSWERS_UNEXPECTED,
            "extra",
        ),
        (
            "answers.flag",
            {"type": "choice", "choice": "a", "probabilities": {"a": 1.0}},
            Rule.ANSWER_TYPE,
            "flag",
        ),
        ("answers.route.choice", "z", Rule.CHOICE_SELECTION, "route"),
        (
            "answers.route.probabilities",
            {"a": 0.5, "b": 0.5},
            Rule.CHOICE_PROBABILITY_KEYS,
            "route",
        ),
        (
            "answers.route.probabilities",
            {"a": 0.2, "b": 0.5, "c": 0.2, "d": 0.1},
            Rule.CHOICE_PROBABILITY_KEYS,
            "route",
        ),
        (
            "answers.route.probabilities",
            {"a": -0.1, "b": 0.8, "c": 0.3},
            Rule.PROBABILITY_RANGE,
            "route",
        ),
        (
            "answers.route.probabilities",
            {"a": 1.2, "b": -0.1, "c": -0.1},
            Rule.PROBABILITY_RANGE,
            "route",
        ),
        (
            "answers.route.probabilities",
            {"a": 0.2, "b": 0.5, "c": 0.1},  # 0.8: one place each explains 3 x 0.05
            Rule.PROBABILITY_SUM,
            "route",
        ),
        (
            "answers.route.probabilities",
            {"a": 0.25, "b": 0.5, "c": 0.2},  # 0.95: two places each explain 3 x 0.005
            Rule.PROBABILITY_SUM,
            "route",
        ),
        ("answers.route.confidence", 1.5, Rule.CONFIDENCE_RANGE, "route"),
        ("answers.level.probabilities", {"0": 0.5, "1": 0.5}, Rule.SCORE_PROBABILITY_KEYS, "level"),
        (
            "answers.level.probabilities",
            {"0": 0.25, "1": 0.25, "two": 0.5},
            Rule.SCORE_PROBABILITY_KEYS,
            "level",
        ),
        ("answers.level.score", 1.5, Rule.SCORE_WEIGHTED_MEAN, "level"),
        ("answers.level.score", 2.5, Rule.SCORE_RANGE, "level"),
        ("answers.level.score", -0.5, Rule.SCORE_RANGE, "level"),
        ("answers.level.legend", {"0": "low", "1": {"mid": 1}}, Rule.SCORE_LEGEND, "level"),
        (
            "answers.level.legend",
            {"0": "low", "1": {"mid": 1.0}, "2": ["high", True]},
            Rule.SCORE_LEGEND,
            "level",
        ),
        (
            "answers.level.legend",
            {"0": "low", "1": {"mid": 1}, "2": ["high", 1]},
            Rule.SCORE_LEGEND,
            "level",
        ),
        (
            "answers.level.legend",
            {"0": "LOW", "1": {"mid": 1}, "2": ["high", True]},
            Rule.SCORE_LEGEND,
            "level",
        ),
        ("answers.level.confidence", -0.01, Rule.CONFIDENCE_RANGE, "level"),
        ("answers.flag.probability", 1.5, Rule.PROBABILITY_RANGE, "flag"),
        ("answers.flag.probability", True, Rule.BOOLEAN_PROBABILITY, "flag"),
        ("answers.flag.probability", False, Rule.BOOLEAN_PROBABILITY, "flag"),
        ("usage.promptTokens", -1, Rule.RESULT_USAGE, None),
        ("usage.totalTokens", 1.5, Rule.RESULT_USAGE, None),
    ],
)
def test_each_result_rule(path: str, value: Any, rule: Rule, question: str | None) -> None:
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, changed(path, value))
    error = caught.value
    assert (error.rule, error.question) == (rule, question)
    assert rule.value in str(error)
    if question is not None:
        assert f"question {question!r}" in str(error)


def test_model_objects_built_without_validation_are_checked_too() -> None:
    result = DecisionResult.model_validate(GOOD)
    result.answers["flag"] = BooleanAnswer.model_construct(type="boolean", probability=True)
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, result)
    assert (caught.value.rule, caught.value.question, caught.value.value) == (
        Rule.BOOLEAN_PROBABILITY,
        "flag",
        True,
    )
    result.answers["flag"] = BooleanAnswer.model_construct(type="boolean", probability=float("nan"))
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, result)
    assert caught.value.rule == Rule.PROBABILITY_RANGE
    result.answers["flag"] = BooleanAnswer(probability=0.5)
    result.usage = ProviderUsage.model_construct(
        prompt_tokens=True, completion_tokens=0, total_tokens=0
    )
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, result)
    assert caught.value.rule == Rule.RESULT_USAGE


def test_rounded_probabilities_within_tolerance_pass_unchanged() -> None:
    rounded = changed("answers.route.probabilities", {"a": 0.333, "b": 0.333, "c": 0.333})
    rounded["answers"]["route"]["choice"] = "a"
    result = validate_result(REQUEST, rounded)
    assert result.choice("route").probabilities == {"a": 0.333, "b": 0.333, "c": 0.333}
    # Three places each: their rounding explains 3 x 0.0005, past a tolerance of 1e-4.
    assert validate_result(REQUEST, rounded, tolerance=1e-4) == result
    close = changed("answers.route.probabilities", {"a": 0.3331, "b": 0.3331, "c": 0.3331})
    close["answers"]["route"]["choice"] = "a"
    validate_result(REQUEST, close)  # 0.9993: within the tolerance of 0.001
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, close, tolerance=1e-4)  # four places explain 3 x 0.00005
    assert caught.value.rule == Rule.PROBABILITY_SUM


def test_values_of_no_decimals_show_no_rounding_to_allow_for() -> None:
    """Every probability 0 or 1 shows no rounding: 0, 0, 0 is no distribution, however many
    options (a provider that rounds to whole numbers says so: ``{"decimals": 0}``)."""
    zeros = changed("answers.route.probabilities", {"a": 0.0, "b": 0.0, "c": 0.0})
    zeros["answers"]["route"]["choice"] = "a"
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, zeros)
    assert caught.value.rule == Rule.PROBABILITY_SUM
    assert "must sum to 1 within 0.001; they sum to 0.0" in str(caught.value)
    one_hot = changed("answers.route.probabilities", {"a": 1.0, "b": 0.0, "c": 0.0})
    one_hot["answers"]["route"]["choice"] = "a"
    assert validate_result(REQUEST, one_hot).choice("route").probabilities["a"] == 1.0
    stated = changed("metadata", {"questions": {"route": {"rounding": {"decimals": 0}}}})
    stated["answers"]["route"] = zeros["answers"]["route"]
    validate_result(REQUEST, stated)  # stated: rounding to whole numbers explains 3 x 0.5


def test_the_places_read_from_the_values_are_those_python_writes() -> None:
    assert [written_decimals(v) for v in (0.33, 1.0, 0.0, 1e-05, 0.5, round(2 / 3, 3))] == [
        2,
        0,
        0,
        5,
        1,
        3,
    ]
    assert written_decimals(0.1 + 0.2) == 17  # computed, not rounded
    # Exponents count too: 1.5e-05 is 0.000015, and 1e+16 has none.
    assert [written_decimals(v) for v in (1.5e-05, 2.25e-10, 1e16, 1.5e20, 5e-324)] == [
        6,
        12,
        0,
        0,
        324,
    ]


def test_score_tolerance_scales_with_the_scale_and_can_be_set() -> None:
    # two levels' worth of rounding: 1.25 + 0.0015 is within tolerance * (L - 1) = 0.002
    close = changed("answers.level.score", 1.2515)
    assert validate_result(REQUEST, close).score("level").score == 1.2515
    with pytest.raises(InvalidResultError):
        validate_result(REQUEST, close, score_tolerance=1e-4)


def test_a_result_that_does_not_parse_names_the_question() -> None:
    data = changed("answers.route.probabilities", {"a": "0.2", "b": 0.5, "c": 0.3})
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, data)
    assert (caught.value.rule, caught.value.question) == (Rule.PROBABILITY_RANGE, "route")
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, changed("answers.route.type", "rating"))
    assert (caught.value.rule, caught.value.question) == (Rule.RESULT_SHAPE, "route")
    with pytest.raises(InvalidResultError) as caught:
        validate_result(REQUEST, "not json")
    assert caught.value.rule == Rule.RESULT_SHAPE


def test_answers_are_checked_against_the_request_given_as_a_mapping() -> None:
    wire_request = REQUEST.model_dump(by_alias=True, mode="json")
    assert validate_result(wire_request, GOOD).model == "model-2024-01-01"


def test_a_boolean_probability_is_never_thresholded() -> None:
    result = validate_result(REQUEST, changed("answers.flag.probability", 0.51))
    answer = result.boolean("flag")
    assert answer.probability == 0.51
    assert type(answer.probability) is float


def test_answer_classes_built_directly_pass() -> None:
    result = DecisionResult(
        model="m",
        answers={
            "route": ChoiceAnswer(choice="c", probabilities={"a": 0.0, "b": 0.0, "c": 1.0}),
            "level": ScoreAnswer(
                score=0.0,
                probabilities={"0": 1.0, "1": 0.0, "2": 0.0},
                legend={"0": "low", "1": {"mid": 1}, "2": ["high", True]},
            ),
            "flag": BooleanAnswer(probability=0.0),
        },
    )
    assert validate_result(REQUEST, result) is result
