"""pytest-opdecide: test code that lets a language model decide what happens next.

The public surface: the ``decision`` module, runtimes and agents, the data a runtime exchanges
with a model, and the call trace. The pytest plugin lives in ``pytest_opdecide.plugin``; the fakes
in the ``fake_runtimes`` package.
"""

from pytest_opdecide import decision
from pytest_opdecide._agent import Agent, agent, agent_async
from pytest_opdecide._binding import current_runtime, use_runtime
from pytest_opdecide._errors import DecisionError, ToolLoopError
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
from pytest_opdecide._trace import CallRecord, CallTrace

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "CallKind",
    "CallRecord",
    "CallTrace",
    "DecisionError",
    "FromContext",
    "Message",
    "ModelReply",
    "ModelRequest",
    "Param",
    "Runtime",
    "ToolCall",
    "ToolLoopError",
    "ToolSpec",
    "Usage",
    "agent",
    "agent_async",
    "current_runtime",
    "decision",
    "tool_spec",
    "use_runtime",
]
