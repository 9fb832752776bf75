"""Running the per-question work of one decision concurrently, all or nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


async def all_or_nothing(work: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently and return their results in order.

    On the first failure the others are cancelled and the failure of the earliest coroutine
    (in ``work`` order) that failed is raised; every failure is retrieved, so none is reported
    as "never retrieved" later. Cancelling the caller cancels them all.

    Args:
        work: The coroutines.

    Returns:
        Their results, in order.
    """
    tasks = [asyncio.ensure_future(item) for item in work]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
    failures = [task.exception() for task in tasks if not task.cancelled()]
    for failure in failures:
        if failure is not None:
            raise failure
    return [task.result() for task in tasks]
