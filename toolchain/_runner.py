"""``run_sync``: ``asyncio.run`` that cannot be held hostage by a task at shutdown.

``asyncio.run`` cancels the tasks left over when its coroutine returns and then waits
for *all* of them. A tool that swallows ``CancelledError`` (a bare ``except:`` in a
retry loop) never ends, so neither would the program. Here leftover tasks get a grace
period after cancellation and are then abandoned (and logged).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from toolchain._abandon import abandon
from toolchain._logs import logger

__all__ = ["SHUTDOWN_GRACE", "run_sync"]

T = TypeVar("T")

SHUTDOWN_GRACE = 1.0
"""Seconds leftover tasks get to finish after cancellation before they are abandoned."""

_log = logger("toolchain")


def run_sync(main: Coroutine[Any, Any, T], *, grace: float = SHUTDOWN_GRACE) -> T:
    """Run ``main`` on a new event loop and return its result.

    Raises ``RuntimeError`` when called from a running event loop (await instead).

    >>> async def answer() -> int:
    ...     return 42
    >>> run_sync(answer())
    42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        main.close()
        raise RuntimeError("run_sync() was called inside a running event loop; await instead")
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _finish_leftovers(loop, grace)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _finish_leftovers(loop: asyncio.AbstractEventLoop, grace: float) -> None:
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    loop.run_until_complete(asyncio.wait(leftovers, timeout=grace))
    stuck = [task for task in leftovers if not task.done()]
    for task in leftovers:
        if task.done() and not task.cancelled() and task.exception() is not None:
            _log.warning("a leftover task failed: %r", task.exception())
    if stuck:
        _log.warning(
            "abandoned %d task(s) that ignored cancellation for %.1f s: %s",
            len(stuck),
            grace,
            ", ".join(task.get_name() for task in stuck),
        )
        for task in stuck:
            abandon(task)  # destroying it would throw GeneratorExit into that code
