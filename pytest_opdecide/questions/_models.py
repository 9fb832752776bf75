"""The data of question decisions: requests, questions, answers, results and usage.

Attributes are snake_case; ``model_dump(by_alias=True, mode="json")`` writes the spec's camelCase
wire JSON and ``model_validate`` reads either spelling. Contexts, instructions, option
descriptions, levels and criteria are JSON values kept exactly as given: same types (``"1"``
stays a string, ``True`` stays a bool), same key order, ``null`` option descriptions kept as
``None``. Anything that is not JSON is rejected.

The models check *types*; the semantic rules (two options at least, probabilities summing to 1,
...) live in :func:`~pytest_opdecide.questions.validate_request` and
:func:`~pytest_opdecide.questions.validate_result`, so that a bad request or answer can still be
built and then reported by rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, Self, TypeAlias, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PlainValidator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError, ValidationError

from pytest_opdecide.questions._abort import AbortSignal
from pytest_opdecide.questions._json import NonJsonValueError, json_copy, loads_strictly

DecisionJson: TypeAlias = JsonValue
"""Any JSON value: ``str``, ``int``, ``float``, ``bool``, ``None``, lists and string-keyed dicts."""

DecisionContext: TypeAlias = str | list[JsonValue] | dict[str, JsonValue]
"""Text, or a JSON array or object: the shape of contexts, instructions, levels and criteria."""

NON_JSON_ERROR = "decision_json"
"""The pydantic error type raised for a value that is not JSON."""
REPEATED_KEY_ERROR = "json_repeated_key"
"""The pydantic error type raised for JSON text in which an object repeats a key."""
NULL_CRITERIA_ERROR = "null_criteria"
"""The pydantic error type raised for a boolean question's ``criteria`` given as ``null``."""


def _context(value: object) -> DecisionContext:
    if not isinstance(value, str | list | dict):
        raise PydanticCustomError(
            NON_JSON_ERROR,
            "expected text, a JSON array or a JSON object, got {kind}",
            {"kind": type(value).__name__},
        )
    try:
        copied = json_copy(value, "")
    except NonJsonValueError as error:
        raise PydanticCustomError(NON_JSON_ERROR, "{problem}", {"problem": str(error)}) from None
    assert isinstance(copied, str | list | dict)
    return copied


def _optional_context(value: object) -> DecisionContext | None:
    return None if value is None else _context(value)


Context = Annotated[
    DecisionContext, PlainValidator(_context, json_schema_input_type=DecisionContext)
]
OptionalContext = Annotated[
    DecisionContext | None,
    PlainValidator(_optional_context, json_schema_input_type=DecisionContext | None),
]
Probability = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A finite float; ``bool`` is rejected. The [0, 1] range is a rule of ``validate_result``."""
TokenCount = Annotated[int, Field(strict=True, ge=0)]


def _omit_none(value: object) -> bool:
    return value is None


def _where(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


class WireModel(BaseModel):
    """Base of every model: camelCase aliases, either spelling accepted, unknown fields refused.

    JSON text in which an object repeats a key (``{"a": null, "a": "x"}``) is refused by
    :meth:`model_validate_json`: most parsers keep the last value, silently losing the other.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
    )

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Read the model from JSON text, refusing an object that repeats a key.

        Raises:
            ValidationError: The text is not a valid model, or an object in it repeats a key
                (error type ``json_repeated_key``, located at that object).
        """
        try:
            _, repeated = loads_strictly(json_data)
        except ValueError:
            repeated = None  # not JSON: pydantic reports it in its own words below
        if repeated is not None:
            path, keys = repeated
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    {
                        "type": PydanticCustomError(
                            REPEATED_KEY_ERROR,
                            "the JSON object at {where} repeats the key(s) {keys}: which value "
                            "is meant is ambiguous",
                            {"where": _where(path), "keys": repr(keys)},
                        ),
                        "loc": path,
                        "input": keys,
                    }
                ],
            )
        return super().model_validate_json(json_data, **kwargs)


# ---------------------------------------------------------------- questions


class ChoiceQuestion(WireModel):
    """Select one outcome among named options.

    Attributes:
        type: Always ``"choice"``.
        instructions: The evaluation to perform: text or structured JSON.
        options: Option name -> description (text or JSON), or ``None`` for no description.
            Order is kept.
    """

    type: Literal["choice"] = "choice"
    instructions: Context
    options: dict[str, OptionalContext]


class ScoreQuestion(WireModel):
    """Evaluate against an ordered rubric whose level indices start at zero.

    Attributes:
        type: Always ``"score"``.
        instructions: The evaluation to perform.
        levels: The rubric, lowest level first; level ``i`` is described by ``levels[i]``.
    """

    type: Literal["score"] = "score"
    instructions: Context
    levels: list[Context]


def _criterion(value: object) -> DecisionContext:
    if value is None:
        raise PydanticCustomError(
            NON_JSON_ERROR,
            "null is not a description (text, a JSON array or a JSON object): leave the side "
            "out to describe nothing",
        )
    return _context(value)


def _criteria(value: object) -> object:
    if value is None:
        raise PydanticCustomError(
            NULL_CRITERIA_ERROR,
            "null is not criteria: leave the field out to describe neither outcome, or give "
            '{"true": ..., "false": ...}',
        )
    return value


Criterion = Annotated[
    DecisionContext | None, PlainValidator(_criterion, json_schema_input_type=DecisionContext)
]
"""One side of a boolean question's criteria: a description, or left out (``None``). An explicit
``null`` is refused: the spec types a side as an optional ``DecisionContext``, not a nullable
one (unlike an option description, whose ``null`` the spec allows)."""


class BooleanCriteria(WireModel):
    """Optional descriptions of the two outcomes of a boolean question.

    A side is a description or is left out; ``null`` (``None`` given) is refused, since null is
    not a description. A side left out describes nothing, and is left out of the wire form.

    Attributes:
        true: What makes the condition true (``None`` when left out).
        false: What makes it false (``None`` when left out).
    """

    true: Criterion = Field(default=None, exclude_if=_omit_none)
    false: Criterion = Field(default=None, exclude_if=_omit_none)


class BooleanQuestion(WireModel):
    """Estimate the probability that the condition in ``instructions`` is true.

    Attributes:
        type: Always ``"boolean"``.
        instructions: The condition to evaluate.
        criteria: Optional descriptions of the true and false outcomes; ``None`` when left out.
            An explicit ``null`` is refused (leave the field out instead).
    """

    type: Literal["boolean"] = "boolean"
    instructions: Context
    criteria: Annotated[
        BooleanCriteria | None, BeforeValidator(_criteria, json_schema_input_type=BooleanCriteria)
    ] = Field(default=None, exclude_if=_omit_none)


DecisionQuestion: TypeAlias = Annotated[
    ChoiceQuestion | ScoreQuestion | BooleanQuestion, Field(discriminator="type")
]
"""One question, told apart by its ``type``."""


class DecisionRequest(WireModel):
    """A set of named questions evaluated against one context.

    Attributes:
        model: The provider's model identifier. An empty string asks for the provider's default
            model; a provider without one rejects the request.
        context: The explicit context shared by all questions (text or JSON). Providers never
            add conversation messages to it.
        questions: Question id -> question. Each answer is keyed by its question's id.
        signal: Optional :class:`AbortSignal` cancelling the request. Not part of the wire JSON.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str
    context: Context
    questions: dict[str, DecisionQuestion]
    signal: AbortSignal | None = Field(default=None, exclude=True, repr=False)


# ---------------------------------------------------------------- usage


class ProviderUsagePricing(WireModel):
    """Prices in US dollars per million tokens.

    Attributes:
        input_per_million: Price of a million uncached prompt tokens.
        output_per_million: Price of a million completion tokens.
        cached_input_per_million: Price of a million cached prompt tokens; the input price when
            absent.
    """

    input_per_million: float = Field(ge=0, allow_inf_nan=False)
    output_per_million: float = Field(ge=0, allow_inf_nan=False)
    cached_input_per_million: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, exclude_if=_omit_none
    )

    def cost(self, usage: ProviderUsage) -> float:
        """The cost of ``usage`` at these prices.

        ``uncached = max(0, prompt - cached)``; cost is
        ``uncached * input + cached * (cached_input or input) + completion * output``, per
        million tokens.

        Args:
            usage: Token counts.

        Returns:
            The cost in US dollars.
        """
        cached = usage.cached_tokens or 0
        uncached = max(0, usage.prompt_tokens - cached)
        cached_price = (
            self.input_per_million
            if self.cached_input_per_million is None
            else self.cached_input_per_million
        )
        return (
            uncached / 1e6 * self.input_per_million
            + cached / 1e6 * cached_price
            + usage.completion_tokens / 1e6 * self.output_per_million
        )


def _sum_optional(left: int | None, right: int | None) -> int | None:
    if left is None:
        return right
    if right is None:
        return left
    return left + right


class ProviderUsage(WireModel):
    """Token counts (and optionally cost) of everything a decision sent to its backend.

    Counts are zeros when the backend reports nothing; providers never estimate them.

    Attributes:
        prompt_tokens: Prompt tokens over all requests.
        completion_tokens: Completion tokens over all requests.
        total_tokens: Total tokens as reported.
        reasoning_tokens: Reasoning tokens, when reported.
        cached_tokens: Cached prompt tokens, when reported.
        cost: Cost in US dollars, when known.
        provider: The name of the provider that incurred the usage.
        pricing: The prices ``cost`` was computed with.
    """

    prompt_tokens: TokenCount = 0
    completion_tokens: TokenCount = 0
    total_tokens: TokenCount = 0
    reasoning_tokens: TokenCount | None = Field(default=None, exclude_if=_omit_none)
    cached_tokens: TokenCount | None = Field(default=None, exclude_if=_omit_none)
    cost: float | None = Field(default=None, ge=0, allow_inf_nan=False, exclude_if=_omit_none)
    provider: str | None = Field(default=None, exclude_if=_omit_none)
    pricing: ProviderUsagePricing | None = Field(default=None, exclude_if=_omit_none)

    def __add__(self, other: ProviderUsage) -> ProviderUsage:
        """Add two usages: counts add up; optional counts add up when either side has one.

        ``cost`` is the sum when both sides have one, and ``None`` (unknown) otherwise: a side
        without a cost would make the sum understate it. ``provider`` and ``pricing`` are taken
        from the left side, else the right.
        """
        if not isinstance(other, ProviderUsage):
            return NotImplemented
        cost = self.cost + other.cost if self.cost is not None and other.cost is not None else None
        return ProviderUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            reasoning_tokens=_sum_optional(self.reasoning_tokens, other.reasoning_tokens),
            cached_tokens=_sum_optional(self.cached_tokens, other.cached_tokens),
            cost=cost,
            provider=self.provider if self.provider is not None else other.provider,
            pricing=self.pricing if self.pricing is not None else other.pricing,
        )

    def priced(self, pricing: ProviderUsagePricing) -> ProviderUsage:
        """A copy with ``pricing`` set and ``cost`` computed from it.

        Args:
            pricing: Prices per million tokens.

        Returns:
            The priced copy.
        """
        return self.model_copy(update={"pricing": pricing, "cost": pricing.cost(self)})

    @classmethod
    def combined(
        cls,
        reports: Iterable[ProviderUsage | None],
        *,
        provider: str | None = None,
        pricing: ProviderUsagePricing | None = None,
    ) -> ProviderUsage:
        """The usage of a decision from what each backend response reported.

        Counts are added up over the responses that reported usage (zeros when none did:
        counts are never estimated). ``cost`` is computed from ``pricing`` only when every
        response reported its usage: unknown usage is not free, so a missing report leaves the
        cost absent (``None``) rather than understating it.

        Args:
            reports: One entry per backend response: its usage, or ``None`` when it reported
                none.
            provider: The provider's name, recorded in ``provider``.
            pricing: Prices per million tokens, recorded in ``pricing`` (and used for ``cost``
                when it can be known).

        Returns:
            The combined usage.

        Example:
            >>> prices = ProviderUsagePricing(input_per_million=1.0, output_per_million=2.0)
            >>> one = ProviderUsage(prompt_tokens=1000, completion_tokens=10, total_tokens=1010)
            >>> ProviderUsage.combined([one, one], pricing=prices).cost
            0.00204
            >>> print(ProviderUsage.combined([one, None], pricing=prices).cost)
            None
        """
        listed = list(reports)
        known = [report for report in listed if report is not None]
        total = cls(provider=provider)
        for report in known:
            total = total + report.model_copy(update={"cost": None})
        total = total.model_copy(update={"provider": provider, "pricing": pricing})
        if pricing is not None and known and len(known) == len(listed):
            total = total.priced(pricing)
        return total


class ProviderModelInfo(WireModel):
    """A model a provider offers, as listed by ``get_models``.

    Attributes:
        id: The identifier to pass as ``DecisionRequest.model``.
        name: A display name, when known.
        owned_by: The organisation that owns the model, when reported.
    """

    id: str
    name: str | None = Field(default=None, exclude_if=_omit_none)
    owned_by: str | None = Field(default=None, exclude_if=_omit_none)


# ---------------------------------------------------------------- answers


class ChoiceAnswer(WireModel):
    """The answer to a choice question.

    Attributes:
        type: Always ``"choice"``.
        choice: The selected option name.
        probabilities: Option name -> probability, for every option.
        confidence: Provider-reported confidence in [0, 1], distinct from any probability.
    """

    type: Literal["choice"] = "choice"
    choice: str
    probabilities: dict[str, Probability]
    confidence: Probability | None = Field(default=None, exclude_if=_omit_none)


class ScoreAnswer(WireModel):
    """The answer to a score question.

    Attributes:
        type: Always ``"score"``.
        score: The probability-weighted mean of the level indices; may be fractional.
        probabilities: Level index (``"0"``, ``"1"``...) -> probability, for every level.
        legend: Level index -> the level's description, JSON structure unchanged.
        confidence: Provider-reported confidence in [0, 1].
    """

    type: Literal["score"] = "score"
    score: Probability
    probabilities: dict[str, Probability]
    legend: dict[str, Context]
    confidence: Probability | None = Field(default=None, exclude_if=_omit_none)


class BooleanAnswer(WireModel):
    """The answer to a boolean question.

    Attributes:
        type: Always ``"boolean"``.
        probability: P(true), a float in [0, 1]. Never a ``bool`` and never thresholded:
            deciding what is "true enough" is up to the caller.
    """

    type: Literal["boolean"] = "boolean"
    probability: Probability


DecisionAnswer: TypeAlias = Annotated[
    ChoiceAnswer | ScoreAnswer | BooleanAnswer, Field(discriminator="type")
]
"""One answer, told apart by its ``type``."""

AnswerT = TypeVar("AnswerT", ChoiceAnswer, ScoreAnswer, BooleanAnswer)


class DecisionResult(WireModel):
    """The answers of a decision.

    Attributes:
        model: The model that answered, resolved when the request used an alias.
        answers: Question id -> answer. Use :meth:`choice`, :meth:`score` and :meth:`boolean`
            for typed access.
        usage: Token counts of every backend request the decision made.
        metadata: Provider-specific information (e.g. how probabilities were computed).
    """

    model: str
    answers: dict[str, DecisionAnswer]
    usage: ProviderUsage = Field(default_factory=ProviderUsage)
    metadata: dict[str, JsonValue] | None = Field(default=None, exclude_if=_omit_none)

    def answer(self, question_id: str, kind: type[AnswerT]) -> AnswerT:
        """The answer to ``question_id``, checked to be of class ``kind``.

        Args:
            question_id: The question's id.
            kind: ``ChoiceAnswer``, ``ScoreAnswer`` or ``BooleanAnswer``.

        Returns:
            The answer, typed as ``kind``.

        Raises:
            KeyError: No answer has that id.
            TypeError: The answer is of another type.
        """
        try:
            found = self.answers[question_id]
        except KeyError:
            raise KeyError(
                f"no answer for question {question_id!r}; answered: {sorted(self.answers)}"
            ) from None
        if not isinstance(found, kind):
            raise TypeError(
                f"question {question_id!r} has a {found.type} answer, not a {kind.__name__}"
            )
        return found

    def choice(self, question_id: str) -> ChoiceAnswer:
        """The answer to choice question ``question_id`` (see :meth:`answer`)."""
        return self.answer(question_id, ChoiceAnswer)

    def score(self, question_id: str) -> ScoreAnswer:
        """The answer to score question ``question_id`` (see :meth:`answer`)."""
        return self.answer(question_id, ScoreAnswer)

    def boolean(self, question_id: str) -> BooleanAnswer:
        """The answer to boolean question ``question_id`` (see :meth:`answer`)."""
        return self.answer(question_id, BooleanAnswer)
