"""Question decisions: choice, score and boolean questions answered with full distributions.

``ThreadState.decide()`` (or the module-level :func:`decide`) asks a
:class:`DecisionProvider` named questions about an explicit context and returns typed answers
with complete probability distributions, without touching the conversation. Requests and
results are pydantic models that keep their JSON structure exactly;
:func:`validate_request` and :func:`validate_result` hold every rule they must follow.

Providers: :class:`OpenAICompatibleDecisionProvider` (token probabilities over any
OpenAI-compatible server) and :class:`RuntimeDecisionProvider` (through any next-step
``Runtime``). Calibration helpers measure how trustworthy the probabilities are.
"""

from __future__ import annotations

from pytest_opdecide.questions._abort import AbortController, AbortSignal
from pytest_opdecide.questions._calibration import (
    brier_score,
    expected_calibration_error,
    log_loss,
)
from pytest_opdecide.questions._models import (
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionContext,
    DecisionJson,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderModelInfo,
    ProviderUsage,
    ProviderUsagePricing,
    ScoreAnswer,
    ScoreQuestion,
)
from pytest_opdecide.questions._openai_provider import (
    OPENAI_COMPATIBLE_CONFIG_SLOTS,
    OpenAICompatibleDecisionProvider,
    openai_compatible,
)
from pytest_opdecide.questions._provider import (
    SPECIFICATION_VERSION,
    BaseDecisionProvider,
    ConfigSlot,
    DecisionProvider,
    DecisionProviderFactory,
    HttpTransportOverride,
    ProviderConfigSlots,
    ProviderFactoryConfig,
    decide_sync,
    resolve_provider_config,
)
from pytest_opdecide.questions._provider_errors import (
    PROVIDER_ERROR_CODES,
    DecisionValidationError,
    InvalidRequestError,
    InvalidResultError,
    ProviderConfigError,
    ProviderError,
    ProviderErrorCode,
    ThreadChangedError,
)
from pytest_opdecide.questions._rules import Rule
from pytest_opdecide.questions._runtime_provider import RuntimeDecisionProvider
from pytest_opdecide.questions._thread import DecideOptions, ThreadState, decide
from pytest_opdecide.questions._validate import (
    DEFAULT_TOLERANCE,
    FLOAT_EPSILON,
    ROUNDING_KEY,
    validate_request,
    validate_result,
)

__all__ = [
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
]
