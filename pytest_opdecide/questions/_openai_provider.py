"""Question decisions over any OpenAI-compatible chat-completions server, by token probabilities.

Each question is sent as its own request, all at once: the question is rendered with labelled
outcomes after a few worked examples of its type (see :mod:`._prompt`), and the server is asked
for a single token with ``max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20``,
and a ``logit_bias`` on the label tokens when their ids are known (see :mod:`._label_tokens`).
The distribution over the labels is read from the first token's log-probabilities (see
:mod:`._distribution`):

* choice: ``choice`` is the most probable option, ``probabilities`` the whole distribution;
* score: ``score = sum(i * p_i)`` over the level indices;
* boolean: ``probability = p_yes / (p_yes + p_no)``.

When the server refuses log-probabilities (an HTTP 400/403/422 that mentions them, or a reply
without them), the provider falls back to a *verbalized* distribution (the model writes a JSON
object, which is validated and re-asked once when invalid) or to *sampling* the answer several
times. ``metadata["questions"][id]["method"]`` records ``logprobs``, ``verbalized`` or
``sampled``, with the label mass and any label missing from the top list.

No message shows a credential: whatever the server sent that a message or the metadata quotes
passes through a :class:`~pytest_opdecide._http._redaction.MessageRedaction` of everything the
call's requests carried (:meth:`_Call.redaction`), and so do the URLs messages name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

import httpx
from pydantic import JsonValue

from pytest_opdecide._http._credentials import register_client
from pytest_opdecide._http._error_answers import StatusKind, retry_after_seconds, status_kind
from pytest_opdecide._http._foreign_mocks import interceptor
from pytest_opdecide._http._network import model_call
from pytest_opdecide._http._redaction import MessageRedaction, carried_credentials
from pytest_opdecide.questions._concurrency import all_or_nothing
from pytest_opdecide.questions._distribution import (
    DistributionError,
    answer_from_labels,
    label_distribution,
    parse_verbalized,
    sampled_distribution,
)
from pytest_opdecide.questions._http_client import bounded, open_client, took_too_long
from pytest_opdecide.questions._label_tokens import (
    LabelTokenCache,
    LabelTokens,
    TokenizerOption,
    check_tokenizer,
)
from pytest_opdecide.questions._models import (
    DecisionAnswer,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderModelInfo,
    ProviderUsage,
    ProviderUsagePricing,
)
from pytest_opdecide.questions._prompt import (
    CHOICE_LABELS,
    MAX_EXAMPLES,
    SCORE_LABELS,
    SYSTEM_PROMPT,
    QuestionPrompt,
    build_question_prompt,
)
from pytest_opdecide.questions._provider import (
    BaseDecisionProvider,
    ConfigSlot,
    DecisionProviderFactory,
    HttpTransportOverride,
    ProviderFactoryConfig,
)
from pytest_opdecide.questions._provider_errors import (
    InvalidRequestError,
    ProviderError,
    ProviderErrorCode,
)
from pytest_opdecide.questions._rules import Rule

T = TypeVar("T")

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_MS: Final = 60_000.0
MAX_TOP_LOGPROBS: Final = 20

FallbackMethod = Literal["verbalized", "sampled", "none"]
"""What to do when a server gives no token probabilities."""

_REFUSAL_STATUSES: Final = (400, 403, 422)
_ERROR_CODES: Final[dict[StatusKind, ProviderErrorCode]] = {
    "bad_request": "invalid_request",
    "not_found": "invalid_request",
    "authentication": "auth_error",
    "timeout": "timeout",
    "rate_limit": "rate_limit",
    "server": "server_error",
    "other": "unknown",
}
_MAX_ERROR_TEXT: Final = 300


def status_error_code(status: int) -> ProviderErrorCode:
    """The provider error code for an HTTP error status.

    Args:
        status: An HTTP status of 400 or more.

    Returns:
        ``rate_limit`` (429), ``auth_error`` (401, 403), ``timeout`` (408),
        ``invalid_request`` (400, 404, 409, 413, 415, 422), ``server_error`` (5xx) or
        ``unknown``.
    """
    return _ERROR_CODES[status_kind(status)]


def _reject_constant(name: str) -> float:
    if name == "-Infinity":
        return -math.inf  # a log-probability of minus infinity is a clean "probability zero"
    raise ValueError(f"{name} is not a number JSON can carry")


class _LogprobsUnavailable(Exception):
    """The server gave no token probabilities for a question (never leaves this module)."""

    def __init__(self, reason: str, code: ProviderErrorCode, status_code: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.status_code = status_code


@dataclass
class _Outcome:
    """What answering one question produced."""

    answer: DecisionAnswer
    metadata: dict[str, JsonValue]
    usages: list[ProviderUsage | None] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


class OpenAICompatibleDecisionProvider(BaseDecisionProvider):
    """Answers question decisions through an OpenAI-compatible ``/chat/completions`` endpoint.

    Construction does no I/O and accepts an empty API key. Every request goes through
    ``transport`` when one is given.

    Args:
        api_key: Sent as ``Authorization: Bearer <key>`` when not empty.
        base_url: The API root, e.g. ``http://127.0.0.1:8080/v1``.
        model: The model used when a request's ``model`` is empty.
        timeout: The time limit of each HTTP request as a whole, in milliseconds: from
            connecting to the last byte of the answer, not each read on its own.
        default_headers: Headers added to every request.
        transport: An httpx transport or client every request goes through.
        top_logprobs: How many alternatives to ask for (1 to 20).
        logprobs: Ask for token probabilities; ``False`` goes straight to the fallback (for
            servers known not to offer them).
        fallback: What to do when the server gives no token probabilities: ``"verbalized"``
            (ask for a JSON distribution, re-asked once when invalid), ``"sampled"`` (sample the
            answer ``samples`` times at temperature 1) or ``"none"`` (raise).
        samples: How many samples the ``"sampled"`` fallback takes.
        min_label_mass: Raise ``ProviderError`` (code ``unknown``) when the model puts less than
            this probability on the labels; ``0`` accepts any positive mass (it is always
            reported in the metadata).
        verbalized_tolerance: How far from 1 a verbalized distribution may sum; it is then
            divided by its sum, and ``stated_sum`` is recorded in the metadata.
        examples: How many worked examples of the question's type (0 to 3) are sent before
            it, as earlier turns answered with a bare label: they make the model's first token
            a label.
        tokenizer: How to learn the label tokens' ids for ``logit_bias``: ``None`` (the
            default) learns none and sends no bias; ``"auto"`` asks the server's tokenize
            endpoint (llama.cpp, llama-cpp-python, vLLM; never OpenAI's API), once per label
            spelling and model; a function from text to token ids (e.g. tiktoken's
            ``encoding.encode``) is asked instead.
        label_token_ids: Label text (``"A"``, ``"0"``, ``"yes"``...) -> token ids of its
            spellings, for ``logit_bias``; given, no tokenizer is asked. Biasing every label
            equally leaves the renormalised distribution unchanged while keeping the sampled
            token on a label.
        label_bias: The bias added to those token ids (``0`` sends none).
        pricing: Prices used to fill ``usage.cost``.
        max_concurrency: The most requests in flight at once, or ``None`` for no limit.
        name: The provider's name.
    """

    max_options = len(CHOICE_LABELS)
    max_levels = len(SCORE_LABELS)

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        model: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_MS,
        default_headers: Mapping[str, str] | None = None,
        transport: HttpTransportOverride | None = None,
        top_logprobs: int = MAX_TOP_LOGPROBS,
        logprobs: bool = True,
        fallback: FallbackMethod = "verbalized",
        samples: int = 10,
        min_label_mass: float = 0.0,
        verbalized_tolerance: float = 0.02,
        examples: int = MAX_EXAMPLES,
        tokenizer: TokenizerOption = None,
        label_token_ids: Mapping[str, Sequence[int]] | None = None,
        label_bias: float = 5.0,
        pricing: ProviderUsagePricing | None = None,
        max_concurrency: int | None = None,
        name: str = "openai-compatible",
    ) -> None:
        if not 1 <= top_logprobs <= MAX_TOP_LOGPROBS:
            raise ValueError(f"top_logprobs must be between 1 and {MAX_TOP_LOGPROBS}")
        if fallback not in ("verbalized", "sampled", "none"):
            raise ValueError(
                f"fallback must be 'verbalized', 'sampled' or 'none', not {fallback!r}"
            )
        if samples < 1:
            raise ValueError("samples must be at least 1")
        if not 0.0 <= min_label_mass <= 1.0:
            raise ValueError("min_label_mass must be between 0 and 1")
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of milliseconds")
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if isinstance(examples, bool) or not isinstance(examples, int):
            raise TypeError(f"examples must be a whole number, got {examples!r}")
        if not 0 <= examples <= MAX_EXAMPLES:
            raise ValueError(f"examples must be between 0 and {MAX_EXAMPLES}, got {examples}")
        self.name = name
        self.api_key = api_key or None
        self.base_url = base_url.rstrip("/")
        self.model = model or None
        self.timeout = float(timeout)
        self.default_headers = dict(default_headers or {})
        register_client(api_key=api_key, headers=default_headers, url=base_url)  # for cassettes
        self.transport = transport
        self.top_logprobs = top_logprobs
        self.logprobs = logprobs
        self.fallback: FallbackMethod = fallback
        self.samples = samples
        self.min_label_mass = min_label_mass
        self.verbalized_tolerance = verbalized_tolerance
        self.examples = examples
        self.tokenizer = check_tokenizer(tokenizer)
        self.label_token_ids = {k: list(v) for k, v in (label_token_ids or {}).items()}
        self.label_bias = label_bias
        self.pricing = pricing
        self.max_concurrency = max_concurrency
        self._refused_models: set[str] = set()
        self._label_tokens = LabelTokenCache(self.base_url)

    def __repr__(self) -> str:
        shown = MessageRedaction(self._credentials()).text(self.base_url)  # no user info
        return (
            f"OpenAICompatibleDecisionProvider(name={self.name!r}, base_url={shown!r}, "
            f"model={self.model!r}, fallback={self.fallback!r})"
        )

    # ------------------------------------------------------------ decide

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        """Answer a validated request, one concurrent chat completion per question."""
        model = request.model or self.model
        if not model:
            raise InvalidRequestError(
                "the request names no model and the provider has no default model",
                rule=Rule.REQUEST_MODEL,
                value=request.model,
            )
        prompts = {
            question_id: build_question_prompt(request.context, question)
            for question_id, question in request.questions.items()
        }
        limit = asyncio.Semaphore(self.max_concurrency) if self.max_concurrency else None
        with model_call():  # the real-call guard tells this project's model calls apart
            async with open_client(self.transport, timeout_seconds=self.timeout / 1000) as client:
                call = _Call(self, client, model, limit)
                # Learnt before the questions fan out, so that they do not all ask at once.
                tokens = await self._label_tokens.learn(
                    call.post_json,
                    model,
                    [label for prompt in prompts.values() for label in prompt.labels],
                    tokenizer=self.tokenizer,
                    label_token_ids=self.label_token_ids,
                )
                outcomes = await all_or_nothing(
                    [
                        call.answer(question_id, question, prompts[question_id], tokens)
                        for question_id, question in request.questions.items()
                    ]
                )
        return self._result(model, request, outcomes)

    def _result(
        self, model: str, request: DecisionRequest, outcomes: list[_Outcome]
    ) -> DecisionResult:
        reports = [reported for outcome in outcomes for reported in outcome.usages]
        missing_usage = reports.count(None)
        # Cost only when every response reported usage: unknown usage is not free.
        usage = ProviderUsage.combined(reports, provider=self.name, pricing=self.pricing)
        models: list[str] = []
        for outcome in outcomes:
            for reported_model in outcome.models:
                if reported_model not in models:
                    models.append(reported_model)
        metadata: dict[str, JsonValue] = {
            "provider": self.name,
            "questions": {
                question_id: outcome.metadata
                for question_id, outcome in zip(request.questions, outcomes, strict=True)
            },
        }
        if missing_usage:
            metadata["responses_without_usage"] = missing_usage
        if len(models) > 1:
            metadata["response_models"] = list(models)
        return DecisionResult(
            model=models[0] if models else model,
            answers={
                question_id: outcome.answer
                for question_id, outcome in zip(request.questions, outcomes, strict=True)
            },
            usage=usage,
            metadata=metadata,
        )

    # ------------------------------------------------------------ HTTP helpers

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        headers.update(self.default_headers)
        return headers

    def _url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _credentials(self) -> list[str]:
        """Every credential this provider's requests carry (its messages hide them)."""
        return carried_credentials(
            api_key=self.api_key,
            headers=self.default_headers,
            url=self.base_url,
            sent=self._headers(),
        )

    async def get_models(self, filter: str | None = None) -> list[ProviderModelInfo]:
        """List the server's models (``GET /models``); ``[]`` on any failure.

        Args:
            filter: Keep only models whose id contains this text (case-insensitive).

        Returns:
            The models.
        """
        try:
            with model_call():
                # Bounded as a whole: a list of models sent a byte at a time ends too.
                async with (
                    open_client(self.transport, timeout_seconds=self.timeout / 1000) as client,
                    bounded(self.timeout),
                ):
                    response = await client.get(
                        self._url("/models"),
                        headers=self._headers(),
                        timeout=httpx.Timeout(self.timeout / 1000),
                    )
            if response.status_code >= 400:
                return []
            data = json.loads(response.text, parse_constant=_reject_constant)
            models = []
            for entry in data.get("data", []):
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    owner = entry.get("owned_by")
                    models.append(
                        ProviderModelInfo(
                            id=entry["id"], owned_by=owner if isinstance(owner, str) else None
                        )
                    )
        except Exception:  # listing models is best effort by contract: never raise
            return []
        if filter:
            wanted = filter.casefold()
            models = [model for model in models if wanted in model.id.casefold()]
        return models


def _usage(payload: Mapping[str, Any]) -> ProviderUsage | None:
    """The usage a response reports, or ``None`` when it reports none usable."""
    raw = payload.get("usage")
    if not isinstance(raw, Mapping):
        return None
    counts = {}
    for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = raw.get(name, 0)
        if type(value) is not int or value < 0:
            return None
        counts[name] = value
    usage = ProviderUsage(**counts)
    details = raw.get("prompt_tokens_details")
    if isinstance(details, Mapping) and type(details.get("cached_tokens")) is int:
        usage.cached_tokens = max(0, details["cached_tokens"])
    details = raw.get("completion_tokens_details")
    if isinstance(details, Mapping) and type(details.get("reasoning_tokens")) is int:
        usage.reasoning_tokens = max(0, details["reasoning_tokens"])
    return usage


class _Call:
    """The requests of one ``decide`` call, sharing a client and a concurrency limit."""

    def __init__(
        self,
        provider: OpenAICompatibleDecisionProvider,
        client: httpx.AsyncClient,
        model: str,
        limit: asyncio.Semaphore | None,
    ) -> None:
        self.provider = provider
        self.client = client
        self.model = model
        self.limit = limit
        self.timeout = httpx.Timeout(provider.timeout / 1000)
        self._carried = set(provider._credentials())
        self._redaction: MessageRedaction | None = None

    @property
    def redaction(self) -> MessageRedaction:
        """What messages hide: every credential the provider was configured with, and what
        the headers and URL of each request sent so far carried (a caller's own client may
        add some)."""
        if self._redaction is None:
            self._redaction = MessageRedaction(self._carried)
        return self._redaction

    def _sent(self, request: httpx.Request) -> None:
        carried = set(carried_credentials(url=str(request.url), sent=request.headers))
        if not carried <= self._carried:
            self._carried |= carried
            self._redaction = None

    def _failure(
        self, question_id: str, problem: str, code: ProviderErrorCode = "unknown"
    ) -> ProviderError:
        """The error for one question, with nothing a request carried in its message."""
        return ProviderError(
            self.redaction.text(f"{self.provider.name}: question {question_id!r}: {problem}"), code
        )

    def _malformed(self, question_id: str, problem: str) -> ProviderError:
        return self._failure(question_id, f"malformed response: {problem}")

    def _said(self, response: httpx.Response) -> str:
        """The reason an error answer gives, redacted and cut short."""
        return self.redaction.server_message(response.text, _MAX_ERROR_TEXT)

    def _status_error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        code = status_error_code(status)
        url = self.redaction.text(str(response.request.url))
        return ProviderError(
            f"{self.provider.name}: HTTP {status} from {url}: {self._said(response)}",
            code,
            status_code=status,
            retry_after=retry_after_seconds(response.headers) if code == "rate_limit" else None,
        )

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        return await self.post_json(self.provider._url("/chat/completions"), body)

    async def post_json(self, url: str, body: dict[str, Any]) -> httpx.Response:
        """POST ``body`` to ``url`` with the provider's headers, timeout and concurrency limit."""
        content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        limit = self.limit if self.limit is not None else contextlib.nullcontext()
        try:
            async with limit:
                bound = bounded(self.provider.timeout)  # from here: not the wait for a turn
                async with bound:
                    response = await self.client.post(
                        url,
                        content=content,
                        headers=self.provider._headers(),
                        timeout=self.timeout,
                    )
        except (httpx.TimeoutException, TimeoutError) as error:
            if isinstance(error, TimeoutError) and not bound.expired():
                raise
            raise self._send_error(url, error) from error
        except httpx.HTTPError as error:
            raise self._send_error(url, error) from error
        self._sent(response.request)
        return response

    def _send_error(self, url: str, error: Exception) -> ProviderError:
        """The error for a request that got no answer from the server: the mock that answered
        it instead, a timeout, or a failed connection."""
        foreign = interceptor(error)
        if foreign is not None:  # e.g. pytest-httpx answers an unmatched request with a timeout
            name, fix = foreign
            return ProviderError(
                self.redaction.text(
                    f"{self.provider.name}: request to {url} was answered by {name}, not by the "
                    f"model server: nothing timed out or failed on the way to the model. {name} "
                    f"intercepts the test's httpx requests and said: {error}\nTo fix it, {fix}."
                ),
                "unknown",
            )
        if isinstance(error, httpx.TimeoutException | TimeoutError):
            return ProviderError(
                f"{self.provider.name}: request to {self.redaction.text(url)} "
                f"{took_too_long(self.provider.timeout, error)}",
                "timeout",
            )
        failed = f"{type(error).__name__}: {error}"
        return ProviderError(
            self.redaction.text(f"{self.provider.name}: request to {url} failed: {failed}"),
            "server_error",
        )

    def _payload(self, question_id: str, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise self._status_error(response)
        try:
            data = json.loads(response.text, parse_constant=_reject_constant)
        except ValueError as error:
            not_json = str(error)
        else:
            if not isinstance(data, dict):
                raise self._malformed(question_id, "the body is not a JSON object")
            return data
        # Raised out here, chained to nothing: the JSON error holds the whole body.
        shown = self.redaction.text(response.text)[:80]  # redacted before it is cut
        raise self._malformed(question_id, f"the body is not JSON ({not_json}): {shown!r}")

    def _record(
        self,
        outcome_usages: list[ProviderUsage | None],
        models: list[str],
        payload: Mapping[str, Any],
    ) -> None:
        outcome_usages.append(_usage(payload))
        model = payload.get("model")
        if isinstance(model, str) and model and model not in models:
            models.append(model)

    def _messages(
        self, text: str, examples: Sequence[tuple[str, str]] = ()
    ) -> list[dict[str, str]]:
        messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        for example, reply in examples:
            messages += [
                {"role": "user", "content": example},
                {"role": "assistant", "content": reply},
            ]
        messages.append({"role": "user", "content": text})
        return messages

    def _label_messages(self, prompt: QuestionPrompt) -> list[dict[str, str]]:
        """The conversation asking for a single label: worked examples, then the question."""
        return self._messages(prompt.label_prompt(), prompt.example_turns(self.provider.examples))

    def _first_choice(self, question_id: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise self._malformed(question_id, "no choices[0] object")
        return choices[0]

    def _text(self, question_id: str, payload: Mapping[str, Any]) -> str:
        message = self._first_choice(question_id, payload).get("message")
        if not isinstance(message, Mapping):
            raise self._malformed(question_id, "choices[0] has no message object")
        content = message.get("content")
        if content is None:
            return ""
        if not isinstance(content, str):
            raise self._malformed(question_id, "choices[0].message.content is not text")
        return content

    async def answer(
        self,
        question_id: str,
        question: DecisionQuestion,
        prompt: QuestionPrompt,
        tokens: LabelTokens,
    ) -> _Outcome:
        provider = self.provider
        labels_metadata: dict[str, JsonValue] = dict(
            zip(prompt.labels, prompt.outcomes, strict=True)
        )
        usages: list[ProviderUsage | None] = []
        models: list[str] = []
        if not provider.logprobs:
            refusal = _LogprobsUnavailable("logprobs=False", "invalid_request", None)
        elif self.model in provider._refused_models:
            refusal = _LogprobsUnavailable(
                "the server refused log-probabilities earlier", "invalid_request", None
            )
        else:
            try:
                return await self._by_logprobs(
                    question_id, question, prompt, tokens, labels_metadata, usages, models
                )
            except _LogprobsUnavailable as error:
                refusal = error
                provider._refused_models.add(self.model)
        if provider.fallback == "none":
            raise ProviderError(
                f"{provider.name}: question {question_id!r}: the server gives no "
                f"log-probabilities ({refusal.reason}) and fallback is 'none'",
                refusal.code,
                status_code=refusal.status_code,
            )
        if provider.fallback == "verbalized":
            return await self._by_verbalized(
                question_id, question, prompt, labels_metadata, usages, models, refusal.reason
            )
        return await self._by_sampling(
            question_id, question, prompt, tokens, labels_metadata, usages, models, refusal.reason
        )

    def _bias(self, prompt: QuestionPrompt, tokens: LabelTokens) -> dict[str, float]:
        if not self.provider.label_bias:
            return {}
        return tokens.bias(prompt.labels, self.provider.label_bias)

    def _prompt_metadata(
        self, prompt: QuestionPrompt, tokens: LabelTokens, bias: Mapping[str, float]
    ) -> dict[str, JsonValue]:
        """What the request did to make the first token a label."""
        return {
            "examples": len(prompt.example_turns(self.provider.examples)),
            "label_tokens": tokens.metadata(prompt.labels),
            "logit_bias": self.provider.label_bias if bias else None,
        }

    async def _by_logprobs(
        self,
        question_id: str,
        question: DecisionQuestion,
        prompt: QuestionPrompt,
        tokens: LabelTokens,
        labels_metadata: dict[str, JsonValue],
        usages: list[ProviderUsage | None],
        models: list[str],
    ) -> _Outcome:
        provider = self.provider
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._label_messages(prompt),
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": provider.top_logprobs,
        }
        bias = self._bias(prompt, tokens)
        if bias:
            body["logit_bias"] = bias
        response = await self._post(body)
        if response.status_code in _REFUSAL_STATUSES and "logprob" in response.text.lower():
            raise _LogprobsUnavailable(
                f"HTTP {response.status_code}: {self._said(response)}",
                status_error_code(response.status_code),
                response.status_code,
            )
        payload = self._payload(question_id, response)
        self._record(usages, models, payload)
        sampled, top = self._read_logprobs(question_id, payload)
        unusable: str | None = None
        try:
            distribution = label_distribution(top, prompt.labels, sampled=sampled)
        except DistributionError as error:
            unusable = str(error)
        if unusable is not None:  # raised out here, chained to nothing: it quotes the tokens
            raise self._failure(question_id, unusable)
        if distribution.label_mass < provider.min_label_mass:
            raise ProviderError(
                f"{provider.name}: question {question_id!r}: the model put only "
                f"{distribution.label_mass:.2%} of its probability on the labels "
                f"{list(prompt.labels)} (min_label_mass is {provider.min_label_mass:.2%})",
                "unknown",
            )
        metadata: dict[str, JsonValue] = {
            "method": "logprobs",
            "labels": labels_metadata,
            "label_mass": distribution.label_mass,
            "renormalized": distribution.label_mass < 1.0,
            "absent_labels": list(distribution.absent_labels),
            "absent_label_bound": distribution.absent_label_bound,
            "sampled_token": distribution.sampled_token,
            **self._prompt_metadata(prompt, tokens, bias),
            "requests": 1,
        }
        return _Outcome(
            answer_from_labels(question, prompt, distribution.probabilities),
            metadata,
            usages,
            models,
        )

    def _read_logprobs(
        self, question_id: str, payload: Mapping[str, Any]
    ) -> tuple[tuple[str, float] | None, list[tuple[str, float]]]:
        logprobs = self._first_choice(question_id, payload).get("logprobs")
        if logprobs is None:
            raise _LogprobsUnavailable("the response carries no logprobs", "unknown", None)
        if not isinstance(logprobs, Mapping):
            raise self._malformed(question_id, "choices[0].logprobs is not an object")
        content = logprobs.get("content")
        if content is None or content == []:
            raise _LogprobsUnavailable("the response's logprobs list no token", "unknown", None)
        if not isinstance(content, list) or not isinstance(content[0], Mapping):
            raise self._malformed(
                question_id, "choices[0].logprobs.content is not a list of objects"
            )
        first = content[0]
        where = "choices[0].logprobs.content[0]"
        sampled = self._pair(question_id, first, where)
        top_raw = first.get("top_logprobs")
        if top_raw is None:
            top_raw = []
        if not isinstance(top_raw, list):
            raise self._malformed(question_id, f"{where}.top_logprobs is not a list")
        top = [
            self._pair(question_id, entry, f"{where}.top_logprobs[{i}]")
            for i, entry in enumerate(top_raw)
        ]
        return sampled, top

    def _pair(self, question_id: str, entry: object, where: str) -> tuple[str, float]:
        if not isinstance(entry, Mapping):
            raise self._malformed(question_id, f"{where} is not an object")
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str):
            raise self._malformed(question_id, f"{where}.token is {token!r}, not text")
        if isinstance(logprob, bool) or not isinstance(logprob, int | float) or math.isnan(logprob):
            raise self._malformed(question_id, f"{where}.logprob is {logprob!r}, not a number")
        return token, float(logprob)

    async def _by_verbalized(
        self,
        question_id: str,
        question: DecisionQuestion,
        prompt: QuestionPrompt,
        labels_metadata: dict[str, JsonValue],
        usages: list[ProviderUsage | None],
        models: list[str],
        reason: str,
    ) -> _Outcome:
        provider = self.provider
        messages = self._messages(prompt.verbalized_prompt())
        problem = ""
        for attempt in (1, 2):
            payload = self._payload(
                question_id,
                await self._post(
                    {"model": self.model, "messages": messages, "max_tokens": 200, "temperature": 0}
                ),
            )
            self._record(usages, models, payload)
            text = self._text(question_id, payload)
            try:
                stated = parse_verbalized(
                    text, prompt.labels, tolerance=provider.verbalized_tolerance
                )
            except DistributionError as error:
                problem = str(error)
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"That reply cannot be used: {problem}. "
                        "Reply again with only the JSON object.",
                    },
                ]
                continue
            metadata: dict[str, JsonValue] = {
                "method": "verbalized",
                "fallback_reason": reason,
                "labels": labels_metadata,
                "stated_probabilities": dict(stated.stated),
                "stated_sum": stated.total,
                "renormalized": stated.total != 1.0,
                "attempts": attempt,
                "requests": attempt,
            }
            return _Outcome(
                answer_from_labels(question, prompt, stated.normalised()), metadata, usages, models
            )
        raise self._failure(
            question_id,
            f"the server gives no log-probabilities ({reason}) and the model's written "
            f"distribution was unusable twice: {problem}",
        )

    async def _by_sampling(
        self,
        question_id: str,
        question: DecisionQuestion,
        prompt: QuestionPrompt,
        tokens: LabelTokens,
        labels_metadata: dict[str, JsonValue],
        usages: list[ProviderUsage | None],
        models: list[str],
        reason: str,
    ) -> _Outcome:
        provider = self.provider
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._label_messages(prompt),
            "max_tokens": 1,
            "temperature": 1.0,
        }
        bias = self._bias(prompt, tokens)
        if bias:
            body["logit_bias"] = bias
        responses = await all_or_nothing([self._post(body) for _ in range(provider.samples)])
        texts = []
        for response in responses:
            payload = self._payload(question_id, response)
            self._record(usages, models, payload)
            texts.append(self._text(question_id, payload))
        counts, unrecognised = sampled_distribution(texts, prompt.labels)
        recognised = provider.samples - unrecognised
        if recognised == 0:
            raise self._failure(
                question_id,
                f"none of {provider.samples} samples answered with a label "
                f"{list(prompt.labels)}: {texts[:5]}",
            )
        metadata: dict[str, JsonValue] = {
            "method": "sampled",
            "fallback_reason": reason,
            "labels": labels_metadata,
            "samples": provider.samples,
            "counts": dict(counts),
            "unrecognised": unrecognised,
            **self._prompt_metadata(prompt, tokens, bias),
            "requests": provider.samples,
        }
        by_label = {label: count / recognised for label, count in counts.items()}
        return _Outcome(answer_from_labels(question, prompt, by_label), metadata, usages, models)


# ---------------------------------------------------------------- factory

OPENAI_COMPATIBLE_CONFIG_SLOTS: Final[Mapping[str, ConfigSlot]] = {
    "api_key": ConfigSlot(
        "secret",
        default_env="OPENAI_API_KEY",
        description="API key, sent as a bearer token; local servers need none.",
    ),
    "base_url": ConfigSlot(
        "url",
        default=DEFAULT_BASE_URL,
        default_env="OPENAI_BASE_URL",
        description="API root, e.g. http://127.0.0.1:8080/v1.",
    ),
    "model": ConfigSlot("text", description="Model used when a request's model is empty."),
    "timeout": ConfigSlot(
        "number",
        default=DEFAULT_TIMEOUT_MS,
        description="Time limit of each request as a whole (connect to last byte), in ms.",
    ),
}
"""The config slots of :data:`openai_compatible`."""


def _build(config: ProviderFactoryConfig) -> OpenAICompatibleDecisionProvider:
    model = config.options.get("model")
    return OpenAICompatibleDecisionProvider(
        api_key=config.api_key,
        base_url=config.base_url or DEFAULT_BASE_URL,
        model=model if isinstance(model, str) else None,
        timeout=config.timeout or DEFAULT_TIMEOUT_MS,
        default_headers=config.default_headers,
        transport=config.transport,
    )


openai_compatible: DecisionProviderFactory[OpenAICompatibleDecisionProvider] = (
    DecisionProviderFactory(
        _build, config_slots=OPENAI_COMPATIBLE_CONFIG_SLOTS, name="openai-compatible"
    )
)
"""Factory of :class:`OpenAICompatibleDecisionProvider` (slots ``api_key``, ``base_url``,
``model``, ``timeout``)."""
