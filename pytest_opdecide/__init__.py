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
    from pytest_opdecide import decision as decision
    from pytest_opdecide._cassettes._cassette import (
        CassetteCorrupt as CassetteCorrupt,
    )
    from pytest_opdecide._cassettes._cassette import (
        CassetteMismatch as CassetteMismatch,
    )
    from pytest_opdecide._cassettes._cassette import (
        UnplayedInteractions as UnplayedInteractions,
    )
    from pytest_opdecide._extras import MissingExtra as MissingExtra
    from pytest_opdecide._files import LinkLeavesFolder as LinkLeavesFolder
    from pytest_opdecide._nextstep._adapter import (
        ExecRuntime as ExecRuntime,
    )
    from pytest_opdecide._nextstep._adapter import (
        as_runtime as as_runtime,
    )
    from pytest_opdecide._nextstep._adapter import (
        use_runtime as use_runtime,
    )
    from pytest_opdecide._nextstep._agent import (
        Agent as Agent,
    )
    from pytest_opdecide._nextstep._agent import (
        agent as agent,
    )
    from pytest_opdecide._nextstep._agent import (
        agent_async as agent_async,
    )
    from pytest_opdecide._nextstep._annotations import FromContext as FromContext
    from pytest_opdecide._nextstep._annotations import Param as Param
    from pytest_opdecide._nextstep._binding import current_runtime as current_runtime
    from pytest_opdecide._nextstep._decision_errors import (
        DecisionError as DecisionError,
    )
    from pytest_opdecide._nextstep._decision_errors import (
        ToolLoopError as ToolLoopError,
    )
    from pytest_opdecide._nextstep._messages import (
        CallKind as CallKind,
    )
    from pytest_opdecide._nextstep._messages import (
        Message as Message,
    )
    from pytest_opdecide._nextstep._messages import (
        ModelReply as ModelReply,
    )
    from pytest_opdecide._nextstep._messages import (
        ModelRequest as ModelRequest,
    )
    from pytest_opdecide._nextstep._messages import (
        ToolCall as ToolCall,
    )
    from pytest_opdecide._nextstep._messages import (
        ToolSpec as ToolSpec,
    )
    from pytest_opdecide._nextstep._messages import (
        Usage as Usage,
    )
    from pytest_opdecide._nextstep._runtime import Runtime as Runtime
    from pytest_opdecide._nextstep._runtime import tool_spec as tool_spec
    from pytest_opdecide._nextstep._trace import CallRecord as CallRecord
    from pytest_opdecide._nextstep._trace import CallTrace as CallTrace
    from pytest_opdecide.plugin._guard import RealCallBlocked as RealCallBlocked
    from pytest_opdecide.plugin._snapshots import SnapshotMismatch as SnapshotMismatch

__version__ = "0.1.0"

# The one list of the public names, with the private module each lives in; ``__all__`` is made
# from it, and the block above (for type checkers) must import exactly these (a test checks).
_WHERE = {
    "Agent": "_nextstep._agent",
    "CallKind": "_nextstep._messages",
    "CallRecord": "_nextstep._trace",
    "CallTrace": "_nextstep._trace",
    "CassetteCorrupt": "_cassettes._cassette",
    "CassetteMismatch": "_cassettes._cassette",
    "DecisionError": "_nextstep._decision_errors",
    "ExecRuntime": "_nextstep._adapter",
    "LinkLeavesFolder": "_files",
    "FromContext": "_nextstep._annotations",
    "Message": "_nextstep._messages",
    "MissingExtra": "_extras",
    "ModelReply": "_nextstep._messages",
    "ModelRequest": "_nextstep._messages",
    "Param": "_nextstep._annotations",
    "RealCallBlocked": "plugin._guard",
    "Runtime": "_nextstep._runtime",
    "SnapshotMismatch": "plugin._snapshots",
    "ToolCall": "_nextstep._messages",
    "ToolLoopError": "_nextstep._decision_errors",
    "ToolSpec": "_nextstep._messages",
    "UnplayedInteractions": "_cassettes._cassette",
    "Usage": "_nextstep._messages",
    "agent": "_nextstep._agent",
    "agent_async": "_nextstep._agent",
    "as_runtime": "_nextstep._adapter",
    "current_runtime": "_nextstep._binding",
    "tool_spec": "_nextstep._runtime",
    "use_runtime": "_nextstep._adapter",
}

__all__ = sorted([*_WHERE, "decision"])


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
