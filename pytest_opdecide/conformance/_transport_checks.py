"""``TransportChecks``: the provider checks of what is sent, and how.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its checks:
every request goes through the transport override
(``test_requests_go_through_the_transport_override``); the request's structure reaches the
backend as JSON, intact (``test_structure_reaches_the_backend_intact``, with
:mod:`._structure`); and a request the provider cannot represent is rejected before anything
is sent (``test_unrepresentable_requests_are_rejected_before_sending``, one case per
:data:`~._requests.PREVALIDATION_CASES`).
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._provider_outcomes import Blocked, TimedOut, note, raised
from pytest_opdecide.conformance._provider_verdicts import ERROR_FIX, ProviderVerdicts
from pytest_opdecide.conformance._requests import (
    PREVALIDATION_CASES,
    PrevalidationCase,
    look_alike_questions,
)
from pytest_opdecide.conformance._structure import check_structure, received
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import DecisionRequest, ProviderError

__all__ = ["TransportChecks"]


class TransportChecks(ProviderVerdicts):
    """The checks of transport and structure."""

    def test_requests_go_through_the_transport_override(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Every request of a decision goes through the transport override of the config; none
        reaches the network another way.

        Applies only to what is sent: a decision that fails, or that sends nothing, is left to
        the checks about answers (a provider that makes no request is skipped here).

        Fix: build your HTTP client from ``ProviderFactoryConfig.transport`` (an httpx transport
        or client), never a client of your own.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        error: BaseException | None = None
        for request in self._requests(caps, self._questions(caps)):
            self._expect(recording_transport, request)
            # A bypass fails here; an error is not this check's business.
            error = self._attempt(provider, request).error or error
        self._uses_backend(caps, recording_transport, "the standard request", error)

    def test_structure_reaches_the_backend_intact(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """The context, instructions, option names and descriptions, levels and criteria reach
        the backend with their JSON structure intact: same types (``"0042"`` stays a string,
        ``1.5`` a float, ``true`` a boolean), same key order, nothing dropped; each question's
        parts in a request that carries its instructions, and the context in every request that
        asks a question.

        Fix: write structured values as JSON (``json.dumps``, any indentation) into the prompt,
        or send them as JSON fields; never ``str(value)`` or a reformatted text. Send the
        context with every request.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        questions = {
            **self._questions(caps),
            **self._questions(caps, source=look_alike_questions()),
        }
        for request in self._requests(caps, questions):
            recording_transport.clear()
            self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)  # what was sent is checked, even so
            self._uses_backend(caps, recording_transport, "the standard request", outcome.error)
            check_structure(request, recording_transport.requests)

    @pytest.mark.parametrize("case", PREVALIDATION_CASES, ids=lambda case: case.id)
    def test_unrepresentable_requests_are_rejected_before_sending(
        self, provider: Any, recording_transport: RecordingTransport, case: PrevalidationCase
    ) -> None:
        """A request the provider cannot represent (no question, one option, duplicate or blank
        option names, one level, beyond ``max_options``/``max_levels``/``max_questions``,
        ``null`` criteria, an unsupported question type) is rejected with
        ``ProviderError(code="invalid_request")`` saying why, before anything is sent.

        A question id and an option name holding a lone surrogate (``"\\ud83d"``) cannot be
        written in UTF-8, but can be in JSON, as the escape ``\\ud83d``: a provider may reject
        the request, or send each of them intact and answer as asked; never send them replaced
        (``?``, U+FFFD) or dropped.

        Fix: call ``validate_request(request, max_questions=..., max_options=...,
        max_levels=...)`` first thing in ``decide`` (``BaseDecisionProvider`` does), and reject
        question types you do not support.
        """
        caps = self.capabilities(provider)
        request = case.build(caps.limits, self.request_model)
        if request is None:
            pytest.skip(f"applies only when {case.applies_when}")
        recording_transport.clear()
        outcome = self._attempt(provider, request)
        if case.texts and (outcome.error is None or recording_transport.requests):
            self._represented(provider, recording_transport, case, request, outcome)
            return
        if recording_transport.requests:
            fail(
                ConformanceRule.PREVALIDATION,
                f"a request the provider cannot represent ({case.why}) was sent to the backend "
                "instead of being rejected first",
                value=[f"{r.method} {r.url}" for r in recording_transport.requests],
                fix="validate the request before any I/O: validate_request(request, "
                "max_options=..., max_levels=..., max_questions=...)",
            )
        error = outcome.error
        if error is None:
            fail(
                ConformanceRule.PREVALIDATION,
                f"the provider answered a request it cannot represent ({case.why}) instead of "
                "rejecting it",
                value=list(request.questions),
                fix="reject it with ProviderError(..., 'invalid_request'), or correct the "
                "declared capabilities",
            )
        if isinstance(error, TimedOut | Blocked):
            self._failed(error, f"a request it cannot represent ({case.why})")
        if not isinstance(error, ProviderError):
            fail(
                ConformanceRule.ERROR_TYPE,
                f"a request the provider cannot represent ({case.why}) raised "
                f"{raised(error)} instead of ProviderError(code='invalid_request')"
                f"{note(error)}",
                value=str(error),
                fix=ERROR_FIX,
            )
        if error.code != "invalid_request":
            fail(
                ConformanceRule.ERROR_CODE,
                f"a request the provider cannot represent ({case.why}) must be rejected with "
                "code 'invalid_request'",
                value=error.code,
                fix="raise ProviderError(..., 'invalid_request') (InvalidRequestError, which "
                "validate_request raises, has that code)",
            )
        if not str(error).strip():
            fail(
                ConformanceRule.PREVALIDATION,
                "the error must say why the request is rejected",
                fix="say in the message which rule the request breaks (validate_request's "
                "errors do)",
            )

    def _represented(
        self,
        provider: Any,
        transport: RecordingTransport,
        case: PrevalidationCase,
        request: DecisionRequest,
        outcome: Any,
    ) -> None:
        """A request that only some providers can represent, handled as one that can: each of
        ``case.texts`` that was sent went out intact (never replaced or dropped), the request's
        parts reached the backend, and the answers are keyed as asked."""
        got = received(transport.requests)
        for text in case.texts:
            if got.has_text(text):
                continue
            altered = next((form for form in _altered(text) if got.has_text(form)), None)
            if altered is not None:
                fail(
                    ConformanceRule.PREVALIDATION,
                    f"{text!r} was sent altered, as {altered!r}: a request the provider could "
                    f"not represent ({case.why}) was reinterpreted, neither sent intact nor "
                    "rejected",
                    value=altered,
                    fix=_INTACT_FIX,
                )
        if transport.requests:
            check_structure(request, transport.requests)
        if outcome.error is not None:
            self._failed(outcome.error, f"a request it sent ({case.why})")
        self._valid(
            request,
            outcome.result,
            f"a request it answered ({case.why})",
            self._decimals(provider),
            as_sent=True,
        )


_INTACT_FIX: Final = (
    "send the text intact: JSON with non-ASCII characters escaped (json.dumps(body), whose "
    "ensure_ascii=True writes a lone surrogate as \\ud83d, sent as content=), never encoded "
    "with errors='replace' or 'ignore'; or reject the request before sending anything, with "
    "ProviderError(..., 'invalid_request') (validate_request does)"
)


def _altered(text: str) -> list[str]:
    """``text`` with its lone surrogates replaced (U+FFFD, ``?``) or dropped."""
    lone = [char for char in text if "\ud800" <= char <= "\udfff"]
    forms = []
    for replacement in ("\ufffd", "?", ""):
        form = text
        for char in lone:
            form = form.replace(char, replacement)
        forms.append(form)
    return forms
