"""The public surface the issue names: exact names, signatures and defaults."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import pytest_opdecide
from pytest_opdecide import Agent, Runtime, agent, agent_async, decision

P = inspect.Parameter


def _shape(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_decision_module_names() -> None:
    for name in [
        "make",
        "make_async",
        "render_options",
        "extract_action",
        "extract_raw_action",
        "parse_args",
        "parse_args_async",
        "resolve_decision",
        "resolve_decision_async",
        "response_schema",
        "DecisionError",
        "DECISION_FINISH_INSTRUCTION",
    ]:
        assert name in decision.__all__, name
        assert hasattr(decision, name), name
    assert decision.__all__ == sorted(decision.__all__)


def test_package_names() -> None:
    for name in ["Runtime", "Agent", "agent", "decision", "DecisionError"]:
        assert name in pytest_opdecide.__all__
    assert pytest_opdecide.__all__ == sorted(pytest_opdecide.__all__)


PACKAGE_SURFACE = [
    "Agent",
    "CallKind",
    "CallRecord",
    "CallTrace",
    "CassetteCorrupt",
    "CassetteMismatch",
    "DecisionError",
    "ExecRuntime",
    "FromContext",
    "LinkLeavesFolder",
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
]


def test_the_package_surface_is_pinned() -> None:
    """Adding or removing a public name is a decision: change this list with it."""
    assert pytest_opdecide.__all__ == PACKAGE_SURFACE
    for name in PACKAGE_SURFACE:
        assert getattr(pytest_opdecide, name) is not None, name
    assert sorted(name for name in dir(pytest_opdecide) if name in PACKAGE_SURFACE) == (
        PACKAGE_SURFACE
    )


@pytest.mark.parametrize("fn", [decision.make, decision.make_async])
def test_make_signature(fn: Any) -> None:
    assert _shape(fn) == [
        ("prompt", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("options", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("runtime", P.KEYWORD_ONLY, None),
        ("context", P.KEYWORD_ONLY, None),
        ("max_retries", P.KEYWORD_ONLY, 1),
    ]


@pytest.mark.parametrize(
    "fn",
    [
        decision.parse_args,
        decision.parse_args_async,
        decision.resolve_decision,
        decision.resolve_decision_async,
    ],
)
def test_parse_and_resolve_signatures(fn: Any) -> None:
    assert _shape(fn) == [
        ("reply", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("options", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("runtime", P.POSITIONAL_OR_KEYWORD, None),
        ("context", P.KEYWORD_ONLY, None),
        ("max_retries", P.KEYWORD_ONLY, 1),
    ]


@pytest.mark.parametrize("fn", [Runtime.exec, Runtime.exec_async])
def test_exec_signature(fn: Any) -> None:
    params = inspect.signature(fn).parameters
    assert list(params)[:2] == ["self", "content"]
    expected = {
        "tools": None,
        "toolset": None,
        "choices": None,
        "response_format": None,
        "model": None,
        "max_iterations": 20,
        "timeout_s": None,
    }
    for name, default in expected.items():
        assert params[name].kind is P.KEYWORD_ONLY, name
        assert params[name].default == default, name


@pytest.mark.parametrize("fn", [agent, agent_async])
def test_agent_signature(fn: Any) -> None:
    params = inspect.signature(fn).parameters
    assert next(iter(params)) == "prompt"
    for name in ["choices", "tools", "toolset"]:
        assert params[name].kind is P.KEYWORD_ONLY
        assert params[name].default is None


def test_agent_constructor() -> None:
    assert _shape(Agent.__init__) == [
        ("self", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("runtime", P.POSITIONAL_OR_KEYWORD, None),
    ]


def test_async_twins_are_coroutine_functions() -> None:
    for fn in [
        decision.make_async,
        decision.parse_args_async,
        decision.resolve_decision_async,
        agent_async,
        Runtime.exec_async,
        Runtime.call_model_async,
    ]:
        assert inspect.iscoroutinefunction(fn), fn


def test_decision_error_is_exported_once() -> None:
    assert decision.DecisionError is pytest_opdecide.DecisionError
    assert issubclass(decision.DecisionError, ValueError)
