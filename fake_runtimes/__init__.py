"""Test doubles for code that lets a language model decide: scripted runtimes and providers.

Every fake subclasses the real ``Runtime`` (so the tool loop, choices and trace behave exactly
as in production) or passes its results through the real question-decision validator.
"""

import typing

from fake_runtimes._contexts import CONTEXT_KINDS, fake_context
from fake_runtimes._script_errors import (
    AnswerMismatch,
    FakeError,
    ScriptExhausted,
    ScriptMismatch,
    UnusedSteps,
)
from fake_runtimes._script_steps import (
    ErrorStep,
    FakeCall,
    Pick,
    ToolCallStep,
    error,
    pick,
    tool_call,
)
from fake_runtimes._scripted import FakeRuntime, FunctionRuntime, ScriptedRuntime
from fake_runtimes._seeded import (
    InvalidReply,
    SeededRuntime,
    every_option,
    every_tool_call,
    invalid_replies,
)

if typing.TYPE_CHECKING:
    from fake_runtimes._answers import (
        ScriptedAnswer,
        choose,
        fails,
        hangs,
        probability,
        score,
        times_out,
    )
    from fake_runtimes._providers import FakeDecisionProvider

_QUESTION_FAKES = frozenset(
    {"ScriptedAnswer", "choose", "fails", "hangs", "probability", "score", "times_out"}
)
"""The question-decision fakes: loaded with the first of them asked for, so that a test of
next-step decisions loads nothing of the question side (its models, providers and httpx)."""


def __getattr__(name: str) -> typing.Any:
    if name in _QUESTION_FAKES:
        from fake_runtimes import _answers

        value = getattr(_answers, name)
    elif name == "FakeDecisionProvider":
        from fake_runtimes._providers import FakeDecisionProvider as value
    else:
        raise AttributeError(f"module 'fake_runtimes' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "CONTEXT_KINDS",
    "AnswerMismatch",
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
]
