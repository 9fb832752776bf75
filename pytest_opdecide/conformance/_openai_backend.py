"""In-process OpenAI-compatible chat-completions backends for the conformance checks.

:class:`OpenAIChatBackend` answers question decisions the way a logprobs-capable server answers
a provider that follows the reference design (one request per question, outcomes labelled
``A``..``Z``, ``0``..``9`` or ``yes``/``no``): with a real-shaped completion whose first token
carries ``top_logprobs``, or with a written JSON distribution when the request asks for no
log-probabilities. The distribution it serves for a question is known in advance
(:meth:`OpenAIChatBackend.expected_answer`), so the checks can tell a provider that reports it
faithfully from one that rounds and renormalises, thresholds a boolean or loses label mass.

:class:`ChatCompletionsScript` answers a runtime's calls with scripted replies, in order, and
keeps what each call sent.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

import httpx

from pytest_opdecide._messages import ModelReply
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    ScoreQuestion,
)

__all__ = ["ChatCompletionsScript", "OpenAIChatBackend", "label_weights"]

RESOLVED_SUFFIX: Final = "-2025-06-01"
"""Appended to the requested model name in every reply: the "resolved version" of an alias."""
DEFAULT_MODEL: Final = "conformance-default"
"""The model a reply names when the request names none."""
LABEL_MASS: Final = 0.9173
"""The share of probability the served token distribution puts on the answer labels."""
BOOLEAN_YES: Final = 0.7311
"""P(yes) among the two boolean labels, before the label mass is applied."""
MAX_TOP_LOGPROBS: Final = 20

_DISTRACTORS: Final = (("The", 0.6), ("Answer", 0.3), ("\n", 0.1))
_CHOICE_INSTRUCTION = re.compile(r"letter[^()\n]*\(([^()\n]*)\)", re.IGNORECASE)
_SCORE_INSTRUCTION = re.compile(r"\(0 to (\d)\)")
_BOOLEAN_INSTRUCTION = re.compile(r"\byes or no\b", re.IGNORECASE)
_VERBALIZED_KEYS = re.compile(r"Use exactly the keys ((?:\"[^\"\n]+\"(?:, )?)+)")
_LETTER = re.compile(r"\b[A-Z]\b")


def label_weights(count: int) -> list[float]:
    """The distribution served over ``count`` labels (in label order); it sums to 1.

    Chosen so that rounding it gives it away: from three labels on, the values rounded to one,
    two or three decimals never sum to 1, so a provider that rounds and then renormalises
    reports values that are neither the computed ones nor their rounding. Every label but the
    last sits just above a multiple of 0.01 (``...444``), so that each rounds down; the peak is
    in the middle of the scale, and the weighted mean of the level indices is never whole.
    """
    if count < 2:
        return [1.0] * count
    if count == 2:
        return [0.3812, 0.6188]
    centre = (count - 1) // 2
    shares = [0.00444 + 0.01 * (4 if count <= 12 else i % 5) for i in range(count - 1)]
    budget = 1.0 - math.fsum(shares) - 0.05
    tenths = int(budget * 6)
    shares[min(centre, count - 2)] += tenths / 10
    if count - 2 > centre and budget - tenths / 10 > 0.15:
        shares[centre + 1] += 0.1
    shares.append(1.0 - math.fsum(shares))
    return shares


def _boolean_weights() -> list[float]:
    return [BOOLEAN_YES, 1 - BOOLEAN_YES]


def _prompt_text(body: Mapping[str, Any]) -> str:
    """The text of the last user message of a chat-completions body."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, Mapping)
                )
            return str(content or "")
    return ""


def _labels(prompt: str) -> tuple[str, list[str]] | None:
    """The kind of question (``choice``, ``score``, ``boolean``) and its labels, from the
    answer instruction that ends the prompt (the last one found wins)."""
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
    _, kind, labels = max(found, key=lambda item: item[0])
    return kind, labels


def _error(status: int, message: str) -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"message": message, "type": "invalid_request_error"}}
    )


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
    one gets an HTTP 400 saying so.
    """

    def __init__(self) -> None:
        super().__init__(self.respond)
        self._lock = threading.Lock()
        self._listed_all: dict[tuple[str, int], bool] = {}

    # --- what a question's answer should be ---------------------------------------------------

    def expected_answer(self, question: DecisionQuestion) -> dict[str, float] | None:
        """The distribution a faithful provider reports for ``question``.

        Option names, level indices, or ``"true"``/``"false"`` -> probability. ``None`` when
        this backend has not served such a question yet, or could not list every label (more
        labels than the ``top_logprobs`` the provider asked for).
        """
        if isinstance(question, ChoiceQuestion):
            kind, keys = "choice", list(question.options)
        elif isinstance(question, ScoreQuestion):
            kind, keys = "score", [str(i) for i in range(len(question.levels))]
        elif isinstance(question, BooleanQuestion):
            kind, keys = "boolean", ["true", "false"]
        else:
            return None
        with self._lock:
            listed = self._listed_all.get((kind, len(keys)))
        if not listed:
            return None
        weights = _boolean_weights() if kind == "boolean" else label_weights(len(keys))
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
        prompt = _prompt_text(body)
        found = _labels(prompt)
        if found is None:
            return _error(
                400,
                "the conformance backend found no answer labels in the prompt: it answers "
                "prompts that end with the reference design's answer instruction, e.g. "
                "'Answer with the letter of the best option (A, B or C)'. For another protocol, "
                "override backend_transport() in your DecisionProviderTests subclass.",
            )
        kind, labels = found
        weights = _boolean_weights() if kind == "boolean" else label_weights(len(labels))
        model = body.get("model")
        resolved = f"{model if isinstance(model, str) and model else DEFAULT_MODEL}"
        resolved += RESOLVED_SUFFIX
        messages_text = sum(
            len(str(m.get("content", "")))
            for m in body.get("messages", [])
            if isinstance(m, Mapping)
        )
        prompt_tokens = max(1, (messages_text + 3) // 4)
        if body.get("logprobs"):
            requested = body.get("top_logprobs")
            count = requested if isinstance(requested, int) and requested > 0 else 0
            choice = self._logprobs_choice(kind, labels, weights, min(count, MAX_TOP_LOGPROBS))
            completion_tokens = 1
        else:
            text = json.dumps(dict(zip(labels, weights, strict=True)))
            with self._lock:
                self._listed_all[(kind, len(labels))] = True
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
            completion_tokens = max(1, (len(text) + 3) // 4)
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
        self, kind: str, labels: Sequence[str], weights: Sequence[float], count: int
    ) -> dict[str, Any]:
        tokens = sorted(
            ((label, LABEL_MASS * w) for label, w in zip(labels, weights, strict=True)),
            key=lambda item: -item[1],
        )
        tokens += [(token, (1 - LABEL_MASS) * share) for token, share in _DISTRACTORS]
        listed = tokens[:count]
        with self._lock:
            key = (kind, len(labels))
            listed_labels = {token for token, _ in listed} & set(labels)
            self._listed_all[key] = len(listed_labels) == len(labels)
        sampled, probability = tokens[0]
        return {
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
