"""A bounded pool of daemon worker threads for synchronous tools, which stuck calls
cannot starve.

``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run`` joins
on exit: one hung tool would hang the whole run after its timeout fired. These
workers are daemon threads that nobody joins.

At most ``MAX_WORKERS`` (32) threads run calls at once: further calls wait in the
queue, and the wait counts against their timeouts, so one action of 10,000 blocking
calls cannot start 10,000 threads. A job whose caller already gave up is skipped, not
run.

Python cannot interrupt a function that runs. When a call's caller gives up on it (its
timeout passed, or the run was cancelled) while the function still runs, its thread is
*abandoned*: left to the function, no longer counted among the ``MAX_WORKERS``, and
replaced, so calls stuck in a dead network read never starve the ones after them. A
WARNING on the ``toolchain`` logger names the tool, the call id and how many calls are
stuck now; an INFO record says when a stuck call returns at last (its thread then
exits). The pool keeps at most ``MAX_ABANDONED`` (128) abandoned threads: at that
ceiling a new sync call fails at once with `WorkersStuck`, naming the stuck tools (the
chain makes it that call's ``limit`` error and logs it at ERROR), rather than wait
behind them, until some of them return. So a process holds at most ``MAX_WORKERS`` threads
running calls, plus the abandoned ones, to which new calls stop adding at
``MAX_ABANDONED``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Generic, TypeVar, cast

from toolchain._logs import logger

__all__ = ["MAX_ABANDONED", "MAX_WORKERS", "WorkersStuck", "run_in_worker", "stuck_calls"]

T = TypeVar("T")

MAX_WORKERS = 32
"""Threads that run sync calls at once; more calls wait in the queue."""
MAX_ABANDONED = 128
"""Abandoned threads (calls still running after their caller gave up) the pool keeps;
at this many, new sync calls fail at once instead of waiting behind them."""
FINISH_WAIT = 0.05
"""Seconds a cancelled caller waits for a sync tool that is already running to return."""
_MAX_IDLE_WAIT = 60.0  # seconds an idle worker lingers before exiting
_NAMES_SHOWN = 5  # stuck tools named in a refusal; the rest are counted

_log = logger("toolchain")


class WorkersStuck(RuntimeError):
    """A sync call refused because ``MAX_ABANDONED`` earlier calls are stuck; the
    message names them and says what the model can do."""


class _Job:
    """One call on its way through the pool, and what the pool knows of its thread."""

    __slots__ = (
        *("abandoned", "call_id", "given_up", "returned", "run", "started", "tool", "warned"),
        "when",
    )

    def __init__(self, run: Callable[[], None], tool: str, call_id: str) -> None:
        self.run = run
        self.tool = tool
        self.call_id = call_id
        self.when = 0.0  # time.monotonic() when it started
        # Under _lock: the caller gives up and the worker starts or returns, in any order.
        self.started = False
        self.given_up = False  # before it started: it never will
        self.abandoned = False  # while it ran: its thread is left to it
        self.warned = False  # its abandonment logged (it ran past FINISH_WAIT)
        self.returned = False


_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_lock = threading.Lock()
# Invariant: workers waiting on the queue == _idle + (jobs queued - _backlog). A submit
# reserves an idle worker (_idle - 1), or starts one while fewer than MAX_WORKERS live,
# or else queues its job as backlog, which the next worker to come free takes.
_idle = 0
_threads = 0  # live workers: idle, or running a job nobody abandoned
_backlog = 0
_stuck: dict[_Job, None] = {}  # abandoned jobs still running, oldest first


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
        if _begin(job):
            job.run()
        if not _rejoin(job):
            return


def _begin(job: _Job) -> bool:
    """Whether ``job`` runs: not if its caller gave up while it waited in the queue."""
    with _lock:
        if job.given_up:
            return False
        job.started = True
    job.when = time.monotonic()
    return True


def _rejoin(job: _Job) -> bool:
    """After ``job`` returned: whether this thread serves on (False: it was abandoned,
    and a replacement already took its place)."""
    global _idle, _backlog
    with _lock:
        job.returned = True
        if job.abandoned:
            del _stuck[job]
            left = len(_stuck)
            if not job.warned:  # back within FINISH_WAIT: nothing was said of it
                return False
        elif _backlog > 0:
            _backlog -= 1
            return True
        else:
            _idle += 1
            return True
    took = time.monotonic() - job.when
    _log.info(
        "stuck sync tool %s (call %s) returned after %.1f s; %d stuck now",
        job.tool or "?",
        job.call_id or "?",
        took,
        left,
    )
    return False


def _start_worker() -> None:
    threading.Thread(target=_worker, name="tool-worker", daemon=True).start()


def _submit(job: _Job) -> None:
    global _idle, _threads, _backlog
    refusal: str | None = None
    start = False
    with _lock:
        if len(_stuck) >= MAX_ABANDONED:
            refusal = _refusal(job)
        else:
            if _idle > 0:
                _idle -= 1
            elif _threads < MAX_WORKERS:
                _threads += 1
                start = True
            else:
                _backlog += 1
    if refusal is not None:
        raise WorkersStuck(refusal)
    if start:
        _start_worker()
    _jobs.put(job)


def _refusal(job: _Job) -> str:
    """Why ``job`` is not run, naming the stuck tools (the most stuck first). Under _lock."""
    counts = Counter(stuck.tool or "?" for stuck in _stuck).most_common()
    names = ", ".join(f"{name} ({count})" for name, count in counts[:_NAMES_SHOWN])
    if len(counts) > _NAMES_SHOWN:
        names += f" and {len(counts) - _NAMES_SHOWN} more tools"
    return (
        f"{job.tool or 'this tool'} was not run: {len(_stuck)} sync tool calls in this "
        f"process are still running after they timed out or were cancelled ({names}), "
        f"the most it keeps ({MAX_ABANDONED}); it runs no sync tool until some of them "
        "return. Do without this tool for now, or try it again later."
    )


def _give_up(job: _Job) -> None:
    """The caller gave up on ``job``. Not started yet: it never will. Still running: it
    keeps its thread, which is replaced for the calls waiting in the queue (now, not
    after ``FINISH_WAIT``: a caller that is itself abandoned never gets that far)."""
    global _threads, _backlog
    with _lock:
        if not job.started:
            job.given_up = True
            return
        if job.returned or job.abandoned:
            return
        job.abandoned = True
        _threads -= 1
        _stuck[job] = None
        start = _backlog > 0 and len(_stuck) <= MAX_ABANDONED
        if start:
            _backlog -= 1
            _threads += 1
    if start:
        _start_worker()


def _warn_if_stuck(job: _Job) -> None:
    """``FINISH_WAIT`` after its caller gave up: say so if ``job`` still runs."""
    with _lock:
        if not job.abandoned or job.returned:
            return
        job.warned = True
        stuck = len(_stuck)
    _log.warning(
        "sync tool %s (call %s) still runs after its call timed out or was cancelled: "
        "its thread is abandoned to it and replaced; %d stuck now (at %d, new sync "
        "calls fail at once)",
        job.tool or "?",
        job.call_id or "?",
        stuck,
        MAX_ABANDONED,
    )


def stuck_calls() -> list[tuple[str, str]]:
    """``(tool, call id)`` of each abandoned call still running, oldest first."""
    with _lock:
        return [(job.tool, job.call_id) for job in _stuck]


class _Outcome(Generic[T]):
    """What the job produced, readable from the loop even if the future was cancelled."""

    __slots__ = ("done", "error", "started", "value")

    def __init__(self) -> None:
        self.started = False
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None


async def run_in_worker(fn: Callable[[], T], *, tool: str = "", call_id: str = "") -> T:
    """Run ``fn`` on a worker thread, with the caller's context variables.

    ``tool`` and ``call_id`` name the call in the pool's log records and refusals. If
    the caller is cancelled after ``fn`` already finished (a tool that cancels its own
    run, then returns), the finished result is returned rather than dropped; if ``fn``
    still runs, its thread is abandoned (see the module doc). Raises `WorkersStuck` at
    once when ``MAX_ABANDONED`` calls are stuck. ``StopIteration`` cannot travel
    through a future, so it arrives as ``RuntimeError``.
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

    def run() -> None:
        outcome.started = True
        try:
            outcome.value = context.run(fn)
        except BaseException as error:
            outcome.error = error
        outcome.done = True
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(settle)

    job = _Job(run, tool, call_id)
    _submit(job)
    try:
        await future
    except asyncio.CancelledError:
        if not outcome.done:
            _give_up(job)
        if outcome.started and not outcome.done:
            # A tool that cancels its own run and then returns is a few microseconds
            # from done: a short wait keeps its result. A hung one is left running. The
            # timer fires even if this coroutine is never resumed (its caller abandoned).
            finished: asyncio.Future[None] = loop.create_future()
            waiters.append(finished)

            def expire() -> None:
                _warn_if_stuck(job)
                settle()

            loop.call_later(FINISH_WAIT, expire)
            await finished
        if not outcome.done:
            raise
    if outcome.error is not None:
        error = outcome.error
        if isinstance(error, StopIteration | StopAsyncIteration):
            raise RuntimeError(f"the tool raised {type(error).__name__}") from error
        raise error
    return cast(T, outcome.value)  # set whenever error is None
