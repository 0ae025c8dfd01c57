"""A bounded pool of daemon worker threads for synchronous tools.

``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run`` joins
on exit: one hung tool would hang the whole run after its timeout fired. These
workers are daemon threads that nobody joins; a timed-out call keeps its thread until
it returns. At most ``MAX_WORKERS`` threads exist at once: further calls wait in the
queue (their timeouts still run), so one action of 10,000 blocking calls cannot start
10,000 threads. A job whose caller already gave up is skipped, not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

__all__ = ["MAX_WORKERS", "run_in_worker"]

T = TypeVar("T")

MAX_WORKERS = 32
FINISH_WAIT = 0.05
"""Seconds a cancelled caller waits for a sync tool that is already running to return."""

_Job = Callable[[], None]
_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_lock = threading.Lock()
# Invariant: waiting workers == _idle + jobs queued but not yet taken. A submit
# reserves an idle worker by decrementing _idle, or starts a new one while there are
# fewer than MAX_WORKERS; otherwise the job waits for the next free worker.
_idle = 0
_threads = 0
_MAX_IDLE_WAIT = 60.0  # seconds an idle worker lingers before exiting


def _worker() -> None:
    global _idle, _threads
    while True:
        try:
            job = _jobs.get(timeout=_MAX_IDLE_WAIT)
        except queue.Empty:
            with _lock:
                if _idle > 0:  # nobody reserved us: leave
                    _idle -= 1
                    _threads -= 1
                    return
            continue  # a job was reserved for a waiting worker: take it
        job()
        with _lock:
            _idle += 1


def _submit(job: _Job) -> None:
    global _idle, _threads
    with _lock:
        start = False
        if _idle > 0:
            _idle -= 1
        elif _threads < MAX_WORKERS:
            _threads += 1
            start = True
    if start:
        threading.Thread(target=_worker, name="tool-worker", daemon=True).start()
    _jobs.put(job)


class _Outcome(Generic[T]):
    """What the job produced, readable from the loop even if the future was cancelled."""

    __slots__ = ("done", "error", "started", "value")

    def __init__(self) -> None:
        self.started = False
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None


async def run_in_worker(fn: Callable[[], T]) -> T:
    """Run ``fn`` on a worker thread, with the caller's context variables.

    If the caller is cancelled after ``fn`` already finished (a tool that cancels its
    own run, then returns), the finished result is returned rather than dropped.
    ``StopIteration`` cannot travel through a future, so it arrives as ``RuntimeError``.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    context = contextvars.copy_context()
    outcome: _Outcome[T] = _Outcome()

    waiters = [future]

    def settle() -> None:
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def job() -> None:
        if future.done():
            return  # the caller gave up while the job was queued
        outcome.started = True
        try:
            outcome.value = context.run(fn)
        except BaseException as error:
            outcome.error = error
        outcome.done = True
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(settle)

    _submit(job)
    try:
        await future
    except asyncio.CancelledError:
        if outcome.started and not outcome.done:
            # A tool that cancels its own run and then returns is a few microseconds
            # from done: a short wait keeps its result. A hung one is left running.
            finished: asyncio.Future[None] = loop.create_future()
            waiters.append(finished)
            timer = loop.call_later(FINISH_WAIT, settle)
            try:
                await finished
            finally:
                timer.cancel()
        if not outcome.done:
            raise
    if outcome.error is not None:
        error = outcome.error
        if isinstance(error, StopIteration | StopAsyncIteration):
            raise RuntimeError(f"the tool raised {type(error).__name__}") from error
        raise error
    return cast(T, outcome.value)  # set whenever error is None
