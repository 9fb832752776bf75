"""The event loop of one conformance check, in a thread of its own, with a hard time limit.

Provider code runs here, never in the test runner's thread, so that no way a provider can fail
takes the test session with it:

* an exception of any kind, ``KeyboardInterrupt`` and ``SystemExit`` included (raised by the
  provider in the runner's thread, they would stop the whole pytest session), is caught and
  handed back as what the call did;
* a coroutine that never finishes is cancelled at its time limit; code that blocks the loop
  itself (``time.sleep`` in async code, a synchronous client) cannot be cancelled, so the
  runner stops waiting for it after a grace period and the loop is given up;
* a task the provider starts and leaves running, and a task exception nobody retrieved (which
  asyncio only reports when the task is freed), are found after each call and when the check
  ends, through the loop's exception handler; so is an exception nobody handled in a thread
  or in a finalizer during a call (``threading.excepthook`` and ``sys.unraisablehook`` are
  watched during each call, and passed on to whoever watched them before).

The loop holds every task it runs until the call that made it returns, then lets the finished
ones go; at the end of the check it collects garbage if one of them is still alive (held by a
reference cycle: a full collection takes tens of milliseconds, too long to make for every
check). It does not after provider code raised: the error's traceback holds the tasks of that
call until the test report is done with it, so collecting would find nothing and cost as much.
A task exception lost in such a check is found by the checks whose calls succeed. A call that
never finished (it ignored its cancellation) is closed quietly when its coroutine is freed,
after the check.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import inspect
import sys
import threading
import weakref
from collections.abc import Callable, Coroutine, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["BLOCK_GRACE_S", "CheckLoop", "Finished", "describe_task"]

BLOCK_GRACE_S: Final = 2.0
"""How long past its time limit a call may take before the loop is taken as blocked (at most:
a call with a time limit under this gets its time limit again, and at least half a second)."""
_SETTLE_ROUNDS: Final = 3  # loop iterations a finished call gets to let its tasks wind down
_CLOSE_TIMEOUT_S: Final = 5.0


def describe_task(task: asyncio.Future[Any]) -> str:
    """A task as a person reads it: its name and the coroutine it runs."""
    coroutine = task.get_coro() if isinstance(task, asyncio.Task) else None
    name = task.get_name() if isinstance(task, asyncio.Task) else type(task).__name__
    what = getattr(coroutine, "__qualname__", None) or type(coroutine).__name__
    return f"{name} running {what}()"


@dataclass
class Finished:
    """What one call made in the check's loop did.

    Attributes:
        value: What it returned (``None`` when it raised or did not finish).
        error: What it raised, whatever its class (``KeyboardInterrupt`` included).
        timed_out: It was still running at its time limit (and was cancelled).
        blocked: It blocked the loop past its time limit: it could not even be cancelled.
        leftover_tasks: Tasks it started that were still running once it returned.
        unhandled: Errors reported to the loop's exception handler while it ran (a task
            exception nobody retrieved, an exception in a callback).
    """

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    blocked: bool = False
    leftover_tasks: list[str] = field(default_factory=list)
    unhandled: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """It returned, in time."""
        return self.error is None and not self.timed_out and not self.blocked


def _describe_context(context: dict[str, Any]) -> str:
    message = str(context.get("message") or "an error")
    error = context.get("exception")
    if isinstance(error, BaseException):
        message += f": {type(error).__name__}: {error}"
    future = context.get("future") or context.get("task")
    if isinstance(future, asyncio.Future):
        message += f" (in {describe_task(future)})"
    return message


class CheckLoop:
    """An asyncio event loop running in a daemon thread for the length of one check.

    Args:
        name: The thread's name.
    """

    def __init__(self, name: str = "opdecide-conformance-check") -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(self._unhandled)
        self._loop.set_task_factory(self._task)
        self._tasks: list[asyncio.Task[Any]] = []
        self._released: list[weakref.ReferenceType[asyncio.Task[Any]]] = []
        self._raised = False
        self._own: weakref.WeakSet[Any] = weakref.WeakSet()
        self._unhandled_errors: list[str] = []
        self._lock = threading.Lock()
        self._blocked_by: str | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    # --- the loop's thread --------------------------------------------------------------------

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        while True:
            try:
                self._loop.run_forever()
            except BaseException:
                # KeyboardInterrupt or SystemExit raised in a task of the provider escapes the
                # loop; the task holds it, and whoever awaits the task sees it. Serve on.
                continue
            break
        # Stopped by close(), at once or (a loop that was blocked) once it unblocks.
        with contextlib.suppress(Exception):
            self._loop.close()

    def _task(
        self,
        loop: asyncio.AbstractEventLoop,
        coroutine: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        **kwargs: Any,
    ) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coroutine, loop=loop, **kwargs)
        if coroutine not in self._own:
            self._tasks.append(task)  # released once finished, after the call (see _release)
        return task

    def _unhandled(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        with self._lock:
            self._unhandled_errors.append(_describe_context(context))

    def _release(self, *, everything: bool = False) -> None:
        """Let the finished tasks go: one whose exception nobody retrieved is reported now."""
        kept = [] if everything else [task for task in self._tasks if not task.done()]
        gone = [task for task in self._tasks if everything or task.done()]
        self._tasks = kept
        self._released = [ref for ref in self._released if ref() is not None]
        self._released += [weakref.ref(task) for task in gone]
        del gone  # freed here unless something else holds them

    def _take_unhandled(self) -> list[str]:
        with self._lock:
            taken, self._unhandled_errors = self._unhandled_errors, []
        return taken

    # --- calls --------------------------------------------------------------------------------

    @property
    def blocked_by(self) -> str | None:
        """What blocked the loop for good, or ``None``."""
        return self._blocked_by

    def run(
        self, work: Callable[[], Any], *, timeout: float, what: str = "the provider"
    ) -> Finished:
        """Call ``work()`` in the loop; await what it returns when that is awaitable.

        Args:
            work: A function of no arguments (it may return a coroutine or any awaitable).
            timeout: The longest the call may take, in seconds.
            what: What the call is, for the description of a blocked loop.

        Returns:
            What it did; nothing it raises leaves this method.
        """
        if self._blocked_by is not None:
            return Finished(blocked=True)
        finished = Finished()

        async def guarded() -> None:
            before = asyncio.all_tasks()
            scope: asyncio.Timeout | None = None
            try:
                async with asyncio.timeout(timeout) as scope:
                    value = work()
                    if inspect.isawaitable(value):
                        value = await value
                finished.value = value
            except TimeoutError as error:
                if scope is not None and scope.expired():
                    finished.timed_out = True
                else:
                    finished.error = error
            except BaseException as error:  # everything a provider raises is a result here
                if isinstance(error, GeneratorExit) and self._closed:
                    # The check is over and this call never finished (it ignored its
                    # cancellation): its coroutine is being closed, whenever the garbage
                    # collector gets to it. Awaiting on would make the close fail, and the
                    # error would land in whichever check then runs.
                    raise
                finished.error = error
            if finished.timed_out:
                return
            for _ in range(_SETTLE_ROUNDS):
                await asyncio.sleep(0)
            current = asyncio.current_task()
            finished.leftover_tasks = [
                describe_task(task)
                for task in asyncio.all_tasks() - before
                if task is not current and not task.done()
            ]

        coroutine = guarded()
        self._own.add(coroutine)
        with self._watching_hooks():  # before the call starts: it may start threads at once
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
            try:
                future.result(timeout + min(BLOCK_GRACE_S, max(0.5, timeout)))
            except concurrent.futures.TimeoutError:
                self._blocked_by = what
                finished = Finished(blocked=True)
            except BaseException as error:  # the guard itself was cancelled or failed
                finished = Finished(error=error)
        if finished.error is not None:
            self.note_raised()
        if not finished.blocked:
            self._release()
        finished.unhandled = self._take_unhandled()
        if inspect.iscoroutine(finished.value):
            finished.value.close()  # a coroutine returned, never awaited: no warning later
        return finished

    @contextlib.contextmanager
    def _watching_hooks(self) -> Iterator[None]:
        thread_hook, unraisable_hook = threading.excepthook, sys.unraisablehook

        def on_thread(args: threading.ExceptHookArgs) -> None:
            name = "a thread" if args.thread is None else f"thread {args.thread.name}"
            with self._lock:
                self._unhandled_errors.append(
                    f"an exception nobody handled in {name}: {args.exc_type.__name__}: "
                    f"{args.exc_value}"
                )
            thread_hook(args)

        def on_unraisable(args: Any) -> None:
            with self._lock:
                self._unhandled_errors.append(
                    f"an exception nobody could handle ({args.err_msg or 'in a finalizer'}): "
                    f"{args.exc_type.__name__}: {args.exc_value}"
                )
            unraisable_hook(args)

        threading.excepthook, sys.unraisablehook = on_thread, on_unraisable
        try:
            yield
        finally:
            if threading.excepthook is on_thread:
                threading.excepthook = thread_hook
            if sys.unraisablehook is on_unraisable:
                sys.unraisablehook = unraisable_hook

    def note_raised(self) -> None:
        """Provider code raised, and its error is kept (by the check, then the test report):
        :meth:`close` skips its garbage collection (see the module's docstring)."""
        self._raised = True

    # --- the end of the check -----------------------------------------------------------------

    def close(self) -> list[str]:
        """Stop the loop after cancelling what is left; what was left over.

        Returns:
            A description of each problem: a task still running when the check ended (and
            whether it refused cancellation), an error reported to the loop's exception handler
            (found after a garbage collection, which is when asyncio reports a task exception
            nobody retrieved).
        """
        if self._closed:
            return []
        self._closed = True
        problems: list[str] = []
        if self._blocked_by is None:

            async def wind_down() -> list[str]:
                found: list[str] = []
                current = asyncio.current_task()
                left = [task for task in asyncio.all_tasks() if task is not current]
                for task in left:
                    found.append(
                        f"a task was still running when the check ended: {describe_task(task)}"
                    )
                    task.cancel()
                if left:
                    _, pending = await asyncio.wait(left, timeout=1.0)
                    found += [
                        f"a task ignored its cancellation: {describe_task(task)}"
                        for task in pending
                    ]
                with contextlib.suppress(BaseException):
                    await self._loop.shutdown_asyncgens()
                with contextlib.suppress(BaseException):
                    await self._loop.shutdown_default_executor()
                return found

            coroutine = wind_down()
            self._own.add(coroutine)
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
            with contextlib.suppress(BaseException):
                problems += future.result(_CLOSE_TIMEOUT_S)
        # A blocked loop stops (and its thread ends) once whatever blocks it returns.
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._blocked_by is None:
            self._thread.join(_CLOSE_TIMEOUT_S)
        # asyncio reports a task exception nobody retrieved when the task is freed: free them.
        self._release(everything=True)
        alive = any(reference() is not None for reference in self._released)
        if alive and not self._raised:
            gc.collect()  # held by a reference cycle (or by the provider): collect to be sure
        self._released.clear()
        problems += [f"unhandled in the event loop: {error}" for error in self._take_unhandled()]
        return problems
