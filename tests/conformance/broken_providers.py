"""A gallery of decision providers: correct ones that must pass, broken ones that must be caught.

:class:`HonestProvider` is a small, correct provider written from scratch (not on
``BaseDecisionProvider``, so that any step can go wrong): one OpenAI-compatible chat completion
per question, outcomes labelled ``A``.. / ``0``.. / ``yes``/``no``, the distribution read from the
first token's ``top_logprobs``. The other correct ones round (and never renormalise). Every
broken class changes exactly one thing, the way real providers get it wrong: one per rule of
the spec and of docs/conformance.md. ``test_gallery.py`` proves the conformance suite catches
each one, through the test class and through ``opdecide check``, with a message naming the
broken rule; ``CRASHES`` are providers that fail in every way that could take a test run down.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import time
import unicodedata
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
    InvalidRequestError,
    ProviderError,
    ProviderErrorCode,
    ProviderFactoryConfig,
    ProviderModelInfo,
    ProviderUsage,
    Rule,
    ScoreAnswer,
    ScoreQuestion,
    ThreadState,
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
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return httpx.AsyncClient(transport=transport, headers=headers)

    def show(self, value: DecisionContext) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)

    def show_context(self, context: DecisionContext) -> str:
        return self.show(context)

    def context_for(self, request: DecisionRequest, index: int) -> DecisionContext | None:
        """The context sent with the request of the ``index``-th question."""
        return request.context

    def instructions_for(self, request: DecisionRequest, question_id: str) -> DecisionContext:
        return request.questions[question_id].instructions

    def shown_options(self, question: ChoiceQuestion) -> list[tuple[str, Any]]:
        """The options as labelled A, B...: label i is read back as the i-th option given."""
        return list(question.options.items())

    def shown_levels(self, question: ScoreQuestion) -> list[Any]:
        return list(question.levels)

    def shown_criteria(self, question: BooleanQuestion) -> tuple[Any, Any]:
        criteria = question.criteria
        return (None, None) if criteria is None else (criteria.true, criteria.false)

    def model_for(self, request: DecisionRequest) -> str:
        """The model sent to the backend."""
        return request.model

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        """Each label's probability, renormalised over the labels."""
        mass = [listed.get(label, 0.0) for label in labels]
        total = math.fsum(mass)
        if total <= 0:
            raise ProviderError("the model named no label", "unknown")
        return [p / total for p in mass]

    def reported(self, probability: float) -> float:
        """A probability as reported (rounding providers round it here)."""
        return probability

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        names = list(question.options)
        best = max(range(len(names)), key=lambda i: probabilities[i])
        return ChoiceAnswer(
            choice=names[best],
            probabilities={n: self.reported(p) for n, p in zip(names, probabilities, strict=True)},
        )

    def score_answer(self, question: ScoreQuestion, probabilities: list[float]) -> DecisionAnswer:
        return ScoreAnswer(
            score=self.reported(self.score(probabilities)),
            probabilities={str(i): self.reported(p) for i, p in enumerate(probabilities)},
            legend={str(i): level for i, level in enumerate(question.levels)},
        )

    def score(self, probabilities: list[float]) -> float:
        return math.fsum(i * p for i, p in enumerate(probabilities))

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        return BooleanAnswer(probability=self.reported(yes / (yes + no)))

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return found

    def usage_of(self, data: Mapping[str, Any], prompt: str) -> ProviderUsage | None:
        """The usage one response reports, or ``None``."""
        reported = data.get("usage")
        if not isinstance(reported, Mapping):
            return None
        return ProviderUsage(
            prompt_tokens=int(reported.get("prompt_tokens", 0)),
            completion_tokens=int(reported.get("completion_tokens", 0)),
            total_tokens=int(reported.get("total_tokens", 0)),
        )

    def total_usage(self, usages: list[ProviderUsage | None]) -> ProviderUsage:
        return ProviderUsage.combined(usages, provider=self.name)

    def result_model(self, request: DecisionRequest, models: list[str]) -> str:
        """The result's model: the one the backend named."""
        return models[0] if models else request.model

    def metadata(self) -> dict[str, Any] | None:
        return None

    def result(
        self,
        request: DecisionRequest,
        answers: dict[str, Any],
        usage: ProviderUsage,
        models: list[str],
    ) -> DecisionResult:
        return DecisionResult(
            model=self.result_model(request, models),
            answers=answers,
            usage=usage,
            metadata=self.metadata(),
        )

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
            await asyncio.gather(work, aborted, return_exceptions=True)
        if signal.aborted:
            raise ProviderError(f"aborted: {signal.reason}", "timeout")
        return work.result()

    # --- the provider ----------------------------------------------------------------------

    async def decide(self, request: DecisionRequest) -> DecisionResult:
        checked = self.check(request)
        return await self.with_abort(checked)

    async def get_models(self, filter: str | None = None) -> list[ProviderModelInfo]:
        try:
            async with self.client() as client:
                response = await client.get(f"{self.base_url}/models")
            if response.status_code >= 400:
                return []
            return [ProviderModelInfo(id=entry["id"]) for entry in response.json()["data"]]
        except Exception:
            return []

    async def work(self, request: DecisionRequest) -> DecisionResult:
        found: dict[str, DecisionAnswer] = {}
        usages: list[ProviderUsage | None] = []
        models: list[str] = []
        async with self.client() as client:
            for index, question_id in enumerate(request.questions):
                answer, used, model = await self.ask(client, request, question_id, index)
                found[question_id] = answer
                usages.append(used)
                models.append(model)
        return self.result(request, self.answers(request, found), self.total_usage(usages), models)

    def prompt(
        self,
        context: DecisionContext | None,
        instructions: DecisionContext,
        question: DecisionQuestion,
    ) -> tuple[str, list[str]]:
        parts = [] if context is None else [f"Context:\n{self.show_context(context)}"]
        parts.append(f"Question:\n{self.show(instructions)}")
        if isinstance(question, ChoiceQuestion):
            # A, B, C...: past Z this goes on with "[", "\\"... (only a provider that skips the
            # checks ever gets there).
            shown = self.shown_options(question)
            labels = [chr(ord("A") + i) for i in range(len(shown))]
            lines = []
            for label, (name, description) in zip(labels, shown, strict=True):
                lines.append(f"{label}. {json.dumps(name, ensure_ascii=False)}")
                if description is not None:
                    lines.append(self.show(description))
            parts.append("Options:\n" + "\n".join(lines))
            parts.append(
                f"Answer with the letter of the best option ({', '.join(labels[:-1])} or "
                f"{labels[-1]}) and nothing else."
            )
        elif isinstance(question, ScoreQuestion):
            levels = self.shown_levels(question)
            labels = [str(i) for i in range(len(levels))]
            parts.append(
                "Levels:\n"
                + "\n".join(f"{i}. {self.show(level)}" for i, level in enumerate(levels))
            )
            parts.append(
                f"Answer with the number of the level that fits best (0 to {len(labels) - 1})."
            )
        else:
            labels = ["yes", "no"]
            for side, value in zip(("yes", "no"), self.shown_criteria(question), strict=True):
                if value is not None:
                    parts.append(f'"{side}" means:\n{self.show(value)}')
            parts.append("Answer with yes or no and nothing else.")
        return "\n\n".join(parts), labels

    def encoded(self, body: dict[str, Any]) -> bytes:
        """The request body as sent: JSON in UTF-8, as httpx writes ``json=``."""
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")

    async def post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await client.post(
                f"{self.base_url}/chat/completions",
                content=self.encoded(body),
                headers={"Content-Type": "application/json"},
            )
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
        self, client: httpx.AsyncClient, request: DecisionRequest, question_id: str, index: int
    ) -> tuple[DecisionAnswer, ProviderUsage | None, str]:
        question = request.questions[question_id]
        text, labels = self.prompt(
            self.context_for(request, index), self.instructions_for(request, question_id), question
        )
        data = await self.post(
            client,
            {
                "model": self.model_for(request),
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
        usage = self.usage_of(data, text)
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


# === correct providers: they must pass every check ===========================================


class RoundsToThreeDecimals(HonestProvider):
    """Rounds every probability (and the score) to 3 decimal places and never renormalises;
    it says nothing about it (the spec allows that)."""

    def reported(self, probability: float) -> float:
        return round(probability, 3)


class RoundsToTwoDecimals(HonestProvider):
    """Rounds every probability (and the score) to 2 decimal places and never renormalises;
    it says nothing about it (the spec makes stating it optional): its sums are up to
    ``n x 0.005`` from 1, as the values' own two places explain."""

    def reported(self, probability: float) -> float:
        return round(probability, 2)


class RoundsToTwoDecimalsAndSaysSo(HonestProvider):
    """Rounds every probability to 2 decimal places, never renormalises, and states the
    rounding in the result's metadata, as the spec lets providers do."""

    def reported(self, probability: float) -> float:
        return round(probability, 2)

    def metadata(self) -> dict[str, Any] | None:
        return {"rounding": {"decimals": 2}}


def _stand_in(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, for checking the other rules."""
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


class SendsLoneSurrogatesEscaped(HonestProvider):
    """Writes its requests as JSON with every non-ASCII character escaped (``json.dumps``'s
    default), so a lone surrogate in a question id or an option name (``"\\ud83d"``, which
    UTF-8 cannot carry) goes out intact as the escape ``\\ud83d``: it can represent such a
    request, and answers it instead of refusing it. Every other rule it checks as usual."""

    def check(self, request: DecisionRequest) -> DecisionRequest:
        questions: dict[str, DecisionQuestion] = {}
        for question_id, question in request.questions.items():
            if isinstance(question, ChoiceQuestion):
                options = {_stand_in(name): about for name, about in question.options.items()}
                question = question.model_copy(update={"options": options})
            questions[_stand_in(question_id)] = question
        super().check(request.model_copy(update={"questions": questions}))
        return request

    def encoded(self, body: dict[str, Any]) -> bytes:
        return json.dumps(body, allow_nan=False).encode("ascii")


CORRECT: tuple[type[HonestProvider], ...] = (
    HonestProvider,
    RoundsToThreeDecimals,
    RoundsToTwoDecimals,
    RoundsToTwoDecimalsAndSaysSo,
    SendsLoneSurrogatesEscaped,
)
"""Providers that follow every rule: the gallery's controls."""


# === broken providers: one per rule ============================================================

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


class ForcesTheRoundedSumToOne(HonestProvider):
    """Rounds to two decimals, then puts what the rounded values miss of 1 on the likeliest
    outcome, so that they sum to 1 exactly: renormalised in another guise (every value still
    has two places, but one of them is no rounding of what was computed)."""

    def distribution(self, labels: Sequence[str], listed: Mapping[str, float]) -> list[float]:
        rounded = [round(p, 2) for p in super().distribution(labels, listed)]
        top = max(range(len(rounded)), key=lambda i: rounded[i])
        rounded[top] = round(rounded[top] + 1.0 - math.fsum(rounded), 2)
        return rounded


class OverstatesRounding(HonestProvider):
    """States in its metadata that it rounds to 2 decimal places (a looser sum) but reports
    the values unrounded."""

    def metadata(self) -> dict[str, Any] | None:
        return {"rounding": {"decimals": 2}}


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


# --- booleans, scores and confidence ---------------------------------------------------------


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


class OneBasedLevels(HonestProvider):
    """Keys a score's probabilities ``"1"``..``"L"``, as people count levels."""

    def score_answer(self, question: ScoreQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().score_answer(question, probabilities)
        assert isinstance(answer, ScoreAnswer)
        shifted = {str(int(key) + 1): p for key, p in answer.probabilities.items()}
        return answer.model_copy(update={"probabilities": shifted})


class LegendAsText(HonestProvider):
    """Writes each level of the legend as ``str(level)``: structured levels lose their JSON."""

    def score_answer(self, question: ScoreQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().score_answer(question, probabilities)
        assert isinstance(answer, ScoreAnswer)
        legend = {str(i): str(level) for i, level in enumerate(question.levels)}
        return answer.model_copy(update={"legend": legend})


class ConfidenceAsPercent(HonestProvider):
    """Reports its confidence in percent (the top probability times 100)."""

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().choice_answer(question, probabilities)
        return answer.model_copy(update={"confidence": max(probabilities) * 100})


class ForgetsConfidence(HonestProvider):
    """Is documented (and declared) to report confidence, and never does."""


# --- answers and results -----------------------------------------------------------------------


class AnswersKeyedByPosition(HonestProvider):
    """Keys the answers by the questions' positions instead of their ids."""

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return {str(i): answer for i, answer in enumerate(found.values())}


class ExtraAnswer(HonestProvider):
    """Adds a ``summary`` answer that no question asked for."""

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return {**found, "summary": BooleanAnswer(probability=0.5)}


class IdsNormalised(HonestProvider):
    """Keys the answers by the question ids stripped and NFC-normalised, so that ``" route "``
    and a decomposed ``"café"`` come back changed."""

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        return {unicodedata.normalize("NFC", qid).strip(): a for qid, a in found.items()}


class WrongAnswerType(HonestProvider):
    """Answers boolean questions with a choice between ``true`` and ``false``."""

    def boolean_answer(self, question: BooleanQuestion, yes: float, no: float) -> DecisionAnswer:
        p = yes / (yes + no)
        return ChoiceAnswer(
            choice="true" if p >= 0.5 else "false", probabilities={"true": p, "false": 1 - p}
        )


class ChoosesALabel(HonestProvider):
    """Reports the label of the best option (``"A"``) as the choice, not its name."""

    def choice_answer(self, question: ChoiceQuestion, probabilities: list[float]) -> DecisionAnswer:
        answer = super().choice_answer(question, probabilities)
        best = max(range(len(probabilities)), key=lambda i: probabilities[i])
        return answer.model_copy(update={"choice": chr(ord("A") + best)})


class AnswersAsList(HonestProvider):
    """Returns the answers as a list, in question order, instead of a mapping."""

    def result(
        self,
        request: DecisionRequest,
        answers: dict[str, Any],
        usage: ProviderUsage,
        models: list[str],
    ) -> DecisionResult:
        return DecisionResult.model_construct(
            model=self.result_model(request, models),
            answers=list(answers.values()),
            usage=usage,
        )


class EmptyModel(HonestProvider):
    """Leaves the result's model empty."""

    def result_model(self, request: DecisionRequest, models: list[str]) -> str:
        return ""


class NegativeTokens(HonestProvider):
    """Reports unknown token counts as -1."""

    def total_usage(self, usages: list[ProviderUsage | None]) -> ProviderUsage:
        return ProviderUsage.model_construct(
            prompt_tokens=-1, completion_tokens=-1, total_tokens=-1
        )


# --- the questions, as asked -------------------------------------------------------------------


class SwapsAnswers(HonestProvider):
    """Hands each answer to the next question of the same type (two questions that look
    alike get each other's answers)."""

    def answers(self, request: DecisionRequest, found: dict[str, DecisionAnswer]) -> dict[str, Any]:
        swapped = dict(found)
        for kind in ("choice", "score", "boolean"):
            ids = [qid for qid, q in request.questions.items() if q.type == kind]
            for first, second in zip(ids[0::2], ids[1::2], strict=False):
                swapped[first], swapped[second] = found[second], found[first]
        return swapped


class ContextOnlyOnTheFirstRequest(HonestProvider):
    """Sends the context with the first question's request only, to save tokens."""

    def context_for(self, request: DecisionRequest, index: int) -> DecisionContext | None:
        return request.context if index == 0 else None


class InstructionsShifted(HonestProvider):
    """Gives each question the instructions of the question before it (an off-by-one)."""

    def instructions_for(self, request: DecisionRequest, question_id: str) -> DecisionContext:
        ids = list(request.questions)
        return request.questions[ids[ids.index(question_id) - 1]].instructions


class CriteriaSwapped(HonestProvider):
    """Describes "yes" with ``criteria.false`` and "no" with ``criteria.true``."""

    def shown_criteria(self, question: BooleanQuestion) -> tuple[Any, Any]:
        when_true, when_false = super().shown_criteria(question)
        return when_false, when_true


class LevelsReversed(HonestProvider):
    """Lists the levels from highest to lowest, numbered from 0, and reads label 0 as level 0:
    the scale is upside down (array order defines it)."""

    def shown_levels(self, question: ScoreQuestion) -> list[Any]:
        return list(reversed(question.levels))


class OptionsRotated(HonestProvider):
    """Labels the options starting from the second one (the first comes last), but reads
    label A as the first option."""

    def shown_options(self, question: ChoiceQuestion) -> list[tuple[str, Any]]:
        items = list(question.options.items())
        return items[1:] + items[:1]


class DropsOptionDescriptions(HonestProvider):
    """Sends option names without their descriptions."""

    def shown_options(self, question: ChoiceQuestion) -> list[tuple[str, Any]]:
        return [(name, None) for name in question.options]


class FlattenedContext(HonestProvider):
    """Writes a structured context as Python text (``str(context)``), not JSON."""

    def show_context(self, context: DecisionContext) -> str:
        return str(context)


class FixedModel(HonestProvider):
    """Sends the model it was written for, whatever the request asks."""

    def model_for(self, request: DecisionRequest) -> str:
        return "gpt-4o-mini"


class ReportsRequestedModel(HonestProvider):
    """Reports the requested model instead of the resolved one the backend named."""

    def result_model(self, request: DecisionRequest, models: list[str]) -> str:
        return request.model


# --- usage --------------------------------------------------------------------------------------


class UndercountsUsage(HonestProvider):
    """Reports the usage of the first response only."""

    def total_usage(self, usages: list[ProviderUsage | None]) -> ProviderUsage:
        return super().total_usage(usages[:1])


class InventsUsage(HonestProvider):
    """Estimates the tokens of a response that reports none (four characters a token), and
    prices them at zero."""

    def usage_of(self, data: Mapping[str, Any], prompt: str) -> ProviderUsage | None:
        found = super().usage_of(data, prompt)
        if found is not None:
            return found
        estimate = len(prompt) // 4
        return ProviderUsage(
            prompt_tokens=estimate, completion_tokens=1, total_tokens=estimate + 1, cost=0.0
        )


# --- construction, transport and credentials -------------------------------------------------


class WrongKind(HonestProvider):
    """Declares itself a chat provider."""

    kind = "chat"


class SyncDecide(HonestProvider):
    """Defines ``decide`` as a plain function (answering evenly, without its backend): the
    provider interface is async."""

    def decide(self, request: DecisionRequest) -> DecisionResult:  # type: ignore[override]
        checked = self.check(request)
        answers: dict[str, DecisionAnswer] = {}
        for question_id, question in checked.questions.items():
            if isinstance(question, ChoiceQuestion):
                share = [1 / len(question.options)] * len(question.options)
                answers[question_id] = self.choice_answer(question, share)
            elif isinstance(question, ScoreQuestion):
                share = [1 / len(question.levels)] * len(question.levels)
                answers[question_id] = self.score_answer(question, share)
            else:
                answers[question_id] = BooleanAnswer(probability=0.5)
        return DecisionResult(model=checked.model, answers=answers)


class GetModelsRaises(HonestProvider):
    """Lets a failed model listing raise."""

    async def get_models(self, filter: str | None = None) -> list[ProviderModelInfo]:
        async with self.client() as client:
            response = await client.get(f"{self.base_url}/models")
        response.raise_for_status()
        return [ProviderModelInfo(id=entry["id"]) for entry in response.json()["data"]]


class ConstructorIO(HonestProvider):
    """Checks the API key by listing the models while it is being built."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        super().__init__(config)
        transport = config.transport
        assert isinstance(transport, httpx.BaseTransport)
        with httpx.Client(transport=transport) as client:
            self.models = client.get(f"{self.base_url}/models").json()


class RefusesEmptyKey(HonestProvider):
    """Refuses to be built without an API key."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        if not config.api_key:
            raise ValueError("an API key is required")
        super().__init__(config)


class NeedsUndeclaredOption(HonestProvider):
    """Needs a ``region`` option it declares nowhere, and fails to build without it."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        super().__init__(config)
        self.region = config.options["region"]


class BypassesTransport(HonestProvider):
    """Builds its own HTTP client, ignoring the transport override."""

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=5)


class AnswersLocally(HonestProvider):
    """Is declared to call its backend (``needs_backend = True``) but answers every question
    evenly without asking it."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        return SyncDecide.decide(self, request)  # type: ignore[arg-type]


class KeyFromEnvironment(HonestProvider):
    """Reads ``OPENAI_API_KEY`` itself when its config holds no key."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        super().__init__(config)
        self.api_key = self.api_key or os.environ.get("OPENAI_API_KEY")


# --- requests it cannot represent, limits and capabilities ---------------------------------


class SendsUnrepresentable(HonestProvider):
    """Checks nothing before sending: too many options go out (labelled past ``Z``), a single
    option or level is asked about, duplicate names are sent as they are."""

    def check(self, request: DecisionRequest) -> DecisionRequest:
        return request


class ReplacesLoneSurrogates(SendsLoneSurrogatesEscaped):
    """Takes requests holding a lone surrogate, but writes its requests in UTF-8 with
    ``errors="replace"``: the surrogate goes out as ``?``, an option the question does not
    have (the request is reinterpreted, not represented or refused)."""

    def encoded(self, body: dict[str, Any]) -> bytes:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")


class RefusesJsonContext(HonestProvider):
    """Rejects every structured context as invalid, though the spec makes it valid."""

    def check(self, request: DecisionRequest) -> DecisionRequest:
        if not isinstance(request.context, str):
            raise InvalidRequestError(
                "only text contexts are supported", rule=Rule.REQUEST_JSON, value=request.context
            )
        return super().check(request)


class SmallerThanDeclared(HonestProvider):
    """Declares 26 options but rejects more than 20 (its labels stop at T)."""

    def check(self, request: DecisionRequest) -> DecisionRequest:
        for question_id, question in request.questions.items():
            if isinstance(question, ChoiceQuestion) and len(question.options) > 20:
                raise InvalidRequestError(
                    "at most 20 options",
                    rule=Rule.CHOICE_TOO_MANY_OPTIONS,
                    question=question_id,
                    value=list(question.options),
                )
        return super().check(request)


class MalformedLimit(HonestProvider):
    """Declares ``max_options = 0`` (it meant "no limit")."""

    max_options = 0


# --- errors and abort ----------------------------------------------------------------------------


class BareExceptions(HonestProvider):
    """Lets httpx's and json's exceptions escape instead of raising ProviderError."""

    async def post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        response = await client.post(f"{self.base_url}/chat/completions", json=body)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data


class WrongErrorCodes(HonestProvider):
    """Reports every HTTP error as ``server_error``, a rate limit included."""

    def error_for(self, response: httpx.Response) -> Exception:
        return ProviderError(f"HTTP {response.status_code}", "server_error", response.status_code)


class IgnoresAbort(HonestProvider):
    """Never looks at the request's signal."""

    async def with_abort(self, request: DecisionRequest) -> DecisionResult:
        return await self.work(request)


class ChecksAbortOnlyBefore(HonestProvider):
    """Rejects an already aborted signal, but never watches it during the call."""

    async def with_abort(self, request: DecisionRequest) -> DecisionResult:
        if request.signal is not None:
            request.signal.throw_if_aborted()
        return await self.work(request)


# --- the event loop and the conversation ---------------------------------------------------------


class FireAndForget(HonestProvider):
    """Starts a task that logs each decision, and never awaits it; the logging fails."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        async def log() -> None:
            raise ConnectionError("the log server is down")

        asyncio.ensure_future(log())  # noqa: RUF006 (the defect: nothing keeps or awaits it)
        return await super().work(request)


class BlocksTheLoop(HonestProvider):
    """Sleeps with ``time.sleep`` (blocking its event loop) when asked how complex a fix is:
    the call cannot be cancelled."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        if "complexity" in request.questions:
            time.sleep(1.5)  # noqa: ASYNC251 (the defect)
        return await super().work(request)


class AppendsAnswerToContext(HonestProvider):
    """Writes its answers into the request's context, for the next decision to see."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        result = await super().work(request)
        if isinstance(request.context, dict):
            request.context["decided"] = sorted(result.answers)
        elif isinstance(request.context, list):
            request.context.append({"role": "assistant", "content": "decided"})
        return result


class TouchesTheThread(HonestProvider):
    """Handed a conversation as the context, finds the thread it came from among the live
    objects and appends its answer to that thread's messages: decide() hands it no thread,
    so it reaches for one."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        result = await super().work(request)
        context = request.context
        if isinstance(context, list) and all(isinstance(m, dict) for m in context):
            for found in gc.get_objects():
                if isinstance(found, ThreadState) and list(found.messages) == context:
                    found.messages.append({"role": "assistant", "content": "decided"})
        return result


BROKEN: tuple[type[HonestProvider], ...] = (
    NotSummingToOne,
    RenormalisedAfterRounding,
    ForcesTheRoundedSumToOne,
    OverstatesRounding,
    MissingOptionKey,
    ExtraOptionKey,
    ProbabilityAboveOne,
    ProbabilityNaN,
    BooleanAsBool,
    ThresholdedBoolean,
    ScoreIsTheArgmax,
    ScoreAsPercentage,
    OneBasedLevels,
    LegendAsText,
    ConfidenceAsPercent,
    ForgetsConfidence,
    AnswersKeyedByPosition,
    ExtraAnswer,
    IdsNormalised,
    WrongAnswerType,
    ChoosesALabel,
    AnswersAsList,
    EmptyModel,
    NegativeTokens,
    SwapsAnswers,
    ContextOnlyOnTheFirstRequest,
    InstructionsShifted,
    CriteriaSwapped,
    LevelsReversed,
    OptionsRotated,
    DropsOptionDescriptions,
    FlattenedContext,
    FixedModel,
    ReportsRequestedModel,
    UndercountsUsage,
    InventsUsage,
    WrongKind,
    SyncDecide,
    GetModelsRaises,
    ConstructorIO,
    RefusesEmptyKey,
    NeedsUndeclaredOption,
    BypassesTransport,
    AnswersLocally,
    KeyFromEnvironment,
    SendsUnrepresentable,
    ReplacesLoneSurrogates,
    RefusesJsonContext,
    SmallerThanDeclared,
    MalformedLimit,
    BareExceptions,
    WrongErrorCodes,
    IgnoresAbort,
    ChecksAbortOnlyBefore,
    FireAndForget,
    BlocksTheLoop,
    AppendsAnswerToContext,
    TouchesTheThread,
)
"""Every broken provider, one per rule (see ``test_gallery.DEFECTS`` for which)."""

GALLERY = BROKEN
