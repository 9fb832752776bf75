"""Question decisions answered through a next-step ``Runtime``.

One runtime then serves both halves of the library: next-step decisions (``decision.make``) and
question decisions. Each question is rendered like the token-probability provider renders it
(labelled options ``A``..``Z``, levels ``0``..``9``, ``yes``/``no``) and the model is asked to
*state* a probability for every label, by picking a schema option with ``decision.make_async``::

    {"call": "answer", "args": {"probabilities": {"A": 0.7, "B": 0.3}}}

The decision library checks the JSON and the field types (and re-picks once on a malformed
reply); this provider then checks the distribution (every label, numbers in [0, 1], a sum within
``tolerance`` of 1) and asks once more with the problem stated when it is unusable. The answer
is built from the stated probabilities divided by their sum, which ``metadata`` records.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import JsonValue

from pytest_opdecide import Runtime, as_runtime, decision
from pytest_opdecide.questions._concurrency import all_or_nothing
from pytest_opdecide.questions._distribution import (
    DistributionError,
    answer_from_labels,
    check_stated,
)
from pytest_opdecide.questions._models import (
    DecisionAnswer,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderUsage,
)
from pytest_opdecide.questions._prompt import (
    CHOICE_LABELS,
    SCORE_LABELS,
    QuestionPrompt,
    build_question_prompt,
)
from pytest_opdecide.questions._provider import BaseDecisionProvider
from pytest_opdecide.questions._provider_errors import InvalidRequestError, ProviderError
from pytest_opdecide.questions._rules import Rule

OPTION_NAME: Final = "answer"
"""The name of the schema option the model picks."""


def _options(prompt: QuestionPrompt) -> dict[str, Any]:
    fields = dict.fromkeys(prompt.labels, float)
    return {
        OPTION_NAME: (
            "Give the probability of every possible answer.",
            {
                "probabilities": {
                    "fields": fields,
                    "description": "each label's probability, between 0 and 1; they sum to 1",
                }
            },
        )
    }


def _instruction(prompt: QuestionPrompt) -> str:
    labels = ", ".join(prompt.labels)
    return (
        f"{prompt.body}\n\n"
        f"Do not answer directly. Estimate, for each possible answer ({labels}), the probability "
        "that it is the right one, and pick the option below with those probabilities."
    )


class RuntimeDecisionProvider(BaseDecisionProvider):
    """Answers question decisions by asking a next-step ``Runtime`` for stated distributions.

    Construction does no model call. The runtime's calls show in ``runtime.trace`` as usual;
    the result's ``usage`` sums the token counts those calls reported.

    Args:
        runtime: Any :class:`~pytest_opdecide.Runtime` (real, recorded or fake), or any object
            with an ``exec`` method (see :func:`~pytest_opdecide.as_runtime`).
        model: The model the runtime answers with, reported as ``DecisionResult.model``;
            defaults to ``runtime.model``. A request naming another model is rejected, since
            the runtime cannot switch models per request; an empty request model means this
            one.
        tolerance: How far from 1 the stated probabilities may sum.
        max_retries: Re-picks ``decision.make_async`` allows for a malformed reply.
        name: The provider's name.

    Example:
        >>> from pytest_opdecide import ModelReply, Runtime
        >>> class Sure(Runtime):
        ...     def call_model(self, request):
        ...         text = '{"call": "answer", "args": {"probabilities": {"yes": 0.8, "no": 0.2}}}'
        ...         return ModelReply(text=text)
        >>> provider = RuntimeDecisionProvider(Sure(), model="sure-1")
        >>> result = provider.decide_sync({
        ...     "model": "", "context": "The sky is blue.",
        ...     "questions": {"blue": {"type": "boolean", "instructions": "Is the sky blue?"}},
        ... })
        >>> result.boolean("blue").probability
        0.8
    """

    max_options = len(CHOICE_LABELS)
    max_levels = len(SCORE_LABELS)

    def __init__(
        self,
        runtime: Any,
        *,
        model: str | None = None,
        tolerance: float = 0.02,
        max_retries: int = 1,
        name: str = "runtime",
    ) -> None:
        # Any object with exec works, as for decision.make: its calls join its trace.
        self.runtime: Runtime = as_runtime(runtime, where="RuntimeDecisionProvider() got")
        self._runtime_kind = type(runtime).__name__
        self.model = model or self.runtime.model or None
        self.tolerance = tolerance
        self.max_retries = max_retries
        self.name = name

    def __repr__(self) -> str:
        return f"RuntimeDecisionProvider({self._runtime_kind}, model={self.model!r})"

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        """Answer a validated request, one decision per question, concurrently."""
        if request.model and self.model and request.model != self.model:
            raise InvalidRequestError(
                f"this provider answers with its runtime's model {self.model!r} and cannot "
                f"switch to another one per request",
                rule=Rule.REQUEST_MODEL,
                value=request.model,
            )
        model = self.model or request.model
        if not model:
            raise InvalidRequestError(
                "the request names no model and neither the provider nor its runtime has one",
                rule=Rule.REQUEST_MODEL,
                value=request.model,
            )
        seen = {record.id for record in self.runtime.trace.calls}
        answered = await all_or_nothing(
            [
                self._ask(question_id, question, request)
                for question_id, question in request.questions.items()
            ]
        )
        usage = ProviderUsage(provider=self.name)
        models: list[str] = []
        for record in self.runtime.trace.calls:
            if record.id in seen or record.request.options != (OPTION_NAME,):
                continue
            if record.reply is not None:
                reported = record.reply.usage
                usage = usage + ProviderUsage(
                    prompt_tokens=reported.prompt_tokens,
                    completion_tokens=reported.completion_tokens,
                    total_tokens=reported.total_tokens,
                )
                if record.reply.model and record.reply.model not in models:
                    models.append(record.reply.model)
        metadata: dict[str, JsonValue] = {
            "provider": self.name,
            "questions": {
                question_id: meta
                for question_id, (_, meta) in zip(request.questions, answered, strict=True)
            },
        }
        if len(models) > 1:
            metadata["response_models"] = list(models)
        return DecisionResult(
            model=models[0] if models else model,
            answers={
                question_id: answer
                for question_id, (answer, _) in zip(request.questions, answered, strict=True)
            },
            usage=usage,
            metadata=metadata,
        )

    async def _pick(self, prompt_text: str, prompt: QuestionPrompt, question_id: str) -> object:
        try:
            return await decision.make_async(
                prompt_text, _options(prompt), runtime=self.runtime, max_retries=self.max_retries
            )
        except ProviderError:
            raise
        except decision.DecisionError as error:
            raise ProviderError(
                f"{self.name}: question {question_id!r}: the model gave no usable answer: {error}",
                "unknown",
            ) from error
        except Exception as error:  # the runtime's own failure: never let it escape bare
            raise ProviderError(
                f"{self.name}: question {question_id!r}: the runtime failed: "
                f"{type(error).__name__}: {error}",
                "unknown",
            ) from error

    async def _ask(
        self, question_id: str, question: DecisionQuestion, request: DecisionRequest
    ) -> tuple[DecisionAnswer, dict[str, JsonValue]]:
        prompt = build_question_prompt(request.context, question)
        text = _instruction(prompt)
        problem = ""
        for attempt in (1, 2):
            picked = await self._pick(text, prompt, question_id)
            stated = picked.get("probabilities") if isinstance(picked, dict) else None
            try:
                if not isinstance(stated, dict):
                    raise DistributionError(f"expected the probabilities object, got {picked!r}")
                distribution = check_stated(stated, prompt.labels, tolerance=self.tolerance)
            except DistributionError as error:
                problem = str(error)
                text = (
                    f"{_instruction(prompt)}\n\nYour previous answer could not be used: "
                    f"{problem}. Give every label a probability between 0 and 1; they must "
                    "sum to 1."
                )
                continue
            metadata: dict[str, JsonValue] = {
                "method": "verbalized",
                "labels": dict(zip(prompt.labels, prompt.outcomes, strict=True)),
                "stated_probabilities": dict(distribution.stated),
                "stated_sum": distribution.total,
                "renormalized": distribution.total != 1.0,
                "attempts": attempt,
            }
            return answer_from_labels(question, prompt, distribution.normalised()), metadata
        raise ProviderError(
            f"{self.name}: question {question_id!r}: the stated distribution was unusable "
            f"twice: {problem}",
            "unknown",
        )
