"""The requests the provider checks send: realistic, structured, and typed to catch coercion.

The context is a support ticket (faker-backed, the same in every process) next to an account
record whose values are chosen to expose re-typing: a string of digits, an int, a float, a bool
and a null side by side. Option descriptions, levels, instructions and criteria mix text,
objects and arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fake_runtimes import fake_context
from pytest_opdecide.questions import (
    BooleanCriteria,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    ScoreQuestion,
)

__all__ = [
    "PREVALIDATION_CASES",
    "QUESTION_TYPES",
    "Limits",
    "PrevalidationCase",
    "at_limits",
    "exact_names_questions",
    "look_alike_questions",
    "standard_context",
    "standard_questions",
    "standard_request",
]

QUESTION_TYPES: Final = ("choice", "score", "boolean")


def standard_context() -> dict[str, Any]:
    """The context of the standard requests."""
    return {
        "ticket": fake_context("support_ticket", seed=7),
        "account": {
            "tier": "gold",
            "customer_since": 2019,
            "lifetime_value": 1280.5,
            "verified": True,
            "referrer": None,
            "code": "0042",
            "tags": ["vip", "annual", 3, False],
        },
    }


def standard_questions() -> dict[str, DecisionQuestion]:
    """Two questions of each type: one structured throughout, one plain text."""
    return {
        "route": ChoiceQuestion(
            instructions={
                "task": "Route the ticket to the team that handles it.",
                "consider": ["subject", "body"],
                "strict": True,
            },
            options={
                "billing": "Payments, refunds and invoices.",
                "shipping": None,
                "technical": {"team": "tier-2", "handles": ["login", "app"], "sla_hours": 8},
                "account": ["profile", "password", {"mfa": True}],
            },
        ),
        "urgency": ScoreQuestion(
            instructions="How urgent is this ticket?",
            levels=[
                "Not urgent: answer within a week.",
                {"label": "soon", "within_hours": 24},
                ["urgent", {"page": "on-call", "within_hours": 1.5}],
                "Critical: customer data or money at risk.",
            ],
        ),
        "refund": BooleanQuestion(
            instructions="Does the customer ask for money back?",
            criteria=BooleanCriteria(
                true={"refund": "requested", "partial_ok": True},
                false="No refund, credit or chargeback is asked for.",
            ),
        ),
        "tone": ChoiceQuestion(
            instructions="What is the customer's tone?",
            options={"calm": "Polite and patient.", "annoyed": None, "angry": None},
        ),
        "effort": ScoreQuestion(
            instructions={"rate": "effort needed to resolve", "scale": "0 = none"},
            levels=["none", "a reply", "an investigation"],
        ),
        "repeat": BooleanQuestion(instructions="Has the customer written about this before?"),
    }


def look_alike_questions() -> dict[str, DecisionQuestion]:
    """Two questions of each type that look alike: the same shape (the same option names, as
    many levels, criteria on both sides) but other instructions, descriptions, levels and
    criteria. Answers swapped between them, or parts given to the other one, still fit their
    question's shape: only the distributions tell them apart."""
    return {
        "first_team": ChoiceQuestion(
            instructions="Which team should answer the customer first?",
            options={
                "billing": "Payments, refunds and invoices.",
                "shipping": {"carriers": ["post", "courier"], "tracking": True},
                "technical": None,
            },
        ),
        "escalation_team": ChoiceQuestion(
            instructions={"task": "Which team takes the ticket if the first one cannot help?"},
            options={
                "billing": ["finance", {"tier": 2}],
                "shipping": "Lost and late parcels.",
                "technical": "Login and app problems.",
            },
        ),
        "frustration": ScoreQuestion(
            instructions="How frustrated is the customer?",
            levels=["calm", "a little annoyed", {"level": "angry", "swearing": False}, "furious"],
        ),
        "complexity": ScoreQuestion(
            instructions={"rate": "how complex the fix is", "unit": "steps"},
            levels=["one step", ["two", "steps"], "a few steps", {"steps": "many", "teams": 2}],
        ),
        "wants_refund": BooleanQuestion(
            instructions="Does the customer want their money back?",
            criteria=BooleanCriteria(
                true="They ask for a refund, a chargeback or a credit.",
                false={"asks_for": ["a replacement", "an explanation"]},
            ),
        ),
        "threatens_to_leave": BooleanQuestion(
            instructions={"check": "Does the customer threaten to cancel their account?"},
            criteria=BooleanCriteria(
                true={"says": ["cancel", "close my account", "leave"]},
                false="They complain but mean to stay.",
            ),
        ),
    }


def exact_names_questions() -> dict[str, DecisionQuestion]:
    """Question ids and option names that a provider must echo exactly: spaces around and
    inside, letter case, composed and decomposed accents (``"café"`` and ``"cafe\u0301"`` are
    different strings that look the same), emoji, punctuation, names that are labels."""
    return {
        " route ": ChoiceQuestion(
            instructions="Which queue gets the ticket?",
            options={
                "Billing Team": None,
                "caf\u00e9 desk": "The front desk.",
                "q.1/a:b[0]": None,
                "A": "Named like a label.",
            },
        ),
        "Route": ChoiceQuestion(
            instructions="Which queue is second best?",
            options={"0": None, "true": "A name that reads as JSON.", "\U0001f3ab": None},
        ),
        "cafe\u0301": ScoreQuestion(
            instructions="How polite is the customer?",
            levels=["rude", "neutral", "polite"],
        ),
        "caf\u00e9": BooleanQuestion(instructions="Is the customer a regular?"),
        "ticket #7 \U0001f3ab": BooleanQuestion(instructions="Is the ticket about a ticket?"),
    }


def standard_request(
    types: Sequence[str], model: str, *, only: Sequence[str] | None = None, limit: int | None = None
) -> DecisionRequest | None:
    """The standard request with the questions of ``types`` (``only`` those ids if given),
    at most ``limit`` of them; ``None`` when no question is left."""
    questions = {
        question_id: question
        for question_id, question in standard_questions().items()
        if question.type in types and (only is None or question_id in only)
    }
    if limit is not None:
        questions = dict(list(questions.items())[:limit])
    if not questions:
        return None
    return DecisionRequest(model=model, context=standard_context(), questions=questions)


@dataclass(frozen=True)
class Limits:
    """The limits a provider declares (``None``: no limit)."""

    types: tuple[str, ...]
    max_questions: int | None
    max_options: int | None
    max_levels: int | None


_NAMES: Final = (
    "billing", "shipping", "technical", "account", "returns", "warranty", "fraud", "sales",
    "legal", "privacy", "press", "partners", "careers", "security", "outages", "feedback",
    "invoices", "refunds", "orders", "gifts", "loyalty", "coupons", "delivery", "customs",
    "recalls", "repairs", "rentals", "trade_ins", "subscriptions", "donations",
)  # fmt: skip


def option_names(count: int) -> list[str]:
    """``count`` distinct option names, realistic ones first."""
    names = list(_NAMES[:count])
    names += [f"team_{i:02d}" for i in range(len(names), count)]
    return names


def _choice(count: int) -> ChoiceQuestion:
    return ChoiceQuestion(
        instructions="Which team should handle the ticket?",
        options={name: f"The {name.replace('_', ' ')} team." for name in option_names(count)},
    )


def _score(count: int) -> ScoreQuestion:
    return ScoreQuestion(
        instructions="How satisfied does the customer sound?",
        levels=[f"Satisfaction level {i} of {count - 1}." for i in range(count)],
    )


def _boolean() -> BooleanQuestion:
    return BooleanQuestion(instructions="Is the customer a repeat buyer?")


def _request(questions: dict[str, Any], model: str) -> DecisionRequest:
    return DecisionRequest(model=model, context=standard_context(), questions=questions)


def at_limits(limits: Limits, model: str) -> list[tuple[str, DecisionRequest]]:
    """Requests exactly at each declared limit, with what each one tests."""
    cases: list[tuple[str, DecisionRequest]] = []
    if limits.max_options is not None and "choice" in limits.types:
        cases.append(
            (
                f"{limits.max_options} options",
                _request({"team": _choice(limits.max_options)}, model),
            )
        )
    if limits.max_levels is not None and "score" in limits.types:
        cases.append(
            (f"{limits.max_levels} levels", _request({"mood": _score(limits.max_levels)}, model))
        )
    if limits.max_questions is not None:
        count = min(limits.max_questions, 50)
        kind = limits.types[0]
        cases.append(
            (
                f"{count} questions",
                _request({f"q{i}": _question(kind, 3) for i in range(count)}, model),
            )
        )
    return cases


@dataclass(frozen=True)
class PrevalidationCase:
    """A request a provider cannot represent, built for the provider's declared limits.

    Attributes:
        id: The case's name (the test id).
        why: What makes it unrepresentable.
        build: Builds the request, or returns ``None`` when the case does not apply.
        applies_when: When the case applies (for the skip reason).
        texts: For a request that some providers can represent after all (text that UTF-8
            cannot carry and a JSON escape can), the texts that make it unrepresentable to the
            others: a provider may instead send each of them intact, and answer as asked.
    """

    id: str
    why: str
    build: Callable[[Limits, str], DecisionRequest | None]
    applies_when: str = "the provider supports the question type it needs"
    texts: tuple[str, ...] = ()


def _question(kind: str, size: int) -> DecisionQuestion:
    if kind == "choice":
        return _choice(size)
    if kind == "score":
        return _score(size)
    return _boolean()


def _any_supported(limits: Limits) -> Callable[[], DecisionQuestion]:
    return lambda: _question(limits.types[0], 2)


def _if(condition: bool, build: Callable[[], DecisionRequest]) -> DecisionRequest | None:
    return build() if condition else None


SURROGATE_QUESTION_ID: Final = "refund\ud83dasked"
SURROGATE_OPTION_NAME: Final = "gift\ud83dcard"
"""Texts holding a lone surrogate (half of an emoji) between two words: altered (``U+FFFD``,
``?``) or dropped, they become another text that can be found in what was sent."""


def _lone_surrogates(limits: Limits, model: str) -> DecisionRequest:
    question: DecisionQuestion = _any_supported(limits)()
    if "choice" in limits.types:
        question = ChoiceQuestion(
            instructions="How does the customer want the money back?",
            options={SURROGATE_OPTION_NAME: "As a gift card.", "card": "On their card."},
        )
    return _request({SURROGATE_QUESTION_ID: question}, model)


def _unsupported(limits: Limits, model: str) -> DecisionRequest | None:
    missing = [kind for kind in QUESTION_TYPES if kind not in limits.types]
    if not missing:
        return None
    return _request({"unsupported": _question(missing[0], 2)}, model)


PREVALIDATION_CASES: Final[tuple[PrevalidationCase, ...]] = (
    PrevalidationCase(
        "no_questions",
        "it asks no question",
        lambda limits, model: _request({}, model),
    ),
    PrevalidationCase(
        "blank_question_id",
        "a question id is blank",
        lambda limits, model: _request({"  ": _any_supported(limits)()}, model),
    ),
    PrevalidationCase(
        "one_option",
        "a choice question offers a single option",
        lambda limits, model: _if(
            "choice" in limits.types,
            lambda: _request(
                {"team": ChoiceQuestion(instructions="Which team?", options={"billing": None})},
                model,
            ),
        ),
    ),
    PrevalidationCase(
        "duplicate_option_names",
        "two options differ only in case and spaces ('Yes' and 'yes ')",
        lambda limits, model: _if(
            "choice" in limits.types,
            lambda: _request(
                {
                    "agree": ChoiceQuestion(
                        instructions="Does the customer agree?",
                        options={"Yes": None, "yes ": None, "No": None},
                    )
                },
                model,
            ),
        ),
    ),
    PrevalidationCase(
        "blank_option_name",
        "an option name is blank",
        lambda limits, model: _if(
            "choice" in limits.types,
            lambda: _request(
                {
                    "team": ChoiceQuestion(
                        instructions="Which team?", options={"billing": None, " ": None}
                    )
                },
                model,
            ),
        ),
    ),
    PrevalidationCase(
        "one_level",
        "a score question has a single level",
        lambda limits, model: _if(
            "score" in limits.types,
            lambda: _request(
                {"mood": ScoreQuestion(instructions="How happy?", levels=["happy"])}, model
            ),
        ),
    ),
    PrevalidationCase(
        "too_many_options",
        "a choice question offers one option more than max_options",
        lambda limits, model: _if(
            limits.max_options is not None and "choice" in limits.types,
            lambda: _request({"team": _choice((limits.max_options or 0) + 1)}, model),
        ),
        "max_options is declared (or the provider has the attribute)",
    ),
    PrevalidationCase(
        "too_many_levels",
        "a score question has one level more than max_levels",
        lambda limits, model: _if(
            limits.max_levels is not None and "score" in limits.types,
            lambda: _request({"mood": _score((limits.max_levels or 0) + 1)}, model),
        ),
        "max_levels is declared (or the provider has the attribute)",
    ),
    PrevalidationCase(
        "too_many_questions",
        "it asks one question more than max_questions",
        lambda limits, model: _if(
            limits.max_questions is not None,
            lambda: _request(
                {f"q{i}": _any_supported(limits)() for i in range((limits.max_questions or 0) + 1)},
                model,
            ),
        ),
        "max_questions is declared (or the provider has the attribute)",
    ),
    PrevalidationCase(
        "lone_surrogate",
        "a question id and an option name hold a lone surrogate ('\\ud83d'), which no UTF-8 "
        "text can carry (JSON can, as the escape \\ud83d)",
        _lone_surrogates,
        texts=(SURROGATE_QUESTION_ID, SURROGATE_OPTION_NAME),
    ),
    PrevalidationCase(
        "null_criteria",
        "a boolean question's criteria are null, which describes no outcome (leave them out)",
        lambda limits, model: _if(
            "boolean" in limits.types,
            lambda: _request(
                {
                    "refund": BooleanQuestion.model_construct(
                        instructions="Does the customer ask for a refund?", criteria=None
                    )
                },
                model,
            ),
        ),
    ),
    PrevalidationCase(
        "null_criterion",
        "a boolean question's criteria.true is null, which is not a description (leave it out)",
        lambda limits, model: _if(
            "boolean" in limits.types,
            lambda: _request(
                {
                    "refund": BooleanQuestion.model_construct(
                        instructions="Does the customer ask for a refund?",
                        criteria=BooleanCriteria.model_construct(
                            true=None, false="No refund is asked for."
                        ),
                    )
                },
                model,
            ),
        ),
    ),
    PrevalidationCase(
        "unsupported_question_type",
        "it asks a question of a type the provider does not support",
        _unsupported,
        "supported_question_types leaves a type out",
    ),
)
"""Every kind of request a provider must reject before sending anything."""
