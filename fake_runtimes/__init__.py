"""Test doubles for code that lets a language model decide: scripted runtimes and providers.

Every fake subclasses the real ``Runtime`` (so the tool loop, choices and trace behave exactly
as in production) or passes its results through the real question-decision validator.
"""

from fake_runtimes._answers import (
    ScriptedAnswer,
    choose,
    fails,
    hangs,
    probability,
    score,
    times_out,
)
from fake_runtimes._contexts import CONTEXT_KINDS, fake_context
from fake_runtimes._providers import FakeDecisionProvider
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
