"""The errors of question decisions.

Every failure a decision provider reports is a :class:`ProviderError` carrying one of six codes.
Broken rules of the question-decision contract (see :class:`~pytest_opdecide.questions.Rule`) are
:class:`DecisionValidationError` values that name the question, the rule and the offending value.
A malformed *request* is both: callers that only know providers catch ``ProviderError`` and read
``code == "invalid_request"``; callers that want the details read ``question``, ``rule``, ``value``.

The exception tree::

    Exception
    ├── ProviderError                 .code .status_code .retry_after
    │   ├── InvalidRequestError       code "invalid_request"; also a DecisionValidationError
    │   ├── ProviderConfigError       a config slot that cannot be resolved; .slot .env_var
    │   └── ThreadChangedError        a provider changed the thread it decided on; .provider
    │                                 .changes
    └── ValueError
        └── DecisionValidationError   .question .rule .value
            ├── InvalidRequestError   a request that breaks a rule (see above)
            └── InvalidResultError    a result that breaks a rule
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from pytest_opdecide.questions._rules import Rule

ProviderErrorCode = Literal[
    "rate_limit", "auth_error", "invalid_request", "server_error", "timeout", "unknown"
]
"""The six error codes of the provider specification."""

PROVIDER_ERROR_CODES: Final[tuple[ProviderErrorCode, ...]] = get_args(ProviderErrorCode)
"""Every valid :attr:`ProviderError.code`, in the order of the specification."""

_MAX_VALUE_REPR: Final = 200


class ProviderError(Exception):
    """A failure reported by a decision provider.

    Args:
        message: What went wrong, written for the person reading the test output.
        code: One of :data:`PROVIDER_ERROR_CODES`: ``rate_limit`` (HTTP 429), ``auth_error``
            (401/403, missing credentials), ``invalid_request`` (the request cannot be answered
            as given), ``server_error`` (5xx, unreachable server), ``timeout`` (a timeout or an
            aborted signal) or ``unknown`` (anything else, e.g. a malformed response).
        status_code: The HTTP status that caused the error, when there was one.
        retry_after: Seconds to wait before retrying, when the server said so.

    Raises:
        ValueError: ``code`` is not one of the six codes.
    """

    __module__ = "pytest_opdecide.questions"

    def __init__(
        self,
        message: str,
        code: ProviderErrorCode,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        if code not in PROVIDER_ERROR_CODES:
            raise ValueError(
                f"unknown ProviderError code {code!r}; use one of {PROVIDER_ERROR_CODES}"
            )
        Exception.__init__(self, message)
        self.message = message
        self.code: ProviderErrorCode = code
        self.status_code = status_code
        self.retry_after = retry_after

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        extra = "" if self.status_code is None else f", status_code={self.status_code}"
        if self.retry_after is not None:
            extra += f", retry_after={self.retry_after}"
        return f"{type(self).__name__}({self.message!r}, code={self.code!r}{extra})"


def _describe_value(value: object) -> str:
    text = repr(value)
    if len(text) > _MAX_VALUE_REPR:
        text = text[: _MAX_VALUE_REPR - 3] + "..."
    return text


class DecisionValidationError(ValueError):
    """A request or result that breaks a rule of the question-decision contract.

    The message reads ``question 'q': <rule>: <what is wrong> (got <value>)``, or starts with
    ``request`` / ``result`` when the broken rule is not about one question.

    Args:
        detail: What is wrong, in words.
        rule: The broken rule.
        question: The id of the question concerned, or ``None`` for the request or result as a
            whole.
        value: The offending value.

    Attributes:
        detail: What is wrong, in words.
        rule: The broken :class:`~pytest_opdecide.questions.Rule`.
        question: The id of the question concerned, or ``None``.
        value: The offending value.
    """

    __module__ = "pytest_opdecide.questions"

    subject: str = "decision"

    def __init__(
        self, detail: str, *, rule: Rule, question: str | None = None, value: object = None
    ) -> None:
        where = self.subject if question is None else f"question {question!r}"
        message = f"{where}: {rule.value}: {detail} (got {_describe_value(value)})"
        ValueError.__init__(self, message)
        self.message = message
        self.detail = detail
        self.rule = rule
        self.question = question
        self.value = value

    def __str__(self) -> str:
        return self.message


class InvalidResultError(DecisionValidationError):
    """A decision result that breaks a rule (a wrong key, a probability outside [0, 1]...)."""

    __module__ = "pytest_opdecide.questions"

    subject = "result"


class InvalidRequestError(ProviderError, DecisionValidationError):
    """A decision request that breaks a rule; always ``code == "invalid_request"``.

    Raised by :func:`~pytest_opdecide.questions.validate_request`, and therefore by every
    provider before any network call.

    Args:
        detail: What is wrong, in words.
        rule: The broken rule.
        question: The id of the question concerned, or ``None`` for the request as a whole.
        value: The offending value.
    """

    __module__ = "pytest_opdecide.questions"

    subject = "request"

    def __init__(
        self, detail: str, *, rule: Rule, question: str | None = None, value: object = None
    ) -> None:
        DecisionValidationError.__init__(self, detail, rule=rule, question=question, value=value)
        self.code = "invalid_request"
        self.status_code = None
        self.retry_after = None


class ProviderConfigError(ProviderError):
    """A provider config slot that cannot be resolved.

    Raised for a required slot left empty (the message names the environment variable that
    would fill it) and for a value that does not parse as the slot's type. The code is
    ``auth_error`` for a missing secret and ``invalid_request`` otherwise.

    Args:
        message: What is wrong and how to fix it.
        code: The provider error code.
        slot: The name of the slot.
        env_var: The environment variable the slot reads, if any.
    """

    __module__ = "pytest_opdecide.questions"

    def __init__(
        self, message: str, code: ProviderErrorCode, *, slot: str, env_var: str | None
    ) -> None:
        super().__init__(message, code)
        self.slot = slot
        self.env_var = env_var


class ThreadChangedError(ProviderError):
    """A provider changed the conversation of the thread while ``ThreadState.decide()`` ran.

    The spec's section 6: invoking ``decide()`` never adds, changes or removes messages, runs
    a tool or starts a turn. A provider that tries through the thread's API from within the
    decision is refused at once; one that changed the thread another way (through a reference
    it kept) is caught when it returns. The code is ``unknown``.

    Args:
        provider: The provider's name.
        thread_id: The thread's id.
        changes: What changed, in words (``"added 1 message"``, ``"tried to run tool
            'refund'"``...).
    """

    __module__ = "pytest_opdecide.questions"

    def __init__(self, provider: str, thread_id: str, changes: list[str]) -> None:
        shown = changes[:5] + ([f"and {len(changes) - 5} more"] if len(changes) > 5 else [])
        where = f"thread {thread_id!r}" if thread_id else "the thread"
        super().__init__(
            f"provider {provider!r} changed {where} while deciding: {'; '.join(shown)}. "
            "decide() must not add, change or remove messages, run tools or start a turn "
            "(Decisions, section 6): record an answer with ThreadState.add_message() after "
            "decide() returns",
            "unknown",
        )
        self.provider = provider
        self.thread_id = thread_id
        self.changes = tuple(changes)
