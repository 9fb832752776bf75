"""check_structure finds a request's structure in what the backend received, however it was
written as JSON, and nowhere else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_opdecide.conformance import ConformanceError, RecordedRequest
from pytest_opdecide.conformance._structure import check_structure
from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    ScoreQuestion,
)

CONTEXT = {"ticket": {"id": "T-1", "code": "0042", "count": 1, "ratio": 1.5, "vip": True}}
REQUEST = DecisionRequest(
    model="m",
    context=CONTEXT,
    questions={
        "route": ChoiceQuestion(
            instructions="Which team?", options={"billing": {"sla": 8}, "shipping\nfast": None}
        ),
        "urgency": ScoreQuestion(instructions={"rate": "urgency"}, levels=["low", ["high", 2]]),
        "refund": BooleanQuestion(
            instructions="Refund?", criteria=BooleanCriteria(true={"asked": True})
        ),
    },
)


def sent(*prompts: str, extra: dict[str, Any] | None = None) -> list[RecordedRequest]:
    requests = []
    for prompt in prompts:
        body = {"messages": [{"role": "user", "content": prompt}], **(extra or {})}
        requests.append(
            RecordedRequest("POST", "http://b/v1", {}, json.dumps(body).encode(), body, 200, None)
        )
    return requests


def faithful(indent: int | None) -> str:
    def show(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, indent=indent)

    return "\n".join(
        [
            show(CONTEXT),
            "Which team?",
            f"A. billing {show({'sla': 8})}",
            f"B. {json.dumps('shipping' + chr(10) + 'fast')}",
            show({"rate": "urgency"}),
            "0. low",
            f"1. {show(['high', 2])}",
            "Refund?",
            show({"asked": True}),
        ]
    )


@pytest.mark.parametrize("indent", [None, 2, 4])
def test_json_written_into_the_prompt_is_found(indent: int | None) -> None:
    check_structure(REQUEST, sent(faithful(indent)))


def test_json_sent_as_fields_of_the_body_is_found() -> None:
    fields = {
        "context": CONTEXT,
        "questions": REQUEST.model_dump(mode="json")["questions"],
    }
    check_structure(REQUEST, sent("Answer the questions.", extra=fields))


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda text: text.replace('"0042"', "42"), "the context"),
        (lambda text: text.replace("1.5", "1.50001"), "the context"),
        (lambda text: text.replace('{"sla": 8}', "{'sla': 8}"), "the description of option"),
        (lambda text: text.replace('["high", 2]', '["high", "2"]'), "level 1"),
        (lambda text: text.replace('{"asked": true}', "asked: yes"), "criteria.true"),
        (lambda text: text.replace("Refund?", "Money back?"), "the instructions"),
    ],
)
def test_a_reshaped_part_is_named(change: Any, what: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_structure(REQUEST, sent(change(faithful(None))))
    assert what in str(caught.value)
    assert ": structure: " in str(caught.value)


def test_reordered_keys_are_not_the_same_structure() -> None:
    reordered = json.dumps({"ticket": dict(reversed(list(CONTEXT["ticket"].items())))})
    with pytest.raises(ConformanceError, match="the context"):
        check_structure(REQUEST, sent(faithful(None).replace(json.dumps(CONTEXT), reordered)))


def test_python_repr_is_not_json() -> None:
    flattened = faithful(None).replace(json.dumps(CONTEXT), str(CONTEXT))
    with pytest.raises(ConformanceError, match="provider: structure: the context"):
        check_structure(REQUEST, sent(flattened))


def one_per_question(context: Any = CONTEXT) -> list[str]:
    """The faithful prompt split the reference way: one request per question."""
    show = json.dumps
    return [
        f"{show(context)}\nWhich team?\nA. billing {show({'sla': 8})}\n"
        f"B. {show('shipping' + chr(10) + 'fast')}",
        f"{show(context)}\n{show({'rate': 'urgency'})}\n0. low\n1. {show(['high', 2])}",
        f"{show(context)}\nRefund?\n{show({'asked': True})}",
    ]


def test_one_request_per_question_is_found() -> None:
    check_structure(REQUEST, sent(*one_per_question()))


def test_every_request_that_asks_a_question_must_carry_the_context() -> None:
    first, *others = one_per_question()
    without = [prompt.replace(json.dumps(CONTEXT), "") for prompt in others]
    with pytest.raises(ConformanceError) as caught:
        check_structure(REQUEST, sent(first, *without))
    assert str(caught.value).startswith(
        "question 'urgency': structure: the context is not in request 2 of 3 (the one asking "
        "this question): every request that asks a question must carry the context"
    )


def test_each_question_is_sent_with_its_own_parts() -> None:
    route, urgency, refund = one_per_question()
    # The levels go out with the boolean question and its criteria with the score question.
    swapped = [
        route,
        urgency.replace('0. low\n1. ["high", 2]', json.dumps({"asked": True})),
        refund.replace(json.dumps({"asked": True}), '0. low\n1. ["high", 2]'),
    ]
    with pytest.raises(ConformanceError) as caught:
        check_structure(REQUEST, sent(*swapped))
    assert str(caught.value).startswith(
        "question 'urgency': structure: level 0 is not in the request that asks this question "
        "(the one carrying its instructions): it was sent with another question, or not with "
        "this one"
    )
