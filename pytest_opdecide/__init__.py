"""pytest-opdecide: test code that lets a language model decide what happens next.

The public surface: the ``decision`` module, runtimes and agents, the data a runtime exchanges
with a model, and the call trace. The pytest plugin lives in ``pytest_opdecide.plugin``; the fakes
in the ``fake_runtimes`` package.

Names are imported on first use (PEP 562), so that loading the pytest plugin, which lives in
this package, costs pytest's start-up almost nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_opdecide import decision
    from pytest_opdecide._adapter import ExecRuntime, as_runtime, use_runtime
    from pytest_opdecide._agent import Agent, agent, agent_async
    from pytest_opdecide._binding import current_runtime
    from pytest_opdecide._cassettes import CassetteCorrupt, CassetteMismatch, UnplayedInteractions
    from pytest_opdecide._errors import DecisionError, ToolLoopError
    from pytest_opdecide._guard import RealCallBlocked
    from pytest_opdecide._messages import (
        CallKind,
        Message,
        ModelReply,
        ModelRequest,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from pytest_opdecide._runtime import Runtime, tool_spec
    from pytest_opdecide._schema import FromContext, Param
    from pytest_opdecide._snapshots import SnapshotMismatch
    from pytest_opdecide._trace import CallRecord, CallTrace

__version__ = "0.1.0"

_WHERE = {
    "Agent": "_agent",
    "CallKind": "_messages",
    "CallRecord": "_trace",
    "CallTrace": "_trace",
    "CassetteCorrupt": "_cassettes",
    "CassetteMismatch": "_cassettes",
    "DecisionError": "_errors",
    "ExecRuntime": "_adapter",
    "FromContext": "_schema",
    "Message": "_messages",
    "ModelReply": "_messages",
    "ModelRequest": "_messages",
    "Param": "_schema",
    "RealCallBlocked": "_guard",
    "Runtime": "_runtime",
    "SnapshotMismatch": "_snapshots",
    "ToolCall": "_messages",
    "ToolLoopError": "_errors",
    "ToolSpec": "_messages",
    "UnplayedInteractions": "_cassettes",
    "Usage": "_messages",
    "agent": "_agent",
    "agent_async": "_agent",
    "as_runtime": "_adapter",
    "current_runtime": "_binding",
    "tool_spec": "_runtime",
    "use_runtime": "_adapter",
}

__all__ = [
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


def __getattr__(name: str) -> Any:
    if name == "decision":
        return importlib.import_module("pytest_opdecide.decision")
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'pytest_opdecide' has no attribute {name!r}")
    # Not cached in globals(): the submodule in sys.modules stays the one source of truth.
    return getattr(importlib.import_module(f"pytest_opdecide.{where}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
