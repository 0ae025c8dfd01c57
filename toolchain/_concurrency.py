"""How the toolchain runs work concurrently without any call being able to hang a run.

- abandoned work: calls and tasks that ignored cancellation are given up on, logged,
  and never resumed again;
- the worker pool: synchronous tools run on a bounded pool of daemon threads that stuck
  calls cannot starve (an abandoned thread is replaced, up to ``MAX_ABANDONED``);
- eager tasks: a coroutine runs up to its first real suspension inside its own task,
  so work that never suspends costs no loop turn (``eager_task``, ``settle``);
- ``run_sync``: ``asyncio.run`` that a task swallowing its cancellation cannot hold.

One module because each part leans on the others: the pool abandons threads the way the
loop abandons tasks, and ``run_sync`` settles what eager tasks leave.
"""

from __future__ import annotations

import asyncio
import asyncio.tasks
import contextlib
import contextvars
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar, cast

from toolchain._errors import ToolchainError, ToolchainStateError
from toolchain._redact import logger

# Abandoned work: calls and tasks that ignored cancellation, never resumed again.
#
# When the last reference to a suspended coroutine goes, Python closes it: it throws
# ``GeneratorExit`` in at its ``await``. Code that already swallowed ``CancelledError``
# (a bare ``except:`` in a retry loop) swallows that too and goes on, and with no event
# loop running its next ``await asyncio.sleep(...)`` fails at once, so it spins for ever:
# at interpreter exit (module globals are cleared), or mid-run when a bounded store
# drops an old entry. So abandoned work is kept alive for good, with one reference that
# is never released. The cost is the memory of each abandoned call, which is logged.

__all__ = [
    "MAX_ABANDONED",
    "MAX_WORKERS",
    "SHUTDOWN_GRACE",
    "EagerStart",
    "SettleLater",
    "WorkersStuck",
    "abandon",
    "abandoned_count",
    "eager_task",
    "run_in_worker",
    "run_sync",
    "settle",
    "stuck_calls",
]

_kept: list[object] = []
_count = 0


def abandon(work: object) -> None:
    """Keep ``work`` (a coroutine or task) alive until the process ends, unresumed.

    For a call that ignored its cancellation past its grace: closing it would run its
    cleanup at an arbitrary time (in the collector, at shutdown), while the call may
    still hold what the cleanup releases; it is counted and left alone instead.

    >>> async def stuck() -> None:
    ...     pass
    >>> before = abandoned_count()
    >>> abandon(stuck())  # never resumed, never closed: no "never awaited" warning
    >>> abandoned_count() - before
    1
    """
    global _count
    _count += 1
    if sys.implementation.name == "cpython":
        import ctypes  # only here: most runs never abandon anything

        # A reference no module owns: interpreter shutdown cannot drop it either.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(work))
    else:  # pragma: no cover - other interpreters close objects at exit differently
        _kept.append(work)


def abandoned_count() -> int:
    """How many calls and tasks this process has abandoned so far."""
    return _count


# A bounded pool of daemon worker threads for synchronous tools, which stuck calls
# cannot starve.
#
# ``asyncio.to_thread`` uses the loop's default executor, which ``asyncio.run`` joins
# on exit: one hung tool would hang the whole run after its timeout fired. These
# workers are daemon threads that nobody joins.
#
# At most ``MAX_WORKERS`` (32) threads run calls at once: further calls wait in the
# queue, and the wait counts against their timeouts, so one action of 10,000 blocking
# calls cannot start 10,000 threads. A job whose caller already gave up is skipped, not
# run.
#
# Python cannot interrupt a function that runs. When a call's caller gives up on it (its
# timeout passed, or the run was cancelled) while the function still runs, its thread is
# *abandoned*: left to the function, no longer counted among the ``MAX_WORKERS``, and
# replaced, so calls stuck in a dead network read never starve the ones after them. A
# WARNING on the ``toolchain`` logger names the tool, the call id and how many calls are
# stuck now; an INFO record says when a stuck call returns at last (its thread then
# exits). The pool keeps at most ``MAX_ABANDONED`` (128) abandoned threads: at that
# ceiling a new sync call fails at once with `WorkersStuck`, naming the stuck tools (the
# chain makes it that call's ``limit`` error and logs it at ERROR), rather than wait
# behind them, until some of them return. So a process holds at most ``MAX_WORKERS`` threads
# running calls, plus the abandoned ones, to which new calls stop adding at
# ``MAX_ABANDONED``.


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


class WorkersStuck(ToolchainError, RuntimeError):
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
        # Let go of it before waiting for the next: an idle worker kept the last job (its
        # event loop's futures and callbacks) until it took another.
        del job


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
    # Taken out by the thread that runs it: once it ran, the job holds neither the call
    # (a tool's arguments, its run's context) nor the context variables.
    work = [(contextvars.copy_context(), fn)]
    outcome: _Outcome[T] = _Outcome()

    waiters = [future]

    def settle() -> None:
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def run() -> None:
        context, call = work.pop()
        outcome.started = True
        try:
            outcome.value = context.run(call)
        except BaseException as error:
            outcome.error = error
        del context, call  # before the caller is woken: it may end its run at once
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
    # Taken out of the outcome, which the job (and an idle worker) may still hold: a
    # result or a traceback kept there would keep the call's run alive.
    error, value = outcome.error, outcome.value
    outcome.error = outcome.value = None
    if error is not None:
        try:
            if isinstance(error, StopIteration | StopAsyncIteration):
                raise RuntimeError(f"the tool raised {type(error).__name__}") from error
            raise error
        finally:  # its traceback holds this frame: no cycle through this local
            del error
    return cast(T, value)  # set whenever error is None


# Eager tasks: run a coroutine up to its first real suspension inside its own task.
#
# Most tool calls and many model calls finish without ever suspending (an async tool
# computing in memory, a scripted or cached model). Waiting on a plain ``Task`` costs
# the caller event-loop round trips even then. ``eager_task`` does what Python 3.12's
# eager task factory does, on 3.11 too: the task is created, made the current task, and
# the coroutine stepped at once. If it finishes there, the caller has the result
# without waiting; if it suspends, the same task carries it on. Because the coroutine
# runs as its own task from the first step, task-bound state (anyio/httpx cancel
# scopes, ``asyncio.current_task()``) stays consistent across the suspension.
#
# On 3.12+ the task is a real eager task: one that finished in its first step is done
# at once. On 3.11 such a task still has one empty step to take at the next loop turn;
# `settle` waits for it, so that a run or a chain leaves no task scheduled behind it.
# Inside work started by `SettleLater` (an agent's model call or chain execution), such
# tasks are handed to it instead and settled together when that work ends: a chain
# whose calls all finished at once then returns without a loop turn of its own.


# Documented only in 3.12 (as the eager task factory's internals), present since 3.7.
_enter_task = asyncio.tasks._enter_task  # pyright: ignore[reportPrivateUsage]  # see above
_leave_task = asyncio.tasks._leave_task  # pyright: ignore[reportPrivateUsage]  # see above


class _Forward:
    """Yields one value to the running task: what a suspended coroutine waits on."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self) -> Generator[object, None, None]:
        yield self.value


class EagerStart(Generic[T]):
    """What the eager first step produced: ``done`` with a ``value`` or an ``error``,
    or suspended on ``waiting_on``."""

    __slots__ = ("done", "error", "value", "waiting_on")

    def __init__(self) -> None:
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None
        self.waiting_on: object = None


async def _carry_on(step: Coroutine[Any, Any, T], first: EagerStart[T]) -> T:
    """The task's body: the eager step's outcome, or the rest of the coroutine."""
    if first.done:  # the caller read the outcome from `first` (errors too): just end
        return cast(T, first.value)
    waiting_on = first.waiting_on
    while True:
        try:
            await _Forward(waiting_on)
        except BaseException as error:  # a failed or cancelled future, or our cancellation
            ready = getattr(waiting_on, "done", None)
            if not (callable(ready) and ready()):
                try:
                    waiting_on = step.throw(error)
                except StopIteration as stop:
                    thrown: T = stop.value
                    return thrown
                continue
        try:
            waiting_on = step.send(None)
        except StopIteration as stop:
            result: T = stop.value
            return result


def eager_task(
    coro: Coroutine[Any, Any, T], *, context: contextvars.Context | None = None
) -> tuple[asyncio.Task[T], EagerStart[T]]:
    """``coro`` started now as a task; its first step has already run.

    Returns the task and the first step's outcome: when ``first.done`` the result (or
    ``first.error``) is there to read without awaiting, and the task is done (3.12+) or
    ends at the next loop turn (3.11; `settle` waits for that). Must be called from a
    running event loop.

    >>> async def main() -> tuple[bool, int | None, bool]:
    ...     async def instant() -> int:
    ...         return 42
    ...     task, first = eager_task(instant())
    ...     await settle(task)
    ...     return first.done, first.value, task.done()
    >>> asyncio.run(main())
    (True, 42, True)
    """
    return _start(coro, context)


def _stepped_task(
    coro: Coroutine[Any, Any, T], context: contextvars.Context | None
) -> tuple[asyncio.Task[T], EagerStart[T]]:
    """Python 3.11: a task made current by hand while its coroutine takes a first step."""
    loop = asyncio.get_running_loop()
    first: EagerStart[T] = EagerStart()
    run_in = context if context is not None else contextvars.copy_context()
    task = loop.create_task(_carry_on(coro, first), context=run_in)
    caller = asyncio.current_task(loop)
    if caller is not None:
        _leave_task(loop, caller)
    _enter_task(loop, task)
    try:
        first.waiting_on = run_in.run(coro.send, None)
    except StopIteration as stop:
        first.done, first.value = True, stop.value
    except BaseException as error:
        first.done, first.error = True, error
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
    finally:
        _leave_task(loop, task)
        if caller is not None:
            _enter_task(loop, caller)
    return task, first


# Chosen by version, so that each is type-checked only where it exists (eager_start: 3.12).
if sys.version_info >= (3, 12):

    def _native_eager_task(
        coro: Coroutine[Any, Any, T], context: contextvars.Context | None
    ) -> tuple[asyncio.Task[T], EagerStart[T]]:
        """Python 3.12's eager task, read into an `EagerStart`."""
        first: EagerStart[T] = EagerStart()
        loop = asyncio.get_running_loop()
        task = asyncio.Task(coro, loop=loop, context=context, eager_start=True)
        if task.done():
            first.done = True
            try:
                first.value = task.result()
            except BaseException as error:  # read here, as the 3.11 path does
                first.error = error
        return task, first

    _start = _native_eager_task
else:
    _start = _stepped_task


class SettleLater:
    """Collects the finished-at-once tasks of some work, to settle them in one loop turn.

    Work run in `context` hands such tasks here from `settle` (nested work too, as
    contexts are copied into the tasks it starts), until `settle` is called here.
    """

    __slots__ = ("_open", "_tasks")

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[Any]] = []
        self._open = True

    def context(self) -> contextvars.Context:
        """A copy of the current context in which `settle` hands tasks to this."""
        context = contextvars.copy_context()
        context.run(_SETTLE_LATER.set, self)
        return context

    def add(self, task: asyncio.Task[Any]) -> bool:
        """Take ``task`` to settle later; False once this has settled, or holds as many
        as it keeps (settle it now: that loop turn ends the ones held too)."""
        if not self._open:
            return False
        if len(self._tasks) >= _MAX_HELD:  # a long run that never waits: stay bounded
            self._tasks = [held for held in self._tasks if not held.done()]
            if len(self._tasks) >= _MAX_HELD:
                return False
        self._tasks.append(task)
        return True

    async def awaiting(self, work: Awaitable[T]) -> T:
        """``work`` awaited in the current task, the tasks that finish at once inside it
        taken here meanwhile and settled with it, in one loop turn.

        No task of its own: where nothing must be raced against the work (events to pass
        on, a model call to abandon), a task to run it in costs more than the work.
        """
        token = _SETTLE_LATER.set(self)
        try:
            value = await work
        finally:
            _SETTLE_LATER.reset(token)
        await self.settle()
        return value

    @staticmethod
    def current() -> SettleLater | None:
        """The `SettleLater` the current context hands tasks to, if any (and still open)."""
        later = _SETTLE_LATER.get()
        return later if later is not None and later._open else None

    async def settle(self) -> None:
        """Wait for every task taken to end; later ones are settled where they are made."""
        self._open = False
        tasks, self._tasks = self._tasks, []
        if all(task.done() for task in tasks):
            return
        await asyncio.sleep(0)  # their last steps were queued before this one: see settle
        pending = [task for task in tasks if not task.done()]
        if pending:
            await asyncio.wait(pending)


_MAX_HELD = 256
"""Tasks a `SettleLater` holds at most (a run's instant steps hand it three each)."""

_SETTLE_LATER: contextvars.ContextVar[SettleLater | None] = contextvars.ContextVar(
    "toolchain_settle_later", default=None
)


async def settle(task: asyncio.Task[Any]) -> None:
    """Wait for a task whose coroutine already finished in its eager first step to end.

    On 3.12+ it has ended; on 3.11 it takes its last, empty step at the next loop turn.
    Its outcome was read from `EagerStart`: the task itself only returns.

    That step was queued when the task was made, so a bare yield (one loop turn, where
    ``asyncio.wait`` takes three) resumes us after it has run.
    """
    if task.done():
        return
    later = _SETTLE_LATER.get()
    if later is not None and later.add(task):
        return
    await asyncio.sleep(0)
    if not task.done():  # not one of ours after all: wait for it properly
        await asyncio.wait((task,))


# ``run_sync``: ``asyncio.run`` that cannot be held hostage by a task at shutdown.
#
# ``asyncio.run`` cancels the tasks left over when its coroutine returns and then waits
# for *all* of them. A tool that swallows ``CancelledError`` (a bare ``except:`` in a
# retry loop) never ends, so neither would the program. Here leftover tasks get a grace
# period after cancellation and are then abandoned (and logged).


SHUTDOWN_GRACE = 1.0
"""Seconds leftover tasks get to finish after cancellation before they are abandoned."""


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
        raise ToolchainStateError(
            "run_sync() was called inside a running event loop; await instead"
        )
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
