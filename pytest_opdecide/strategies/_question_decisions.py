"""Question decisions: questions, requests and the results a provider may give for them.

Questions of the three types (:data:`QUESTION_TYPES`) with text or JSON instructions, options
and levels; requests that ask them about a context; and results that
:func:`~pytest_opdecide.questions.validate_result` accepts for a request (complete
distributions, exact or rounded within the tolerance, consistent scores).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from pytest_opdecide.questions import (
    DEFAULT_TOLERANCE,
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionContext,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderUsage,
    ScoreAnswer,
    ScoreQuestion,
    validate_result,
)
from pytest_opdecide.strategies._realistic import (
    contexts,
    json_containers,
    json_values,
    realistic_text,
)

__all__ = [
    "QUESTION_TYPES",
    "boolean_questions",
    "check_range",
    "choice_questions",
    "decision_requests",
    "decision_results",
    "option_names",
    "questions",
    "score_questions",
]

QUESTION_TYPES = ("choice", "score", "boolean")
"""The question types, in the order of the specification."""


# --- questions and requests ------------------------------------------------------------------

_INSTRUCTIONS = (
    "Which team should handle this ticket?",
    "What does the customer want most?",
    "Which reply template fits best?",
    "How urgent is this ticket?",
    "How satisfied does the customer sound?",
    "Does the customer ask for a refund?",
    "Is this message spam?",
    "Does the reply answer every question the customer asked?",
)
_OPTION_WORDS = (
    "billing", "shipping", "technical", "account", "returns", "warranty", "fraud", "sales",
    "escalate", "close", "refund", "wait", "ask_for_details", "Yes", "No", "unsure",
)  # fmt: skip
_QUESTION_IDS = (
    "route", "urgency", "refund", "intent", "sentiment", "spam", "language", "priority",
    "answered", "tone",
)  # fmt: skip


@functools.cache
def _instructions() -> st.SearchStrategy[DecisionContext]:
    return st.one_of(
        st.sampled_from(_INSTRUCTIONS),
        realistic_text("question"),
        st.fixed_dictionaries(
            {"task": st.sampled_from(_INSTRUCTIONS)},
            optional={
                "consider": st.lists(realistic_text("word"), min_size=1, max_size=3),
                "strict": st.booleans(),
            },
        ),
        st.lists(
            st.one_of(realistic_text("sentence"), json_values(max_leaves=3)), min_size=1, max_size=3
        ),
    )


def _folded(name: str) -> str:
    return name.strip().casefold()


@functools.cache
def option_names() -> st.SearchStrategy[str]:
    """Names of options: usual words, realistic words and any non-blank text."""
    return st.one_of(
        st.sampled_from(_OPTION_WORDS),
        realistic_text("word"),
        st.text(min_size=1, max_size=24).filter(lambda name: bool(name.strip())),
    )


@functools.cache
def _description() -> st.SearchStrategy[DecisionContext | None]:
    return st.one_of(st.none(), realistic_text("sentence"), json_containers(), st.text(max_size=40))


def choice_questions(
    *, min_options: int = 2, max_options: int = 6
) -> st.SearchStrategy[ChoiceQuestion]:
    """Choice questions with distinct option names (text, JSON or ``None`` descriptions).

    Args:
        min_options: The fewest options (at least 2: fewer is an invalid request).
        max_options: The most options.
    """
    check_range("options", min_options, max_options, floor=2)
    return _choice_questions(min_options, max_options)


@functools.cache
def _choice_questions(min_options: int, max_options: int) -> st.SearchStrategy[ChoiceQuestion]:
    @st.composite
    def build(draw: st.DrawFn) -> ChoiceQuestion:
        names = draw(
            st.lists(option_names(), min_size=min_options, max_size=max_options, unique_by=_folded)
        )
        return ChoiceQuestion(
            instructions=draw(_instructions()),
            options={name: draw(_description()) for name in names},
        )

    return build()


def score_questions(
    *, min_levels: int = 2, max_levels: int = 5
) -> st.SearchStrategy[ScoreQuestion]:
    """Score questions whose levels are text or JSON.

    Args:
        min_levels: The fewest levels (at least 2).
        max_levels: The most levels.
    """
    check_range("levels", min_levels, max_levels, floor=2)
    return _score_questions(min_levels, max_levels)


@functools.cache
def _score_questions(min_levels: int, max_levels: int) -> st.SearchStrategy[ScoreQuestion]:
    level: st.SearchStrategy[DecisionContext] = st.one_of(
        realistic_text("sentence"), json_containers(), st.text(max_size=30)
    )
    return st.builds(
        lambda instructions, levels: ScoreQuestion(instructions=instructions, levels=levels),
        _instructions(),
        st.lists(level, min_size=min_levels, max_size=max_levels),
    )


@functools.cache
def boolean_questions() -> st.SearchStrategy[BooleanQuestion]:
    """Boolean questions, with or without criteria for either outcome (a side or the criteria
    left out, never given as ``None``: null is refused)."""
    side: st.SearchStrategy[DecisionContext | None] = st.one_of(
        st.none(), realistic_text("sentence"), json_containers()
    )

    def given(**values: DecisionContext | None) -> dict[str, DecisionContext]:
        return {key: value for key, value in values.items() if value is not None}

    criteria = st.one_of(
        st.none(), st.builds(lambda t, f: BooleanCriteria(**given(true=t, false=f)), side, side)
    )
    return st.builds(
        lambda instructions, crit: BooleanQuestion(
            instructions=instructions, **({} if crit is None else {"criteria": crit})
        ),
        _instructions(),
        criteria,
    )


def questions(
    types: Sequence[str] = QUESTION_TYPES, *, max_options: int = 6, max_levels: int = 5
) -> st.SearchStrategy[DecisionQuestion]:
    """Questions of the given types.

    Args:
        types: Some of ``choice``, ``score`` and ``boolean``.
        max_options: The most options of a choice question.
        max_levels: The most levels of a score question.

    Raises:
        ValueError: No type, or an unknown one.
    """
    kinds = _check_types(types)
    made: list[st.SearchStrategy[DecisionQuestion]] = []
    if "choice" in kinds:
        made.append(choice_questions(max_options=max_options))
    if "score" in kinds:
        made.append(score_questions(max_levels=max_levels))
    if "boolean" in kinds:
        made.append(boolean_questions())
    return st.one_of(made)


def decision_requests(
    question_types: Sequence[str] = QUESTION_TYPES,
    *,
    min_questions: int = 1,
    max_questions: int = 3,
    max_options: int = 6,
    max_levels: int = 5,
    model: str | st.SearchStrategy[str] = "conformance-model",
    context: st.SearchStrategy[DecisionContext] | None = None,
) -> st.SearchStrategy[DecisionRequest]:
    """Valid decision requests: named questions of the given types about one context.

    Args:
        question_types: The question types to draw from.
        min_questions: The fewest questions (at least 1).
        max_questions: The most questions.
        max_options: The most options per choice question.
        max_levels: The most levels per score question.
        model: The request's model, or a strategy for it.
        context: A strategy for the context; :func:`contexts` by default.
    """
    check_range("questions", min_questions, max_questions, floor=1)
    ids = st.one_of(
        st.sampled_from(_QUESTION_IDS), st.text(min_size=1, max_size=20).filter(str.strip)
    )
    models = model if isinstance(model, st.SearchStrategy) else st.just(model)
    return st.builds(
        lambda model_, context_, questions_: DecisionRequest(
            model=model_, context=context_, questions=questions_
        ),
        models,
        context if context is not None else contexts(),
        st.dictionaries(
            ids,
            questions(question_types, max_options=max_options, max_levels=max_levels),
            min_size=min_questions,
            max_size=max_questions,
        ),
    )


def check_range(what: str, low: int, high: int, *, floor: int) -> None:
    """Refuse a range of sizes below ``floor`` or upside down, naming ``what`` is counted."""
    if low < floor:
        raise ValueError(f"at least {floor} {what} are needed for a valid request, got {low}")
    if high < low:
        raise ValueError(f"the most {what} ({high}) is fewer than the fewest ({low})")


def _check_types(types: Sequence[str]) -> tuple[str, ...]:
    kinds = tuple(types)
    unknown = [kind for kind in kinds if kind not in QUESTION_TYPES]
    if unknown or not kinds:
        raise ValueError(f"question types are some of {list(QUESTION_TYPES)}, got {list(kinds)}")
    return kinds


# --- results -----------------------------------------------------------------------------------


@functools.cache
def _distribution(count: int, tolerance: float) -> st.SearchStrategy[list[float]]:
    """``count`` probabilities summing to 1: exact, or rounded when the sum stays in range."""

    @st.composite
    def build(draw: st.DrawFn) -> list[float]:
        weights = draw(st.lists(st.integers(0, 1000), min_size=count, max_size=count))
        if not any(weights):
            weights[draw(st.integers(0, count - 1))] = 1
        total = sum(weights)
        exact = [weight / total for weight in weights]
        digits = draw(st.sampled_from([None, 3, 4, 6]))
        if digits is not None:
            rounded = [round(p, digits) for p in exact]
            # Rounded values are reported as they are: kept only when their sum is in range.
            if abs(math.fsum(rounded) - 1.0) <= tolerance:
                exact = rounded
        return exact

    return build()


@functools.cache
def _confidence() -> st.SearchStrategy[float | None]:
    return st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0))


_PROBABILITY = st.floats(min_value=0.0, max_value=1.0)


def _answer(draw: st.DrawFn, question: DecisionQuestion, tolerance: float) -> DecisionAnswer:
    if isinstance(question, ChoiceQuestion):
        names = list(question.options)
        values = draw(_distribution(len(names), tolerance))
        probabilities = dict(zip(names, values, strict=True))
        choice = names[values.index(max(values))]
        return ChoiceAnswer(
            choice=choice, probabilities=probabilities, confidence=draw(_confidence())
        )
    if isinstance(question, ScoreQuestion):
        values = draw(_distribution(len(question.levels), tolerance))
        return ScoreAnswer(
            score=min(float(len(values) - 1), math.fsum(i * p for i, p in enumerate(values))),
            probabilities={str(i): p for i, p in enumerate(values)},
            legend={str(i): level for i, level in enumerate(question.levels)},
            confidence=draw(_confidence()),
        )
    return BooleanAnswer(probability=draw(_PROBABILITY))


@functools.cache
def _usage() -> st.SearchStrategy[ProviderUsage]:
    @st.composite
    def build(draw: st.DrawFn) -> ProviderUsage:
        prompt = draw(st.integers(0, 1_000_000))
        completion = draw(st.integers(0, 10_000))
        return ProviderUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            cached_tokens=draw(st.one_of(st.none(), st.integers(0, prompt))),
            provider=draw(st.one_of(st.none(), st.sampled_from(["openai-compatible", "fake"]))),
        )

    return build()


_MODELS = st.one_of(
    st.sampled_from(["gpt-4o-mini-2024-07-18", "smollm2-135m-instruct"]),
    st.text(min_size=1, max_size=30).filter(str.strip),
)


@functools.cache
def _metadata() -> st.SearchStrategy[dict[str, Any] | None]:
    return st.one_of(st.none(), st.dictionaries(st.text(max_size=10), json_values(max_leaves=4)))


def decision_results(
    request: DecisionRequest, *, tolerance: float = DEFAULT_TOLERANCE
) -> st.SearchStrategy[DecisionResult]:
    """Valid results for ``request``: one answer per question, complete distributions (exact or
    rounded within ``tolerance``), consistent scores, float booleans, integer usage.

    Every result is checked with :func:`~pytest_opdecide.questions.validate_result` before it
    is drawn.
    """

    @st.composite
    def results(draw: st.DrawFn) -> DecisionResult:
        answers = {
            question_id: _answer(draw, question, tolerance)
            for question_id, question in request.questions.items()
        }
        result = DecisionResult(
            model=draw(_MODELS),
            answers=answers,
            usage=draw(_usage()),
            metadata=draw(_metadata()),
        )
        return validate_result(request, result, tolerance=tolerance)

    return results()
