"""Every fake and real provider and runtime of the project passes the conformance suites."""

from __future__ import annotations

from collections.abc import Sequence

from fake_runtimes import ScriptedRuntime
from pytest_opdecide import ModelReply
from pytest_opdecide.conformance import (
    BASE_URL,
    DecisionProviderTests,
    OpenAIChatBackend,
    OpenAICompatibleRuntimeTests,
    RecordingTransport,
    RuntimeTests,
    RuntimeUnderTest,
    builtin,
)
from pytest_opdecide.conformance._structure import check_structure
from pytest_opdecide.questions import (
    DecisionRequest,
    ProviderFactoryConfig,
    RuntimeDecisionProvider,
    ScoreQuestion,
    openai_compatible,
)


def scripted_runtime_provider(config: ProviderFactoryConfig) -> RuntimeDecisionProvider:
    """A RuntimeDecisionProvider over a ScriptedRuntime whose steps state distributions."""
    steps = [builtin.stated_distribution] * 400
    return RuntimeDecisionProvider(ScriptedRuntime(*steps, model="scripted-model"))


class TestFakeDecisionProvider(DecisionProviderTests):
    provider_factory = builtin.fake_provider
    needs_backend = False


class TestOpenAICompatibleDecisionProvider(DecisionProviderTests):
    provider_factory = openai_compatible
    needs_backend = True


class TestRuntimeDecisionProvider(DecisionProviderTests):
    provider_factory = builtin.runtime_provider
    needs_backend = False


class TestRuntimeDecisionProviderOverAScriptedRuntime(DecisionProviderTests):
    """Over a ScriptedRuntime: one scripted step per model call the checks make."""

    provider_factory = scripted_runtime_provider
    request_model = "scripted-model"
    needs_backend = False
    property_examples = 10


class TestScriptedRuntime(RuntimeTests):
    def scripted_runtime(self, replies: Sequence[ModelReply]) -> RuntimeUnderTest:
        return RuntimeUnderTest.from_trace(ScriptedRuntime(*replies))


class TestOpenAICompatibleRuntime(OpenAICompatibleRuntimeTests):
    pass


def test_the_openai_provider_keeps_json_strings_with_unicode_line_separators() -> None:
    # Found by the property-based check: rendering with textwrap.indent broke lines inside JSON
    # strings at U+2028, U+2029 and U+0085.
    transport = RecordingTransport(OpenAIChatBackend())
    provider = openai_compatible(ProviderFactoryConfig(base_url=BASE_URL, transport=transport))
    request = DecisionRequest(
        model="conformance-model",
        context="A ticket pasted from a web page.",
        questions={
            "urgency": ScoreQuestion(
                instructions="How urgent?",
                levels=["low", {"note": "wait\u2028for it", "\x85": ["\u2029"]}],
            )
        },
    )
    provider.decide_sync(request)
    check_structure(request, transport.requests)
