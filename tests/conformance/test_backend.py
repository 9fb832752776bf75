"""OpenAIChatBackend: it answers the prompts of the project's provider, as a real server would,
and knows the answer a faithful provider reports."""

from __future__ import annotations

import math

import httpx
import pytest

from pytest_opdecide.conformance import OpenAIChatBackend
from pytest_opdecide.conformance._openai_backend import LABEL_MASS, label_weights
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ScoreQuestion,
)


def ask(backend: OpenAIChatBackend, prompt: str, **body: object) -> httpx.Response:
    with httpx.Client(transport=backend) as client:
        return client.post(
            "http://backend.invalid/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": prompt}], **body},
        )


@pytest.mark.parametrize("count", range(2, 27))
def test_label_weights_are_a_distribution_that_rounding_gives_away(count: int) -> None:
    weights = label_weights(count)
    assert math.isclose(math.fsum(weights), 1.0, abs_tol=1e-12)
    assert min(weights) > 0
    if count >= 3:
        for digits in (1, 2, 3):
            assert abs(math.fsum(round(w, digits) for w in weights) - 1.0) > 1e-9
        mean = math.fsum(i * w for i, w in enumerate(weights))
        assert abs(mean - round(mean)) > 0.01


def test_a_choice_prompt_gets_logprobs_over_its_letters() -> None:
    reply = ask(
        OpenAIChatBackend(),
        "Options:\nA. billing\nB. shipping\nC. tech\n\n"
        "Answer with the letter of the best option (A, B or C) and nothing else.",
        logprobs=True,
        top_logprobs=20,
    ).json()
    assert reply["model"] == "m-2025-06-01"
    first = reply["choices"][0]["logprobs"]["content"][0]
    listed = {entry["token"]: math.exp(entry["logprob"]) for entry in first["top_logprobs"]}
    assert {"A", "B", "C", "The", "Answer", "\n"} == set(listed)
    assert math.isclose(listed["A"] + listed["B"] + listed["C"], LABEL_MASS)
    assert first["token"] == "B"  # the peak is in the middle
    assert reply["usage"]["total_tokens"] == reply["usage"]["prompt_tokens"] + 1


def test_a_written_distribution_when_no_logprobs_are_asked() -> None:
    reply = ask(OpenAIChatBackend(), 'Use exactly the keys "yes", "no"; the values...').json()
    message = reply["choices"][0]["message"]["content"]
    assert message == '{"yes": 0.7311, "no": 0.2689}'.replace("0.2689", str(1 - 0.7311))


def test_a_prompt_without_labels_gets_a_400_that_explains() -> None:
    response = ask(OpenAIChatBackend(), "Hello there.", logprobs=True)
    assert response.status_code == 400
    assert "backend_transport()" in response.json()["error"]["message"]


def test_models_are_listed() -> None:
    with httpx.Client(transport=OpenAIChatBackend()) as client:
        listed = client.get("http://backend.invalid/v1/models").json()
    assert [model["id"] for model in listed["data"]] == ["conformance-model"]


def test_the_project_provider_reports_exactly_the_expected_answers() -> None:
    backend = OpenAIChatBackend()
    questions = {
        "route": ChoiceQuestion(
            instructions="Which team?", options={"billing": None, "shipping": "Parcels", "x": None}
        ),
        "urgency": ScoreQuestion(instructions="How urgent?", levels=["low", "mid", "high", "now"]),
        "refund": BooleanQuestion(instructions="A refund?"),
    }
    assert all(backend.expected_answer(q) is None for q in questions.values())
    provider = OpenAICompatibleDecisionProvider(
        base_url="http://backend.invalid/v1", transport=backend
    )
    result = provider.decide_sync(
        DecisionRequest(model="conformance-model", context={"ticket": 1}, questions=questions)
    )
    for question_id, question in questions.items():
        expected = backend.expected_answer(question)
        assert expected is not None
        answer = result.answers[question_id]
        if answer.type == "boolean":
            assert math.isclose(answer.probability, expected["true"])
        else:
            for key, value in answer.probabilities.items():
                assert math.isclose(value, expected[key], abs_tol=1e-12)
    assert result.model == "conformance-model-2025-06-01"
