"""`drain`: run a model call or a chain execution while passing on the events it
produces, raced against the run's deadline and, for model calls, its cancellation;
`race`: the same for a model call with no events to pass on (a run not streamed).

The deadline policy: a model call is abandoned at the deadline (``RunStop("limit",
"timeout")``); a chain execution is cancelled and its partial result kept (a run not
streamed awaits its chain itself: ``agents._tool_runs.tool_results``).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from typing import Any, Generic, Literal, TypeVar, cast

from agents._step_state import Done, RunStop
from toolchain import ExecutionContext
from toolchain.runtime import SettleLater, abandon, eager_task

__all__ = ["CANCEL_GRACE", "TIME_LIMIT", "Inbox", "drain", "race"]

T = TypeVar("T")
Q = TypeVar("Q")

CANCEL_GRACE = 1.0
"""Seconds a cancelled call gets to end before it is left behind."""
TIME_LIMIT = "the run's time limit was reached"

_Wake = Literal["ready", "timeout", "cancelled", "abandon"]
"""Why a driven model call resumes: what it awaits is done, the deadline passed, the run
was cancelled, or the grace after its cancellation ran out."""


class Inbox(Generic[Q]):
    """The events a call produces while it runs, for `drain` to pass on in order.

    `ready` is a plain future for the next event: waiting on it leaves nothing scheduled
    when the call ends first, as a task awaiting ``Queue.get()`` would (until cancelled).
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Q] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Q) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def get_nowait(self) -> Q:
        return self._items.popleft()

    def ready(self) -> asyncio.Future[None]:
        """A future that is done once an event is waiting (at once if one is)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._items:
            waiter.set_result(None)
        self._waiter = waiter
        return waiter


def _cancellation(ctx: ExecutionContext) -> tuple[asyncio.Future[None], Callable[[], None]]:
    """A future done when the run is cancelled (from any thread), and the function that
    stops watching. A plain future, not a task waiting on ``ctx.wait_cancelled()``:
    dropping it leaves nothing scheduled."""
    loop = asyncio.get_running_loop()
    cancelled: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not cancelled.done():
            cancelled.set_result(None)

    def wake() -> None:
        loop.call_soon_threadsafe(resolve)

    return cancelled, ctx.on_cancel(wake)


async def drain(
    work: Awaitable[T],
    queue: Inbox[Q],
    ctx: ExecutionContext,
    deadline: float | None,
    *,
    race_cancel: bool,
) -> AsyncGenerator[Q | Done[T], None]:
    """Run ``work``, yielding what lands in ``queue`` meanwhile, then ``Done(result)``.

    With ``race_cancel`` (model calls) it stops with ``RunStop`` at the deadline or when
    the run is cancelled. Without it (tool execution), the chain handles cancellation
    itself and returns what finished, which is kept: at the deadline the run is
    cancelled and the chain's partial result awaited. Whatever it started is done when
    it ends, but a call that ignores cancellation past ``CANCEL_GRACE`` (left behind).
    """
    loop = asyncio.get_running_loop()
    # The tasks that finish at once inside the work (a chain's calls) end with ours,
    # in one loop turn, not one each.
    later = SettleLater()
    if asyncio.iscoroutine(work):
        task, first = eager_task(work, context=later.context())
        if first.done:  # instant models and in-memory tools: no waiting at all
            later.add(task)
            await later.settle()
            if first.error is not None:
                raise first.error
            while not queue.empty():
                yield queue.get_nowait()
            yield Done(cast(T, first.value))
            return
    else:
        task = asyncio.ensure_future(work)
    cancelled, stop_watching = _cancellation(ctx) if race_cancel else (None, None)
    try:
        while True:
            while not queue.empty():
                yield queue.get_nowait()
            ready = queue.ready()
            waiting: set[asyncio.Future[Any]] = {task, ready}
            if cancelled is not None:
                waiting.add(cancelled)
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(
                waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                while not queue.empty():
                    yield queue.get_nowait()
                yield Done(task.result())
                return
            if ready in done:
                continue
            if cancelled is not None and cancelled in done:
                raise RunStop("cancelled", ctx.cancel_reason)
            if not race_cancel:
                ctx.cancel(TIME_LIMIT)
                deadline = None  # now wait for the chain to hand back what finished
                continue
            raise RunStop("limit", "timeout")
    finally:
        if stop_watching is not None:
            stop_watching()
        await _end(task, later)


async def race(work: Awaitable[T], ctx: ExecutionContext, deadline: float | None) -> T:
    """`drain` with ``race_cancel`` and no events to pass on (the model call of a run
    that is not streamed): ``work``'s result, or ``RunStop`` at the deadline or when the
    run is cancelled. No generator: the step awaits it.

    A coroutine is driven in the caller's own task, as the chain drives a lone tool call
    (``toolchain.chain._schedule.run_alone``): a task per model call costs more than an
    instant model's whole call, and the call's task-bound state (an HTTP client's cancel
    scopes) stays in one task from start to end, as in a task of its own. It runs in a
    copy of the caller's context, as a task would.
    """
    if not asyncio.iscoroutine(work):
        return await _race_future(asyncio.ensure_future(work), ctx, deadline)
    # The run's own SettleLater, when it keeps one, takes what the call leaves too.
    outer = SettleLater.current()
    later = outer or SettleLater()
    context = contextvars.copy_context() if outer is not None else later.context()
    step = cast(Coroutine[Any, Any, T], work)
    try:
        waiting_on = context.run(step.send, None)
    except StopIteration as stop:  # an instant model: no waiting at all
        value: T = stop.value
        return value
    finally:
        if outer is None:
            await later.settle()  # what the call itself left (no loop turn if nothing)
    return await _drive(step, waiting_on, context, ctx, deadline)


async def _drive(
    step: Coroutine[Any, Any, T],
    waiting_on: object,
    context: contextvars.Context,
    ctx: ExecutionContext,
    deadline: float | None,
) -> T:
    """`race` after the call first suspended (``waiting_on``: what it yielded).

    At the deadline or the run's cancellation the call is cancelled as a task would be
    (what it awaits is cancelled; what cannot be is thrown in as it resumes), given
    ``CANCEL_GRACE`` seconds to end, then abandoned; ``RunStop`` is raised either way.
    A cancellation of the caller's own task reaches the call the same way, and the call's
    outcome decides, as for any awaited code: a cancel scope inside the call (an
    ``asyncio.timeout``) takes its own cancellation back and the call goes on; a call that
    ignores the caller's for ``CANCEL_GRACE`` seconds is abandoned and the caller cancelled.
    """
    loop = asyncio.get_running_loop()
    host = asyncio.current_task()
    wake: asyncio.Future[_Wake] = loop.create_future()

    # A deadline, cancellation or grace that comes while the wake-up is taken (by a
    # `ready` in the same loop turn) waits here for the next: dropped, a call that goes
    # on waiting would never be stopped.
    queued: list[_Wake] = []

    def signal(kind: _Wake) -> None:
        if not wake.done():
            wake.set_result(kind)
        elif kind != "ready":  # a `ready` that finds the wake-up taken is read anyway
            queued.append(kind)

    def ready(_: object) -> None:
        signal("ready")

    def on_cancel() -> None:
        loop.call_soon_threadsafe(signal, "cancelled")

    timer = (
        None
        if deadline is None
        else loop.call_later(max(0.0, deadline - loop.time()), signal, "timeout")
    )
    remove = ctx.on_cancel(on_cancel)
    grace: asyncio.TimerHandle | None = None
    stopped: RunStop | None = None  # why we cancelled the call, which then ends so
    must_cancel: asyncio.CancelledError | None = None  # thrown in as the call resumes
    interrupt: asyncio.CancelledError | None = None
    thrown: asyncio.CancelledError | None = None
    watched: object = None
    try:
        while True:
            pending = (
                cast("asyncio.Future[object]", waiting_on)
                if isinstance(waiting_on, asyncio.Future)
                else None
            )
            if pending is None:
                if waiting_on is not None:  # what a task refuses too
                    bad = RuntimeError(f"Task got bad yield: {waiting_on!r}")
                    waiting_on = context.run(step.throw, bad)
                    continue
                loop.call_soon(signal, "ready")  # a bare yield (sleep(0)): one loop turn
            elif pending is not watched:  # once per future: a cancellation waits on it
                pending.add_done_callback(ready)
                watched = pending
            interrupt = None
            try:
                kind = await wake
            except asyncio.CancelledError as error:  # the caller's task was cancelled
                kind, interrupt = "ready", error
            wake = loop.create_future()
            if queued:
                wake.set_result(queued.pop(0))
            if interrupt is None:
                if kind == "abandon":
                    abandon(step)
                    if stopped is not None:
                        raise stopped
                    raise asyncio.CancelledError  # the caller's, which the call ignored
                if kind in ("timeout", "cancelled"):
                    if stopped is not None:
                        continue  # a signal after the first
                    stopped = (
                        RunStop("limit", "timeout")
                        if kind == "timeout"
                        else RunStop("cancelled", ctx.cancel_reason)
                    )
                    interrupt = asyncio.CancelledError()
                elif pending is not None and not pending.done():
                    continue  # a stale wake-up
            if interrupt is not None:
                if grace is None:
                    grace = loop.call_later(CANCEL_GRACE, signal, "abandon")
                # Delivered as a Task delivers it (see the chain's `run_alone`): what
                # the call awaits is cancelled and the call resumes once that has ended;
                # what cannot be cancelled is thrown in as it resumes.
                if pending is None or pending.done() or not pending.cancel(*interrupt.args[:1]):
                    must_cancel = interrupt
                if pending is not None and not pending.done():
                    continue  # `ready` resumes the call once it has ended
            if must_cancel is not None:
                thrown, must_cancel = must_cancel, None
                waiting_on = context.run(step.throw, thrown)
            else:
                waiting_on = context.run(step.send, None)
            if grace is not None and stopped is None and host and not host.cancelling():
                grace.cancel()  # a cancel scope in the call took its cancellation back
                grace = None
    except StopIteration as stop:
        if stopped is not None:  # stopped by the run: that wins over what the call did
            raise stopped from None
        result: T = stop.value
        return result
    except RunStop:
        raise
    except BaseException:
        if stopped is not None:
            raise stopped from None
        raise
    finally:
        remove()
        for handle in (timer, grace):
            if handle is not None:
                handle.cancel()
        # A cancellation caught here (a cancel scope inside the call, as the OpenAI SDK's
        # HTTP client uses) holds this frame in its traceback: kept in these names, the
        # two would be a cycle, and the run's context with them (through `remove`),
        # freed only by the collector.
        interrupt = must_cancel = thrown = None


async def _race_future(task: asyncio.Future[T], ctx: ExecutionContext, deadline: float | None) -> T:
    """`race` for an awaitable that is not a coroutine: waited on as a future."""
    cancelled, stop_watching = _cancellation(ctx)
    try:
        timeout = None if deadline is None else max(0.0, deadline - task.get_loop().time())
        done, _ = await asyncio.wait(
            (task, cancelled), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            return task.result()
        if cancelled in done:
            raise RunStop("cancelled", ctx.cancel_reason)
        raise RunStop("limit", "timeout")
    finally:
        stop_watching()
        await _end(task, None)


async def _end(task: asyncio.Future[Any], later: SettleLater | None) -> None:
    """Whatever the work started is done (or, past ``CANCEL_GRACE``, left behind);
    ``later``: where its finished-at-once tasks were handed (None: to the run's)."""
    if not task.done():
        try:
            if _not_started(task):
                # On Python 3.11 the task is an eager one stepped by hand
                # (``eager_task``): cancelled before its first turn, it would never
                # resume the work, which the collector then closes instead of
                # cancelling. A stream closed as soon as it yields an event gets here
                # that early: one loop turn first.
                await asyncio.sleep(0)
        finally:  # even if that turn is cancelled (a cancel scope cancels every await)
            if not task.done():
                task.cancel()
                # Bounded: a model call or chain that ignores cancellation is left behind.
                await asyncio.wait({task}, timeout=CANCEL_GRACE)
    if later is not None:
        await later.settle()


def _not_started(task: asyncio.Future[Any]) -> bool:
    """Whether ``task`` is a task whose coroutine has not had its first turn yet."""
    get_coro = getattr(task, "get_coro", None)
    coro = get_coro() if callable(get_coro) else None
    return inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED
