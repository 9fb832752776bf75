"""CheckLoop: provider code in a loop and a thread of its own; nothing it does escapes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from pytest_opdecide.conformance._loop import CheckLoop


@pytest.fixture
def loop() -> Iterator[CheckLoop]:
    check_loop = CheckLoop()
    yield check_loop
    check_loop.close()


async def answer() -> int:
    return 42


def test_a_call_returns_what_the_work_returns(loop: CheckLoop) -> None:
    finished = loop.run(answer, timeout=5)
    assert (finished.value, finished.error, finished.ok) == (42, None, True)
    assert loop.run(lambda: "sync", timeout=5).value == "sync"  # not awaitable: returned as is


@pytest.mark.parametrize(
    "error",
    [KeyboardInterrupt("ctrl-c"), SystemExit(3), GeneratorExit(), asyncio.CancelledError()],
    ids=lambda error: type(error).__name__,
)
def test_any_base_exception_is_handed_back_not_raised(
    loop: CheckLoop, error: BaseException
) -> None:
    async def raising() -> None:
        raise error

    finished = loop.run(raising, timeout=5)
    assert finished.error is error
    assert not finished.ok


def test_a_keyboard_interrupt_in_a_task_escapes_the_loop_and_is_still_handed_back(
    loop: CheckLoop,
) -> None:
    async def interrupted() -> None:
        async def interrupt() -> None:
            raise KeyboardInterrupt("in a task")

        await asyncio.gather(interrupt())

    finished = loop.run(interrupted, timeout=5)
    assert isinstance(finished.error, KeyboardInterrupt)
    assert loop.run(answer, timeout=5).value == 42  # the loop serves on


def test_a_call_past_its_time_limit_is_cancelled(loop: CheckLoop) -> None:
    async def forever() -> None:
        await asyncio.sleep(3600)

    started = time.monotonic()
    finished = loop.run(forever, timeout=0.2)
    assert finished.timed_out
    assert time.monotonic() - started < 2
    assert loop.run(answer, timeout=5).value == 42


def test_a_call_that_blocks_the_loop_is_given_up(loop: CheckLoop) -> None:
    async def blocking() -> None:
        time.sleep(1.5)  # noqa: ASYNC251 (what is tested)

    started = time.monotonic()
    finished = loop.run(blocking, timeout=0.2, what="the blocking call")
    assert finished.blocked
    assert time.monotonic() - started < 1.4  # given up before the sleep ends
    assert loop.blocked_by == "the blocking call"
    assert loop.run(answer, timeout=5).blocked  # the loop is not used again


def test_a_task_left_running_and_a_lost_task_exception_are_found(loop: CheckLoop) -> None:
    async def messy() -> str:
        async def fail() -> None:
            raise RuntimeError("lost")

        asyncio.ensure_future(fail())  # noqa: RUF006 (what is tested)
        loop.keep = asyncio.ensure_future(asyncio.sleep(3600))  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)
        return "done"

    finished = loop.run(messy, timeout=5)
    assert finished.value == "done"
    assert [task.split(" running ")[1] for task in finished.leftover_tasks] == ["sleep()"]
    (unhandled,) = finished.unhandled
    assert unhandled.startswith("Task exception was never retrieved: RuntimeError: lost (in ")
    problems = loop.close()
    assert [problem.split(": Task")[0] for problem in problems] == [
        "a task was still running when the check ended"
    ]


def test_a_lost_exception_held_by_a_reference_cycle_is_found_when_the_check_ends(
    loop: CheckLoop,
) -> None:
    async def cyclic() -> None:
        async def fail() -> None:
            me = asyncio.current_task()  # the task's frame holds the task: a cycle
            raise RuntimeError(f"lost by {me is not None}")

        asyncio.ensure_future(fail())  # noqa: RUF006 (what is tested)
        await asyncio.sleep(0.01)

    assert loop.run(cyclic, timeout=5).unhandled == []  # not freed yet
    (problem,) = loop.close()
    assert problem.startswith(
        "unhandled in the event loop: Task exception was never retrieved: RuntimeError: lost by "
        "True"
    )


def test_an_exception_nobody_handled_in_a_thread_is_found(loop: CheckLoop) -> None:
    def crash() -> None:
        raise ValueError("in a thread")

    async def threaded() -> None:
        thread = threading.Thread(target=crash, name="provider-worker")
        thread.start()
        thread.join()

    seen: list[str] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: seen.append(str(args.exc_value))
    try:
        finished = loop.run(threaded, timeout=5)
    finally:
        threading.excepthook = previous
    assert finished.unhandled == [
        "an exception nobody handled in thread provider-worker: ValueError: in a thread"
    ]
    assert seen == ["in a thread"]  # passed on to the hook watching before


def test_a_returned_coroutine_is_closed_not_left_to_warn(loop: CheckLoop) -> None:
    async def returns_a_coroutine() -> object:
        return answer()

    finished = loop.run(returns_a_coroutine, timeout=5)
    assert finished.value.cr_frame is None  # closed: no "never awaited" warning later


def test_a_call_that_ignores_its_cancellation_is_closed_quietly_after_the_check() -> None:
    """Its coroutine is closed when the garbage collector frees it, after the check (and in
    whichever check then runs): closing it raises nothing there."""
    check_loop = CheckLoop(name="opdecide-conformance-stubborn")

    async def stubborn() -> None:
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)

    assert check_loop.run(stubborn, timeout=0.2).blocked
    check_loop.close()
    deadline = time.monotonic() + 5
    while any(t.name == "opdecide-conformance-stubborn" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the loop's thread ends once the loop stops"
        time.sleep(0.01)
    del check_loop
    unraisable: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda args: unraisable.append(
        f"{args.exc_type.__name__}: {args.exc_value}"
    )
    try:
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert unraisable == []
