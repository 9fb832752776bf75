"""``FailureChecks``: the provider check of backend failures.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its one
check, ``test_backend_failures_raise_provider_errors``, runs a case per way the backend fails
(:data:`~._backend_failures.BACKEND_FAILURES`) and asks for a ``ProviderError`` with the
matching code, status and ``retry_after``, never a bare exception.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_opdecide.conformance._backend_failures import BACKEND_FAILURES, BackendFailure
from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut, note, raised
from pytest_opdecide.conformance._provider_verdicts import ERROR_FIX, ProviderVerdicts
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import PROVIDER_ERROR_CODES, ProviderError

__all__ = ["FailureChecks"]


class FailureChecks(ProviderVerdicts):
    """The check of the provider's errors when the backend fails."""

    @pytest.mark.parametrize("failure", BACKEND_FAILURES, ids=lambda failure: failure.id)
    def test_backend_failures_raise_provider_errors(
        self, provider: Any, recording_transport: RecordingTransport, failure: BackendFailure
    ) -> None:
        """When the backend fails (HTTP 500, 429, 401, a non-JSON body, a timeout, no
        connection), ``decide`` raises ``ProviderError`` with the matching code
        (``server_error``, ``rate_limit`` with ``retry_after`` in seconds, ``auth_error``,
        any valid code, ``timeout``, ``server_error``), never a bare exception.

        Fix: catch httpx and parsing errors and raise ``ProviderError(message, code,
        status_code=..., retry_after=...)``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        question_id, question = next(
            iter(self._questions(caps, only=["tone", "effort", "repeat"]).items())
        )
        first = self._request({question_id: question})
        with recording_transport.failing(failure.respond):
            outcome = self._attempt(provider, first)
        self._uses_backend(caps, recording_transport, f"the backend {failure.what}")
        error = outcome.error
        if error is None:
            fail(
                ConformanceRule.ERROR_TYPE,
                f"decide() returned a result although the backend {failure.what}",
                value=outcome.result,
                fix=ERROR_FIX,
            )
        if isinstance(error, Blocked):
            self._failed(error, f"a request the backend {failure.what}")
        if isinstance(error, TimedOut):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"decide() did not give up within {self.call_timeout_s:g} s when the backend "
                f"{failure.what}",
                fix="bound retries; then raise ProviderError",
            )
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"when the backend {failure.what}, decide() raised {raised(error)} "
                f"instead of ProviderError{note(error)}",
                value=str(error),
                fix=ERROR_FIX,
            )
        if error.code not in PROVIDER_ERROR_CODES:
            fail(
                ConformanceRule.ERROR_CODE,
                "the code is not a valid one",
                value=error.code,
                fix=f"use one of {list(PROVIDER_ERROR_CODES)}",
            )
        if failure.code is not None and error.code != failure.code:
            fail(
                ConformanceRule.ERROR_CODE,
                f"when the backend {failure.what}, the code must be {failure.code!r}",
                value=error.code,
                fix="map HTTP 429 to rate_limit, 401/403 to auth_error, 5xx and unreachable "
                "servers to server_error, timeouts to timeout",
            )
        if failure.status and error.status_code is not None and error.status_code != failure.status:
            fail(
                ConformanceRule.ERROR_CODE,
                f"when the backend {failure.what}, status_code must be {failure.status}",
                value=error.status_code,
                fix="set ProviderError.status_code to the HTTP status of the response",
            )
        retry_after = error.retry_after
        if failure.id == "rate_limit" and retry_after is not None and retry_after != 7.0:
            fail(
                ConformanceRule.ERROR_CODE,
                "retry_after must be the Retry-After header in seconds (7)",
                value=retry_after,
                fix="read Retry-After (seconds, or an HTTP date) into ProviderError.retry_after",
            )
