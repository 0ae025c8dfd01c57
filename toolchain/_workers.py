"""Daemon worker threads for synchronous tools.

``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run`` joins
on exit: one hung tool would hang the whole run after its timeout fired. These
workers are daemon threads that nobody joins; a timed-out call keeps its thread until
it returns, and the pool grows a new one for the next call.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["run_in_worker"]

T = TypeVar("T")

_Job = Callable[[], None]
_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_lock = threading.Lock()
# Invariant: waiting workers == _idle + jobs queued but not yet taken. A submit
# reserves an idle worker by decrementing _idle, or starts a new one.
_idle = 0
_MAX_IDLE_WAIT = 60.0  # seconds an idle worker lingers before exiting


def _worker() -> None:
    global _idle
    while True:
        try:
            job = _jobs.get(timeout=_MAX_IDLE_WAIT)
        except queue.Empty:
            with _lock:
                if _idle > 0:  # nobody reserved us: leave
                    _idle -= 1
                    return
            continue  # a job was reserved for a waiting worker: take it
        job()
        with _lock:
            _idle += 1


def _submit(job: _Job) -> None:
    global _idle
    with _lock:
        start = _idle == 0
        if not start:
            _idle -= 1
    if start:
        threading.Thread(target=_worker, name="tool-worker", daemon=True).start()
    _jobs.put(job)


async def run_in_worker(fn: Callable[[], T]) -> T:
    """Run ``fn`` on a daemon worker thread, with the caller's context variables."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # the caller gave up (timeout, cancellation)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]  # T when error is None

    def job() -> None:
        try:
            value = context.run(fn)
        except BaseException as error:
            if not loop.is_closed():
                loop.call_soon_threadsafe(settle, None, error)
            return
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, value, None)

    _submit(job)
    return await future
