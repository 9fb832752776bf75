"""A gallery of deliberately broken decision providers, one per defect class.

:class:`HonestProvider` is a small, correct provider written from scratch (not on
``BaseDecisionProvider``, so that any step can go wrong): one OpenAI-compatible chat completion
per question, outcomes labelled ``A``.. / ``0``.. / ``yes``/``no``, the distribution read from the
first token's ``top_logprobs``. Every other class changes exactly one thing, the way real
providers get it wrong. ``test_gallery.py`` proves the conformance suite catches each one, with
a message naming the defect.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from pytest_opdecide.questions import (
    BooleanAnswer,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionContext,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderError,
    ProviderErrorCode,
    ProviderFactoryConfig,
    ProviderUsage,
    ScoreAnswer,
    ScoreQuestion,
    validate_request,
)

_CODES: dict[int, ProviderErrorCode] = {401: "auth_error", 403: "auth_error", 429: "rate_limit"}


class HonestProvider:
    """A correct provider: the control of the gallery (it passes every check)."""

    name = "honest"
    kind = "decision"
    specification_version = "1"
    max_options = 26
    max_levels = 10

    def __init__(self, config: ProviderFactoryConfig) -> None:
        self.base_url = (config.base_url or "http://localhost:8080/v1").rstrip("/")
        self.api_key = config.api_key or None
        self.transport = config.transport

    # --- the steps a broken provider changes ----------------------------------------------

    def check(self, request: DecisionRequest) -> DecisionRequest:
        return validate_request(request, max_options=self.max_options, max_levels=self.max_levels)

    def client(self) -> httpx.AsyncClient:
        transport = self.transport
        assert isinstance(transport, httpx.AsyncBaseTransport)
        return httpx.AsyncClient(transport=transport)

    def show(self, value: DecisionContext) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)

    def show_context(self, context: DecisionContext) -> str:
        return self.show(context)

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        """Each label's probability, renormalised over the labels."""
        mass = [listed.get(label, 0.0) for label in labels]
        total = math.fsum(mass)
        if total <= 0:
            raise ProviderError("the model named no label", "unknown")
        return [p / total for p in mass]

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        names = list(question.options)
        best = max(range(len(names)), key=lambda i: probabilities[i])
        return ChoiceAnswer(
            choice=names[best], probabilities=dict(zip(names, probabilities, strict=True))
        )

    def score_answer(self, question: ScoreQuestion, probabilities: list[float]) -> DecisionAnswer:
        return ScoreAnswer(
            score=self.score(probabilities),
            probabilities={str(i): p for i, p in enumerate(probabilities)},
            legend={str(i): level for i, level in enumerate(question.levels)},
        )

    def score(self, probabilities: list[float]) -> float:
        return math.fsum(i * p for i, p in enumerate(probabilities))

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        return BooleanAnswer(probability=yes / (yes + no))

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return found

    def error_for(self, response: httpx.Response) -> Exception:
        status = response.status_code
        code = _CODES.get(status, "server_error" if status >= 500 else "invalid_request")
        after = response.headers.get("retry-after")
        return ProviderError(
            f"{self.name}: HTTP {status}: {response.text[:200]}",
            code,
            status_code=status,
            retry_after=float(after) if after and code == "rate_limit" else None,
        )

    async def with_abort(self, request: DecisionRequest) -> DecisionResult:
        signal = request.signal
        if signal is None:
            return await self.work(request)
        signal.throw_if_aborted()
        work = asyncio.ensure_future(self.work(request))
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({work, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if signal.aborted:
            raise ProviderError(f"aborted: {signal.reason}", "timeout")
        return work.result()

    # --- the provider ----------------------------------------------------------------------

    async def decide(self, request: DecisionRequest) -> DecisionResult:
        checked = self.check(request)
        return await self.with_abort(checked)

    async def work(self, request: DecisionRequest) -> DecisionResult:
        found: dict[str, DecisionAnswer] = {}
        usage = ProviderUsage(provider=self.name)
        models: list[str] = []
        async with self.client() as client:
            for question_id, question in request.questions.items():
                answer, used, model = await self.ask(client, request, question)
                found[question_id] = answer
                usage = usage + used
                models.append(model)
        return DecisionResult(
            model=models[0] if models else request.model,
            answers=self.answers(request, found),
            usage=usage,
        )

    def prompt(self, context: DecisionContext, question: DecisionQuestion) -> tuple[str, list[str]]:
        parts = [
            f"Context:\n{self.show_context(context)}",
            f"Question:\n{self.show(question.instructions)}",
        ]
        if isinstance(question, ChoiceQuestion):
            # A, B, C...: past Z this goes on with "[", "\\"... (only a provider that skips the
            # checks ever gets there).
            labels = [chr(ord("A") + i) for i in range(len(question.options))]
            lines = []
            for label, (name, description) in zip(labels, question.options.items(), strict=True):
                lines.append(f"{label}. {json.dumps(name, ensure_ascii=False)}")
                if description is not None:
                    lines.append(self.show(description))
            parts.append("Options:\n" + "\n".join(lines))
            parts.append(
                f"Answer with the letter of the best option ({', '.join(labels[:-1])} or "
                f"{labels[-1]}) and nothing else."
            )
        elif isinstance(question, ScoreQuestion):
            labels = [str(i) for i in range(len(question.levels))]
            parts.append(
                "Levels:\n"
                + "\n".join(f"{i}. {self.show(level)}" for i, level in enumerate(question.levels))
            )
            parts.append(
                f"Answer with the number of the level that fits best (0 to {len(labels) - 1})."
            )
        else:
            labels = ["yes", "no"]
            if question.criteria is not None:
                for side, value in (
                    ("yes", question.criteria.true),
                    ("no", question.criteria.false),
                ):
                    if value is not None:
                        parts.append(f'"{side}" means:\n{self.show(value)}')
            parts.append("Answer with yes or no and nothing else.")
        return "\n\n".join(parts), labels

    async def post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await client.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.TimeoutException as error:
            raise ProviderError(f"{self.name}: timed out", "timeout") from error
        except httpx.HTTPError as error:
            raise ProviderError(f"{self.name}: {error}", "server_error") from error
        if response.status_code >= 400:
            raise self.error_for(response)
        try:
            data = response.json()
        except ValueError as error:
            raise ProviderError(f"{self.name}: the body is not JSON", "unknown") from error
        if not isinstance(data, dict):
            raise ProviderError(f"{self.name}: the body is not an object", "unknown")
        return data

    async def ask(
        self, client: httpx.AsyncClient, request: DecisionRequest, question: DecisionQuestion
    ) -> tuple[DecisionAnswer, ProviderUsage, str]:
        text, labels = self.prompt(request.context, question)
        data = await self.post(
            client,
            {
                "model": request.model,
                "messages": [{"role": "user", "content": text}],
                "max_tokens": 1,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 20,
            },
        )
        try:
            top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            listed: dict[str, float] = {}
            for entry in top:
                token = str(entry["token"]).strip()
                listed[token] = listed.get(token, 0.0) + math.exp(float(entry["logprob"]))
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ProviderError(f"{self.name}: no logprobs in the reply", "unknown") from error
        reported = data.get("usage") or {}
        usage = ProviderUsage(
            prompt_tokens=int(reported.get("prompt_tokens", 0)),
            completion_tokens=int(reported.get("completion_tokens", 0)),
            total_tokens=int(reported.get("total_tokens", 0)),
        )
        model = str(data.get("model") or request.model)
        if isinstance(question, ChoiceQuestion):
            return self.choice_answer(question, self.distribution(labels, listed)), usage, model
        if isinstance(question, ScoreQuestion):
            return self.score_answer(question, self.distribution(labels, listed)), usage, model
        return (
            self.boolean_answer(question, *self.distribution(self.boolean_labels(), listed)),
            usage,
            model,
        )

    def boolean_labels(self) -> list[str]:
        return ["yes", "no"]


# --- distributions ---------------------------------------------------------------------------


class NotSummingToOne(HonestProvider):
    """Reports each label's raw probability, forgetting to renormalise over the labels: the
    mass the model put on other tokens is lost, so the distribution sums to less than 1."""

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        return [listed.get(label, 0.0) for label in labels]


class RenormalisedAfterRounding(HonestProvider):
    """Rounds to two decimals, then divides by the rounded sum so that it is exactly 1 again:
    the reported values are neither the computed ones nor their rounding."""

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        rounded = [round(p, 2) for p in super().distribution(labels, listed)]
        total = math.fsum(rounded)
        return [p / total for p in rounded]


class MissingOptionKey(HonestProvider):
    """Leaves out the least probable option from ``probabilities``."""

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().choice_answer(question, probabilities)
        assert isinstance(answer, ChoiceAnswer)
        kept = dict(answer.probabilities)
        del kept[min(kept, key=kept.__getitem__)]
        return answer.model_copy(update={"probabilities": kept})


class ExtraOptionKey(HonestProvider):
    """Adds an ``"other"`` outcome that the question does not offer."""

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().choice_answer(question, probabilities)
        assert isinstance(answer, ChoiceAnswer)
        return answer.model_copy(update={"probabilities": {**answer.probabilities, "other": 0.0}})


class ProbabilityAboveOne(HonestProvider):
    """Reports the odds p_yes / p_no as the boolean probability (above 1 when yes is likelier)."""

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        return BooleanAnswer.model_construct(probability=yes / no)


class ProbabilityNaN(HonestProvider):
    """Looks the boolean labels up as ``Yes``/``No`` (the server says ``yes``/``no``), finds
    neither, and divides zero by zero into NaN."""

    def boolean_labels(self) -> list[str]:
        return ["Yes", "No"]

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        if labels == ["Yes", "No"]:
            return [listed.get(label, 0.0) for label in labels]
        return super().distribution(labels, listed)

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        total = yes + no
        return BooleanAnswer.model_construct(probability=yes / total if total else math.nan)


# --- booleans and scores -----------------------------------------------------------------------


class BooleanAsBool(HonestProvider):
    """Returns ``True``/``False`` instead of P(true)."""

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        return BooleanAnswer.model_construct(probability=yes >= no)


class ThresholdedBoolean(HonestProvider):
    """Applies its own 0.5 threshold: P(true) becomes 1.0 or 0.0."""

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        return BooleanAnswer(probability=1.0 if yes / (yes + no) >= 0.5 else 0.0)


class ScoreIsTheArgmax(HonestProvider):
    """Reports the most probable level as the score, not the probability-weighted mean."""

    def score(self, probabilities: list[float]) -> float:
        return float(max(range(len(probabilities)), key=lambda i: probabilities[i]))


class ScoreAsPercentage(HonestProvider):
    """Reports the score as a percentage of the scale, outside the level range."""

    def score(self, probabilities: list[float]) -> float:
        return super().score(probabilities) / (len(probabilities) - 1) * 100


# --- answers -------------------------------------------------------------------------------------


class AnswersKeyedByPosition(HonestProvider):
    """Keys the answers by the questions' positions instead of their ids."""

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return {str(i): answer for i, answer in enumerate(found.values())}


class WrongAnswerType(HonestProvider):
    """Answers boolean questions with a choice between ``true`` and ``false``."""

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        p = yes / (yes + no)
        return ChoiceAnswer(
            choice="true" if p >= 0.5 else "false", probabilities={"true": p, "false": 1 - p}
        )


# --- construction and transport ------------------------------------------------------------------


class ConstructorIO(HonestProvider):
    """Checks the API key by listing the models while it is being built."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        super().__init__(config)
        transport = config.transport
        assert isinstance(transport, httpx.BaseTransport)
        with httpx.Client(transport=transport) as client:
            self.models = client.get(f"{self.base_url}/models").json()


class BypassesTransport(HonestProvider):
    """Builds its own HTTP client, ignoring the transport override."""

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=5)


class FlattenedContext(HonestProvider):
    """Writes a structured context as Python text (``str(context)``), not JSON."""

    def show_context(self, context: DecisionContext) -> str:
        return str(context)


class SendsUnrepresentable(HonestProvider):
    """Checks nothing before sending: too many options go out (labelled past ``Z``), a single
    option or level is asked about, duplicate names are sent as they are."""

    def check(self, request: DecisionRequest) -> DecisionRequest:
        return request


# --- errors and abort ----------------------------------------------------------------------------


class BareExceptions(HonestProvider):
    """Lets httpx's and json's exceptions escape instead of raising ProviderError."""

    async def post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        response = await client.post(f"{self.base_url}/chat/completions", json=body)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data


class IgnoresAbort(HonestProvider):
    """Never looks at the request's signal."""

    async def with_abort(self, request: DecisionRequest) -> DecisionResult:
        return await self.work(request)


GALLERY: tuple[type[HonestProvider], ...] = (
    NotSummingToOne,
    RenormalisedAfterRounding,
    MissingOptionKey,
    ExtraOptionKey,
    ProbabilityAboveOne,
    ProbabilityNaN,
    BooleanAsBool,
    ThresholdedBoolean,
    ScoreIsTheArgmax,
    ScoreAsPercentage,
    AnswersKeyedByPosition,
    WrongAnswerType,
    ConstructorIO,
    BypassesTransport,
    FlattenedContext,
    SendsUnrepresentable,
    BareExceptions,
    IgnoresAbort,
)
"""Every broken provider, in the order of the defect classes of the issue."""
