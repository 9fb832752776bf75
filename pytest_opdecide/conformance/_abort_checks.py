"""``AbortChecks``: the provider checks of the abort signal.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its checks,
skipped when ``supports_abort = False``: a signal aborted before the call rejects the request
without sending anything (``test_pre_aborted_signal_rejects_without_a_call``), and one aborted
while the backend holds the request stops the decision promptly
(``test_abort_during_the_call_is_honoured``); both with ``ProviderError(code="timeout")``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

import pytest

from pytest_opdecide.conformance._capabilities import ProviderCapabilities
from pytest_opdecide.conformance._failures import ConformanceError, ConformanceRule, fail
from pytest_opdecide.conformance._network_watch import watch_network
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut, is_ours, note, raised
from pytest_opdecide.conformance._provider_verdicts import ProviderVerdicts
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import AbortController, DecisionRequest, ProviderError

__all__ = ["AbortChecks"]


_ABORT_FIX: Final = (
    "check request.signal before any I/O (signal.throw_if_aborted()) and race the work against "
    "it (await signal.wait()); raise ProviderError(..., 'timeout'). BaseDecisionProvider does both"
)


def _signal_request(request: DecisionRequest, controller: AbortController) -> DecisionRequest:
    return DecisionRequest(
        model=request.model,
        context=request.context,
        questions=request.questions,
        signal=controller.signal,
    )


class AbortChecks(ProviderVerdicts):
    """The checks of the abort signal, before and during the call."""

    def _abort_request(
        self, caps: ProviderCapabilities, controller: AbortController
    ) -> DecisionRequest:
        request = self._requests(caps, self._questions(caps))[0]
        return _signal_request(request, controller)

    def test_pre_aborted_signal_rejects_without_a_call(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A request whose signal is already aborted is rejected with ``ProviderError(code=
        "timeout")`` and nothing is sent.

        Fix: call ``request.signal.throw_if_aborted()`` before any work.
        """
        caps = self.capabilities(provider)
        if not caps.supports_abort:
            pytest.skip("supports_abort = False")
        controller = AbortController()
        controller.abort("conformance check: aborted before the call")
        recording_transport.clear()
        request = self._abort_request(caps, controller)
        self._expect(recording_transport, request)
        outcome = self._attempt(provider, request)
        if recording_transport.requests:
            fail(
                ConformanceRule.ABORT_BEFORE,
                "the signal was already aborted, but requests were sent",
                value=[f"{r.method} {r.url}" for r in recording_transport.requests],
                fix=_ABORT_FIX,
            )
        self._aborted(
            outcome.error, outcome.result, ConformanceRule.ABORT_BEFORE, "before the call"
        )

    def _aborted(
        self, error: BaseException | None, result: Any, rule: ConformanceRule, when: str
    ) -> None:
        if error is None:
            fail(
                rule,
                f"decide() returned a result although its signal was aborted {when}",
                value=type(result).__name__,
                fix=_ABORT_FIX,
            )
        if isinstance(error, Blocked | TimedOut):
            self._failed(error, f"a decision whose signal was aborted {when}")
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a signal aborted {when} raised {raised(error)} instead of "
                f"ProviderError(code='timeout'){note(error)}",
                value=str(error),
                fix=_ABORT_FIX,
            )
        if error.code != "timeout":
            fail(
                ConformanceRule.ERROR_CODE,
                f"a signal aborted {when} must surface as code 'timeout'",
                value=error.code,
                fix=_ABORT_FIX,
            )

    def test_abort_during_the_call_is_honoured(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A signal aborted while the backend is still answering stops the decision promptly
        with ``ProviderError(code="timeout")``, and no result is returned.

        The backend holds the request; the check aborts, then lets the backend answer half a
        second later: a provider that ignores the abort returns that answer and fails.

        Fix: race the work against ``signal.wait()`` and cancel it on abort
        (``BaseDecisionProvider.decide`` does).
        """
        caps = self.capabilities(provider)
        if not caps.supports_abort:
            pytest.skip("supports_abort = False")
        self._skip_without_backend(caps)
        controller = AbortController()
        request = self._abort_request(caps, controller)
        grace = self.abort_grace_s

        async def scenario() -> tuple[str, Any, BaseException | None]:
            task = asyncio.ensure_future(self._decide(provider, request))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.call_timeout_s
            while not recording_transport.arrived.is_set() and not task.done():
                if loop.time() > deadline:
                    break
                await asyncio.sleep(0.005)
            if not recording_transport.arrived.is_set():
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                    return "stuck", None, None
                return "no call", None, None if task.cancelled() else task.exception()
            controller.abort("conformance check: aborted while the backend was answering")
            loop.call_later(0.5, recording_transport.release)
            try:
                async with asyncio.timeout(grace):
                    return "result", await asyncio.shield(task), None
            except ConformanceError:
                raise
            except TimeoutError:
                if task.done() and task.exception() is not None:
                    return "error", None, task.exception()
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                return "late", None, None
            except BaseException as error:
                return "error", None, error

        self._expect(recording_transport, request)
        with watch_network() as attempts, recording_transport.hold():
            finished = self._in_loop(
                scenario,
                timeout=self.call_timeout_s + grace + 5,
                what="decide() with a signal aborted during the call",
            )
        self._no_bypass(attempts)
        self._hygiene(finished, "decide()")
        if finished.error is not None:
            if is_ours(finished.error):
                raise finished.error
            self._failed(finished.error, "a decision with an abort signal")
        if finished.blocked or finished.timed_out:
            self._failed(Blocked(), "a decision with an abort signal")
        kind, result, error = finished.value
        if error is not None:
            self._loop().note_raised()
        if kind == "no call":
            self._uses_backend(caps, recording_transport, "a decision with an abort signal", error)
        if kind == "stuck":
            fail(
                ConformanceRule.ANSWERED,
                f"the provider neither called the backend nor finished within "
                f"{self.call_timeout_s:g} s",
                fix="make sure every await finishes (the backend answers at once here)",
            )
        if kind == "late":
            fail(
                ConformanceRule.ABORT_DURING,
                f"decide() did not stop within {grace:g} s of its signal being aborted",
                fix=_ABORT_FIX,
            )
        self._aborted(error, result, ConformanceRule.ABORT_DURING, "during the call")
