"""Scripted answers of the fake decision provider: ``choose``, ``score``, ``probability``...

Each helper checks its own arguments when the script is written; the question it answers is
only known when a request arrives, so fitting the answer to the question (is the option offered?
is the level on the scale?) happens then, and a misfit raises :class:`AnswerMismatch`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from fake_runtimes._closest import did_you_mean
from fake_runtimes._script_errors import AnswerMismatch
from pytest_opdecide.questions import (
    DEFAULT_TOLERANCE,
    FLOAT_EPSILON,
    PROVIDER_ERROR_CODES,
    BooleanAnswer,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    ProviderError,
    ProviderErrorCode,
    ScoreAnswer,
    ScoreQuestion,
)

__all__ = [
    "ScriptedAnswer",
    "ScriptedChoice",
    "ScriptedFailure",
    "ScriptedHang",
    "ScriptedProbability",
    "ScriptedScore",
    "choose",
    "fails",
    "fits",
    "hangs",
    "probability",
    "score",
    "times_out",
]

_DIGITS = 12  # cosmetic rounding of derived floats: 0.05, not 0.04999999999999999

QuestionType = Literal["choice", "score", "boolean"]

_DEFAULT_STATUS: dict[ProviderErrorCode, int | None] = {
    "rate_limit": 429,
    "auth_error": 401,
    "invalid_request": 400,
    "server_error": 500,
    "timeout": None,
    "unknown": None,
}
_DEFAULT_MESSAGES: dict[ProviderErrorCode, str] = {
    "rate_limit": "rate limit reached, retry later (scripted failure)",
    "auth_error": "invalid API key (scripted failure)",
    "invalid_request": "the request was rejected (scripted failure)",
    "server_error": "the server had an internal error (scripted failure)",
    "timeout": "the decision timed out (scripted failure)",
    "unknown": "the provider failed (scripted failure)",
}


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return float(value)


def _probability(value: object, what: str) -> float:
    number = _number(value, what)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{what} must be in [0, 1], got {value!r}")
    return number


_MAX_DECIMALS = 15


def _decimals(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_DECIMALS:
        raise TypeError(
            f"{what}: decimals must be a whole number of decimal places from 0 to "
            f"{_MAX_DECIMALS}, got {value!r}"
        )
    return value


def _check_sum(values: Sequence[float], what: str, decimals: int | None) -> None:
    # Rounded distributions are fine (a real provider reports them as rounded) when the script
    # says so with decimals=; a distribution that is not one at all is a mistake in the script,
    # caught here rather than at decide time.
    total = math.fsum(values)
    if decimals is not None:
        for value in values:
            scaled = value * 10.0**decimals
            if abs(scaled - round(scaled)) > 1e-6:
                raise ValueError(
                    f"{what}: {value!r} has more than {decimals} decimal places, but the "
                    f"distribution is declared rounded to {decimals} (decimals={decimals})"
                )
    rounding = 0.0 if decimals is None else len(values) * 0.5 * 10.0**-decimals
    allowed = max(DEFAULT_TOLERANCE, rounding)
    if abs(total - 1.0) > allowed + FLOAT_EPSILON:
        if decimals is None:
            raise ValueError(
                f"{what}: the probabilities sum to {total!r}; they must sum to 1 within "
                f"{DEFAULT_TOLERANCE:g} (they are reported as given, never renormalised); for "
                "values rounded to a few decimal places, say so with decimals=<places>"
            )
        raise ValueError(
            f"{what}: the probabilities sum to {total!r}; they must sum to 1 within "
            f"{allowed:g}, what rounding {len(values)} values to {decimals} decimal places "
            "explains (they are reported as given, never renormalised)"
        )


def _confidence(value: float | None) -> float | None:
    return None if value is None else _probability(value, "confidence")


def _format_number(value: float) -> str:
    return repr(int(value)) if value.is_integer() else repr(value)


@dataclass(frozen=True)
class ScriptedAnswer:
    """Base class of the scripted answers; build them with the helper functions."""

    question_type: ClassVar[QuestionType | None] = None
    """The question type this answer fits, or ``None`` when it fits any (failures)."""


@dataclass(frozen=True)
class ScriptedChoice(ScriptedAnswer):
    """A scripted answer to a choice question (see :func:`choose`).

    Attributes:
        option: The chosen option, or ``None`` when ``distribution`` decides.
        p: The chosen option's probability.
        distribution: Option -> probability, when the full distribution was scripted.
        confidence: The reported confidence, if any.
        decimals: The decimal places the probabilities are rounded to, or ``None``.
    """

    question_type: ClassVar[QuestionType | None] = "choice"

    option: str | None
    p: float
    distribution: tuple[tuple[str, float], ...] | None = None
    confidence: float | None = None
    decimals: int | None = None

    def __str__(self) -> str:
        extra = "" if self.confidence is None else f", confidence={self.confidence!r}"
        extra += "" if self.decimals is None else f", decimals={self.decimals}"
        if self.distribution is not None:
            return f"choose({dict(self.distribution)!r}{extra})"
        return f"choose({self.option!r}, p={_format_number(self.p)}{extra})"

    def build(self, question_id: str, question: ChoiceQuestion, where: str) -> ChoiceAnswer:
        """The answer to ``question``, or :class:`AnswerMismatch` naming the options offered."""
        names = list(question.options)
        if self.distribution is not None:
            unknown = [name for name, _ in self.distribution if name not in question.options]
            if unknown:
                hints = "".join(did_you_mean(name, names) for name in unknown)
                raise AnswerMismatch(
                    f"{where} is {self}, but question {question_id!r} does not offer "
                    f"{_listing(unknown)}; it offers {names}.{hints}"
                )
            given = dict(self.distribution)
            probabilities = {name: given.get(name, 0.0) for name in names}
            top = max(probabilities.values())
            choice = next(name for name in names if probabilities[name] == top)
        else:
            assert self.option is not None
            if self.option not in question.options:
                raise AnswerMismatch(
                    f"{where} chooses {self.option!r}, but question {question_id!r} offers "
                    f"{names}.{did_you_mean(self.option, names)}"
                )
            digits = _DIGITS if self.decimals is None else self.decimals
            rest = round((1.0 - self.p) / (len(names) - 1), digits)
            probabilities = {name: self.p if name == self.option else rest for name in names}
            choice = self.option
        return ChoiceAnswer(choice=choice, probabilities=probabilities, confidence=self.confidence)


def _listing(names: list[str]) -> str:
    return repr(names[0]) if len(names) == 1 else f"{names}"


@dataclass(frozen=True)
class ScriptedScore(ScriptedAnswer):
    """A scripted answer to a score question (see :func:`score`).

    Attributes:
        value: The scripted score, or ``None`` when ``distribution`` decides.
        distribution: Level index -> probability, when the level distribution was scripted.
        confidence: The reported confidence, if any.
        decimals: The decimal places the probabilities are rounded to, or ``None``.
    """

    question_type: ClassVar[QuestionType | None] = "score"

    value: float | None
    distribution: tuple[tuple[int, float], ...] | None = None
    confidence: float | None = None
    decimals: int | None = None

    def __str__(self) -> str:
        extra = "" if self.confidence is None else f", confidence={self.confidence!r}"
        extra += "" if self.decimals is None else f", decimals={self.decimals}"
        if self.distribution is not None:
            shown = {str(level): p for level, p in self.distribution}
            return f"score({shown!r}{extra})"
        assert self.value is not None
        return f"score({_format_number(self.value)}{extra})"

    def build(self, question_id: str, question: ScoreQuestion, where: str) -> ScoreAnswer:
        """The answer to ``question``, or :class:`AnswerMismatch` naming its levels."""
        count = len(question.levels)
        scale = f"levels 0..{count - 1} ({count} levels)"
        probabilities = [0.0] * count
        if self.distribution is not None:
            outside = [level for level, _ in self.distribution if level >= count]
            if outside:
                raise AnswerMismatch(
                    f"{where} is {self}, but question {question_id!r} has no level "
                    f"{_listing([str(level) for level in outside])}; it has {scale}."
                )
            for level, p in self.distribution:
                probabilities[level] = p
            value = round(math.fsum(i * p for i, p in enumerate(probabilities)), _DIGITS)
        else:
            assert self.value is not None
            value = self.value
            if value > count - 1:
                raise AnswerMismatch(
                    f"{where} is {self}, but question {question_id!r} has {scale}."
                )
            # All the mass on the two levels around the score: their weighted mean is the score.
            low = math.floor(value)
            high_share = round(value - low, _DIGITS)
            probabilities[low] = round(1.0 - high_share, _DIGITS)
            if high_share:
                probabilities[low + 1] = high_share
        return ScoreAnswer(
            score=value,
            probabilities={str(i): p for i, p in enumerate(probabilities)},
            legend={str(i): level for i, level in enumerate(question.levels)},
            confidence=self.confidence,
        )


@dataclass(frozen=True)
class ScriptedProbability(ScriptedAnswer):
    """A scripted answer to a boolean question (see :func:`probability`).

    Attributes:
        p: P(true).
    """

    question_type: ClassVar[QuestionType | None] = "boolean"

    p: float

    def __str__(self) -> str:
        return f"probability({_format_number(self.p)})"

    def build(self, question_id: str, question: BooleanQuestion, where: str) -> BooleanAnswer:
        """The answer to ``question``."""
        return BooleanAnswer(probability=self.p)


@dataclass(frozen=True)
class ScriptedFailure(ScriptedAnswer):
    """The decision fails with ``error`` (see :func:`fails` and :func:`times_out`).

    Attributes:
        error: The ``ProviderError`` raised.
        shown: How the step reads in messages (the helper call that made it).
    """

    error: ProviderError
    shown: str = ""

    def __str__(self) -> str:
        return self.shown or f"fails({self.error!r})"


@dataclass(frozen=True)
class ScriptedHang(ScriptedAnswer):
    """The decision never finishes until the request's abort signal fires (see :func:`hangs`)."""

    def __str__(self) -> str:
        return "hangs()"


def choose(
    option: str | Mapping[str, float],
    p: float | None = None,
    *,
    confidence: float | None = None,
    decimals: int | None = None,
) -> ScriptedChoice:
    """Script the answer to a choice question.

    ``choose("billing")`` puts all the probability on ``billing``; ``choose("billing", p=0.7)``
    gives it 0.7 and spreads the rest evenly over the other options;
    ``choose({"billing": 0.6, "shipping": 0.4})`` scripts the full distribution (options left
    out get 0, and the choice is the most probable option, the first one offered on a tie).
    ``choose({"a": 0.33, "b": 0.33, "c": 0.33}, decimals=2)`` scripts what a provider that
    rounds to 2 decimal places reports: the values as given (never renormalised), summing to 1
    within what the rounding explains, and the rounding stated in the result's metadata.

    Args:
        option: The chosen option, or the full distribution.
        p: The chosen option's probability (with an option name only).
        confidence: The provider-reported confidence, in [0, 1].
        decimals: The decimal places the probabilities are rounded to (the other options'
            share of ``1 - p`` too), or ``None`` for exact values.

    Raises:
        TypeError: ``option`` is neither a name nor a mapping, ``p`` is not a number, or
            ``decimals`` is not a whole number from 0 to 15.
        ValueError: A probability outside [0, 1], a value with more decimal places than
            ``decimals``, or a distribution that does not sum to 1 (within ``0.001``, or what
            the rounding explains).

    The options are checked against the question when a request arrives: a name the question
    does not offer raises :class:`AnswerMismatch`, listing the options it does offer.
    """
    places = _decimals(decimals, "choose()")
    if isinstance(option, Mapping):
        if p is not None:
            raise TypeError("choose(distribution) takes no p: the distribution gives every p")
        if not option:
            raise ValueError("choose({}) needs at least one option's probability")
        distribution = []
        for name, value in option.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"choose(): option names must be non-empty strings, got {name!r}")
            distribution.append(
                (name, _probability(value, f"choose(): the probability of {name!r}"))
            )
        _check_sum([value for _, value in distribution], "choose()", places)
        return ScriptedChoice(None, 1.0, tuple(distribution), _confidence(confidence), places)
    if not isinstance(option, str) or not option:
        raise TypeError(
            f"choose() needs an option name or a distribution {{name: p}}, got {option!r}"
        )
    chosen = 1.0 if p is None else _probability(p, "choose(): p")
    if places is not None:
        _check_sum([chosen, 1.0 - chosen], "choose()", None)
        scaled = chosen * 10.0**places
        if abs(scaled - round(scaled)) > 1e-6:
            raise ValueError(
                f"choose(): p={chosen!r} has more than {places} decimal places (decimals={places})"
            )
    return ScriptedChoice(option, chosen, None, _confidence(confidence), places)


def score(
    value: float | Mapping[str | int, float] | Sequence[float],
    *,
    confidence: float | None = None,
    decimals: int | None = None,
) -> ScriptedScore:
    """Script the answer to a score question.

    ``score(2.4)`` reports the score 2.4, with the probability split between the two levels
    around it (0.6 on level 2, 0.4 on level 3); ``score(2)`` puts all of it on level 2.
    ``score({"0": 0.1, "1": 0.2, "2": 0.7})`` (or ``score([0.1, 0.2, 0.7])``) scripts the level
    distribution; levels left out get 0 and the score is ``sum(i * p_i)``. With
    ``decimals=2``, a scripted distribution is one rounded to 2 decimal places, as
    :func:`choose` takes it.

    Args:
        value: The score (>= 0), or the level distribution keyed by level index.
        confidence: The provider-reported confidence, in [0, 1].
        decimals: The decimal places a scripted distribution is rounded to, or ``None``.

    Raises:
        TypeError: ``value`` is not a number, a mapping or a list, a key is not a level, or
            ``decimals`` is given with a score (it applies to a distribution).
        ValueError: A negative score, a probability outside [0, 1], a value with more decimal
            places than ``decimals``, or a distribution that does not sum to 1.

    The levels are checked against the question when a request arrives: a score or level beyond
    the question's scale raises :class:`AnswerMismatch`.
    """
    places = _decimals(decimals, "score()")
    if isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, str)):
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        distribution = []
        for key, p in items:
            level = _level(key)
            distribution.append(
                (level, _probability(p, f"score(): the probability of level {key!r}"))
            )
        if not distribution:
            raise ValueError("score() needs at least one level's probability")
        _check_sum([p for _, p in distribution], "score()", places)
        return ScriptedScore(None, tuple(sorted(distribution)), _confidence(confidence), places)
    if places is not None:
        raise TypeError(
            f"score({value!r}, decimals={places}): decimals= applies to a scripted distribution "
            f"(score([...], decimals={places})); a score's split between two levels is exact"
        )
    number = _number(value, "score()")
    if number < 0:
        raise ValueError(f"score() must be >= 0 (level indices start at 0), got {value!r}")
    return ScriptedScore(number, None, _confidence(confidence))


def _level(key: object) -> int:
    if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
        return key
    if isinstance(key, str) and key.isdigit() and str(int(key)) == key:
        return int(key)
    raise TypeError(f'score(): levels are indices "0", "1", ... (or ints), got {key!r}')


def probability(p: float) -> ScriptedProbability:
    """Script the answer to a boolean question: P(true), a float in [0, 1].

    Raises:
        TypeError: ``p`` is not a number (a ``bool`` is refused: the answer is a probability).
        ValueError: ``p`` is outside [0, 1].
    """
    return ScriptedProbability(_probability(p, "probability()"))


def fails(
    error: ProviderErrorCode | ProviderError,
    message: str | None = None,
    *,
    status_code: int | None = None,
    retry_after: float | None = None,
) -> ScriptedFailure:
    """Script a failed decision: the request raises ``ProviderError`` with this code.

    ``fails("rate_limit", retry_after=2.0)`` raises
    ``ProviderError("rate limit reached, retry later (scripted failure)", "rate_limit",
    status_code=429, retry_after=2.0)``; ``fails(ProviderError(...))`` raises that error.

    Args:
        error: A ``ProviderError`` code, or the error itself.
        message: The message (a default one says which failure was scripted).
        status_code: The HTTP status; defaults to the usual one for the code (429, 401, 400,
            500; none for ``timeout`` and ``unknown``).
        retry_after: Seconds to wait before retrying.

    Raises:
        ValueError: Not one of the six codes.
        TypeError: Details given along with a ready ``ProviderError``.
    """
    if isinstance(error, ProviderError):
        if message is not None or status_code is not None or retry_after is not None:
            raise TypeError(
                "fails(ProviderError(...)) takes no other arguments: set them on the error"
            )
        return ScriptedFailure(error)
    if error not in PROVIDER_ERROR_CODES:
        raise ValueError(
            f"fails() needs a ProviderError or one of the codes {list(PROVIDER_ERROR_CODES)}, "
            f"got {error!r}"
        )
    given = [repr(error)]
    given += [] if message is None else [repr(message)]
    given += [] if status_code is None else [f"status_code={status_code!r}"]
    given += [] if retry_after is None else [f"retry_after={retry_after!r}"]
    return ScriptedFailure(
        ProviderError(
            _DEFAULT_MESSAGES[error] if message is None else message,
            error,
            status_code=_DEFAULT_STATUS[error] if status_code is None else status_code,
            retry_after=retry_after,
        ),
        f"fails({', '.join(given)})",
    )


def times_out(message: str | None = None) -> ScriptedFailure:
    """Script a decision that times out: ``ProviderError`` with code ``timeout``."""
    failure = fails("timeout", message)
    shown = "times_out()" if message is None else f"times_out({message!r})"
    return ScriptedFailure(failure.error, shown)


def hangs() -> ScriptedHang:
    """Script a decision that never finishes until the request's abort signal fires.

    The provider then raises ``ProviderError`` with code ``timeout``, as a real one does when a
    call in flight is aborted. The request must carry a signal (a hang without one would stop
    the test forever, so it raises :class:`AnswerMismatch` instead).
    """
    return ScriptedHang()


def fits(answer: ScriptedAnswer, question: Any) -> bool:
    """Whether ``answer`` can answer ``question`` (failures and hangs fit any question)."""
    return answer.question_type is None or answer.question_type == question.type
