"""``ProviderVerdicts``: what the provider checks conclude from a call of ``decide()``.

Built on :class:`~._provider_harness.ProviderHarness` (which builds the provider and calls it),
and the base of every check mixin (``_*_checks.py``). Here live:

* how a valid request that failed is reported (``_failed()``: which rule, what to fix), and the
  fix text for errors of the wrong type (:data:`ERROR_FIX`);
* checking a result by every rule (``_valid()``, ``_answered()``) or by the rules about the
  result as a whole only (``_result_level()``);
* comparing each answer with what the backend answered to its own question (``_compared()``,
  ``_as_the_backend_answered()``, with :mod:`._compare`);
* skipping (or failing) a check that needs the backend when nothing reached it
  (``_uses_backend()``, ``_skip_without_backend()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NoReturn

import pytest

from pytest_opdecide.conformance._capabilities import ProviderCapabilities
from pytest_opdecide.conformance._compare import find_mismatch, reported_values
from pytest_opdecide.conformance._failures import ConformanceRule, fail, fail_validation
from pytest_opdecide.conformance._provider_harness import ProviderHarness
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut, note
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import (
    PROVIDER_ERROR_CODES,
    BooleanAnswer,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    InvalidRequestError,
    InvalidResultError,
    ProviderError,
    Rule,
    validate_result,
)
from pytest_opdecide.questions._validate import stated_decimals, validate_answers

__all__ = ["ERROR_FIX", "ProviderVerdicts"]


_RESULT_FIX: Final = (
    "build the result so that it follows the rule named above (section 3 of the question-decision "
    "reference); pytest_opdecide.questions.validate_result(request, result) reproduces the check"
)
_AS_SENT_FIX: Final = (
    "build the result so that it follows the rule named above, keyed by the question ids and "
    "option names exactly as the request gives them (a lone surrogate included)"
)
ERROR_FIX: Final = (
    "catch transport, HTTP and protocol failures and raise "
    "pytest_opdecide.questions.ProviderError(message, code, status_code=..., retry_after=...) "
    f"with code one of {list(PROVIDER_ERROR_CODES)}"
)
_PER_QUESTION_FIX: Final = (
    "send each question in a prompt of its own with the request's context, its own instructions, "
    "and each option (level, criterion) next to the label that stands for it, in the order "
    "given; read each label back as the outcome it stood next to, and key each answer by its "
    "own question's id"
)
_AS_COMPUTED_FIX: Final = (
    "report the distribution over the labels as computed; if you round, report the rounded "
    "values as they are (never divide them by their sum again) and say so in metadata "
    "(metadata['rounding'] = {'decimals': 3})"
)

_RESULT_LEVEL_RULES: Final = frozenset({Rule.RESULT_SHAPE, Rule.RESULT_MODEL, Rule.RESULT_USAGE})


class ProviderVerdicts(ProviderHarness):
    """Reads what the provider did against the rules, for the checks built on it."""

    def _failed(self, error: BaseException, what: str) -> NoReturn:
        """Report a valid request that failed."""
        if isinstance(error, Blocked):
            fail(
                ConformanceRule.ASYNC_BLOCKING,
                f"decide() did not stop on {what} when it was cancelled at its time limit "
                f"({self.call_timeout_s:g} s): it blocks its event loop or ignores cancellation",
                fix="never block inside async code (no time.sleep, no synchronous HTTP client, "
                "no waiting on a lock or a thread without await: asyncio.to_thread for "
                "blocking work), and let asyncio.CancelledError through",
            )
        if isinstance(error, TimedOut):
            fail(
                ConformanceRule.ANSWERED,
                f"decide() did not answer {what} within {self.call_timeout_s:g} s",
                fix="make sure every await finishes (the backend answers at once here)",
            )
        cause = error.__cause__
        if isinstance(error, ProviderError) and isinstance(cause, InvalidResultError):
            fail_validation(cause, f"the result for {what} breaks a rule", _RESULT_FIX)
        if isinstance(error, InvalidRequestError):
            fail(
                ConformanceRule.ANSWERED,
                f"the provider rejected {what} as invalid: {error}",
                question=error.question,
                fix="if the request is beyond what your provider can represent, declare the "
                "limit as a capability (max_options, max_levels, max_questions, "
                "supported_question_types)",
            )
        if isinstance(error, ProviderError):
            refused = self._backend_refusal()
            fail(
                ConformanceRule.ANSWERED,
                f"decide() failed on {what}: ProviderError(code={error.code!r}): {error}"
                + (f"; the backend had refused a request: {refused}" if refused else ""),
                fix="the backend could not read the requests: send what it expects (the "
                "reference design's prompts, see OpenAIChatBackend), or override "
                "backend_transport() with a backend for your protocol"
                if refused
                else "the backend answered every request correctly; find why the provider failed",
            )
        fail(
            ConformanceRule.ERROR_TYPE,
            f"decide() raised {type(error).__name__} on {what}"
            + (f": {error}" if str(error) else "")
            + note(error),
            fix=ERROR_FIX,
        )

    def _decimals(self, provider: Any) -> int | None:
        return self.capabilities(provider).probability_decimals

    def _backend_refusal(self) -> str:
        """The first error the backend itself answered (not one a check made it answer)."""
        recording = getattr(self, "_recording", None)
        if not isinstance(recording, RecordingTransport) or recording.is_failing:
            return ""
        for sent in recording.requests:
            if sent.status is not None and sent.status >= 400:
                body = sent.response_json
                error = body.get("error") if isinstance(body, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                return f"HTTP {sent.status} to {sent.method} {sent.url}" + (
                    f": {message}" if message else ""
                )
        return ""

    def _valid(
        self,
        request: DecisionRequest,
        result: Any,
        what: str,
        decimals: int | None = None,
        *,
        as_sent: bool = False,
    ) -> DecisionResult:
        """``result`` checked by every result rule (``as_sent``: for ``request`` taken as it
        is, past a request rule that only some providers need)."""
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                f"decide() must return a DecisionResult for {what}",
                value=result,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        check = validate_answers if as_sent else validate_result
        try:
            return check(request, result, tolerance=self.probability_tolerance, decimals=decimals)
        except InvalidResultError as error:
            fix = _AS_SENT_FIX if as_sent else _RESULT_FIX
            fail_validation(error, f"the result for {what} breaks a rule", fix)
        except Exception as error:  # a result built so oddly that the rules cannot be read
            fail(
                ConformanceRule.ANSWERED,
                f"the result for {what} cannot be checked: {type(error).__name__}: {error}",
                value=result,
                fix="return a DecisionResult built from valid answers (model_construct skips "
                "the checks that would have told you)",
            )

    def _decided(self, provider: Any, request: DecisionRequest, what: str) -> Any:
        """Call ``decide`` on a valid request; what it returned (not checked: a check about
        something else must not fail on the answers, which their own checks report)."""
        outcome = self._attempt(provider, request)
        if outcome.error is not None:
            self._failed(outcome.error, what)
        return outcome.result

    def _decided_if_sent(
        self,
        provider: Any,
        transport: RecordingTransport,
        caps: ProviderCapabilities,
        request: DecisionRequest,
        what: str,
    ) -> Any:
        """:meth:`_decided`, for a check about what was sent: a decision that failed before
        sending anything skips the check (the checks of the answers report the failure)."""
        self._expect(transport, request)
        outcome = self._attempt(provider, request)
        if outcome.error is not None:
            self._uses_backend(caps, transport, what, outcome.error)
            self._failed(outcome.error, what)
        return outcome.result

    def _result_level(self, request: DecisionRequest, result: Any) -> DecisionResult:
        """``result`` checked by the rules about the result as a whole (shape, model, usage);
        the answers' rules are left to the answer checks."""
        if not isinstance(result, DecisionResult):
            fail(
                ConformanceRule.ANSWERED,
                "decide() must return a DecisionResult",
                value=result,
                fix="return pytest_opdecide.questions.DecisionResult(...)",
            )
        try:
            validate_result(request, result, tolerance=self.probability_tolerance)
        except InvalidResultError as error:
            if error.question is None and error.rule in _RESULT_LEVEL_RULES:
                fail_validation(
                    error, "the result for the standard request breaks a rule", _RESULT_FIX
                )
        except Exception:  # left to the answer checks, which report it
            pass
        return result

    def _answered(
        self, provider: Any, transport: RecordingTransport, request: DecisionRequest, what: str
    ) -> DecisionResult:
        """Answer ``request``, checked against every result rule."""
        decimals = self._decimals(provider)
        self._expect(transport, request)
        return self._valid(request, self._decided(provider, request, what), what, decimals)

    def _compared(
        self, provider: Any, transport: RecordingTransport, request: DecisionRequest, what: str
    ) -> tuple[DecisionResult, bool]:
        """Answer ``request``, checked by every rule and question by question against the
        backend; whether the backend gave answers to compare with."""
        decimals = self._decimals(provider)
        served_from = self._expect(transport, request)
        result = self._valid(request, self._decided(provider, request, what), what, decimals)
        compared = self._as_the_backend_answered(request, result, transport, served_from, decimals)
        return result, compared

    def _compared_question_by_question(
        self,
        provider: Any,
        transport: RecordingTransport,
        caps: ProviderCapabilities,
        questions: Mapping[str, DecisionQuestion],
        what: str,
    ) -> None:
        """Answer ``questions`` (in requests of the allowed size), each answer compared with
        the backend's; skip when the backend gave none to compare with."""
        compared = False
        for request in self._requests(caps, questions):
            transport.clear()
            _, was_compared = self._compared(provider, transport, request, what)
            compared = compared or was_compared
            self._uses_backend(caps, transport, what)
        if not compared:
            pytest.skip(
                "the backend states no expected distribution (it has no expected_answer(), or "
                "could not read which label stands for which outcome in the prompts): only the "
                "rules of the answers were checked"
            )

    def _as_the_backend_answered(
        self,
        request: DecisionRequest,
        result: DecisionResult,
        transport: RecordingTransport,
        served_from: int = 0,
        decimals: int | None = None,
    ) -> bool:
        """Fail unless each answer is the backend's answer to its own question; whether the
        backend gave an expected answer to compare with."""
        expected_answer = getattr(transport.backend, "expected_answer", None)
        if expected_answer is None or not transport.requests:
            return False
        compared = False
        for question_id, question in request.questions.items():
            expected = expected_answer(question)
            if expected is None:
                continue
            compared = True
            answer = result.answers[question_id]
            reported = reported_values(answer)
            if reported is None:
                continue
            places = decimals if decimals is not None else stated_decimals(result, question_id)
            mismatch = find_mismatch(
                question_id=question_id,
                question=question,
                reported=reported,
                expected=expected,
                request=request,
                backend=transport.backend,
                served_from=served_from,
                decimals=places,
            )
            if mismatch is None:
                continue
            if (
                isinstance(answer, BooleanAnswer)
                and answer.probability in (0.0, 1.0)
                and mismatch.rule is ConformanceRule.AS_COMPUTED
            ):
                fail(
                    ConformanceRule.BOOLEAN_THRESHOLD,
                    f"the probability is {answer.probability!r} but the backend's answer gives "
                    f"P(true) = {expected['true']!r}: a threshold was applied",
                    question=question_id,
                    value=answer.probability,
                    fix="report P(true) itself; thresholds are the caller's decision",
                )
            shown = {key: round(expected[key], 6) for key in reported}
            fail(
                mismatch.rule,
                f"the reported probabilities are not the backend's answer to this question "
                f"({shown}): {mismatch.detail}",
                question=question_id,
                value=reported,
                fix=_PER_QUESTION_FIX
                if mismatch.rule is ConformanceRule.PER_QUESTION
                else _AS_COMPUTED_FIX,
            )
        return compared

    def _uses_backend(
        self,
        caps: ProviderCapabilities,
        transport: RecordingTransport,
        what: str,
        error: BaseException | None = None,
    ) -> None:
        """Skip (or fail, when declared) a check that needs the backend if none was used."""
        if transport.requests:
            return
        if error is not None:
            reason = (
                "did not finish"
                if isinstance(error, TimedOut | Blocked)
                else (f"raised {type(error).__name__}")
            )
            pytest.skip(
                f"decide() {reason} before sending anything, so there is nothing to check "
                "here (the checks of the answers report it)"
            )
        if caps.needs_backend:
            fail(
                ConformanceRule.TRANSPORT_UNUSED,
                f"{what}: the provider sent nothing through the transport override although "
                "needs_backend = True",
                fix="send every request through ProviderFactoryConfig.transport, or declare "
                "needs_backend = False",
            )
        pytest.skip(
            "no request reached the backend, so there is nothing to check (declare "
            "needs_backend = True to require one)"
        )

    def _skip_without_backend(self, caps: ProviderCapabilities) -> None:
        if caps.needs_backend is False:
            pytest.skip("needs_backend = False: the provider makes no backend call to check")
