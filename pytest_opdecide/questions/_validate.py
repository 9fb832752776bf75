"""The rules every question-decision request and result must follow, checked in one place.

Fakes, the conformance suite and the real providers all call these two functions; nothing else
re-implements the rules. Each broken rule raises one typed error naming the question, the rule
(a :class:`~pytest_opdecide.questions.Rule`) and the offending value. The first broken rule is
reported, checking the request (or result) as a whole first and then the questions in order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from pytest_opdecide.questions._json import (
    NonJsonValueError,
    json_copy,
    json_identical,
    loads_strictly,
    unwritable_text,
)
from pytest_opdecide.questions._models import (
    NON_JSON_ERROR,
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderUsage,
    ScoreAnswer,
    ScoreQuestion,
)
from pytest_opdecide.questions._provider_errors import InvalidRequestError, InvalidResultError
from pytest_opdecide.questions._rules import Rule

DEFAULT_TOLERANCE: Final = 1e-3
"""How far from 1 a distribution's sum may be when the provider declares no rounding."""

FLOAT_EPSILON: Final = 1e-9
"""Added to every tolerance: floating-point room, so that ``0.25 + 0.25 + 0.25 + 0.249``
(which sums to ``0.9989999999999999``) is within ``0.001`` of 1, as written."""

ROUNDING_KEY: Final = "rounding"
"""The ``metadata`` key under which a provider may state its rounding in this project's form:
``{"decimals": 3}`` for every probability of the result (``metadata["rounding"]``), or for one
question's (``metadata["questions"][question_id]["rounding"]``). Anything else under the key (a
note in words, another provider's own form) is the provider's own metadata, and is not read."""

MAX_DECIMALS: Final = 15

_BOUND_SLACK: Final = 1e-9  # floating-point room for sum(i * p_i) at the ends of the scale

_ANSWER_CLASSES: Final = {"choice": ChoiceAnswer, "score": ScoreAnswer, "boolean": BooleanAnswer}


# ---------------------------------------------------------------- helpers


def _format_location(location: Sequence[int | str]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _parse_request_text(text: str | bytes) -> object:
    try:
        data, found = loads_strictly(text)
    except ValueError as error:  # JSONDecodeError and NaN / Infinity
        raise InvalidRequestError(
            f"the request is not valid JSON: {error}", rule=Rule.REQUEST_SHAPE, value=text[:80]
        ) from None
    if found is not None:
        path, keys = found
        if len(path) == 3 and path[0] == "questions" and path[2] == "options":
            raise InvalidRequestError(
                f"option names repeat in the JSON text: {keys}",
                rule=Rule.CHOICE_DUPLICATE_OPTION_NAMES,
                question=str(path[1]),
                value=keys,
            )
        raise InvalidRequestError(
            f"the JSON object at {_format_location(path)} repeats keys {keys}",
            rule=Rule.REQUEST_SHAPE,
            value=keys,
        )
    return data


def _request_shape_error(error: ValidationError) -> InvalidRequestError:
    problems = error.errors()
    first = problems[0]
    location = first["loc"]
    question = str(location[1]) if len(location) >= 2 and location[0] == "questions" else None
    rule = Rule.REQUEST_JSON if first["type"] == NON_JSON_ERROR else Rule.REQUEST_SHAPE
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    return InvalidRequestError(
        f"{_format_location(location)}: {first['msg']}{more}",
        rule=rule,
        question=question,
        value=first.get("input"),
    )


def _check_json(value: object, path: str, question: str | None) -> None:
    if type(value) is str and value.isascii():  # most descriptions: nothing to copy or check
        return
    try:
        json_copy(value, path)
    except NonJsonValueError as error:
        raise InvalidRequestError(
            str(error), rule=Rule.REQUEST_JSON, question=question, value=error.value
        ) from None
    if not isinstance(value, str | list | dict):
        raise InvalidRequestError(
            f"{path} must be text, a JSON array or a JSON object",
            rule=Rule.REQUEST_JSON,
            question=question,
            value=value,
        )


def _check_text(text: str, what: str, question: str | None) -> None:
    problem = unwritable_text(text)
    if problem is not None:
        raise InvalidRequestError(
            f"{what} cannot be sent: it holds {problem}",
            rule=Rule.REQUEST_JSON,
            question=question,
            value=text,
        )


# ---------------------------------------------------------------- requests


def validate_request(
    request: DecisionRequest | Mapping[str, Any] | str | bytes,
    *,
    max_questions: int | None = None,
    max_options: int | None = None,
    max_levels: int | None = None,
) -> DecisionRequest:
    """Check a decision request against every request rule.

    Providers call this before sending anything, with the limits of what they can represent.

    Args:
        request: A ``DecisionRequest``, its wire JSON as a mapping (camelCase or snake_case
            keys), or that JSON as text (repeated keys and ``NaN`` are refused).
        max_questions: The most questions the caller accepts, or ``None`` for no limit.
        max_options: The most options per choice question, or ``None`` for no limit.
        max_levels: The most levels per score question, or ``None`` for no limit.

    Returns:
        The request as a ``DecisionRequest`` (the same object when one was given).

    Raises:
        InvalidRequestError: A rule is broken (``ProviderError`` code ``"invalid_request"``).
            The rules: ``REQUEST_SHAPE``, ``REQUEST_JSON``, ``QUESTIONS_EMPTY``,
            ``QUESTIONS_TOO_MANY``, ``QUESTION_ID``, ``CHOICE_TOO_FEW_OPTIONS`` (fewer than 2),
            ``CHOICE_TOO_MANY_OPTIONS``, ``CHOICE_EMPTY_OPTION_NAME``,
            ``CHOICE_DUPLICATE_OPTION_NAMES``, ``SCORE_TOO_FEW_LEVELS`` (fewer than 2) and
            ``SCORE_TOO_MANY_LEVELS``.

    Example:
        >>> validate_request({"model": "m", "context": "", "questions": {}})
        Traceback (most recent call last):
        ...
        pytest_opdecide.questions.InvalidRequestError: request: questions.empty: ...
    """
    if isinstance(request, str | bytes):
        request = _parse_request_text(request)  # type: ignore[assignment]
    if not isinstance(request, DecisionRequest):
        if not isinstance(request, Mapping):
            raise InvalidRequestError(
                "a request is a DecisionRequest or a mapping of its fields",
                rule=Rule.REQUEST_SHAPE,
                value=request,
            )
        try:
            request = DecisionRequest.model_validate(dict(request))
        except ValidationError as error:
            raise _request_shape_error(error) from None
    _check_request(request, max_questions, max_options, max_levels)
    return request


def _check_request(
    request: DecisionRequest,
    max_questions: int | None,
    max_options: int | None,
    max_levels: int | None,
) -> None:
    # The model validated its fields when it was built, but model_construct() and later
    # mutation bypass that: check the JSON again (cheap next to any provider call).
    if not isinstance(request.model, str):
        raise InvalidRequestError(
            "model must be a string", rule=Rule.REQUEST_SHAPE, value=request.model
        )
    _check_text(request.model, "the model name", None)
    _check_json(request.context, "context", None)
    questions = request.questions
    if not isinstance(questions, Mapping):
        raise InvalidRequestError(
            "questions must map question ids to questions",
            rule=Rule.REQUEST_SHAPE,
            value=questions,
        )
    if not questions:
        raise InvalidRequestError(
            "a decision request needs at least one question",
            rule=Rule.QUESTIONS_EMPTY,
            value=questions,
        )
    if max_questions is not None and len(questions) > max_questions:
        raise InvalidRequestError(
            f"this provider answers at most {max_questions} questions per request, "
            f"got {len(questions)}",
            rule=Rule.QUESTIONS_TOO_MANY,
            value=list(questions),
        )
    for question_id, question in questions.items():
        if not isinstance(question_id, str) or not question_id.strip():
            raise InvalidRequestError(
                "question ids must be non-blank strings", rule=Rule.QUESTION_ID, value=question_id
            )
        _check_text(question_id, "the question id", question_id)
        _check_question(question_id, question, max_options, max_levels)


def _check_question(
    question_id: str, question: object, max_options: int | None, max_levels: int | None
) -> None:
    if not isinstance(question, ChoiceQuestion | ScoreQuestion | BooleanQuestion):
        raise InvalidRequestError(
            "a question is a ChoiceQuestion, ScoreQuestion or BooleanQuestion",
            rule=Rule.REQUEST_SHAPE,
            question=question_id,
            value=question,
        )
    _check_json(question.instructions, "instructions", question_id)
    if isinstance(question, ChoiceQuestion):
        _check_choice(question_id, question, max_options)
    elif isinstance(question, ScoreQuestion):
        _check_score(question_id, question, max_levels)
    else:
        _check_criteria(question_id, question)


def _check_criteria(question_id: str, question: BooleanQuestion) -> None:
    # The model refuses null criteria when it validates; model_construct() and assignment
    # bypass that, and leave the field set to None: a null was given, not left out.
    criteria = question.criteria
    if criteria is None:
        if "criteria" in question.model_fields_set:
            raise InvalidRequestError(
                'criteria is null: leave it out to describe neither outcome, or give {"true": '
                '..., "false": ...}',
                rule=Rule.REQUEST_SHAPE,
                question=question_id,
                value=None,
            )
        return
    if not isinstance(criteria, BooleanCriteria):
        raise InvalidRequestError(
            "criteria is a BooleanCriteria (a mapping of true and false to descriptions)",
            rule=Rule.REQUEST_SHAPE,
            question=question_id,
            value=criteria,
        )
    for side in ("true", "false"):
        value = getattr(criteria, side)
        if value is not None:
            _check_json(value, f"criteria.{side}", question_id)
        elif side in criteria.model_fields_set:
            raise InvalidRequestError(
                f"criteria.{side} is null, which is not a description (text, a JSON array or a "
                "JSON object): leave the side out to describe nothing",
                rule=Rule.REQUEST_JSON,
                question=question_id,
                value=None,
            )


def _check_choice(question_id: str, question: ChoiceQuestion, max_options: int | None) -> None:
    options = question.options
    if len(options) < 2:
        raise InvalidRequestError(
            f"a choice question needs at least 2 options, got {len(options)}",
            rule=Rule.CHOICE_TOO_FEW_OPTIONS,
            question=question_id,
            value=list(options),
        )
    if max_options is not None and len(options) > max_options:
        raise InvalidRequestError(
            f"this provider can offer at most {max_options} options, got {len(options)}",
            rule=Rule.CHOICE_TOO_MANY_OPTIONS,
            question=question_id,
            value=list(options),
        )
    seen: dict[str, str] = {}
    for name, description in options.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidRequestError(
                "option names must not be empty or blank",
                rule=Rule.CHOICE_EMPTY_OPTION_NAME,
                question=question_id,
                value=name,
            )
        folded = name.strip().casefold()
        if folded in seen:
            raise InvalidRequestError(
                f"options {seen[folded]!r} and {name!r} have the same name once case and "
                "surrounding whitespace are ignored",
                rule=Rule.CHOICE_DUPLICATE_OPTION_NAMES,
                question=question_id,
                value=[seen[folded], name],
            )
        seen[folded] = name
        _check_text(name, f"option name {name!r}", question_id)
        if description is not None:
            _check_json(description, f"options[{name!r}]", question_id)


def _check_score(question_id: str, question: ScoreQuestion, max_levels: int | None) -> None:
    levels = question.levels
    if len(levels) < 2:
        raise InvalidRequestError(
            f"a score question needs at least 2 levels, got {len(levels)}",
            rule=Rule.SCORE_TOO_FEW_LEVELS,
            question=question_id,
            value=levels,
        )
    if max_levels is not None and len(levels) > max_levels:
        raise InvalidRequestError(
            f"this provider can offer at most {max_levels} levels, got {len(levels)}",
            rule=Rule.SCORE_TOO_MANY_LEVELS,
            question=question_id,
            value=levels,
        )
    for index, level in enumerate(levels):
        _check_json(level, f"levels[{index}]", question_id)


# ---------------------------------------------------------------- results


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _result_shape_error(error: ValidationError) -> InvalidResultError:
    problems = error.errors()
    first = problems[0]
    location = first["loc"]
    question = str(location[1]) if len(location) >= 2 and location[0] == "answers" else None
    field = str(location[3]) if len(location) >= 4 else ""
    value = first.get("input")
    rule = Rule.RESULT_SHAPE
    if location and location[0] == "usage":
        rule = Rule.RESULT_USAGE
    elif field == "probability" and isinstance(value, bool):
        rule = Rule.BOOLEAN_PROBABILITY
    elif field in ("probability", "probabilities", "confidence") and first["type"] in (
        "finite_number",
        "float_type",
    ):
        rule = Rule.PROBABILITY_RANGE if field != "confidence" else Rule.CONFIDENCE_RANGE
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    return InvalidResultError(
        f"{_format_location(location)}: {first['msg']}{more}",
        rule=rule,
        question=question,
        value=value,
    )


def validate_result(
    request: DecisionRequest | Mapping[str, Any] | str | bytes,
    result: DecisionResult | Mapping[str, Any] | str | bytes,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    score_tolerance: float | None = None,
    decimals: int | None = None,
) -> DecisionResult:
    """Check a decision result against every result rule, for the request it answers.

    Probabilities are checked as reported: rounded values are never renormalised. A sum is
    accepted within what rounding explains: with ``n`` values rounded to ``d`` decimal places,
    ``n * 0.5 * 10**-d`` (``3 * 0.005`` for ``0.33``, ``0.33``, ``0.33``). ``d`` is the rounding
    given or stated, else read from the values themselves: the most decimal places any
    probability of the answer is written with (``0.33`` has 2; an unrounded ``0.3271...`` has
    so many that rounding explains nothing past ``tolerance``). Every comparison also allows
    :data:`FLOAT_EPSILON`.

    Args:
        request: The request that was answered (anything :func:`validate_request` accepts).
        result: A ``DecisionResult``, its wire JSON as a mapping, or that JSON as text.
        tolerance: How far from 1 a distribution's sum may be (when rounding explains less).
        score_tolerance: How far ``score`` may be from ``sum(i * p_i)``; defaults to
            ``tolerance * (L - 1)`` for ``L`` levels (the scale's width), or to what rounding
            explains when more.
        decimals: The decimal places every probability was rounded to. ``None`` reads the
            result's own statement: ``metadata["questions"][id]["rounding"]["decimals"]`` for
            one question, else ``metadata["rounding"]["decimals"]`` (see :data:`ROUNDING_KEY`),
            and without one reads the places from each answer's values. Given or stated, each
            probability must have at most that many decimal places.

    Returns:
        The result as a ``DecisionResult`` (the same object when one was given).

    Raises:
        InvalidRequestError: The request itself breaks a rule.
        InvalidResultError: The result breaks a rule: ``RESULT_SHAPE``, ``RESULT_MODEL``,
            ``RESULT_USAGE``, ``ANSWERS_MISSING``, ``ANSWERS_UNEXPECTED``, ``ANSWER_TYPE``,
            ``CHOICE_SELECTION``, ``CHOICE_PROBABILITY_KEYS``, ``SCORE_PROBABILITY_KEYS``,
            ``PROBABILITY_RANGE``, ``PROBABILITY_SUM``, ``PROBABILITY_ROUNDING``,
            ``SCORE_WEIGHTED_MEAN``, ``SCORE_RANGE``, ``SCORE_LEGEND``, ``BOOLEAN_PROBABILITY``
            or ``CONFIDENCE_RANGE``.
    """
    return validate_answers(
        validate_request(request),
        result,
        tolerance=tolerance,
        score_tolerance=score_tolerance,
        decimals=decimals,
    )


def validate_answers(
    request: DecisionRequest,
    result: DecisionResult | Mapping[str, Any] | str | bytes,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    score_tolerance: float | None = None,
    decimals: int | None = None,
) -> DecisionResult:
    """:func:`validate_result` for a request taken as it is, not checked by the request rules.

    For a request built on purpose past a rule that only some providers need: the conformance
    suite's question ids and option names holding a lone surrogate, which UTF-8 cannot carry
    and a JSON escape can, so that a provider sending them intact must answer them as asked.

    Args:
        request: The request that was answered, as it was sent to the provider.
        result: As for :func:`validate_result`; ``tolerance``, ``score_tolerance`` and
            ``decimals`` too.

    Returns:
        The result as a ``DecisionResult``.

    Raises:
        InvalidResultError: The result breaks a rule (as for :func:`validate_result`).
    """
    if isinstance(result, str | bytes):
        try:
            result = DecisionResult.model_validate_json(result)
        except ValidationError as error:
            raise _result_shape_error(error) from None
    elif not isinstance(result, DecisionResult):
        if not isinstance(result, Mapping):
            raise InvalidResultError(
                "a result is a DecisionResult or a mapping of its fields",
                rule=Rule.RESULT_SHAPE,
                value=result,
            )
        try:
            result = DecisionResult.model_validate(dict(result))
        except ValidationError as error:
            raise _result_shape_error(error) from None
    if decimals is not None:
        _check_decimals(decimals, "decimals", None)
    _check_result(request, result, _Allowance(tolerance, score_tolerance, decimals))
    return result


@dataclass(frozen=True)
class _Allowance:
    """How far a result's sums and scores may be from exact."""

    tolerance: float
    score_tolerance: float | None
    decimals: int | None

    def sum_slack(self, count: int, decimals: int) -> float:
        """How far from 1 the sum of ``count`` probabilities rounded to ``decimals`` places may
        be."""
        return max(self.tolerance, count * 0.5 * 10.0**-decimals)

    def score_slack(self, top: int, decimals: int) -> float:
        """How far ``score`` may be from ``sum(i * p_i)`` on levels ``0..top``, with the
        probabilities (and the score) rounded to ``decimals`` places."""
        if self.score_tolerance is not None:
            return self.score_tolerance
        # Each p_i may be off by half a unit, weighted by i; the score itself too.
        rounding = 0.5 * 10.0**-decimals * (top * (top + 1) / 2 + 1)
        return max(self.tolerance * max(1, top), rounding)


def written_decimals(value: float) -> int:
    """The decimal places ``value`` is written with: those of its shortest ``repr``.

    ``0.33`` has 2, ``1.0`` and ``0.0`` have 0, ``1e-05`` has 5; a value computed and not
    rounded (``0.1 + 0.2``, ``0.30000000000000004``) has 17. Read from the text Python writes
    (the shortest that reads back as the same float), so it is what a rounding to that many
    places gave, with no tolerance to choose.
    """
    # Read from the text itself (as Decimal(text).normalize() would, at a fraction of its
    # cost: this runs once per probability): "0.125" has 3, "1.5e-05" has 1 + 5 = 6, "1e+16" 0.
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    digits = mantissa.partition(".")[2].rstrip("0")
    places = len(digits) - (int(exponent) if exponent else 0)
    return max(0, places)


def _check_decimals(value: object, where: str, question: str | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DECIMALS:
        raise InvalidResultError(
            f"{where} must be a whole number of decimal places from 0 to {MAX_DECIMALS}",
            rule=Rule.PROBABILITY_ROUNDING,
            question=question,
            value=value,
        )
    return value


def _stated_rounding(holder: object, where: str, question: str | None) -> int | None:
    if not isinstance(holder, Mapping):
        return None
    stated = holder.get(ROUNDING_KEY)
    # Only this project's form states a rounding; any other (a note in words, a provider's
    # own form) is the provider's metadata, which the spec leaves to it.
    if not isinstance(stated, Mapping) or "decimals" not in stated:
        return None
    return _check_decimals(stated["decimals"], f"{where}['decimals']", question)


def stated_decimals(result: DecisionResult, question_id: str) -> int | None:
    """The decimal places ``result`` says the answer to ``question_id`` is rounded to.

    Read from ``metadata["questions"][question_id]["rounding"]["decimals"]``, else
    ``metadata["rounding"]["decimals"]``; ``None`` when neither is stated. Metadata in any
    other form (``metadata["rounding"] = "to 2 places"``) states nothing.

    Raises:
        InvalidResultError: A ``"decimals"`` that is not a whole number from 0 to
            :data:`MAX_DECIMALS` (rule ``PROBABILITY_ROUNDING``).
    """
    metadata = result.metadata
    if not isinstance(metadata, Mapping):
        return None
    questions = metadata.get("questions")
    if isinstance(questions, Mapping):
        stated = _stated_rounding(
            questions.get(question_id),
            f"metadata['questions'][{question_id!r}][{ROUNDING_KEY!r}]",
            question_id,
        )
        if stated is not None:
            return stated
    return _stated_rounding(metadata, f"metadata[{ROUNDING_KEY!r}]", None)


def _declared_decimals(
    result: DecisionResult, question_id: str, allowance: _Allowance
) -> int | None:
    if allowance.decimals is not None:
        return allowance.decimals
    return stated_decimals(result, question_id)


def _check_result(request: DecisionRequest, result: DecisionResult, allowance: _Allowance) -> None:
    if not isinstance(result.model, str) or not result.model.strip():
        raise InvalidResultError(
            "the result must name the model that answered",
            rule=Rule.RESULT_MODEL,
            value=result.model,
        )
    _check_usage(result.usage)
    answers = result.answers
    if not isinstance(answers, Mapping):
        raise InvalidResultError(
            "answers must map question ids to answers", rule=Rule.RESULT_SHAPE, value=answers
        )
    missing = [question_id for question_id in request.questions if question_id not in answers]
    if missing:
        raise InvalidResultError(
            f"every question needs an answer; missing: {missing}",
            rule=Rule.ANSWERS_MISSING,
            question=missing[0],
            value=list(answers),
        )
    unexpected = [question_id for question_id in answers if question_id not in request.questions]
    if unexpected:
        raise InvalidResultError(
            f"answers were given to questions that were not asked: {unexpected}",
            rule=Rule.ANSWERS_UNEXPECTED,
            question=unexpected[0],
            value=unexpected,
        )
    for question_id, question in request.questions.items():
        answer = answers[question_id]
        expected = _ANSWER_CLASSES[question.type]
        if not isinstance(answer, expected):
            raise InvalidResultError(
                f"a {question.type} question needs a {question.type} answer",
                rule=Rule.ANSWER_TYPE,
                question=question_id,
                value=getattr(answer, "type", answer),
            )
        decimals = _declared_decimals(result, question_id, allowance)
        if isinstance(question, ChoiceQuestion) and isinstance(answer, ChoiceAnswer):
            _check_choice_answer(question_id, question, answer, allowance, decimals)
        elif isinstance(question, ScoreQuestion) and isinstance(answer, ScoreAnswer):
            _check_score_answer(question_id, question, answer, allowance, decimals)
        elif isinstance(answer, BooleanAnswer):
            _check_boolean_answer(question_id, answer, decimals)


def _check_usage(usage: object) -> None:
    if not isinstance(usage, ProviderUsage):
        raise InvalidResultError(
            "usage must be a ProviderUsage", rule=Rule.RESULT_USAGE, value=usage
        )
    for name in (
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "reasoning_tokens",
        "cached_tokens",
    ):
        count = getattr(usage, name)
        optional = name in ("reasoning_tokens", "cached_tokens")
        if optional and count is None:
            continue
        if type(count) is not int or count < 0:
            raise InvalidResultError(
                f"usage.{name} must be an integer >= 0", rule=Rule.RESULT_USAGE, value=count
            )


def _check_rounded(question_id: str, key: str, value: float, decimals: int | None) -> None:
    if decimals is None:
        return
    scaled = value * 10.0**decimals
    if abs(scaled - round(scaled)) > 1e-6:
        raise InvalidResultError(
            f"the probabilities are stated as rounded to {decimals} decimal places, but that "
            f"of {key!r} has more",
            rule=Rule.PROBABILITY_ROUNDING,
            question=question_id,
            value=value,
        )


def _check_distribution(
    question_id: str,
    probabilities: object,
    expected_keys: list[str],
    keys_rule: Rule,
    allowance: _Allowance,
    decimals: int | None,
) -> tuple[dict[str, float], int]:
    """The distribution checked, and the decimal places it is rounded to (``decimals``, or
    read from its values)."""
    if not isinstance(probabilities, Mapping):
        raise InvalidResultError(
            "probabilities must map outcomes to numbers",
            rule=keys_rule,
            question=question_id,
            value=probabilities,
        )
    # Compared as sets (linear): a list's ``in`` made this quadratic in the options.
    if probabilities.keys() != set(expected_keys):
        expected = set(expected_keys)
        missing = [key for key in expected_keys if key not in probabilities]
        extra = [key for key in probabilities if key not in expected]
        raise InvalidResultError(
            f"probabilities must have exactly the keys {expected_keys}; "
            f"missing {missing}, unexpected {extra}",
            rule=keys_rule,
            question=question_id,
            value=list(probabilities),
        )
    places = 0
    for key, probability in probabilities.items():
        if not _is_number(probability) or not 0.0 <= probability <= 1.0:
            raise InvalidResultError(
                f"the probability of {key!r} must be a finite number in [0, 1]",
                rule=Rule.PROBABILITY_RANGE,
                question=question_id,
                value=probability,
            )
        _check_rounded(question_id, key, probability, decimals)
        if decimals is None:
            places = max(places, written_decimals(probability))
    total = math.fsum(probabilities.values())
    if decimals is not None:
        places = decimals
        slack = allowance.sum_slack(len(probabilities), places)
    elif places == 0:
        # Every value is 0 or 1: nothing shows a rounding (a stated {"decimals": 0} would),
        # so no slack for one: 0, 0, 0 is no distribution.
        slack = allowance.tolerance
    else:
        slack = allowance.sum_slack(len(probabilities), places)
    if abs(total - 1.0) > slack + FLOAT_EPSILON:
        explained = ""
        if slack != allowance.tolerance:
            how = (
                f"rounded to {places} decimal places"
                if decimals is not None
                else f"each written with at most {places} decimal places"
            )
            explained = f" ({how}: {len(probabilities)} x {0.5 * 10.0**-places:g})"
        raise InvalidResultError(
            f"probabilities must sum to 1 within {slack:g}{explained}; they sum to {total!r}",
            rule=Rule.PROBABILITY_SUM,
            question=question_id,
            value=dict(probabilities),
        )
    return dict(probabilities), places


def _check_confidence(question_id: str, confidence: object) -> None:
    if confidence is None:
        return
    if not _is_number(confidence) or not 0.0 <= confidence <= 1.0:  # type: ignore[operator]
        raise InvalidResultError(
            "confidence must be a finite number in [0, 1]",
            rule=Rule.CONFIDENCE_RANGE,
            question=question_id,
            value=confidence,
        )


def _check_choice_answer(
    question_id: str,
    question: ChoiceQuestion,
    answer: ChoiceAnswer,
    allowance: _Allowance,
    decimals: int | None,
) -> None:
    names = list(question.options)
    if answer.choice not in question.options:
        raise InvalidResultError(
            f"the choice must be one of the options {names}",
            rule=Rule.CHOICE_SELECTION,
            question=question_id,
            value=answer.choice,
        )
    _check_distribution(
        question_id,
        answer.probabilities,
        names,
        Rule.CHOICE_PROBABILITY_KEYS,
        allowance,
        decimals,
    )
    _check_confidence(question_id, answer.confidence)


def _check_score_answer(
    question_id: str,
    question: ScoreQuestion,
    answer: ScoreAnswer,
    allowance: _Allowance,
    decimals: int | None,
) -> None:
    top = len(question.levels) - 1
    indices = [str(index) for index in range(len(question.levels))]
    probabilities, places = _check_distribution(
        question_id,
        answer.probabilities,
        indices,
        Rule.SCORE_PROBABILITY_KEYS,
        allowance,
        decimals,
    )
    score = answer.score
    if not _is_number(score) or not -_BOUND_SLACK <= score <= top + _BOUND_SLACK:
        raise InvalidResultError(
            f"the score must be a number between 0 and {top}",
            rule=Rule.SCORE_RANGE,
            question=question_id,
            value=score,
        )
    expected = math.fsum(int(key) * probability for key, probability in probabilities.items())
    allowed = allowance.score_slack(top, places)
    if abs(score - expected) > allowed + FLOAT_EPSILON:
        raise InvalidResultError(
            f"the score must equal sum(i * p_i) = {expected!r} within {allowed:g}",
            rule=Rule.SCORE_WEIGHTED_MEAN,
            question=question_id,
            value=score,
        )
    legend = answer.legend
    if not isinstance(legend, Mapping) or sorted(legend) != sorted(indices):
        raise InvalidResultError(
            f"the legend must map every level index {indices} to its level",
            rule=Rule.SCORE_LEGEND,
            question=question_id,
            value=list(legend) if isinstance(legend, Mapping) else legend,
        )
    for index, level in enumerate(question.levels):
        if not json_identical(legend[str(index)], level):
            raise InvalidResultError(
                f"legend[{str(index)!r}] must be level {index} exactly as asked: {level!r}",
                rule=Rule.SCORE_LEGEND,
                question=question_id,
                value=legend[str(index)],
            )
    _check_confidence(question_id, answer.confidence)


def _check_boolean_answer(question_id: str, answer: BooleanAnswer, decimals: int | None) -> None:
    probability: object = answer.probability
    if isinstance(probability, bool):
        raise InvalidResultError(
            "a boolean answer's probability is P(true) as a float, never a bool",
            rule=Rule.BOOLEAN_PROBABILITY,
            question=question_id,
            value=probability,
        )
    if not _is_number(probability) or not 0.0 <= probability <= 1.0:  # type: ignore[operator]
        raise InvalidResultError(
            "a boolean answer's probability must be a finite number in [0, 1]",
            rule=Rule.PROBABILITY_RANGE,
            question=question_id,
            value=probability,
        )
    _check_rounded(question_id, "true", float(probability), decimals)  # type: ignore[arg-type]
