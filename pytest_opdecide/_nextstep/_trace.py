"""The call trace: every model call a runtime makes, as a DAG of records.

Inside a test (while pytest runs one: ``PYTEST_CURRENT_TEST`` is set) the trace keeps every
call, for the test's assertions. Outside a test, a long-lived runtime in production keeps only
its most recent :data:`DEFAULT_KEEP` calls (``trace.keep``; ``None`` keeps every call), so that
its memory stays bounded however many decisions it makes.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pytest_opdecide._nextstep._messages import (
    CallKind,
    ContentBlock,
    ModelReply,
    ModelRequest,
    ToolCall,
    Usage,
)

__all__ = ["DEFAULT_KEEP", "CallRecord", "CallTrace", "ToolFailure"]

DEFAULT_KEEP = 1000
"""How many of its most recent calls a runtime's trace keeps outside a test."""


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A tool the model called that raised, its exception reported back to the model.

    Attributes:
        call: The model's tool call.
        error: The exception the tool raised.
        result: The tool result the model was sent instead: ``"Error: {type}: {text}"``.
    """

    call: ToolCall
    error: Exception
    result: str


@dataclass(slots=True, eq=False)
class CallRecord:
    """One model call (read-only by convention; not frozen, to keep recording cheap).

    Attributes:
        id: The call's number in its runtime's trace (0, 1, ...).
        kind: ``turn``, ``tool_round`` or ``repick``.
        parent: The id of the call this one follows from (the previous round of the same turn,
            the call whose reply is re-picked, or the call whose tool made this call), or ``None``.
        request: What was sent.
        reply: What came back (``None`` when the call raised).
        error: The exception the call raised, if any.
        duration_s: Wall time of the call.
        tool_failures: The tools this call's reply asked for that raised, each reported back
            to the model as its error result (see ``tool_errors`` of :meth:`Runtime.exec`).
    """

    id: int
    kind: CallKind
    parent: int | None
    request: ModelRequest
    reply: ModelReply | None
    error: BaseException | None
    duration_s: float
    tool_failures: tuple[ToolFailure, ...] = ()

    @property
    def prompt(self) -> str:
        """The text sent in this call (see :attr:`ModelRequest.prompt`)."""
        return self.request.prompt

    @property
    def blocks(self) -> tuple[ContentBlock, ...]:
        """The content blocks sent."""
        return self.request.blocks

    @property
    def menu(self) -> str | None:
        """The rendered menu when the call offered options."""
        return self.request.menu

    @property
    def options(self) -> list[str]:
        """Option names offered."""
        return list(self.request.options)

    @property
    def tools(self) -> list[str]:
        """Native tool names offered."""
        return self.request.tool_names

    @property
    def response_schema(self) -> dict[str, Any] | None:
        """The JSON schema of a valid pick when the call offered options (see
        :attr:`ModelRequest.response_schema`), whether or not the runtime sent it."""
        return self.request.response_schema

    @property
    def reply_text(self) -> str | None:
        """The reply text, or ``None`` when the call raised."""
        return None if self.reply is None else self.reply.text

    @property
    def usage(self) -> Usage:
        """Token counts (zeros when the call raised)."""
        return Usage() if self.reply is None else self.reply.usage


class CallTrace:
    """All calls of one runtime, in the order they finished; thread-safe.

    Records link to their parents by id, forming a DAG: a turn with two tool rounds is a chain of
    three records; a re-pick hangs off the call whose reply failed; a decision made inside a tool
    hangs off the tool round that ran the tool.
    """

    def __init__(self, keep: int | None = DEFAULT_KEEP) -> None:
        self._records: list[CallRecord] = []
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._keep: int | None = None
        self.keep = keep
        self._forgotten = 0

    @property
    def keep(self) -> int | None:
        """Outside a test, how many of the most recent calls are kept (``None``: every call).
        Inside a test every call is kept, whatever this says."""
        return self._keep

    @keep.setter
    def keep(self, value: int | None) -> None:
        if value is not None and (type(value) is not int or value < 0):
            raise TypeError(
                f"trace.keep must be a whole number >= 0 or None (keep every call), got {value!r}"
            )
        self._keep = value

    def next_id(self) -> int:
        """Reserve the id of a call about to be made."""
        return next(self._ids)

    @property
    def forgotten(self) -> int:
        """How many calls were dropped to stay within :attr:`keep`."""
        with self._lock:
            self._trim()
            return self._forgotten

    def add(self, record: CallRecord) -> None:
        """Append a finished call."""
        with self._lock:
            records = self._records
            records.append(record)
            keep = self._keep
            # Trimmed 16 records at a time (asking the environment costs more than the rest
            # of this method), and every reader trims to exactly ``keep`` first, so what it
            # sees is the same. Small batches, not a share of ``keep``: what a batch frees is
            # about what the calls since the last one allocated, so that the garbage collector
            # is not set off by records that are about to go (a batch of 1/8 of 1,000 calls,
            # freed at once, set it off on every 30 calls or so: 8 us of a 65 us decision).
            if keep is not None and len(records) > keep + 16:
                self._trim()

    def _trim(self) -> None:
        """Drop the oldest records beyond :attr:`keep` outside a test (the lock is held)."""
        records, keep = self._records, self._keep
        if keep is None or len(records) <= keep or "PYTEST_CURRENT_TEST" in os.environ:
            return
        extra = len(records) - keep
        del records[:extra]
        self._forgotten += extra

    @property
    def calls(self) -> list[CallRecord]:
        """The records, in order of id."""
        with self._lock:
            self._trim()
            return sorted(self._records, key=lambda r: r.id)

    def children(self, call_id: int) -> list[CallRecord]:
        """The calls whose parent is ``call_id``."""
        return [r for r in self.calls if r.parent == call_id]

    @property
    def usage(self) -> Usage:
        """Total token counts."""
        total = Usage()
        for r in self.calls:
            total = total + r.usage
        return total

    def clear(self) -> None:
        """Forget every record."""
        with self._lock:
            self._records.clear()

    def __len__(self) -> int:
        with self._lock:
            self._trim()
            return len(self._records)

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.calls)

    def __getitem__(self, index: int) -> CallRecord:
        return self.calls[index]
