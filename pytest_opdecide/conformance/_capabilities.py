"""What a provider under test declares it can do, resolved against the provider itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
    """

    question_types: tuple[str, ...] = QUESTION_TYPES
    max_questions: int | None = None
    max_options: int | None = None
    max_levels: int | None = None
    reports_confidence: bool = False
    supports_abort: bool = True
    needs_backend: bool | None = None

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
        )
    return ProviderCapabilities(
        question_types=tuple(kind for kind in QUESTION_TYPES if kind in types),
        max_questions=_limit("max_questions", max_questions, provider),
        max_options=_limit("max_options", max_options, provider),
        max_levels=_limit("max_levels", max_levels, provider),
        reports_confidence=bool(reports_confidence),
        supports_abort=bool(supports_abort),
        needs_backend=needs_backend,
    )
