"""validate_request: every request rule, each failure typed and named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    InvalidRequestError,
    ProviderError,
    Rule,
    ScoreQuestion,
    validate_request,
)


def wire(**questions: Any) -> dict[str, Any]:
    return {"model": "m", "context": {"k": "v"}, "questions": questions}


def choice(options: dict[str, Any]) -> dict[str, Any]:
    return {"type": "choice", "instructions": "pick", "options": options}


def score(levels: list[Any]) -> dict[str, Any]:
    return {"type": "score", "instructions": "rate", "levels": levels}


def test_a_valid_request_is_returned_unchanged() -> None:
    request = DecisionRequest.model_validate(
        wire(q=choice({"a": None, "b": "x"}), s=score(["low", "high"]))
    )
    assert validate_request(request) is request


def test_a_mapping_or_json_text_becomes_a_request() -> None:
    data = wire(q=choice({"a": None, "b": "x"}))
    assert validate_request(data) == DecisionRequest.model_validate(data)
    assert validate_request(json.dumps(data)) == DecisionRequest.model_validate(data)
    assert validate_request(json.dumps(data).encode()) == DecisionRequest.model_validate(data)


@pytest.mark.parametrize(
    ("data", "rule", "question", "value"),
    [
        (wire(), Rule.QUESTIONS_EMPTY, None, {}),
        (wire(q=choice({"only": None})), Rule.CHOICE_TOO_FEW_OPTIONS, "q", ["only"]),
        (wire(q=choice({})), Rule.CHOICE_TOO_FEW_OPTIONS, "q", []),
        (wire(q=choice({"a": None, "": None})), Rule.CHOICE_EMPTY_OPTION_NAME, "q", ""),
        (wire(q=choice({"a": None, "  ": None})), Rule.CHOICE_EMPTY_OPTION_NAME, "q", "  "),
        (
            wire(q=choice({"Yes": None, " yes ": None})),
            Rule.CHOICE_DUPLICATE_OPTION_NAMES,
            "q",
            ["Yes", " yes "],
        ),
        (wire(s=score([])), Rule.SCORE_TOO_FEW_LEVELS, "s", []),
        (wire(s=score(["only"])), Rule.SCORE_TOO_FEW_LEVELS, "s", ["only"]),
        (
            {"model": "m", "context": "", "questions": {"": choice({"a": None, "b": None})}},
            Rule.QUESTION_ID,
            None,
            "",
        ),
    ],
)
def test_each_request_rule(
    data: dict[str, Any], rule: Rule, question: str | None, value: object
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(data)
    error = caught.value
    assert (error.rule, error.question, error.value) == (rule, question, value)
    assert error.code == "invalid_request"
    assert isinstance(error, ProviderError)
    assert rule.value in str(error)
    if question is not None:
        assert f"question {question!r}" in str(error)
    assert repr(value) in str(error)


@pytest.mark.parametrize(
    ("context", "where"),
    [
        ({"when": object()}, "context"),
        ({"n": float("nan")}, "context"),
        ({"s": {1}}, "context"),
        (7, "context"),
    ],
)
def test_non_json_context_is_an_invalid_request(context: object, where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(
            {"model": "m", "context": context, "questions": {"q": choice({"a": None, "b": None})}}
        )
    assert caught.value.rule == Rule.REQUEST_JSON
    assert caught.value.question is None
    assert where in str(caught.value)


def test_non_json_inside_a_question_names_the_question() -> None:
    data = wire(q=choice({"a": {"when": {1, 2}}, "b": None}))
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(data)
    assert (caught.value.rule, caught.value.question) == (Rule.REQUEST_JSON, "q")
    assert "options" in str(caught.value)


def test_a_malformed_shape_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        validate_request({"model": "m", "questions": {}})
    assert caught.value.rule == Rule.REQUEST_SHAPE
    assert "context" in str(caught.value)
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(["not", "a", "mapping"])  # type: ignore[arg-type]
    assert caught.value.rule == Rule.REQUEST_SHAPE


def test_json_text_with_repeated_option_names_is_refused() -> None:
    text = (
        '{"model": "m", "context": "", "questions": {"q": {"type": "choice", '
        '"instructions": "x", "options": {"a": null, "b": null, "a": "again"}}}}'
    )
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(text)
    assert (caught.value.rule, caught.value.question, caught.value.value) == (
        Rule.CHOICE_DUPLICATE_OPTION_NAMES,
        "q",
        ["a"],
    )


def test_json_text_with_other_repeated_keys_or_nan_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        validate_request('{"model": "m", "model": "n", "context": "", "questions": {}}')
    assert caught.value.rule == Rule.REQUEST_SHAPE
    with pytest.raises(InvalidRequestError, match="NaN is not a JSON number"):
        validate_request('{"model": "m", "context": {"x": NaN}, "questions": {}}')
    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        validate_request("{nope")


def test_provider_limits() -> None:
    many = {f"o{i}": None for i in range(5)}
    request = DecisionRequest.model_validate(
        wire(a=choice(many), b=score(["0", "1", "2"]), c={"type": "boolean", "instructions": "x"})
    )
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request, max_options=4)
    assert (caught.value.rule, caught.value.question) == (Rule.CHOICE_TOO_MANY_OPTIONS, "a")
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request, max_levels=2)
    assert (caught.value.rule, caught.value.question) == (Rule.SCORE_TOO_MANY_LEVELS, "b")
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request, max_questions=2)
    assert caught.value.rule == Rule.QUESTIONS_TOO_MANY
    assert validate_request(request, max_options=5, max_levels=3, max_questions=3) is request


def test_models_built_without_validation_are_still_checked() -> None:
    question = ChoiceQuestion.model_construct(
        type="choice", instructions="x", options={"a": {"when": object()}, "b": None}
    )
    request = DecisionRequest.model_construct(model="m", context="", questions={"q": question})
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request)
    assert (caught.value.rule, caught.value.question) == (Rule.REQUEST_JSON, "q")


def test_mutation_after_construction_is_caught() -> None:
    request = DecisionRequest(
        model="m",
        context={"x": 1},
        questions={
            "b": BooleanQuestion(instructions="x", criteria=BooleanCriteria(true={"ok": 1})),
            "s": ScoreQuestion(instructions="x", levels=["a", "b"]),
        },
    )
    assert isinstance(request.context, dict)
    request.context["x"] = float("inf")
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request)
    assert caught.value.rule == Rule.REQUEST_JSON
    request.context["x"] = 1
    criteria = request.questions["b"].criteria  # type: ignore[union-attr]
    assert criteria is not None
    criteria.true = {"bad": b"bytes"}
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(request)
    assert (caught.value.rule, caught.value.question) == (Rule.REQUEST_JSON, "b")
    assert "criteria.true" in str(caught.value)


def test_the_first_broken_rule_is_reported_in_question_order() -> None:
    data = wire(first=choice({"only": None}), second=score([]))
    with pytest.raises(InvalidRequestError) as caught:
        validate_request(data)
    assert caught.value.question == "first"
