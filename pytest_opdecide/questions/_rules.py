"""The rules that question-decision requests and results must follow.

Each rule has a stable dotted identifier. :func:`~pytest_opdecide.questions.validate_request`
and :func:`~pytest_opdecide.questions.validate_result` raise an error whose ``rule`` attribute is
one of these members, so a test can assert *which* rule was broken.
"""

from __future__ import annotations

from enum import StrEnum


class Rule(StrEnum):
    """A rule of the question-decision contract, identified by a dotted name.

    Members from ``REQUEST_SHAPE`` to ``SCORE_TOO_MANY_LEVELS`` are request rules (broken ones
    raise :class:`~pytest_opdecide.questions.InvalidRequestError`); the others are result rules
    (broken ones raise :class:`~pytest_opdecide.questions.InvalidResultError`).

    Attributes:
        REQUEST_SHAPE: The request has the fields and types of a ``DecisionRequest``.
        REQUEST_JSON: Context, instructions, option descriptions, levels and criteria are JSON
            values (strings, finite numbers, booleans, null, lists, objects with string keys).
        REQUEST_MODEL: The request names a model, or the provider has a default one.
        QUESTIONS_EMPTY: The request asks at least one question.
        QUESTIONS_TOO_MANY: The request asks no more questions than the provider accepts.
        QUESTION_ID: Question ids are non-empty strings.
        CHOICE_TOO_FEW_OPTIONS: A choice question offers at least two options.
        CHOICE_TOO_MANY_OPTIONS: A choice question offers no more options than the provider can
            label.
        CHOICE_EMPTY_OPTION_NAME: Option names are not empty or blank.
        CHOICE_DUPLICATE_OPTION_NAMES: Option names differ after ignoring case and surrounding
            whitespace (a model cannot tell ``"Yes"`` from ``"yes "``).
        SCORE_TOO_FEW_LEVELS: A score question has at least two levels.
        SCORE_TOO_MANY_LEVELS: A score question has no more levels than the provider can label.
        RESULT_SHAPE: The result has the fields and types of a ``DecisionResult``.
        RESULT_MODEL: The result names the (resolved) model that answered; not empty.
        RESULT_USAGE: Usage token counts are integers >= 0.
        ANSWERS_MISSING: Every question has an answer.
        ANSWERS_UNEXPECTED: No answer is given for a question that was not asked.
        ANSWER_TYPE: Each answer's ``type`` equals its question's ``type``.
        CHOICE_SELECTION: A choice answer's ``choice`` is one of the option names.
        CHOICE_PROBABILITY_KEYS: A choice answer's ``probabilities`` has exactly the option names.
        SCORE_PROBABILITY_KEYS: A score answer's ``probabilities`` has exactly the level indices
            ``"0"`` .. ``"L-1"``.
        PROBABILITY_RANGE: Every probability is a finite number in [0, 1] (never a bool).
        PROBABILITY_SUM: A distribution sums to 1 within the tolerance, or within what its
            rounding explains: the provider's stated one, else the decimal places its values are
            written with (values are reported as the provider rounded them, never
            renormalised).
        PROBABILITY_ROUNDING: A stated rounding (``metadata["rounding"] = {"decimals": d}``)
            is well formed, and every probability it covers has at most ``d`` decimal places.
        SCORE_WEIGHTED_MEAN: ``score`` equals the probability-weighted mean of the level indices.
        SCORE_RANGE: ``0 <= score <= L - 1``.
        SCORE_LEGEND: ``legend`` maps every level index to its level, JSON structure unchanged.
        BOOLEAN_PROBABILITY: A boolean answer's ``probability`` is a float, never a ``bool``
            (no threshold is applied by a provider).
        CONFIDENCE_RANGE: ``confidence``, when present, is a finite number in [0, 1].
    """

    REQUEST_SHAPE = "request.shape"
    REQUEST_JSON = "request.json"
    REQUEST_MODEL = "request.model"
    QUESTIONS_EMPTY = "questions.empty"
    QUESTIONS_TOO_MANY = "questions.too_many"
    QUESTION_ID = "question.id"
    CHOICE_TOO_FEW_OPTIONS = "choice.too_few_options"
    CHOICE_TOO_MANY_OPTIONS = "choice.too_many_options"
    CHOICE_EMPTY_OPTION_NAME = "choice.empty_option_name"
    CHOICE_DUPLICATE_OPTION_NAMES = "choice.duplicate_option_names"
    SCORE_TOO_FEW_LEVELS = "score.too_few_levels"
    SCORE_TOO_MANY_LEVELS = "score.too_many_levels"

    RESULT_SHAPE = "result.shape"
    RESULT_MODEL = "result.model"
    RESULT_USAGE = "result.usage"
    ANSWERS_MISSING = "answers.missing"
    ANSWERS_UNEXPECTED = "answers.unexpected"
    ANSWER_TYPE = "answer.type"
    CHOICE_SELECTION = "choice.selection"
    CHOICE_PROBABILITY_KEYS = "choice.probability_keys"
    SCORE_PROBABILITY_KEYS = "score.probability_keys"
    PROBABILITY_RANGE = "probability.range"
    PROBABILITY_SUM = "probability.sum"
    PROBABILITY_ROUNDING = "probability.rounding"
    SCORE_WEIGHTED_MEAN = "score.weighted_mean"
    SCORE_RANGE = "score.range"
    SCORE_LEGEND = "score.legend"
    BOOLEAN_PROBABILITY = "boolean.probability"
    CONFIDENCE_RANGE = "confidence.range"
