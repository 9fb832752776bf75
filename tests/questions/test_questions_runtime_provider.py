"""RuntimeDecisionProvider: question decisions through any next-step Runtime."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _questions_support import MODEL, make_request

from pytest_opdecide import ModelReply, ModelRequest, Runtime, Usage
from pytest_opdecide.questions import (
    AbortController,
    BooleanQuestion,
    ChoiceQuestion,
    InvalidRequestError,
    ProviderError,
    Rule,
    RuntimeDecisionProvider,
    ScoreQuestion,
    validate_result,
)


def pick(probabilities: dict[str, Any]) -> str:
    return json.dumps({"call": "answer", "args": {"probabilities": probabilities}})


class Scripted(Runtime):
    """Replies with ``reply(prompt)``; records the prompts."""

    def __init__(self, reply: Callable[[str], str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reply = reply
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def call_model(self, request: ModelRequest) -> ModelReply:
        with self.lock:
            self.prompts.append(request.prompt)
        return ModelReply(text=self.reply(request.prompt), usage=Usage(50, 10, 60), model="tiny-1")


def standard_reply(prompt: str) -> str:
    if "Which team" in prompt:
        return pick({"A": 0.2, "B": 0.5, "C": 0.3})
    if "How urgent" in prompt:
        return pick({"0": 0.25, "1": 0.25, "2": 0.5})
    return pick({"yes": 0.9, "no": 0.1})


async def test_answers_every_question_type() -> None:
    runtime = Scripted(standard_reply, model=MODEL)
    provider = RuntimeDecisionProvider(runtime)
    request = make_request()
    request.model = ""
    result = await provider.decide(request)
    validate_result(request, result)
    assert result.choice("route").choice == "shipping"
    assert result.choice("route").probabilities == {"billing": 0.2, "shipping": 0.5, "tech": 0.3}
    assert result.score("urgency").score == pytest.approx(1.25)
    assert result.score("urgency").legend["2"] == {"label": "high", "sla_hours": 4}
    assert result.boolean("refund").probability == pytest.approx(0.9)
    assert result.model == "tiny-1"
    assert (
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
        result.usage.total_tokens,
    ) == (150, 30, 180)
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["method"] == "verbalized"
    assert meta["labels"] == {"A": "billing", "B": "shipping", "C": "tech"}
    assert len(runtime.trace) == 3


async def test_the_prompt_renders_the_question_and_the_schema_option() -> None:
    runtime = Scripted(lambda prompt: pick({"A": 0.5, "B": 0.5}))
    question = ChoiceQuestion(
        instructions="Which team?", options={"billing": {"vip": True}, "tech": None}
    )
    await RuntimeDecisionProvider(runtime, model=MODEL).decide(make_request(route=question))
    (prompt,) = runtime.prompts
    assert '"ticket": "Charged twice."' in prompt
    assert "A. billing" in prompt
    assert '"vip": true' in prompt
    assert "answer(probabilities: dict)" in prompt
    assert '"probabilities": {"A": <float>, "B": <float>}' in prompt


async def test_an_unusable_distribution_is_asked_again_with_the_problem() -> None:
    replies = iter([pick({"yes": 0.9, "no": 0.9}), pick({"yes": 0.3, "no": 0.7})])
    runtime = Scripted(lambda prompt: next(replies))
    request = make_request(refund=BooleanQuestion(instructions="Refund?"))
    result = await RuntimeDecisionProvider(runtime, model=MODEL).decide(request)
    assert result.boolean("refund").probability == pytest.approx(0.3)
    assert result.metadata["questions"]["refund"]["attempts"] == 2  # type: ignore[index, call-overload]
    assert "sum to 1, they sum to 1.8" in runtime.prompts[1]


async def test_unusable_twice_is_a_provider_error() -> None:
    runtime = Scripted(lambda prompt: pick({"yes": 2.0, "no": 0.0}))
    with pytest.raises(ProviderError) as caught:
        await RuntimeDecisionProvider(runtime, model=MODEL).decide(
            make_request(refund=BooleanQuestion(instructions="Refund?"))
        )
    assert caught.value.code == "unknown"
    assert "between 0 and 1" in str(caught.value)


async def test_a_decision_error_becomes_a_provider_error() -> None:
    runtime = Scripted(lambda prompt: "I refuse to answer in JSON.")
    with pytest.raises(ProviderError) as caught:
        await RuntimeDecisionProvider(runtime, model=MODEL).decide(
            make_request(refund=BooleanQuestion(instructions="Refund?"))
        )
    assert caught.value.code == "unknown"
    assert type(caught.value.__cause__).__name__ == "DecisionError"
    assert len(runtime.prompts) == 2  # the first pick and decision.make's re-pick


async def test_a_failing_runtime_never_escapes_bare() -> None:
    def explode(prompt: str) -> str:
        raise ConnectionError("backend down")

    with pytest.raises(ProviderError) as caught:
        await RuntimeDecisionProvider(Scripted(explode), model=MODEL).decide(make_request())
    assert "ConnectionError: backend down" in str(caught.value)


async def test_questions_are_asked_concurrently() -> None:
    barrier = threading.Barrier(3, timeout=5)

    def reply(prompt: str) -> str:
        barrier.wait()  # only passes when the three calls run at the same time
        return standard_reply(prompt)

    result = await RuntimeDecisionProvider(Scripted(reply), model=MODEL).decide(make_request())
    assert set(result.answers) == {"route", "urgency", "refund"}


async def test_another_model_or_no_model_is_refused_before_any_call() -> None:
    runtime = Scripted(standard_reply, model=MODEL)
    request = make_request()
    request.model = "gpt-huge"
    with pytest.raises(InvalidRequestError) as caught:
        await RuntimeDecisionProvider(runtime).decide(request)
    assert caught.value.rule == Rule.REQUEST_MODEL
    request.model = ""
    with pytest.raises(InvalidRequestError):
        await RuntimeDecisionProvider(Scripted(standard_reply)).decide(request)
    assert runtime.prompts == []


async def test_limits_and_malformed_requests_are_refused_before_any_call() -> None:
    runtime = Scripted(standard_reply)
    provider = RuntimeDecisionProvider(runtime, model=MODEL)
    too_many = make_request(q=ScoreQuestion(instructions="x", levels=[str(i) for i in range(11)]))
    with pytest.raises(InvalidRequestError) as caught:
        await provider.decide(too_many)
    assert caught.value.rule == Rule.SCORE_TOO_MANY_LEVELS
    with pytest.raises(InvalidRequestError):
        await provider.decide(
            {
                "model": "tiny",
                "context": "",
                "questions": {"q": {"type": "choice", "instructions": "x", "options": {"a": None}}},
            }
        )
    assert runtime.prompts == []


async def test_an_abort_during_the_call() -> None:
    release = threading.Event()
    called = threading.Event()

    def slow(prompt: str) -> str:
        called.set()
        release.wait(5)
        return standard_reply(prompt)

    controller = AbortController()
    request = make_request(refund=BooleanQuestion(instructions="Refund?"))
    request.signal = controller.signal
    runtime = Scripted(slow)
    task = asyncio.create_task(RuntimeDecisionProvider(runtime, model=MODEL).decide(request))

    assert await asyncio.to_thread(called.wait, 5)
    controller.abort("stop")
    try:
        with pytest.raises(ProviderError) as caught:
            await asyncio.wait_for(task, 5)
    finally:
        release.set()
    assert caught.value.code == "timeout"


def test_sync_use_and_identity() -> None:
    provider = RuntimeDecisionProvider(Scripted(standard_reply, model=MODEL))
    assert (provider.kind, provider.specification_version, provider.model) == (
        "decision",
        "1",
        MODEL,
    )
    assert "Scripted" in repr(provider)
    result = provider.decide_sync(make_request(refund=BooleanQuestion(instructions="Refund?")))
    assert result.boolean("refund").probability == pytest.approx(0.9)


async def test_a_runtime_with_only_exec_answers_and_keeps_a_trace() -> None:
    """An object with ``exec`` (OpenProgram's shape) serves as it does for ``decision.make``."""

    class OnlyExec:
        def __init__(self) -> None:
            self.prompts: list[str] = []

        def exec(self, content: list[dict[str, str]], timeout_s: float | None = None) -> str:
            self.prompts.append(content[0]["text"])
            return standard_reply(content[0]["text"])

    inner = OnlyExec()
    provider = RuntimeDecisionProvider(inner, model=MODEL)
    assert repr(provider) == f"RuntimeDecisionProvider(OnlyExec, model={MODEL!r})"
    request = make_request()
    result = await provider.decide(request)
    validate_result(request, result)
    assert result.choice("route").probabilities == {"billing": 0.2, "shipping": 0.5, "tech": 0.3}
    assert len(inner.prompts) == 3
    assert len(provider.runtime.calls) == 3


def test_what_is_not_a_runtime_is_refused_when_the_provider_is_built() -> None:
    with pytest.raises(TypeError) as caught:
        RuntimeDecisionProvider("gpt-4o-mini")
    assert str(caught.value).startswith(
        "RuntimeDecisionProvider() got str 'gpt-4o-mini', which is not a runtime. A runtime "
        "makes the model calls"
    )
