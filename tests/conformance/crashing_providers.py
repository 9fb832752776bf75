"""Providers that fail in every way that could take a test run down with them.

Each is the honest provider of the gallery with one way of crashing, hanging or leaving a mess
behind. ``test_crashes.py`` runs them under the test class (with and without pytest-xdist) and
through ``opdecide check``: each must fail the checks it breaks, never pass one, and never stop
the run.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from typing import Any

from pytest_opdecide.questions import DecisionRequest, DecisionResult, ProviderFactoryConfig

from .broken_providers import HonestProvider


class Interrupts(HonestProvider):
    """Raises ``KeyboardInterrupt`` in ``decide`` (as a provider that maps Ctrl-C wrongly)."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        raise KeyboardInterrupt("the provider's own KeyboardInterrupt")


class InterruptsInATask(HonestProvider):
    """Raises ``KeyboardInterrupt`` in a task it gathers: it escapes the event loop itself."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        async def interrupt() -> None:
            raise KeyboardInterrupt("a KeyboardInterrupt in a task")

        await asyncio.gather(interrupt())
        raise AssertionError("not reached")


class Exits(HonestProvider):
    """Calls ``sys.exit(3)`` in ``decide``."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        raise SystemExit(3)


class CustomBaseError(BaseException):
    """A BaseException of the provider's own."""


class RaisesABaseException(HonestProvider):
    """Raises a ``BaseException`` subclass of its own."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        raise CustomBaseError("not an Exception")


class RaisesCancelledError(HonestProvider):
    """Raises ``asyncio.CancelledError`` though nobody cancelled it."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        raise asyncio.CancelledError


class Hangs(HonestProvider):
    """Waits forever (cancellable)."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        await asyncio.sleep(3600)
        raise AssertionError("not reached")


class IgnoresCancellation(HonestProvider):
    """Waits forever and swallows every cancellation."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue


class LosesATaskException(HonestProvider):
    """Starts a task that fails and never retrieves its exception (asyncio reports it only
    when the task is garbage-collected, which used to be after the check had passed)."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        async def fail() -> None:
            raise RuntimeError("lost in a task")

        task = asyncio.ensure_future(fail())
        await asyncio.sleep(0)
        del task
        return await super().work(request)


class LeavesATaskRunning(HonestProvider):
    """Starts a task that runs forever and returns without it."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        self.keepalive = asyncio.ensure_future(asyncio.sleep(3600))
        return await super().work(request)


class ReturnsNone(HonestProvider):
    """Returns ``None`` from ``decide``."""

    async def decide(self, request: DecisionRequest) -> Any:  # type: ignore[override]
        return None


class ReturnsACoroutine(HonestProvider):
    """Returns the coroutine of the result instead of the result (a missing ``await``)."""

    async def decide(self, request: DecisionRequest) -> Any:  # type: ignore[override]
        return super().decide(request)


class InterruptsWhileBuilt(HonestProvider):
    """Raises ``KeyboardInterrupt`` in its constructor."""

    def __init__(self, config: ProviderFactoryConfig) -> None:
        raise KeyboardInterrupt("while being built")


class InterruptsWhenAskedItsKind(HonestProvider):
    """Raises ``KeyboardInterrupt`` from a ``kind`` property."""

    @property  # type: ignore[override]
    def kind(self) -> str:
        raise KeyboardInterrupt("reading kind")


class FailsInAThread(HonestProvider):
    """Starts a thread that raises, and does not wait for it."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        def crash() -> None:
            raise RuntimeError("a thread of the provider failed")

        thread = threading.Thread(target=crash)
        thread.start()
        thread.join()
        return await super().work(request)


CRASHES: tuple[type[HonestProvider], ...] = (
    Interrupts,
    InterruptsInATask,
    Exits,
    RaisesABaseException,
    RaisesCancelledError,
    Hangs,
    IgnoresCancellation,
    LosesATaskException,
    LeavesATaskRunning,
    ReturnsNone,
    ReturnsACoroutine,
    InterruptsWhileBuilt,
    InterruptsWhenAskedItsKind,
    FailsInAThread,
)
"""Providers that crash, hang or leave a mess, in-process."""


class ExitsTheProcess(HonestProvider):
    """Ends the interpreter with ``os._exit(7)``: no test runner survives it in-process."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        os._exit(7)


class KillsTheProcess(HonestProvider):
    """Sends itself SIGKILL."""

    async def work(self, request: DecisionRequest) -> DecisionResult:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("not reached")


PROCESS_KILLERS: tuple[type[HonestProvider], ...] = (ExitsTheProcess, KillsTheProcess)
"""Providers only a separate process can contain (``opdecide check``)."""
