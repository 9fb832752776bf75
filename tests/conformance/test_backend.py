"""OpenAIChatBackend: it answers the prompts of the project's provider as a real server would,
gives each question a distribution of its own keyed to what the prompt shows of it, and knows
the answer a faithful provider reports."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import httpx
import pytest

from pytest_opdecide.conformance import OpenAIChatBackend
from pytest_opdecide.conformance._openai_backend import (
    LABEL_MASS,
    label_weights,
    question_weights,
)
from pytest_opdecide.conformance._requests import look_alike_questions, standard_context
from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    OpenAICompatibleDecisionProvider,
    ScoreQuestion,
)
from pytest_opdecide.questions._prompt import build_question_prompt


def ask(backend: OpenAIChatBackend, prompt: str, **body: object) -> httpx.Response:
    with httpx.Client(transport=backend) as client:
        return client.post(
            "http://backend.invalid/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": prompt}], **body},
        )


def served(backend: OpenAIChatBackend, prompt: str) -> list[float]:
    """The distribution the backend serves for ``prompt`` (read back from its logprobs)."""
    reply = ask(backend, prompt, logprobs=True, top_logprobs=20).json()
    first = reply["choices"][0]["logprobs"]["content"][0]
    listed = {entry["token"]: math.exp(entry["logprob"]) for entry in first["top_logprobs"]}
    labels = backend.served[-1].labels
    return [listed[label] / LABEL_MASS for label in labels]


@pytest.mark.parametrize("count", range(2, 27))
def test_question_weights_leave_room_for_rounding_to_3_places_and_give_away_renormalising(
    count: int,
) -> None:
    for seed in range(40):
        weights = question_weights(f"seed {seed}", count)
        assert math.isclose(math.fsum(weights), 1.0, abs_tol=1e-12)
        assert min(weights) > 0
        # Rounded to 3 decimal places (and never renormalised) they still sum to 1.
        assert abs(math.fsum(round(w, 3) for w in weights) - 1.0) < 1e-9
        if count == 2:
            assert abs(weights[0] - 0.5) >= 0.039
            continue
        # Rounded to 1 or 2 places they do not: renormalising after that changes them.
        for digits in (1, 2):
            assert abs(math.fsum(round(w, digits) for w in weights) - 1.0) > 1e-9
        ordered = sorted(weights)
        assert min(b - a for a, b in itertools.pairwise(ordered)) > 0.001
        mean = math.fsum(i * w for i, w in enumerate(weights))
        assert abs(mean - round(mean)) >= 0.01
    assert question_weights("a", count) == question_weights("a", count)
    assert question_weights("a", count) != question_weights("b", count)


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
    weights = label_weights(3)
    assert first["token"] == "ABC"[weights.index(max(weights))]  # the most likely label
    assert reply["usage"]["total_tokens"] == reply["usage"]["prompt_tokens"] + 1


def test_a_written_distribution_when_no_logprobs_are_asked() -> None:
    reply = ask(OpenAIChatBackend(), 'Use exactly the keys "yes", "no"; the values...').json()
    message = reply["choices"][0]["message"]["content"]
    assert json.loads(message) == dict(zip(["yes", "no"], label_weights(2), strict=True))


def test_a_prompt_without_labels_gets_a_400_that_explains() -> None:
    response = ask(OpenAIChatBackend(), "Hello there.", logprobs=True)
    assert response.status_code == 400
    assert "backend_transport()" in response.json()["error"]["message"]


def test_models_are_listed() -> None:
    with httpx.Client(transport=OpenAIChatBackend()) as client:
        listed = client.get("http://backend.invalid/v1/models").json()
    assert [model["id"] for model in listed["data"]] == ["conformance-model"]


QUESTIONS: dict[str, DecisionQuestion] = {
    "route": ChoiceQuestion(
        instructions="Which team?", options={"billing": None, "shipping": "Parcels", "x": None}
    ),
    "urgency": ScoreQuestion(instructions="How urgent?", levels=["low", "mid", "high", "now"]),
    "refund": BooleanQuestion(instructions="A refund?"),
}


def test_the_project_provider_reports_exactly_the_expected_answers() -> None:
    backend = OpenAIChatBackend()
    request = DecisionRequest(model="conformance-model", context={"ticket": 1}, questions=QUESTIONS)
    assert all(backend.expected_answer(q) is None for q in QUESTIONS.values())  # not expected yet
    backend.expect(request)
    provider = OpenAICompatibleDecisionProvider(
        base_url="http://backend.invalid/v1", transport=backend
    )
    result = provider.decide_sync(request)
    for question_id, question in QUESTIONS.items():
        expected = backend.expected_answer(question)
        assert expected is not None
        answer = result.answers[question_id]
        if answer.type == "boolean":
            assert math.isclose(answer.probability, expected["true"])
        else:
            for key, value in answer.probabilities.items():
                assert math.isclose(value, expected[key], abs_tol=1e-12)
    assert result.model == "conformance-model-2025-06-01"
    assert all(prompt.sight.outcomes is not None for prompt in backend.served)


def test_questions_that_look_alike_get_distributions_of_their_own() -> None:
    backend = OpenAIChatBackend()
    questions = look_alike_questions()
    backend.expect(DecisionRequest(model="m", context="", questions=questions))
    expected = {question_id: backend.expected_answer(q) for question_id, q in questions.items()}
    assert expected["first_team"] != expected["escalation_team"]
    assert expected["frustration"] != expected["complexity"]
    assert expected["wants_refund"] != expected["threatens_to_leave"]


# ---------------------------------------------------------------- mix-ups change the answer

CONTEXT: dict[str, Any] = standard_context()
ASKED = look_alike_questions()


def prompt_for(question: DecisionQuestion) -> str:
    """The reference design's prompt for ``question`` about ``CONTEXT``."""
    return build_question_prompt(CONTEXT, question).label_prompt()


def expecting() -> OpenAIChatBackend:
    backend = OpenAIChatBackend()
    backend.expect(DecisionRequest(model="m", context=CONTEXT, questions=ASKED))
    return backend


def in_label_order(backend: OpenAIChatBackend, question: DecisionQuestion) -> list[float]:
    expected = backend.expected_answer(question)
    assert expected is not None
    return list(expected.values())


@pytest.mark.parametrize("question_id", list(ASKED))
def test_the_prompt_as_asked_gets_the_expected_answer(question_id: str) -> None:
    backend = expecting()
    question = ASKED[question_id]
    got = served(backend, prompt_for(question))
    assert got == pytest.approx(in_label_order(backend, question), abs=1e-12)


def reversed_levels(question: ScoreQuestion) -> ScoreQuestion:
    return question.model_copy(update={"levels": list(reversed(question.levels))})


def rotated_options(question: ChoiceQuestion) -> ChoiceQuestion:
    items = list(question.options.items())
    return question.model_copy(update={"options": dict(items[1:] + items[:1])})


def swapped_criteria(question: BooleanQuestion) -> BooleanQuestion:
    criteria = question.criteria
    assert criteria is not None
    swapped = criteria.model_copy(update={"true": criteria.false, "false": criteria.true})
    return question.model_copy(update={"criteria": swapped})


def no_description(question: ChoiceQuestion) -> ChoiceQuestion:
    return question.model_copy(update={"options": dict.fromkeys(question.options)})


def other_instructions(question: DecisionQuestion, other: DecisionQuestion) -> DecisionQuestion:
    return question.model_copy(update={"instructions": other.instructions})


MIX_UPS = {
    "levels reversed": ("frustration", lambda q: prompt_for(reversed_levels(q))),
    "options rotated": ("first_team", lambda q: prompt_for(rotated_options(q))),
    "criteria swapped": ("wants_refund", lambda q: prompt_for(swapped_criteria(q))),
    "descriptions left out": ("escalation_team", lambda q: prompt_for(no_description(q))),
    "the other question's instructions": (
        "complexity",
        lambda q: prompt_for(other_instructions(q, ASKED["frustration"])),
    ),
    "no context": (
        "threatens_to_leave",
        lambda q: build_question_prompt("", q).label_prompt(),
    ),
}


@pytest.mark.parametrize("mix_up", list(MIX_UPS))
def test_a_prompt_showing_the_question_otherwise_gets_another_answer(mix_up: str) -> None:
    question_id, render = MIX_UPS[mix_up]
    backend = expecting()
    question = ASKED[question_id]
    got = served(backend, render(question))
    expected = in_label_order(backend, question)
    # Far enough apart that no rounding of the served values passes for the expected ones.
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) > 0.01, (got, expected)
    # The backend says what it saw, for the failure message of the checks.
    assert backend.served[-1].sight.outcomes is not None


def test_an_unreadable_pairing_is_not_compared() -> None:
    backend = expecting()
    question = ASKED["first_team"]
    prompt = prompt_for(question).replace("A. billing", "billing (first)")  # no label for A
    served(backend, prompt)
    assert backend.served[-1].sight.outcomes is None
    assert backend.expected_answer(question) is None
