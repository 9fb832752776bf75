"""The public surface of the conformance package and the strategies module, pinned."""

from __future__ import annotations

from pytest_opdecide import conformance, strategies

CONFORMANCE = [
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

STRATEGIES = [
    "QUESTION_TYPES",
    "TEXT_KINDS",
    "ValidReply",
    "boolean_questions",
    "choice_questions",
    "contexts",
    "decision_requests",
    "decision_results",
    "invalid_replies",
    "json_values",
    "option_sets",
    "questions",
    "realistic_text",
    "score_questions",
    "valid_replies",
]


def test_conformance_exports() -> None:
    assert conformance.__all__ == CONFORMANCE
    assert sorted(conformance.__all__) == conformance.__all__
    for name in CONFORMANCE:
        assert getattr(conformance, name) is not None


def test_strategies_exports() -> None:
    assert strategies.__all__ == STRATEGIES
    assert sorted(strategies.__all__) == strategies.__all__
    for name in STRATEGIES:
        assert getattr(strategies, name) is not None


def test_the_suites_are_not_collected_from_the_package() -> None:
    # Plain classes named ...Tests: pytest collects only the user's Test... subclasses.
    for suite in (conformance.DecisionProviderTests, conformance.RuntimeTests):
        assert not suite.__name__.startswith("Test")
        assert "__init__" not in vars(suite)


def test_the_command_line_can_set_every_capability_the_class_has() -> None:
    declared = {
        name
        for name in vars(conformance.DecisionProviderTests)
        if not name.startswith("_")
        and not callable(getattr(conformance.DecisionProviderTests, name))
        and name not in {"provider_factory", "provider_config", "api_key", "base_url"}
    }
    assert set(conformance.CAPABILITY_KEYS) == declared
    assert sorted(conformance.CAPABILITY_KEYS) == list(conformance.CAPABILITY_KEYS)
