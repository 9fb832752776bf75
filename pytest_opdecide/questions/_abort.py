"""Cancellation of decision requests: ``AbortController`` and ``AbortSignal``.

Modelled on the web platform's objects, which the spec's ``signal`` property uses: a controller
owns a signal and aborts it once; whoever holds the signal can ask whether it was aborted, why,
and wait for it. Providers honour a signal before any work (an aborted signal rejects without a
call) and during the work (the in-flight requests are cancelled). Either way the caller gets a
``ProviderError`` with code ``"timeout"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar

from pytest_opdecide.questions._provider_errors import ProviderError

T = TypeVar("T")

DEFAULT_ABORT_REASON: Final = "the operation was aborted"


class AbortSignal:
    """A one-way flag that tells a decision to stop, with the reason why.

    Get one from :class:`AbortController`; a signal cannot abort itself. Signals are safe to
    abort from another thread than the one running the decision.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aborted = False
        self._reason: object = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        """Whether the signal has been aborted."""
        return self._aborted

    @property
    def reason(self) -> object:
        """Why it was aborted (``None`` while it has not been)."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the abort error when the signal has been aborted.

        Raises:
            ProviderError: With code ``"timeout"``, when :attr:`aborted` is true.
        """
        if self._aborted:
            raise aborted_error(self)

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when the signal aborts (at once if it already has).

        Args:
            callback: A function of no arguments. It runs in the thread that aborts.

        Returns:
            A function that unregisters the callback.
        """
        with self._lock:
            if not self._aborted:
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    async def wait(self) -> object:
        """Wait until the signal aborts.

        Returns:
            The abort :attr:`reason`.
        """
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, woken)

        remove = self.add_callback(wake)
        try:
            await woken
        finally:
            remove()
        return self._reason

    def _abort(self, reason: object) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "not aborted"
        return f"<AbortSignal {state}>"


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class AbortController:
    """Owns an :class:`AbortSignal` and aborts it.

    Example:
        >>> controller = AbortController()
        >>> controller.signal.aborted
        False
        >>> controller.abort("user closed the page")
        >>> controller.signal.aborted, controller.signal.reason
        (True, 'user closed the page')
    """

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal to pass as ``DecisionRequest.signal``."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal; later calls do nothing.

        Args:
            reason: Why; defaults to ``"the operation was aborted"``.
        """
        self._signal._abort(DEFAULT_ABORT_REASON if reason is None else reason)


def aborted_error(signal: AbortSignal) -> ProviderError:
    """The error a provider raises for an aborted signal.

    Args:
        signal: An aborted signal.

    Returns:
        A ``ProviderError`` with code ``"timeout"`` whose message gives the reason.
    """
    return ProviderError(f"the decision was aborted: {signal.reason}", "timeout")


async def run_abortable(work: Coroutine[Any, Any, T], signal: AbortSignal | None) -> T:
    """Run ``work`` unless or until ``signal`` aborts.

    Args:
        work: The coroutine doing the decision. It is closed unstarted when the signal is
            already aborted, and cancelled when the signal aborts while it runs.
        signal: The request's signal, or ``None`` to simply await ``work``.

    Returns:
        What ``work`` returns.

    Raises:
        ProviderError: Code ``"timeout"`` when the signal aborts before or during the work.
    """
    if signal is None:
        return await work
    if signal.aborted:
        work.close()
        raise aborted_error(signal)
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            # The cancelled work may fail while unwinding: the abort is what the caller sees.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if task in done:
        return task.result()
    raise aborted_error(signal)
