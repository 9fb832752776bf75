"""ProviderError, its six codes, and the validation errors: the tree drawn in _errors.py."""

from __future__ import annotations

import pytest

from pytest_opdecide.questions import (
    PROVIDER_ERROR_CODES,
    DecisionValidationError,
    InvalidRequestError,
    InvalidResultError,
    ProviderConfigError,
    ProviderError,
    Rule,
)


def test_the_six_codes() -> None:
    assert PROVIDER_ERROR_CODES == (
        "rate_limit",
        "auth_error",
        "invalid_request",
        "server_error",
        "timeout",
        "unknown",
    )


@pytest.mark.parametrize("code", PROVIDER_ERROR_CODES)
def test_provider_error_carries_its_fields(code: str) -> None:
    error = ProviderError("slow down", code, status_code=429, retry_after=1.5)  # type: ignore[arg-type]
    assert (error.message, error.code, error.status_code, error.retry_after) == (
        "slow down",
        code,
        429,
        1.5,
    )
    assert str(error) == "slow down"
    assert repr(error) == (
        f"ProviderError('slow down', code={code!r}, status_code=429, retry_after=1.5)"
    )


def test_optional_fields_default_to_none() -> None:
    error = ProviderError("boom", "unknown")
    assert error.status_code is None
    assert error.retry_after is None


def test_an_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown ProviderError code 'teapot'"):
        ProviderError("x", "teapot")  # type: ignore[arg-type]


def test_the_exception_tree() -> None:
    assert issubclass(InvalidRequestError, ProviderError)
    assert issubclass(InvalidRequestError, DecisionValidationError)
    assert issubclass(InvalidResultError, DecisionValidationError)
    assert not issubclass(InvalidResultError, ProviderError)
    assert issubclass(DecisionValidationError, ValueError)
    assert issubclass(ProviderConfigError, ProviderError)
    assert not issubclass(ProviderError, ValueError)


def test_invalid_request_error_is_an_invalid_request_provider_error() -> None:
    error = InvalidRequestError(
        "a choice question needs at least 2 options, got 1",
        rule=Rule.CHOICE_TOO_FEW_OPTIONS,
        question="route",
        value=["only"],
    )
    assert error.code == "invalid_request"
    assert error.status_code is None
    assert (error.question, error.rule, error.value) == (
        "route",
        Rule.CHOICE_TOO_FEW_OPTIONS,
        ["only"],
    )
    assert str(error) == (
        "question 'route': choice.too_few_options: a choice question needs at least 2 options, "
        "got 1 (got ['only'])"
    )


def test_messages_name_the_request_or_result_when_no_question_is_concerned() -> None:
    assert str(InvalidRequestError("no questions", rule=Rule.QUESTIONS_EMPTY, value={})).startswith(
        "request: questions.empty: no questions"
    )
    assert str(InvalidResultError("empty", rule=Rule.RESULT_MODEL, value="")).startswith(
        "result: result.model: empty"
    )


def test_long_values_are_shortened_in_messages() -> None:
    error = InvalidResultError("too long", rule=Rule.RESULT_SHAPE, value="x" * 1000)
    assert len(str(error)) < 300
    assert error.value == "x" * 1000
