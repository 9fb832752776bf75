"""Conformance suites: prove that a decision provider or a runtime follows the specification.

Subclass a suite in your own test suite (no plugin needed) and every standard check runs there:

* :class:`DecisionProviderTests` checks a question-decision provider: identity, construction
  without I/O, every request through the transport override, structure reaching the backend,
  pre-validation, answers of every type, each answer from its own question's prompt,
  distributions as computed, booleans never thresholded, ids kept exactly, the model sent,
  usage never invented, errors, abort, the request and thread left as found, and
  hypothesis-generated requests;
* :class:`RuntimeTests` checks a next-step ``Runtime`` (:class:`OpenAICompatibleRuntimeTests`
  for runtimes speaking OpenAI-compatible chat completions).

:func:`run_checks` (:func:`run_checks_each` for several) runs the provider checks against a
factory outside any test suite, in a fresh interpreter that no provider crash can take down
with its report (the ``opdecide check`` command).
"""

from pytest_opdecide.conformance._capabilities import ProviderCapabilities
from pytest_opdecide.conformance._failures import ConformanceError, ConformanceRule
from pytest_opdecide.conformance._network_watch import NetworkAttempts, watch_network
from pytest_opdecide.conformance._openai_backend import ChatCompletionsScript, OpenAIChatBackend
from pytest_opdecide.conformance._provider_tests import BASE_URL, DecisionProviderTests
from pytest_opdecide.conformance._runner import (
    CAPABILITY_KEYS,
    CheckReport,
    CheckResult,
    run_checks,
    run_checks_each,
)
from pytest_opdecide.conformance._runtime_tests import (
    OpenAICompatibleRuntimeTests,
    RuntimeTests,
    RuntimeUnderTest,
    SentMessage,
    SentRequest,
)
from pytest_opdecide.conformance._transport import RecordedRequest, RecordingTransport

__all__ = [
    "BASE_URL",
    "CAPABILITY_KEYS",
    "ChatCompletionsScript",
    "CheckReport",
    "CheckResult",
    "ConformanceError",
    "ConformanceRule",
    "DecisionProviderTests",
    "NetworkAttempts",
    "OpenAIChatBackend",
    "OpenAICompatibleRuntimeTests",
    "ProviderCapabilities",
    "RecordedRequest",
    "RecordingTransport",
    "RuntimeTests",
    "RuntimeUnderTest",
    "SentMessage",
    "SentRequest",
    "run_checks",
    "run_checks_each",
    "watch_network",
]
