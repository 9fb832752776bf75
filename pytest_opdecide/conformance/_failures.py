"""How a conformance check fails: one error type whose message names the question, the rule and
the offending value, in the form of ``DecisionValidationError`` messages.

Rules of the decision contract itself (``probability.sum``, ``score.range``...) are the
:class:`~pytest_opdecide.questions.Rule` values that ``validate_result`` reports; the
conformance suite adds the rules below, about how a provider behaves rather than what its result
holds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NoReturn

from pytest_opdecide.questions import DecisionValidationError, Rule

__all__ = ["ConformanceError", "ConformanceRule", "fail", "fail_validation"]

_MAX_VALUE_REPR: Final = 300
_UNSET: Final = object()


class ConformanceRule(StrEnum):
    """A rule a conformance check enforces beyond the result rules of ``validate_result``.

    Attributes:
        IDENTITY: ``kind == "decision"``, ``specification_version == "1"``, a non-empty ``name``.
        DECIDE_ASYNC: ``decide(request)`` returns an awaitable.
        OPTIONAL_METHODS: ``get_models`` returns a list and never raises; ``get_icon`` returns a
            ``data:`` URI or ``None``.
        CONSTRUCTION_IO: Building a provider sends nothing, anywhere.
        CONSTRUCTION_EMPTY_KEY: Building a provider with an empty API key does not fail.
        CONSTRUCTION_FAILED: Building a provider from a valid config does not fail.
        CREDENTIALS: A provider sends no credential its config does not hold (none read from
            the environment on its own).
        TRANSPORT_BYPASS: Every request goes through the transport override.
        TRANSPORT_UNUSED: A provider declared ``needs_backend`` sent its backend nothing.
        ANSWERED: A valid request within the declared capabilities is answered, in time.
        STRUCTURE: Context, instructions, option descriptions, levels and criteria reach the
            backend with their JSON structure (and option names and text unchanged): each
            question's parts in a request that asks it, the context in every request.
        PREVALIDATION: A request the provider cannot represent is rejected with
            ``ProviderError(code="invalid_request")`` before anything is sent.
        AS_COMPUTED: Probabilities are reported as the backend's answer gives them (or rounded),
            never renormalised after rounding.
        PER_QUESTION: Each answer is the backend's answer to that question's own prompt, which
            shows the context, the question's instructions, and each outcome next to its own
            label: no answers swapped, no parts given to another question or another label.
        BOOLEAN_THRESHOLD: A boolean probability is never turned into 0 or 1 by a threshold.
        CONFIDENCE: A provider declared ``reports_confidence`` reports one for choice and score.
        USAGE: ``usage`` adds up the token counts the backend reported.
        USAGE_INVENTED: Usage the backend did not report is not made up: no estimated counts,
            no cost for usage that is unknown.
        MODEL: ``model`` names the model the backend said answered (the resolved version).
        MODEL_REQUESTED: The model sent to the backend is the request's (or the one the
            provider's declared mapping gives for it).
        ERROR_TYPE: A failure surfaces as ``ProviderError``, never as a bare exception.
        ERROR_CODE: ``ProviderError.code`` matches the failure (``rate_limit`` for HTTP 429...).
        ABORT_BEFORE: An already aborted signal rejects with code ``timeout`` and sends nothing.
        ABORT_DURING: A signal aborted while the backend answers stops the call with ``timeout``.
        ASYNC_LEFTOVERS: ``decide()`` leaves no task running and no task exception unretrieved.
        ASYNC_BLOCKING: ``decide()`` never blocks its event loop beyond the call timeout.
        CONVERSATION: ``decide()`` leaves the request it is given, and a thread's messages,
            tools and turns, as it found them.
        LIMITS: A request exactly at the declared limits is answered (it is not rejected and
            the provider does not fail on it).
        CAPABILITY: A declared capability does not match the provider.
        STANDARD_CHECK: A standard check was deleted or overridden without an xfail reason.
        RUNTIME_EXEC: ``exec`` returns the reply text of a plain turn.
        RUNTIME_CHOICES: ``exec(choices=...)`` appends the finish instruction and the menu, and
            resolves the pick.
        RUNTIME_REPICK: A bad reply gets exactly one re-pick.
        RUNTIME_TOOL_LOOP: Native tool calls run and their results go back to the model.
        RUNTIME_TRACE: Every call is in the trace with its kind, parent and usage.
        RUNTIME_DECISION_TOOLS: ``decision.make`` offers the model no tools.
        RUNTIME_ASYNC: The async twins behave as the sync calls.
    """

    IDENTITY = "identity"
    DECIDE_ASYNC = "identity.decide"
    OPTIONAL_METHODS = "identity.optional_methods"
    CONSTRUCTION_IO = "construction.io"
    CONSTRUCTION_EMPTY_KEY = "construction.empty_key"
    CONSTRUCTION_FAILED = "construction.failed"
    CREDENTIALS = "credentials.inherited"
    TRANSPORT_BYPASS = "transport.bypass"
    TRANSPORT_UNUSED = "transport.unused"
    ANSWERED = "answer.failed"
    STRUCTURE = "structure"
    PREVALIDATION = "prevalidation"
    AS_COMPUTED = "probability.as_computed"
    PER_QUESTION = "answer.per_question"
    BOOLEAN_THRESHOLD = "boolean.threshold"
    CONFIDENCE = "confidence.reported"
    USAGE = "usage.reported"
    USAGE_INVENTED = "usage.invented"
    MODEL = "model.resolved"
    MODEL_REQUESTED = "model.requested"
    ERROR_TYPE = "error.type"
    ERROR_CODE = "error.code"
    ABORT_BEFORE = "abort.before"
    ABORT_DURING = "abort.during"
    ASYNC_LEFTOVERS = "async.leftovers"
    ASYNC_BLOCKING = "async.blocking"
    CONVERSATION = "conversation.untouched"
    LIMITS = "limits"
    CAPABILITY = "capability"
    STANDARD_CHECK = "standard_check"
    RUNTIME_EXEC = "runtime.exec"
    RUNTIME_CHOICES = "runtime.choices"
    RUNTIME_REPICK = "runtime.repick"
    RUNTIME_TOOL_LOOP = "runtime.tool_loop"
    RUNTIME_TRACE = "runtime.trace"
    RUNTIME_DECISION_TOOLS = "runtime.decision_tools"
    RUNTIME_ASYNC = "runtime.async"


def _describe(value: object) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= _MAX_VALUE_REPR else text[: _MAX_VALUE_REPR - 3] + "..."


class ConformanceError(AssertionError):
    """A conformance check failed.

    The message reads ``question 'q': <rule>: <what is wrong> (got <value>)`` (the subject,
    ``provider`` or ``runtime``, instead of ``question 'q'`` when the rule is not about one
    question), then how to fix it.

    Attributes:
        rule: The broken rule: a :class:`ConformanceRule` or a
            :class:`~pytest_opdecide.questions.Rule`.
        question: The question concerned, or ``None``.
        value: The offending value.
        detail: What is wrong, in words.
        fix: How to fix it.
    """

    __module__ = "pytest_opdecide.conformance"

    def __init__(
        self,
        rule: ConformanceRule | Rule,
        detail: str,
        *,
        question: str | None = None,
        value: object = _UNSET,
        fix: str = "",
        subject: str = "provider",
    ) -> None:
        where = subject if question is None else f"question {question!r}"
        message = f"{where}: {rule.value}: {detail}"
        if value is not _UNSET:
            message += f" (got {_describe(value)})"
        if fix:
            message += f"\nHow to fix: {fix}"
        super().__init__(message)
        self.rule = rule
        self.question = question
        self.value = None if value is _UNSET else value
        self.detail = detail
        self.fix = fix


def fail(
    rule: ConformanceRule | Rule,
    detail: str,
    *,
    question: str | None = None,
    value: object = _UNSET,
    fix: str = "",
    subject: str = "provider",
) -> NoReturn:
    """Raise a :class:`ConformanceError`."""
    raise ConformanceError(rule, detail, question=question, value=value, fix=fix, subject=subject)


def fail_validation(error: DecisionValidationError, what: str, fix: str) -> NoReturn:
    """Re-raise a broken result rule as a conformance failure naming the same rule."""
    raise ConformanceError(
        error.rule,
        f"{what}: {error.detail}",
        question=error.question,
        value=error.value,
        fix=fix,
    ) from error
