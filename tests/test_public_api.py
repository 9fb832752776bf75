"""Every public import path keeps its names: each module's exports, pinned.

The list is what each public module exported before the package's modules moved into rooms;
a name may be added here, never dropped. ``fake_runtimes`` stays a top-level package, the
``pytest11`` entry point is ``pytest_opdecide.plugin`` and the ``opdecide`` command
``pytest_opdecide.cli:main``.
"""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

PUBLIC: dict[str, tuple[str, ...]] = {
    "fake_runtimes": (
        "AnswerMismatch",
        "CONTEXT_KINDS",
        "ErrorStep",
        "FakeCall",
        "FakeDecisionProvider",
        "FakeError",
        "FakeRuntime",
        "FunctionRuntime",
        "InvalidReply",
        "Pick",
        "ScriptExhausted",
        "ScriptMismatch",
        "ScriptedAnswer",
        "ScriptedRuntime",
        "SeededRuntime",
        "ToolCallStep",
        "UnusedSteps",
        "choose",
        "error",
        "every_option",
        "every_tool_call",
        "fails",
        "fake_context",
        "hangs",
        "invalid_replies",
        "pick",
        "probability",
        "score",
        "times_out",
        "tool_call",
    ),
    "pytest_opdecide": (
        "LinkLeavesFolder",
        "Agent",
        "CallKind",
        "CallRecord",
        "CallTrace",
        "CassetteCorrupt",
        "CassetteMismatch",
        "DecisionError",
        "ExecRuntime",
        "FromContext",
        "Message",
        "MissingExtra",
        "ModelReply",
        "ModelRequest",
        "Param",
        "RealCallBlocked",
        "Runtime",
        "SnapshotMismatch",
        "ToolCall",
        "ToolLoopError",
        "ToolSpec",
        "UnplayedInteractions",
        "Usage",
        "agent",
        "agent_async",
        "as_runtime",
        "current_runtime",
        "decision",
        "tool_spec",
        "use_runtime",
    ),
    "pytest_opdecide.cli": ("main",),
    "pytest_opdecide.conformance": (
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
    ),
    "pytest_opdecide.conformance.builtin": (
        "DEFAULT_MODEL",
        "fake_provider",
        "runtime_provider",
        "stated_distribution",
    ),
    "pytest_opdecide.decision": (
        "DECISION_FINISH_INSTRUCTION",
        "DecisionError",
        "FromContext",
        "Param",
        "extract_action",
        "extract_raw_action",
        "make",
        "make_async",
        "parse_args",
        "parse_args_async",
        "render_options",
        "resolve_decision",
        "resolve_decision_async",
        "response_schema",
    ),
    "pytest_opdecide.hookspecs": (
        "pytest_opdecide_decision_provider",
        "pytest_opdecide_runtime",
        "pytest_opdecide_scrub_interaction",
    ),
    "pytest_opdecide.options": (
        "ChoiceSpec",
        "DictSpec",
        "FieldSpec",
        "ListSpec",
        "META_KEYS",
        "Menu",
        "ModelSpec",
        "NoneSpec",
        "ObjectSpec",
        "Option",
        "Param",
        "ParseFailure",
        "PydanticSpec",
        "ScalarSpec",
        "SequenceSpec",
        "TypeSpec",
        "UnionSpec",
        "UnknownSpec",
        "normalize_options",
        "parse_reply",
    ),
    "pytest_opdecide.plugin": (
        "decision_provider",
        "menu_snapshot",
        "opdecide_config",
        "opdecide_run",
        "opdecide_settings",
        "pytest_addhooks",
        "pytest_addoption",
        "pytest_collection_finish",
        "pytest_collection_modifyitems",
        "pytest_configure",
        "pytest_deselected",
        "pytest_runtest_makereport",
        "pytest_runtest_protocol",
        "pytest_runtest_setup",
        "pytest_sessionfinish",
        "pytest_terminal_summary",
        "pytest_testnodedown",
        "pytest_unconfigure",
        "runtime",
    ),
    "pytest_opdecide.questions": (
        "AbortController",
        "AbortSignal",
        "BaseDecisionProvider",
        "BooleanAnswer",
        "BooleanCriteria",
        "BooleanQuestion",
        "ChoiceAnswer",
        "ChoiceQuestion",
        "ConfigSlot",
        "DEFAULT_TOLERANCE",
        "DecideOptions",
        "DecisionAnswer",
        "DecisionContext",
        "DecisionJson",
        "DecisionProvider",
        "DecisionProviderFactory",
        "DecisionQuestion",
        "DecisionRequest",
        "DecisionResult",
        "DecisionValidationError",
        "FLOAT_EPSILON",
        "HttpTransportOverride",
        "InvalidRequestError",
        "InvalidResultError",
        "OPENAI_COMPATIBLE_CONFIG_SLOTS",
        "OpenAICompatibleDecisionProvider",
        "PROVIDER_ERROR_CODES",
        "ProviderConfigError",
        "ProviderConfigSlots",
        "ProviderError",
        "ProviderErrorCode",
        "ProviderFactoryConfig",
        "ProviderModelInfo",
        "ProviderUsage",
        "ProviderUsagePricing",
        "ROUNDING_KEY",
        "Rule",
        "RuntimeDecisionProvider",
        "SPECIFICATION_VERSION",
        "ScoreAnswer",
        "ScoreQuestion",
        "ThreadChangedError",
        "ThreadState",
        "brier_score",
        "decide",
        "decide_sync",
        "expected_calibration_error",
        "log_loss",
        "openai_compatible",
        "resolve_provider_config",
        "validate_request",
        "validate_result",
    ),
    "pytest_opdecide.recording": (
        "FORMAT_VERSION",
        "RecordedCallError",
        "RecordedReply",
        "RecordingRuntime",
        "load_recording",
        "recorded_steps",
    ),
    "pytest_opdecide.runtimes": (
        "AuthenticationError",
        "BadRequestError",
        "CallTimeoutError",
        "ConnectionFailedError",
        "MalformedResponseError",
        "NotFoundError",
        "OpenAICompatibleRuntime",
        "RateLimitError",
        "ResponseStatusError",
        "RuntimeCallError",
        "ServerError",
    ),
    "pytest_opdecide.strategies": (
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
    ),
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_still_imports_from_its_module(module: str) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(imported, name)]
    assert missing == []
    exported = getattr(imported, "__all__", None)
    if exported is not None:
        assert set(PUBLIC[module]) <= set(exported)


def test_the_entry_point_and_the_command_are_unchanged() -> None:
    entry_points = importlib.metadata.entry_points()
    (plugin,) = [e for e in entry_points.select(group="pytest11") if e.name == "opdecide"]
    assert plugin.value == "pytest_opdecide.plugin"
    (command,) = [e for e in entry_points.select(group="console_scripts") if e.name == "opdecide"]
    assert command.value == "pytest_opdecide.cli:main"


def test_fake_runtimes_is_a_top_level_package() -> None:
    fakes = importlib.import_module("fake_runtimes")
    assert fakes.__name__ == "fake_runtimes"
    assert fakes.__file__ is not None
    assert fakes.__file__.endswith("fake_runtimes/__init__.py")


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_exported_exceptions_name_their_public_module(module: str) -> None:
    """Tracebacks print ``module.Class``: an exported exception shows a public module (where it
    imports from, so it pickles), never the private module it is written in."""
    imported = importlib.import_module(module)
    for name in PUBLIC[module]:
        value = getattr(imported, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert value.__module__ in PUBLIC, (name, value.__module__)
            home = importlib.import_module(value.__module__)
            assert getattr(home, value.__qualname__) is value, name


def test_the_package_lists_each_public_name_once() -> None:
    """``pytest_opdecide`` imports its names on first use from one map; ``__all__`` is made
    from it, and the block that type checkers read imports exactly the map's names, each from
    the module the map says, as an explicit re-export (``name as name``)."""
    import ast
    from pathlib import Path

    import pytest_opdecide

    where: dict[str, str] = pytest_opdecide._WHERE  # type: ignore[attr-defined]
    assert pytest_opdecide.__all__ == sorted([*where, "decision"])
    source = Path(pytest_opdecide.__file__ or "").read_text(encoding="utf-8")
    (block,) = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    imported: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: import it as {alias.name}"
            imported[alias.name] = node.module.removeprefix("pytest_opdecide.")
    assert imported.pop("decision") == "pytest_opdecide"
    assert imported == where
    for name, module in where.items():
        assert getattr(importlib.import_module(f"pytest_opdecide.{module}"), name) is getattr(
            pytest_opdecide, name
        )
