"""The public surface of pytest_opdecide.questions, pinned."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest_opdecide.questions as questions

EXPECTED = {
    "DEFAULT_TOLERANCE",
    "FLOAT_EPSILON",
    "OPENAI_COMPATIBLE_CONFIG_SLOTS",
    "PROVIDER_ERROR_CODES",
    "ROUNDING_KEY",
    "SPECIFICATION_VERSION",
    "AbortController",
    "AbortSignal",
    "BaseDecisionProvider",
    "BooleanAnswer",
    "BooleanCriteria",
    "BooleanQuestion",
    "ChoiceAnswer",
    "ChoiceQuestion",
    "ConfigSlot",
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
    "HttpTransportOverride",
    "InvalidRequestError",
    "InvalidResultError",
    "OpenAICompatibleDecisionProvider",
    "ProviderConfigError",
    "ProviderConfigSlots",
    "ProviderError",
    "ProviderErrorCode",
    "ProviderFactoryConfig",
    "ProviderModelInfo",
    "ProviderUsage",
    "ProviderUsagePricing",
    "Rule",
    "RuntimeDecisionProvider",
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
}


def test_exported_names_are_pinned() -> None:
    assert set(questions.__all__) == EXPECTED
    assert len(questions.__all__) == len(EXPECTED)
    for name in questions.__all__:
        assert hasattr(questions, name), name


def test_public_names_come_from_private_modules() -> None:
    """Each public name is defined in a private module of the package; an exception class says
    its public home as its ``__module__`` (what tracebacks print), where it can be found."""
    for name in questions.__all__:
        value = getattr(questions, name)
        module = getattr(value, "__module__", None)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert module == "pytest_opdecide.questions", (name, module)
            assert getattr(importlib.import_module(module), value.__qualname__) is value
            source = Path(inspect.getsourcefile(value) or "")
            assert source.parent.name == "questions", name
            assert source.name.startswith("_"), name
            continue
        if isinstance(module, str) and module.startswith("pytest_opdecide.questions"):
            assert module.split(".")[-1].startswith("_"), (name, module)
