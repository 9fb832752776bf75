"""In-process OpenAI-compatible chat-completions backends for the conformance checks.

:class:`OpenAIChatBackend` answers question decisions the way a logprobs-capable server answers
a provider that follows the reference design (one request per question, outcomes labelled
``A``..``Z``, ``0``..``9`` or ``yes``/``no``): with a real-shaped completion whose first token
carries ``top_logprobs``, or with a written JSON distribution when the request asks for no
log-probabilities.

Each question gets a distribution of its own, drawn from what the prompt shows of it (see
:mod:`._reading`): whether the context is there, which instructions, and which option, level or
criterion stands next to each label. A prompt showing the question as asked gets the
distribution :meth:`OpenAIChatBackend.expected_answer` gives for it; anything else (a part
missing, options rotated, levels reversed, criteria swapped, instructions of another question,
no context) gets another one, so a provider's mix-ups change what it reports. The distributions
are asymmetric, their values at least 0.001 apart, and built so that rounding gives renormalising
away (rounded to one or two decimal places they do not sum to 1) while rounding to three decimal
places keeps the sum at exactly 1: a provider that rounds to 3 places and never renormalises
passes.

:class:`ChatCompletionsScript` answers a runtime's calls with scripted replies, in order, and
keeps what each call sent.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx

from pytest_opdecide._nextstep._messages import ModelReply
from pytest_opdecide.conformance._reading import (
    Registry,
    Sight,
    canonical,
    expected_sight,
)
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    ScoreQuestion,
)

__all__ = [
    "ChatCompletionsScript",
    "OpenAIChatBackend",
    "ServedPrompt",
    "label_weights",
    "question_weights",
]

RESOLVED_SUFFIX: Final = "-2025-06-01"
"""Appended to the requested model name in every reply: the "resolved version" of an alias."""
DEFAULT_MODEL: Final = "conformance-default"
"""The model a reply names when the request names none."""
LABEL_MASS: Final = 0.9173
"""The share of probability the served token distribution puts on the answer labels."""
MAX_TOP_LOGPROBS: Final = 20

_DISTRACTORS: Final = (("The", 0.6), ("Answer", 0.3), ("\n", 0.1))
_CHOICE_INSTRUCTION = re.compile(r"letter[^()\n]*\(([^()\n]*)\)", re.IGNORECASE)
_SCORE_INSTRUCTION = re.compile(r"\(0 to (\d)\)")
_BOOLEAN_INSTRUCTION = re.compile(r"\byes or no\b", re.IGNORECASE)
_VERBALIZED_KEYS = re.compile(r"Use exactly the keys ((?:\"[^\"\n]+\"(?:, )?)+)")
_LETTER = re.compile(r"\b[A-Z]\b")


def question_weights(seed: str, count: int) -> list[float]:
    """The distribution served over ``count`` labels (in label order) for a prompt whose
    :class:`~pytest_opdecide.conformance._reading.Sight` has this ``seed``; it sums to 1.

    Two labels: P(yes) between 0.12 and 0.88, never near 0.5. More: distinct values at least
    0.001 apart, peaked, in a random order, whose weighted mean of the indices is never whole.
    Each value is a multiple of 0.001 nudged by a few ten-thousandths (the nudges cancel out):
    rounded to 3 decimal places they sum to exactly 1; rounded to 1 or 2, never.
    """
    rng = random.Random(hashlib.sha256(seed.encode("utf-8")).digest())
    nudge_choices = (-4, -3, -2, -1, 1, 2, 3, 4)
    if count == 2:
        while True:
            thousandths = rng.randint(120, 880)
            if abs(thousandths - 500) >= 40:
                yes = thousandths / 1000 + rng.choice(nudge_choices) / 10_000
                return [yes, 1.0 - yes]
    for _ in range(1000):
        # Sorted values 3, 5, 7... thousandths plus nondecreasing extras: distinct, 2 apart.
        spare = 1000 - sum(3 + 2 * k for k in range(count))
        shares = sorted(rng.gammavariate(0.7, 1.0) for _ in range(count))
        total = sum(shares)
        extra = [int(spare * share / total) for share in shares]
        extra[-1] += spare - sum(extra)
        milli = [3 + 2 * k + e for k, e in enumerate(extra)]
        rng.shuffle(milli)
        nudges = [0] * count
        order = list(range(count))
        rng.shuffle(order)
        for i, j in zip(order[0::2], order[1::2], strict=False):
            size = rng.randint(1, 4)
            nudges[i] += size
            nudges[j] -= size
        weights = [m / 1000 + n / 10_000 for m, n in zip(milli, nudges, strict=True)]
        weights[-1] = 1.0 - math.fsum(weights[:-1])
        if min(weights) <= 0:
            continue
        if any(abs(math.fsum(round(w, d) for w in weights) - 1.0) < 1e-9 for d in (1, 2)):
            continue
        mean = math.fsum(i * w for i, w in enumerate(weights))
        if abs(mean - round(mean)) >= 0.01:
            return weights
    raise AssertionError(f"no distribution over {count} labels for seed {seed!r}")


def label_weights(count: int) -> list[float]:
    """The distribution served over ``count`` labels for a prompt about no registered request
    (:meth:`OpenAIChatBackend.expect` was not called)."""
    return question_weights(f"labels/{count}", count)


def _messages_text(body: Mapping[str, Any]) -> str:
    """The text of every message of a chat-completions body, in order."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    texts = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if isinstance(content, list):
            texts.append(
                "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
            )
        elif content is not None:
            texts.append(str(content))
    return "\n\n".join(texts)


def _labels(prompt: str) -> tuple[str, list[str], int] | None:
    """The kind of question (``choice``, ``score``, ``boolean``), its labels and where the
    answer instruction starts (the last one found wins)."""
    found: list[tuple[int, str, list[str]]] = []
    for match in _CHOICE_INSTRUCTION.finditer(prompt):
        letters = _LETTER.findall(match.group(1))
        if len(letters) >= 2:
            found.append((match.start(), "choice", letters))
    for match in _SCORE_INSTRUCTION.finditer(prompt):
        top = int(match.group(1))
        if top >= 1:
            found.append((match.start(), "score", [str(i) for i in range(top + 1)]))
    for match in _BOOLEAN_INSTRUCTION.finditer(prompt):
        found.append((match.start(), "boolean", ["yes", "no"]))
    for match in _VERBALIZED_KEYS.finditer(prompt):
        keys = re.findall(r"\"([^\"\n]+)\"", match.group(1))
        if keys == ["yes", "no"]:
            kind = "boolean"
        elif all(key.isdigit() for key in keys):
            kind = "score"
        else:
            kind = "choice"
        found.append((match.start(), kind, keys))
    if not found:
        return None
    start, kind, labels = max(found, key=lambda item: item[0])
    line_start = prompt.rfind("\n", 0, start) + 1
    return kind, labels, line_start


def _error(status: int, message: str) -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"message": message, "type": "invalid_request_error"}}
    )


@dataclass(frozen=True)
class ServedPrompt:
    """A prompt the backend answered, and with what.

    Attributes:
        sight: What the prompt showed (``sight.outcomes`` is ``None`` when which label
            stands for which outcome could not be read).
        labels: The labels, in order.
        weights: The probability served for each label (before the label mass is applied).
        listed_all: Every label was among the ``top_logprobs`` the provider asked for (or the
            distribution was written out).
    """

    sight: Sight
    labels: tuple[str, ...]
    weights: tuple[float, ...]
    listed_all: bool


class OpenAIChatBackend(httpx.MockTransport):
    """A chat-completions server in-process, for checking decision providers.

    ``POST .../chat/completions`` with ``"logprobs": true`` gets a one-token completion whose
    ``top_logprobs`` list the labels (and a few tokens that are not labels, which hold
    ``1 - LABEL_MASS`` of the probability); without log-probabilities the reply is a JSON object
    giving each label's probability. ``GET .../models`` lists one model. Every reply names the
    requested model with a version suffix (the resolved model) and reports usage.

    The labels come from the answer instruction that ends the prompt, as the reference design
    words it: ``(A, B or C)`` for a choice, ``(0 to 4)`` for a score, ``yes or no`` for a
    boolean, or ``Use exactly the keys "A", "B"`` for a written distribution. A prompt without
    one gets an HTTP 400 saying so. Which distribution a prompt gets depends on what it shows of
    the request last given to :meth:`expect`.

    Attributes:
        served: Every prompt answered, in order.
    """

    def __init__(self) -> None:
        super().__init__(self.respond)
        self._lock = threading.Lock()
        self._registry = Registry()
        self._expected_from = 0
        self.served: list[ServedPrompt] = []

    # --- what a question's answer should be ---------------------------------------------------

    def expect(self, request: DecisionRequest) -> None:
        """Read the prompts that follow as asking about ``request`` (its context, its
        questions' instructions and outcomes). The conformance checks call it before each
        decision."""
        with self._lock:
            self._registry.register(request)
            self._expected_from = len(self.served)

    @property
    def registry(self) -> Registry:
        """The request the prompts are read against, and the parts it is made of."""
        return self._registry

    def expected_answer(self, question: DecisionQuestion) -> dict[str, float] | None:
        """The distribution a faithful provider reports for ``question`` of the expected
        request: one whose prompt showed the context, the question's instructions and each of
        its outcomes next to its own label.

        Option names, level indices, or ``"true"``/``"false"`` -> probability. ``None`` when
        ``question`` is not in the request given to :meth:`expect`, or when a prompt showing
        its instructions could not be read (an unknown way of labelling outcomes) or did not
        list every label (fewer ``top_logprobs`` than labels), since :meth:`expect`.
        """
        with self._lock:
            request = self._registry.request
            served = self.served[self._expected_from :]
        if request is None or not any(q == question for q in request.questions.values()):
            return None
        instructions = canonical(question.instructions)
        for prompt in served:
            shows = prompt.sight.kind == question.type and instructions in prompt.sight.instructions
            if shows and (prompt.sight.outcomes is None or not prompt.listed_all):
                return None
        keys = _outcome_keys(question)
        weights = question_weights(expected_sight(question).seed(), len(keys))
        return dict(zip(keys, weights, strict=True))

    # --- the server ----------------------------------------------------------------------------

    def respond(self, request: httpx.Request) -> httpx.Response:
        """Answer one request."""
        path = request.url.path.rstrip("/")
        if request.method == "GET" and path.endswith("/models"):
            return httpx.Response(
                200,
                json={
                    "object": "list",
                    "data": [
                        {
                            "id": "conformance-model",
                            "object": "model",
                            "created": 1_750_000_000,
                            "owned_by": "conformance",
                        }
                    ],
                },
            )
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return _error(404, f"the conformance backend serves no {request.method} {path}")
        try:
            body = json.loads(request.content)
        except ValueError:
            return _error(400, "the request body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the request body is not a JSON object")
        prompt = _messages_text(body)
        found = _labels(prompt)
        if found is None:
            return _error(
                400,
                "the conformance backend found no answer labels in the prompt: it answers "
                "prompts that end with the reference design's answer instruction, e.g. "
                "'Answer with the letter of the best option (A, B or C)'. For another protocol, "
                "override backend_transport() in your DecisionProviderTests subclass.",
            )
        kind, labels, instruction_at = found
        with self._lock:
            registered = self._registry.request is not None
            sight = self._registry.sight(body, prompt, kind, labels, instruction_at)
        weights = (
            question_weights(sight.seed(), len(labels))
            if registered
            else label_weights(len(labels))
        )
        model = body.get("model")
        resolved = f"{model if isinstance(model, str) and model else DEFAULT_MODEL}"
        resolved += RESOLVED_SUFFIX
        prompt_tokens = max(1, (len(prompt) + 3) // 4)
        if body.get("logprobs"):
            requested = body.get("top_logprobs")
            count = requested if isinstance(requested, int) and requested > 0 else 0
            choice, listed_all = self._logprobs_choice(
                labels, weights, min(count, MAX_TOP_LOGPROBS)
            )
            completion_tokens = 1
        else:
            text = json.dumps(dict(zip(labels, weights, strict=True)))
            listed_all = True
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
            completion_tokens = max(1, (len(text) + 3) // 4)
        with self._lock:
            self.served.append(ServedPrompt(sight, tuple(labels), tuple(weights), listed_all))
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-conformance",
                "object": "chat.completion",
                "created": 1_750_000_000,
                "model": resolved,
                "system_fingerprint": "fp_conformance",
                "choices": [choice],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _logprobs_choice(
        self, labels: Sequence[str], weights: Sequence[float], count: int
    ) -> tuple[dict[str, Any], bool]:
        tokens = sorted(
            ((label, LABEL_MASS * w) for label, w in zip(labels, weights, strict=True)),
            key=lambda item: -item[1],
        )
        tokens += [(token, (1 - LABEL_MASS) * share) for token, share in _DISTRACTORS]
        listed = tokens[:count]
        listed_all = len({token for token, _ in listed} & set(labels)) == len(labels)
        sampled, probability = tokens[0]
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": sampled},
            "logprobs": {
                "content": [
                    {
                        "token": sampled,
                        "logprob": math.log(probability),
                        "bytes": list(sampled.encode()),
                        "top_logprobs": [
                            {"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                            for t, p in listed
                        ],
                    }
                ]
            },
            "finish_reason": "length",
        }
        return choice, listed_all


def _outcome_keys(question: DecisionQuestion) -> list[str]:
    """The answer keys of ``question``'s outcomes, in label order."""
    if isinstance(question, ChoiceQuestion):
        return list(question.options)
    if isinstance(question, ScoreQuestion):
        return [str(i) for i in range(len(question.levels))]
    assert isinstance(question, BooleanQuestion)
    return ["true", "false"]


def completion(reply: ModelReply, *, model: str, number: int) -> dict[str, Any]:
    """A ``chat.completion`` body carrying ``reply`` (its text, tool calls and usage)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{number}_{index}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(dict(call.arguments), ensure_ascii=False),
                },
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-conformance-{number}",
        "object": "chat.completion",
        "created": 1_750_000_000,
        "model": reply.model or model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
            "total_tokens": reply.usage.total_tokens,
        },
    }


class ChatCompletionsScript:
    """A chat-completions backend that answers each call with the next scripted reply.

    A call after the last reply gets an HTTP 500 whose message says the script is exhausted.

    Args:
        replies: The replies, in order.
        model: The model named by replies that name none.

    Attributes:
        bodies: The JSON body of every request received, in order.
    """

    def __init__(self, replies: Sequence[ModelReply], *, model: str = "conformance-model") -> None:
        self.replies = list(replies)
        self.model = model
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def transport(self) -> httpx.MockTransport:
        """A transport (sync and async) that sends every request here."""
        return httpx.MockTransport(self.respond)

    def respond(self, request: httpx.Request) -> httpx.Response:
        """Answer one request with the next reply."""
        try:
            body = json.loads(request.content)
        except ValueError:
            body = {"unparsed": request.content.decode("utf-8", "replace")}
        with self._lock:
            number = len(self.bodies)
            self.bodies.append(body)
        if number >= len(self.replies):
            return _error(
                500,
                f"the conformance script is exhausted: call #{number} came after the "
                f"{len(self.replies)} scripted replies",
            )
        return httpx.Response(
            200, json=completion(self.replies[number], model=self.model, number=number)
        )
