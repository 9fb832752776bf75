"""``LimitChecks``: the provider checks of the declared limits and of generated requests.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`. Its checks:
requests exactly at the declared limits are answered (``test_requests_at_the_declared_limits``,
with :func:`~._requests.at_limits`), and so are hypothesis-generated requests of every shape
within them (``test_property_based_requests``, with :mod:`pytest_opdecide.strategies`), by
every rule, as the backend answered, their structure reaching the backend.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

# `import a.b as c` (not `from a import b`): a fresh import when sys.modules lost it (pytester).
import pytest_opdecide.strategies as strategies
from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._provider_verdicts import ProviderVerdicts
from pytest_opdecide.conformance._requests import at_limits
from pytest_opdecide.conformance._structure import check_structure
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import DecisionRequest, ProviderError

__all__ = ["LimitChecks"]


class LimitChecks(ProviderVerdicts):
    """The checks of requests at the declared limits, and of generated requests."""

    def test_requests_at_the_declared_limits(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Requests exactly at the declared (or attribute) limits, ``max_options`` options,
        ``max_levels`` levels, ``max_questions`` questions, are answered correctly.

        Fix: make the limits what the provider really handles (e.g. 26 options for labels
        A-Z), or declare smaller ones.
        """
        caps = self.capabilities(provider)
        cases = at_limits(caps.limits, self.request_model)
        if not cases:
            pytest.skip("the provider declares no limit")
        for what, request in cases:
            recording_transport.clear()
            served_from = self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            error = outcome.error
            if isinstance(error, ProviderError) and error.code == "invalid_request":
                fail(
                    ConformanceRule.LIMITS,
                    f"a request exactly at the declared limits ({what}) was rejected: {error}",
                    fix="make the limits what the provider really handles (e.g. 26 options for "
                    "labels A-Z), or declare smaller ones",
                )
            if error is not None:
                self._failed(error, f"a request with {what}")
            if recording_transport.requests:
                check_structure(request, recording_transport.requests)
            decimals = self._decimals(provider)
            result = self._valid(request, outcome.result, f"a request with {what}", decimals)
            self._as_the_backend_answered(
                request, result, recording_transport, served_from, decimals
            )

    def test_property_based_requests(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Generated requests of every shape the provider declares (question types, up to its
        limits; text and JSON contexts, instructions, descriptions, levels and criteria; odd
        option names) are answered by every rule, as the backend answered, with their structure
        reaching the backend.

        Fix: the failure shows the smallest request that breaks; the message names the rule.
        """
        caps = self.capabilities(provider)
        requests = strategies.decision_requests(
            caps.question_types,
            max_questions=min(caps.max_questions or 3, 3),
            max_options=min(caps.max_options or 8, 8),
            max_levels=min(caps.max_levels or 6, 6),
            model=self.request_model,
        )

        @settings(
            max_examples=self.property_examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            # Shrinking finds the smallest failing request; explaining it would rerun the
            # provider hundreds of times more for little gain.
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        )
        @given(requests)
        def check(request: DecisionRequest) -> None:
            recording_transport.clear()
            decimals = self._decimals(provider)
            served_from = self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            if outcome.error is not None:
                self._failed(outcome.error, "a generated request")
            if recording_transport.requests:
                check_structure(request, recording_transport.requests)
            result = self._valid(request, outcome.result, "a generated request", decimals)
            self._as_the_backend_answered(
                request, result, recording_transport, served_from, decimals
            )

        check()
