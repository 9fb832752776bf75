"""Tiny scripted runtimes for the decision tests (not the ``fake_runtimes`` package)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pytest_opdecide import ModelReply, ModelRequest, Runtime

Reply = Any
"""A scripted reply: a ``ModelReply``, a string, or anything else (returned as the reply)."""


class ScriptExhaustedError(AssertionError):
    """The code under test asked for more model calls than the test scripted."""


class FixedRuntime(Runtime):
    """Answers each model call with the next scripted reply and records every request.

    A scripted reply that is a callable is called with the request and its result returned.
    """

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.replies: list[Reply] = list(replies)
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    def _next(self, request: ModelRequest) -> Any:
        with self._lock:
            self.requests.append(request)
            if not self.replies:
                raise ScriptExhaustedError(
                    f"unexpected model call #{len(self.requests)} ({request.kind}): "
                    f"no scripted reply left; prompt head: {request.prompt[:120]!r}"
                )
            reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, ModelReply):
            return reply(request)
        return reply

    def call_model(self, request: ModelRequest) -> ModelReply:
        reply: ModelReply = self._next(request)
        return reply

    @property
    def prompts(self) -> list[str]:
        """The prompt text of each request, in order."""
        return [r.prompt for r in self.requests]


class AsyncOnlyRuntime(FixedRuntime):
    """Implements only ``call_model_async``; records the thread and loop state of each call."""

    call_model = Runtime.call_model

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(*replies, **kwargs)
        self.awaited = 0

    async def call_model_async(self, request: ModelRequest) -> ModelReply:
        await asyncio.sleep(0)
        self.awaited += 1
        reply: ModelReply = self._next(request)
        return reply


class SyncOnlyRuntime(FixedRuntime):
    """Implements only ``call_model``; records the threads it was called from."""

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(*replies, **kwargs)
        self.threads: list[int] = []

    def call_model(self, request: ModelRequest) -> ModelReply:
        self.threads.append(threading.get_ident())
        return super().call_model(request)


def pick(option: str, /, **args: Any) -> str:
    """A canonical JSON pick as a model would write it."""
    import json

    if not args:
        return json.dumps({"call": option})
    return json.dumps({"call": option, "args": args})


def fenced(text: str) -> str:
    """``text`` in a ```json fenced block, after some prose."""
    return f"I thought about it.\n\n```json\n{text}\n```\n"


class Recorder:
    """A function option that records its calls and returns a fixed value."""

    def __init__(self, result: Any = "ran") -> None:
        self.calls: list[dict[str, Any]] = []
        self.result = result

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.result


def names(items: Iterable[Callable[..., Any]]) -> list[str]:
    """``__name__`` of each callable."""
    return [getattr(i, "__name__", "?") for i in items]


_SLOT_VALUES = {"<int>": "1", "<float>": "0.5", "<bool>": "true"}


def filled_call(line: str) -> Any:
    """A ``Call:`` example read as JSON once each bare slot (``<int>``, ``<float>``,
    ``<bool>``) holds a value of its type: the shape a model's pick copies."""
    text = line.strip().removeprefix("Call: ")
    for slot, value in _SLOT_VALUES.items():
        text = text.replace(f": {slot}", f": {value}").replace(f"[{slot}", f"[{value}")
        text = text.replace(f", {slot}", f", {value}")
    return json.loads(text)
