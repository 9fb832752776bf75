"""A deterministic fake of a question-decision provider, scripted per question.

It is a real provider (built on :class:`~pytest_opdecide.questions.BaseDecisionProvider`): the
request is validated and the abort signal honoured exactly as in a real provider, and every
result goes through :func:`~pytest_opdecide.questions.validate_result` before it is returned.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from pydantic import JsonValue

from fake_runtimes._answers import (
    ScriptedAnswer,
    ScriptedChoice,
    ScriptedFailure,
    ScriptedHang,
    ScriptedProbability,
    ScriptedScore,
    fits,
)
from fake_runtimes._closest import did_you_mean
from fake_runtimes._script_errors import AnswerMismatch, ScriptExhausted, UnusedSteps
from fake_runtimes._script_steps import plural
from pytest_opdecide.questions import (
    ROUNDING_KEY,
    BaseDecisionProvider,
    BooleanAnswer,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderError,
    ProviderModelInfo,
    ProviderUsage,
    ScoreAnswer,
    ScoreQuestion,
    validate_result,
)

__all__ = ["FakeDecisionProvider"]

ScriptEntry: TypeAlias = ScriptedAnswer | ProviderError
Script: TypeAlias = ScriptEntry | Sequence[ScriptEntry]
"""What ``answers`` maps a question id to: one answer for every request, or a list of them, one
per request that asks the question, in order."""

_UNITS = 1000  # derived probabilities are multiples of 0.001, as a provider rounding to 3 places
_PROMPT_OVERHEAD = 40  # tokens of instructions a real provider wraps around each question
_HOW_TO_SCRIPT = (
    "choose(...), score(...), probability(...), fails(...), times_out(), hangs(), a "
    "ProviderError, or a list of them"
)

Question: TypeAlias = ChoiceQuestion | ScoreQuestion | BooleanQuestion
Answer: TypeAlias = ChoiceAnswer | ScoreAnswer | BooleanAnswer


def _suggestion(value: object) -> str:
    """The helper call a plain value probably meant (`` Did you mean choose('billing')?``)."""
    if isinstance(value, bool):
        return " (a boolean answer is P(true) as a float: probability(1.0) or probability(0.0))"
    if isinstance(value, str):
        return f" Did you mean choose({value!r})?"
    if isinstance(value, int | float) and 0 <= value <= 1:
        return f" Did you mean probability({value!r}) (or score({value!r}))?"
    if isinstance(value, int | float):
        return f" Did you mean score({value!r})?"
    if isinstance(value, Mapping):
        return f" Did you mean choose({dict(value)!r}) (or score(...) for levels)?"
    return ""


def _entry(value: object, where: str) -> ScriptedAnswer:
    if isinstance(value, ProviderError):
        return ScriptedFailure(value)
    if isinstance(value, ScriptedAnswer):
        return value
    raise TypeError(
        f"{where} is {type(value).__name__} {value!r}: script {_HOW_TO_SCRIPT}.{_suggestion(value)}"
    )


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _shares(count: int, rng: random.Random) -> list[int]:
    """``count`` positive integers summing to ``_UNITS``, peaked like a model's distribution."""
    weights = [rng.gammavariate(0.6, 1.0) + 1e-9 for _ in range(count)]
    floor = 1 if count <= _UNITS else 0
    spare = _UNITS - floor * count
    total = sum(weights)
    raw = [w / total * spare for w in weights]
    shares = [int(r) for r in raw]
    # Largest remainder: the units lost to truncation go to the largest fractional parts.
    order = sorted(range(count), key=lambda i: (-(raw[i] - shares[i]), i))
    for i in order[: spare - sum(shares)]:
        shares[i] += 1
    return [floor + s for s in shares]


class FakeDecisionProvider(BaseDecisionProvider):
    """A deterministic decision provider for tests: scripted answers, seeded answers otherwise.

    ``answers`` maps question ids to scripted answers: ``choose("billing", p=0.9)``,
    ``score(2.4)``, ``probability(0.7)``, ``fails("rate_limit")``, ``times_out()``, ``hangs()``
    or a ``ProviderError``. A single answer is given to every request asking the question; a
    list gives its answers one per request, in order. Questions without a scripted answer get
    one derived from the model, the context, the question (id and content) and ``seed``, so the
    same request gets the same answers in every process.

    Strict: a scripted answer that does not fit its question (an option the question does not
    offer, a level beyond its scale, another question type), or scripted for a question the
    request does not ask, raises :class:`~fake_runtimes.AnswerMismatch`; a request after the
    last answer of a list raises :class:`~fake_runtimes.ScriptExhausted`.

    Args:
        answers: Question id -> scripted answer (or list of them).
        seed: The seed of the derived answers.
        model: The model reported when a request leaves ``model`` empty.

    Attributes:
        requests: Every request received, in order, as received (also the ones rejected).
        seed: The seed.

    Example:
        >>> from fake_runtimes import FakeDecisionProvider, choose
        >>> provider = FakeDecisionProvider({"intent": choose("billing", p=0.8)})
    """

    name = "fake"

    def __init__(
        self,
        answers: Mapping[str, Script] | None = None,
        seed: int = 0,
        *,
        model: str = "fake-decision-1",
    ) -> None:
        if answers is not None and not isinstance(answers, Mapping):
            raise TypeError(
                f"answers must be a mapping of question ids, got {type(answers).__name__}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        if not isinstance(model, str) or not model.strip():
            raise TypeError(f"model must be a non-empty string, got {model!r}")
        self.seed = seed
        self.model = model
        self.requests: list[DecisionRequest | Mapping[str, Any]] = []
        self._script: dict[str, list[ScriptedAnswer]] = {}
        self._repeat: dict[str, bool] = {}
        self._used: dict[str, int] = {}
        self._lock = threading.Lock()
        for question_id, script in (answers or {}).items():
            if not isinstance(question_id, str) or not question_id:
                raise TypeError(f"answers keys are question ids (strings), got {question_id!r}")
            where = f"answers[{question_id!r}]"
            if isinstance(script, Sequence) and not isinstance(script, str):
                if not script:
                    raise ValueError(f"{where} is an empty list: script at least one answer")
                entries = [_entry(e, f"{where}[{i}]") for i, e in enumerate(script)]
                self._repeat[question_id] = False
            else:
                entries = [_entry(script, where)]
                self._repeat[question_id] = True
            self._script[question_id] = entries
            self._used[question_id] = 0

    # --- the provider interface ----------------------------------------------------------------

    async def decide(self, request: DecisionRequest | Mapping[str, Any]) -> DecisionResult:
        """Answer every question of ``request`` (recorded in :attr:`requests` first).

        Raises:
            ProviderError: ``timeout`` for an aborted signal (before or during the call) and
                for ``times_out()``; ``invalid_request`` for a request breaking a rule; the
                scripted error of ``fails(...)``.
            AnswerMismatch: A scripted answer does not fit the request.
            ScriptExhausted: A list of scripted answers is used up.
        """
        with self._lock:
            self.requests.append(request)
        return await super().decide(request)

    async def decide_validated(self, request: DecisionRequest) -> DecisionResult:
        scripted = self._take_scripted(request)
        await asyncio.sleep(0)  # a real provider yields while it waits: an abort can land here
        answers: dict[str, Answer] = {}
        sources: dict[str, str] = {}
        rounding: dict[str, JsonValue] = {}
        for question_id, question in request.questions.items():
            entry = scripted.get(question_id)
            if entry is None:
                answers[question_id] = self._derived(request, question_id, question)
                sources[question_id] = "seed"
                continue
            step, where = entry
            if isinstance(step, ScriptedFailure):
                raise step.error
            if isinstance(step, ScriptedHang):
                await self._hang(request, where)
            answers[question_id] = self._scripted(step, question_id, question, where)
            sources[question_id] = "script"
            decimals = getattr(step, "decimals", None)
            if decimals is not None:
                rounding[question_id] = {ROUNDING_KEY: {"decimals": decimals}}
        metadata: dict[str, JsonValue] = {"seed": self.seed, "answered_by": dict(sources)}
        if rounding:
            # As a provider that rounds says so: sums are then checked within the rounding.
            metadata["questions"] = dict(rounding)
        result = DecisionResult(
            model=request.model.strip() or self.model,
            answers=answers,
            usage=self._usage(request),
            metadata=metadata,
        )
        # The base class validates again, but turns a failure into ProviderError("unknown"),
        # which the code under test may handle as a provider outage. A result this fake cannot
        # get right is a bug in the fake: let the validator's own error through.
        return validate_result(request, result)

    async def get_models(self, filter: str | None = None) -> list[ProviderModelInfo]:
        """The one model of this provider (or none when ``filter`` does not match it)."""
        if filter is not None and filter.casefold() not in self.model.casefold():
            return []
        return [ProviderModelInfo(id=self.model, name="Fake decision model", owned_by="fake")]

    # --- scripts -------------------------------------------------------------------------------

    def _take_scripted(self, request: DecisionRequest) -> dict[str, tuple[ScriptedAnswer, str]]:
        """The scripted answer of each scripted question, using up one entry of each list."""
        asked = list(request.questions)
        unasked = [question_id for question_id in self._script if question_id not in asked]
        if unasked:
            them = "it" if len(unasked) == 1 else "them"
            hints = "".join(did_you_mean(question_id, asked) for question_id in unasked)
            raise AnswerMismatch(
                f"answers are scripted for {_questions(unasked)}, but the request does not ask "
                f"{them}; it asks {asked}.{hints}\n"
                "Remove those answers, or use one FakeDecisionProvider per kind of request."
            )
        taken: dict[str, tuple[ScriptedAnswer, str]] = {}
        with self._lock:
            number = len(self.requests)
            for question_id, entries in self._script.items():
                used = self._used[question_id]
                if self._repeat[question_id]:
                    taken[question_id] = (entries[0], f"answers[{question_id!r}]")
                elif used < len(entries):
                    taken[question_id] = (entries[used], f"answers[{question_id!r}][{used}]")
                else:
                    listing = "\n".join(f"  {i}. {e}" for i, e in enumerate(entries))
                    raise ScriptExhausted(
                        f"FakeDecisionProvider ran out of answers for question {question_id!r}: "
                        f"request #{number - 1} asks it, and all {len(entries)} scripted "
                        f"answers are used:\n{listing}\n"
                        "Script one more answer, or find out why the code asked again."
                    )
            for question_id in self._script:
                self._used[question_id] += 1
        return taken

    def _scripted(
        self, step: ScriptedAnswer, question_id: str, question: Question, where: str
    ) -> Answer:
        if not fits(step, question):
            raise AnswerMismatch(
                f"{where} is {step}, but question {question_id!r} is a {question.type} "
                f"question; script {_helper_for(question)} for it."
            )
        if isinstance(step, ScriptedChoice) and isinstance(question, ChoiceQuestion):
            return step.build(question_id, question, where)
        if isinstance(step, ScriptedScore) and isinstance(question, ScoreQuestion):
            return step.build(question_id, question, where)
        assert isinstance(step, ScriptedProbability)
        assert isinstance(question, BooleanQuestion)
        return step.build(question_id, question, where)

    async def _hang(self, request: DecisionRequest, where: str) -> None:
        signal = request.signal
        if signal is None:
            raise AnswerMismatch(
                f"{where} is hangs(), which waits for the request's abort signal, but the "
                "request has no signal: pass signal=controller.signal (an AbortController) and "
                "abort it, or script times_out() instead."
            )
        reason = await signal.wait()
        # The base class normally cancels this call first, with the same error.
        raise ProviderError(f"the decision was aborted: {reason}", "timeout")

    def assert_complete(self) -> None:
        """Fail if a scripted answer was never used.

        A single answer counts as used once any request asked its question; each answer of a
        list must be used by a request of its own.

        Raises:
            UnusedSteps: Naming each unused answer.
        """
        unused = []
        with self._lock:
            for question_id, entries in self._script.items():
                used = self._used[question_id]
                if self._repeat[question_id]:
                    if not used:
                        unused.append(f"  answers[{question_id!r}]: {entries[0]}")
                    continue
                unused.extend(
                    f"  answers[{question_id!r}][{i}]: {entries[i]}"
                    for i in range(used, len(entries))
                )
            made = len(self.requests)
        if unused:
            raise UnusedSteps(
                "FakeDecisionProvider: "
                + plural(len(unused), "scripted answer was", "scripted answers were")
                + " never used:\n"
                + "\n".join(unused)
                + f"\nThe code made {plural(made, 'decision request')}; remove the unused "
                "answers, or "
                "find out why the code stopped early."
            )

    # --- derived answers -----------------------------------------------------------------------

    def _rng(self, request: DecisionRequest, question_id: str, question: Question) -> random.Random:
        # Not hash(): that changes between processes. The other questions of the request are
        # left out on purpose: asking one more question does not change this one's answer.
        payload = _canonical(
            {
                "model": request.model,
                "context": request.context,
                "question_id": question_id,
                "question": question.model_dump(by_alias=True, mode="json"),
                "seed": self.seed,
            }
        )
        digest = hashlib.sha256(payload.encode("utf-8")).digest()
        return random.Random(int.from_bytes(digest, "big"))

    def _derived(self, request: DecisionRequest, question_id: str, question: Question) -> Answer:
        rng = self._rng(request, question_id, question)
        if isinstance(question, ChoiceQuestion):
            names = list(question.options)
            shares = _shares(len(names), rng)
            top = max(shares)
            return ChoiceAnswer(
                choice=names[shares.index(top)],
                probabilities={name: s / _UNITS for name, s in zip(names, shares, strict=True)},
            )
        if isinstance(question, ScoreQuestion):
            shares = _shares(len(question.levels), rng)
            return ScoreAnswer(
                score=sum(i * s for i, s in enumerate(shares)) / _UNITS,
                probabilities={str(i): s / _UNITS for i, s in enumerate(shares)},
                legend={str(i): level for i, level in enumerate(question.levels)},
            )
        units = round(rng.betavariate(0.7, 0.7) * _UNITS)
        return BooleanAnswer(probability=min(max(units, 1), _UNITS - 1) / _UNITS)

    def _usage(self, request: DecisionRequest) -> ProviderUsage:
        # One backend call per question, as the real providers make: the context and the
        # question sent each time, about four characters a token, and a one-token answer.
        context = _canonical(request.context)
        prompt = 0
        for question in request.questions.values():
            text = context + _canonical(question.model_dump(by_alias=True, mode="json"))
            prompt += _PROMPT_OVERHEAD + (len(text) + 3) // 4
        completion = len(request.questions)
        return ProviderUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            provider=self.name,
        )

    def __repr__(self) -> str:
        return (
            f"FakeDecisionProvider(answers={sorted(self._script)}, seed={self.seed}, "
            f"model={self.model!r})"
        )


def _questions(ids: list[str]) -> str:
    return f"question {ids[0]!r}" if len(ids) == 1 else f"questions {ids}"


def _helper_for(question: Question) -> str:
    return {"choice": "choose(...)", "score": "score(...)", "boolean": "probability(...)"}[
        question.type
    ]
