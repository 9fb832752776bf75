"""What a provider under test declares it can do, resolved against the provider itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._requests import QUESTION_TYPES, Limits

__all__ = ["ProviderCapabilities", "resolve_capabilities"]


@dataclass(frozen=True)
class ProviderCapabilities:
    """The capabilities the provider checks run with.

    Declared as class attributes of a :class:`~pytest_opdecide.conformance.DecisionProviderTests`
    subclass; a limit left at ``None`` is read from the provider's attribute of the same name
    (``max_options`` of :class:`~pytest_opdecide.questions.BaseDecisionProvider`, say).

    Attributes:
        question_types: The question types the provider answers; others must be rejected as
            ``invalid_request`` before any I/O.
        max_questions: The most questions per request, or ``None`` for no limit.
        max_options: The most options per choice question, or ``None`` for no limit.
        max_levels: The most levels per score question, or ``None`` for no limit.
        reports_confidence: Choice and score answers carry ``confidence``.
        supports_abort: The provider honours ``signal`` (the abort checks run).
        needs_backend: ``True``: every decision must send requests through the transport
            override; ``False``: it never does (a fake, an in-process model), so the checks
            that watch the backend are skipped; ``None``: decided by what the provider does.
        probability_decimals: The decimal places the provider rounds probabilities to, or
            ``None`` (then each result's ``metadata["rounding"]`` is read, if any, else the
            places each answer's values are written with). Sums are accepted within what the
            rounding explains; each value must be the computed one rounded to that many places.
        sent_models: How the provider maps a request's ``model`` to the model it sends the
            backend, when it documents such a mapping (declared on the test class, or as the
            provider's own ``sent_models`` attribute); a model not in it must be sent as named.
    """

    question_types: tuple[str, ...] = QUESTION_TYPES
    max_questions: int | None = None
    max_options: int | None = None
    max_levels: int | None = None
    reports_confidence: bool = False
    supports_abort: bool = True
    needs_backend: bool | None = None
    probability_decimals: int | None = None
    sent_models: Mapping[str, str] = field(default_factory=dict)

    @property
    def limits(self) -> Limits:
        """The request limits."""
        return Limits(self.question_types, self.max_questions, self.max_options, self.max_levels)


def _limit(name: str, declared: Any, provider: Any) -> int | None:
    value = declared if declared is not None else getattr(provider, name, None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        fail(
            ConformanceRule.CAPABILITY,
            f"{name} must be a whole number >= 1 or None",
            value=value,
            fix=f"declare {name} = <the most your provider accepts> (or None for no limit)",
        )
    return value


def _decimals(declared: Any, provider: Any) -> int | None:
    value = declared if declared is not None else getattr(provider, "probability_decimals", None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
        fail(
            ConformanceRule.CAPABILITY,
            "probability_decimals must be a whole number of decimal places from 0 to 15, or None",
            value=value,
            fix="declare probability_decimals = <the places your provider rounds to> (or None)",
        )
    return value


def _models(declared: Any) -> dict[str, str]:
    if not isinstance(declared, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) and value for key, value in declared.items()
    ):
        fail(
            ConformanceRule.CAPABILITY,
            "sent_models must map request models to the (non-empty) models sent for them",
            value=declared,
            fix="declare e.g. sent_models = {'fast': 'gpt-4o-mini'}",
        )
    return dict(declared)


def resolve_capabilities(
    provider: Any,
    *,
    question_types: Sequence[str],
    max_questions: int | None,
    max_options: int | None,
    max_levels: int | None,
    reports_confidence: bool,
    supports_abort: bool,
    needs_backend: bool | None,
    probability_decimals: int | None = None,
    sent_models: Mapping[str, str] | None = None,
) -> ProviderCapabilities:
    """Check the declared capabilities and fill undeclared limits from ``provider``.

    Raises:
        ConformanceError: A declared capability is malformed.
    """
    types = tuple(question_types)
    unknown = [kind for kind in types if kind not in QUESTION_TYPES]
    if unknown or not types or len(set(types)) != len(types):
        fail(
            ConformanceRule.CAPABILITY,
            f"supported_question_types must list some of {list(QUESTION_TYPES)}, each once",
            value=list(types),
            fix="declare e.g. supported_question_types = ('choice', 'boolean')",
        )
    if needs_backend not in (True, False, None):
        fail(
            ConformanceRule.CAPABILITY,
            "needs_backend must be True, False or None",
            value=needs_backend,
            fix="declare needs_backend = True, False or None",
        )
    return ProviderCapabilities(
        question_types=tuple(kind for kind in QUESTION_TYPES if kind in types),
        max_questions=_limit("max_questions", max_questions, provider),
        max_options=_limit("max_options", max_options, provider),
        max_levels=_limit("max_levels", max_levels, provider),
        reports_confidence=bool(reports_confidence),
        supports_abort=bool(supports_abort),
        needs_backend=needs_backend,
        probability_decimals=_decimals(probability_decimals, provider),
        sent_models=_models(sent_models or getattr(provider, "sent_models", None) or {}),
    )
