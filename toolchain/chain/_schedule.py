"""Stage 3 of a chain, for the action: its calls run concurrently (at most the chain's
``max_concurrency`` at a time), under timeouts and the run's cancellation, and none can
hang it.

A call is never moved between tasks once it started (cancel scopes, ``asyncio.timeout``
bind to the task they are entered in). The calls of an action start in order, each in
the caller's own task while every call before it there finished without suspending
(most do: no task, no loop turn); the first that suspends is driven on there
(`_drive_on`), and the calls after it start eagerly as tasks of their own, up to their
first real suspension (most finish there: the chain has their outcome without waiting).
A call whose tool runs on a worker thread always suspends, and driven it costs more than
its own task: it always starts as a task. One call alone is driven the same way
(`run_alone`). A call that ignores its cancellation is given ``cancel_grace`` seconds,
then abandoned and reported.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Generator, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from toolchain._concurrency import abandon, eager_task, settle
from toolchain._errors import describe_exception
from toolchain._redact import logger
from toolchain._result import ErrorKind, ToolCall
from toolchain.chain import _step_seam
from toolchain.chain._config import ChainConfig
from toolchain.chain._observe import fail
from toolchain.chain._pipeline import NOT_A_CALL as _NOT_A_CALL
from toolchain.chain._pipeline import run_call
from toolchain.chain._stages import Outcome, Planned, Signals, Start

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["begin_alone", "run_action", "run_alone"]

_log = logger("toolchain")

_GRACE_SLACK = 1e-3
"""Past ``cancel_grace``, before a call of an action is abandoned: one that stops just at
the end of its grace (a sync tool's worker waits as long) is not abandoned for a timer's
rounding."""

Wake = Literal["ready", "timeout", "cancelled", "abandon"]
"""Why `run_alone` resumes: the call's awaited future is done (``ready``), its timeout
passed, the run was cancelled, or the grace after a cancellation ran out."""


async def run_action(
    config: ChainConfig,
    ctx: ExecutionContext,
    items: list[Planned],
    start: Start = run_call,
) -> list[Outcome]:
    """Run every item of an action (more than one) concurrently, at most the chain's
    ``max_concurrency`` at a time; outcomes in order. ``start`` runs one item (the
    stages of a call; a held call's rest, when an action resumes)."""
    runner = _step_seam.current() if _step_seam.active else None
    turns = config.max_concurrency
    if turns == 1 or (
        runner is not None
        and runner.sequential(
            [config.tools.get(item.name) if type(item) is ToolCall else None for item in items]
        )
    ):
        # One at a time, in order: as the chain asks, or a durable run whose calls
        # make steps of their own (sub-agents), so that their steps take the same
        # places in the record on every replay.
        return [
            await run_alone(config, ctx, item, index, start) for index, item in enumerate(items)
        ]
    signals = Signals()
    if turns is not None and turns < len(items):
        start = _in_turn(start, asyncio.Semaphore(turns))
    done: list[Outcome | None] = [None] * len(items)
    tasks: dict[int, asyncio.Task[Outcome]] = {}
    finished: list[asyncio.Task[Outcome]] = []
    driven: _Driven | None = None  # the call that suspended in this task, if one did
    for index, item in enumerate(items):
        # A context of its own, as a task of its own has: what a call sets, neither the
        # caller nor the other calls see (a durable run's step state is per call too).
        context = contextvars.copy_context()
        step = start(config, ctx, index, item, signals)
        if driven is None and not _on_worker(config, item):
            # In this task while no call before it suspended: no task when it ends at once.
            try:
                waiting_on = context.run(step.send, None)
            except StopIteration as stop:
                done[index] = stop.value
            except (KeyboardInterrupt, SystemExit):
                raise  # as a task's step lets them through
            except BaseException as error:  # as in a task: a bug in the chain (see below)
                done[index] = _internal_error(ctx, item, error)
            else:  # it suspended: it goes on in this task, never moved
                driven = _Driven(index, step, waiting_on, context)
            continue
        task, first = eager_task(step, context=context)
        if not first.done:
            tasks[index] = task
            continue
        finished.append(task)
        if first.error is None:
            done[index] = first.value
        else:  # run_call contains every failure: this would be a bug in the chain
            done[index] = _internal_error(ctx, item, first.error)
    if driven is not None or tasks:
        its = await _wait(config, ctx, items, tasks, signals, driven)
        if driven is not None:
            done[driven.index] = its
    for task in finished:  # on 3.11 they still take one empty step: leave none behind
        await settle(task)
    return [
        outcome
        if outcome is not None
        else _outcome_of(config, ctx, items[index], tasks[index], signals.why.get(index))
        for index, outcome in enumerate(done)
    ]


async def run_alone(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    index: int = 0,
    start: Start = run_call,
) -> Outcome:
    """One call, driven in the caller's own task: no task, no loop turn when it
    finishes without suspending, and task-bound state (cancel scopes) intact.

    Timeouts and the run's cancellation are thrown into the call as a task would see
    them; a call that ignores them for ``cancel_grace`` seconds is abandoned (no longer
    driven) and reported.
    """
    begun = begin_alone(config, ctx, item, index, start)
    return begun if isinstance(begun, Outcome) else await begun


def begin_alone(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    index: int = 0,
    start: Start = run_call,
) -> Outcome | Coroutine[Any, Any, Outcome]:
    """`run_alone`'s first step, taken now: the call's outcome when it finished without
    suspending (the common case: no coroutine of its own), else what drives the rest."""
    signals = Signals()
    step = start(config, ctx, index, item, signals)
    try:
        waiting_on = step.send(None)
    except StopIteration as stop:
        finished: Outcome = stop.value
        return finished
    return _drive_alone(config, ctx, item, index, signals, step, waiting_on)


class _Driven:
    """The call of an action that suspended first, in its first step taken in the
    caller's task: driven on there."""

    __slots__ = ("context", "index", "step", "waiting_on")

    def __init__(
        self,
        index: int,
        step: Coroutine[Any, Any, Outcome],
        waiting_on: object,
        context: contextvars.Context,
    ) -> None:
        self.index = index
        self.step = step
        self.waiting_on = waiting_on  # what its first step yielded
        self.context = context  # what it runs in, as a task would run it


async def _drive_on(
    config: ChainConfig,
    ctx: ExecutionContext,
    items: list[Planned],
    signals: Signals,
    driven: _Driven,
) -> Outcome:
    """The ``driven`` call driven to its end in this task, timed and cancelled as it
    would be in a task of its own (the caller's cancellation too: see `_drive_alone`),
    while the action's other calls run: its outcome."""
    item = items[driven.index]
    try:
        return await _drive_alone(
            config,
            ctx,
            item,
            driven.index,
            signals,
            driven.step,
            driven.waiting_on,
            context=driven.context,
            among=True,
        )
    except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
        raise
    except BaseException as error:  # as in a task: run_call contains every failure
        return _internal_error(ctx, item, error)


async def _drive_alone(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    index: int,
    signals: Signals,
    step: Coroutine[Any, Any, Outcome],
    waiting_on: object,
    *,
    context: contextvars.Context | None = None,
    among: bool = False,
) -> Outcome:
    """`run_alone` after the call first suspended (``waiting_on`` what it yielded).

    ``context``: what the call runs in (the caller's own when ``None``). ``among``: the
    call is one of an action's (`_drive_on`), whose caller, cancelled, must not wait
    on it longer than on a task of its own: a cancellation of this task that still
    stands once the call has ended, or ``cancel_grace`` seconds after it came (then the
    call is abandoned), is the caller's and is raised. One that a cancel scope inside
    the call took back (``Task.uncancel``, as ``asyncio.timeout`` and anyio's scopes do
    on exit) was the call's own.
    """
    loop = asyncio.get_running_loop()
    this = asyncio.current_task() if among else None
    cancels = 0 if this is None else this.cancelling()  # the caller's, counted from here
    # Among an action's calls: abandoned no sooner than `_wait` abandons a task of its own.
    patience = config.cancel_grace + (_GRACE_SLACK if among else 0.0)
    wake: asyncio.Future[Wake] = loop.create_future()
    # Among an action's calls, what the call awaits is awaited here as it is (`_Through`)
    # until a cancellation comes: this task wakes in the loop turn the call's own task
    # would, where a wake-up passed on through `wake` takes one more. So the order in
    # which an action's calls go on, and end, is theirs as tasks.
    through = among
    passing = False  # this task waits on what the call awaits, right now
    grace: asyncio.TimerHandle | None = None
    must_cancel: asyncio.CancelledError | None = None  # thrown in when the call resumes
    interrupt: asyncio.CancelledError | None = None  # a cancellation to deliver now
    thrown: asyncio.CancelledError | None = None  # the one thrown in last
    pending: asyncio.Future[object] | None = None  # what the call awaits now

    # A timeout, cancellation or grace that comes while the wake-up is taken (by a
    # `ready` in the same loop turn) waits here for the next: dropped, a call that
    # ignores cancellation would be driven for good (a process that never exits).
    queued: list[Wake] = []

    def signal(kind: Wake) -> None:
        nonlocal through
        if passing and kind in ("timeout", "cancelled"):
            cut_in(kind)
        elif passing or wake.done():
            if kind != "ready":  # a `ready` that finds the wake-up taken is read anyway
                queued.append(kind)
                through = False  # read through `wake` from now on
        else:
            wake.set_result(kind)

    def cut_in(kind: Wake) -> None:
        """A timeout or the run's cancellation, while this task waits on what the call
        awaits: delivered as to a task (see the loop), which wakes this one."""
        nonlocal through, grace, must_cancel
        if (kind == "timeout" and index in signals.untimed) or index in signals.why:
            return
        signals.why[index] = "timeout" if kind == "timeout" else "cancelled"
        grace = loop.call_later(patience, signal, "abandon")
        through = False  # waits from now on go through `wake` (the grace wakes it)
        if pending is None or not pending.cancel():
            must_cancel = asyncio.CancelledError()

    def on_cancel() -> None:
        loop.call_soon_threadsafe(signal, "cancelled")

    def ready(_: object) -> None:
        signal("ready")

    limit = _timeout(config, item)
    timer = None if limit is None else loop.call_later(limit, signal, "timeout")
    others = signals.rearm  # the scheduler's, for an action's other calls

    def rearm(which: int) -> None:  # the call went on after a wait that is not timed
        nonlocal timer
        if which != index:
            if others is not None:
                others(which)
        elif limit is not None:
            if timer is not None:
                timer.cancel()
            timer = loop.call_later(limit, signal, "timeout")

    signals.rearm = rearm
    remove = ctx.on_cancel(on_cancel)
    watched: object = None
    expired = False  # its grace ran out: abandoned unless it ends at once (see below)
    outcome: Outcome
    try:
        while True:
            if expired:  # its grace is over, and it has not ended
                abandon(step)
                outcome = _stopped(config, ctx, item, signals.why.get(index), abandoned=True)
                break
            pending = _future_of(waiting_on)
            if through and (waiting_on is None or _passable(pending, loop)):
                assert this is not None  # among
                before = this.cancelling()
                passing = True
                try:
                    await _Through(pending)
                except GeneratorExit:
                    raise
                except BaseException:  # what the call awaits failed: the call reads that
                    pass
                finally:
                    passing = False
                if this.cancelling() > before:
                    # This task was cancelled (its caller, or a cancel scope inside the
                    # call): what the call awaits was cancelled with it, as a task's is;
                    # else (it was done) the call has it thrown in. Its grace starts.
                    through = False
                    if grace is None:
                        grace = loop.call_later(patience, signal, "abandon")
                    if pending is None or not pending.cancelled():  # else it reads that
                        must_cancel = asyncio.CancelledError()
                if pending is not None and not pending.done():  # not as a task wakes: watch
                    through = False
                    continue
            else:  # through `wake`: timeouts, cancellations and the grace wake it too
                if pending is None:  # a bare yield (asyncio.sleep(0)): one loop turn
                    loop.call_soon(signal, "ready")
                elif pending is not watched:  # once a future: a cancellation waits on it
                    pending.add_done_callback(ready)
                    watched = pending
                interrupt = None
                try:
                    kind = await wake
                except asyncio.CancelledError as error:
                    # This task was cancelled (its caller, or a cancel scope inside the call).
                    kind, interrupt = "ready", error
                    if this is not None and grace is None:  # the caller's, unless taken back
                        grace = loop.call_later(patience, signal, "abandon")
                wake = loop.create_future()
                if queued:
                    wake.set_result(queued.pop(0))
                if interrupt is None:
                    if kind == "abandon":
                        if index not in signals.why and not _cancelled_since(this, cancels):
                            grace = None  # a scope's own cancellation, taken back: go on
                            continue
                        # Among: when what it awaits is done, a task of its own would go
                        # on before its abandonment is read (its wake-up was queued
                        # first): so does this call, once.
                        expired = True
                        if this is None or pending is None or not pending.done():
                            continue
                        kind = "ready"
                    if kind == "timeout" and index in signals.untimed:
                        continue  # it waits for a person: its time starts afresh after (rearm)
                    if kind in ("timeout", "cancelled") and index not in signals.why:
                        signals.why[index] = "timeout" if kind == "timeout" else "cancelled"
                        if grace is not None:  # the caller's: the chain's own counts from now
                            grace.cancel()
                        grace = loop.call_later(patience, signal, "abandon")
                        interrupt = asyncio.CancelledError()
                    elif kind != "ready" or (pending is not None and not pending.done()):
                        continue  # a signal after the first, or a stale wake-up
                if interrupt is not None:
                    # Delivered into the call exactly as a Task delivers it: what the call
                    # awaits is cancelled, and the call resumes once that has ended. A task
                    # or a gather ends only after its children, not at cancel(): resumed
                    # before, the call's await raises "await wasn't used with future" (and
                    # the cancellation is lost). What can no longer be cancelled (it is
                    # ending, or nothing is awaited) is thrown in as the call resumes.
                    if pending is None or pending.done() or not pending.cancel(*interrupt.args[:1]):
                        must_cancel = interrupt
                    if pending is not None and not pending.done():
                        continue  # `ready` resumes the call once it has ended
            if must_cancel is not None:
                thrown, must_cancel = must_cancel, None
                if context is None:
                    waiting_on = step.throw(thrown)
                else:
                    waiting_on = context.run(step.throw, thrown)
            elif context is None:
                waiting_on = step.send(None)
            else:
                waiting_on = context.run(step.send, None)
    except StopIteration as stop:
        outcome = stop.value
    except asyncio.CancelledError:
        # The chain's own cancellation (a timeout, the run's) reached a stage that does
        # not turn it into the call's error (an async hook or guard): the call ends as
        # stopped, as it would in a task of its own, and never cancels the caller.
        why = signals.why.get(index)
        if why is None:
            raise
        outcome = _stopped(config, ctx, item, why, abandoned=False)
    finally:
        remove()
        signals.rearm = others
        for handle in (timer, grace):
            if handle is not None:
                handle.cancel()
        # `signal` and `cut_in` name each other (a cut-in arms the grace with `signal`):
        # left so, each call that waited would be a cycle only the collector frees. A
        # signal that comes after the end (a wake-up of what the call awaited) never
        # cuts in: nothing passes through any more.
        cut_in = _ended
        # A cancellation caught here (a cancel scope inside the call) holds this frame in
        # its traceback: kept in these names, the two would be a cycle too.
        interrupt = must_cancel = thrown = None
    if _cancelled_since(this, cancels):
        raise asyncio.CancelledError()  # the caller's: the call ignored it, or ended first
    return outcome


def _ended(kind: Wake) -> None:
    """`_drive_alone`'s cut-in once the call has ended (never called: see there)."""


def _cancelled_since(task: asyncio.Task[Any] | None, cancels: int) -> bool:
    """Whether ``task`` (when given) has a cancellation standing it did not have at
    ``cancels`` (``Task.cancelling()`` then)."""
    return task is not None and task.cancelling() > cancels


async def _wait(
    config: ChainConfig,
    ctx: ExecutionContext,
    items: list[Planned],
    tasks: dict[int, asyncio.Task[Outcome]],
    signals: Signals,
    driven: _Driven | None,
) -> Outcome | None:
    """Wait for the suspended calls, enforcing timeouts and cancellation: the ``driven``
    one (`_drive_on`) first, whose outcome this is, then the ``tasks``.

    A call that ignores its cancellation is waited for ``cancel_grace`` seconds,
    then abandoned: its task is left running and the call reported as such.
    """
    waiter, unwatch = _watch(config, ctx, items, tasks, signals) if tasks else (None, None)
    try:
        outcome = None if driven is None else await _drive_on(config, ctx, items, signals, driven)
        if waiter is not None:
            await waiter
    except asyncio.CancelledError:
        for task in tasks.values():
            task.cancel()
        raise
    finally:
        if unwatch is not None:
            unwatch()
    return outcome


def _watch(
    config: ChainConfig,
    ctx: ExecutionContext,
    items: list[Planned],
    tasks: dict[int, asyncio.Task[Outcome]],
    signals: Signals,
) -> tuple[asyncio.Future[None], Callable[[], None]]:
    """`_wait`'s watch over the suspended calls, armed now: timeouts and the run's
    cancellation enforced, and a future done once every call ended or was abandoned;
    with what ends the watch (its timers, its hold on the run's cancellation)."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()
    remaining = len(tasks)
    grace = config.cancel_grace

    def finished(_: object) -> None:
        nonlocal remaining
        remaining -= 1
        if remaining == 0 and not waiter.done():
            waiter.set_result(None)

    def give_up() -> None:
        # Stop waiting once every unfinished call was cancelled at least `grace` ago.
        if waiter.done():
            return
        deadline = loop.time() - grace
        if all(
            task.done() or signals.at.get(index, deadline + 1) <= deadline
            for index, task in tasks.items()
        ):
            waiter.set_result(None)

    def stop(index: int, why: ErrorKind) -> None:
        task = tasks.get(index)
        if task is None or task.done() or index in signals.why:
            return
        signals.why[index] = why
        signals.at[index] = loop.time()
        task.cancel()
        loop.call_later(grace + _GRACE_SLACK, give_up)

    def cancel_all() -> None:
        for index in tasks:
            stop(index, "cancelled")

    for task in tasks.values():
        task.add_done_callback(finished)

    def on_cancel() -> None:
        loop.call_soon_threadsafe(cancel_all)

    remove = ctx.on_cancel(on_cancel)
    own: dict[int, asyncio.TimerHandle] = {}  # calls timed afresh after an untimed wait

    def rearm(index: int) -> None:
        limit = _timeout(config, items[index])
        if limit is None or index not in tasks:
            return
        earlier = own.pop(index, None)
        if earlier is not None:
            earlier.cancel()
        own[index] = loop.call_later(limit, stop, index, "timeout")

    def timed(index: int) -> bool:
        return index not in signals.untimed and index not in own

    signals.rearm = rearm
    timers = _arm_timeouts(config, items, tasks, stop, timed)

    def unwatch() -> None:
        remove()
        for timer in (*timers, *own.values()):
            timer.cancel()
        # `rearm` names `stop`, which names `give_up`, which names `signals`: left on it,
        # each action whose calls waited at once would be a cycle only the collector frees.
        signals.rearm = None

    return waiter, unwatch


def _arm_timeouts(
    config: ChainConfig,
    items: list[Planned],
    tasks: Mapping[int, asyncio.Task[Outcome]],
    stop: Callable[[int, ErrorKind], None],
    timed: Callable[[int], bool],
) -> list[asyncio.TimerHandle]:
    """One timer per distinct timeout in the action, cancelling the calls still running
    that it ``timed`` (not those waiting for a person or their turn: `Signals.untimed`).

    Calls start together, so a call's deadline is the action's start plus its
    timeout; timers are far cheaper than an ``asyncio.timeout`` around each call.
    """
    limits = {index: _timeout(config, items[index]) for index in tasks}
    distinct = {t for t in limits.values() if t is not None}
    if not distinct:
        return []

    def expire(limit: float) -> None:
        for index, value in limits.items():
            if value == limit and timed(index):
                stop(index, "timeout")

    loop = asyncio.get_running_loop()
    return [loop.call_later(t, expire, t) for t in distinct]


def _outcome_of(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    task: asyncio.Task[Outcome],
    why: ErrorKind | None,
) -> Outcome:
    if task.done() and not task.cancelled():
        error = task.exception()
        if error is None:
            return task.result()
        return _internal_error(ctx, item, error)
    return _stopped(config, ctx, item, why, abandoned=not task.done())


def _internal_error(ctx: ExecutionContext, item: Planned, error: BaseException) -> Outcome:
    """A failure that escaped the per-call pipeline, which contains every failure: a bug."""
    _log.error("a tool call failed inside the chain itself", exc_info=error)
    call = item if isinstance(item, ToolCall) else ToolCall("error", {})
    return fail(ctx, call, "tool_error", f"internal error: {describe_exception(error)}")


def _stopped(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    why: ErrorKind | None,
    *,
    abandoned: bool,
) -> Outcome:
    """The outcome of a call the chain cancelled (timeout or the run's cancellation)."""
    call = item if type(item) is ToolCall else _NOT_A_CALL
    if why == "timeout":
        message = f"{call.name} did not finish within {config.timeout_of(call.name):g} s"
    else:
        message = f"{call.name} was cancelled: {ctx.cancel_reason or 'cancelled'}"
    if abandoned:
        message += " (it ignored cancellation and was abandoned)"
        _log.warning("abandoned tool call %s (%s): it ignored cancellation", call.name, call.id)
    return fail(ctx, call, why or "cancelled", message, TimeoutError(message))


def _timeout(config: ChainConfig, item: Planned) -> float | None:
    return config.timeout_of(item.name) if type(item) is ToolCall else None


def _in_turn(start: Start, turns: asyncio.Semaphore) -> Start:
    """``start`` run when one of ``turns`` is free (the chain's ``max_concurrency``). A
    call waiting for its turn is not timed: its time limit counts from its start."""

    async def in_turn(
        config: ChainConfig,
        ctx: ExecutionContext,
        index: int,
        item: Planned,
        signals: Signals,
    ) -> Outcome:
        if turns.locked():
            signals.stop_clock(index)
            try:
                await turns.acquire()
            finally:
                signals.start_clock(index)
        else:
            await turns.acquire()  # free: taken without suspending (eager calls stay eager)
        try:
            return await start(config, ctx, index, item, signals)
        finally:
            turns.release()

    return in_turn


def _on_worker(config: ChainConfig, item: Planned) -> bool:
    """Whether ``item``'s tool runs on a worker thread: such a call always suspends, and
    driven in the caller's task it costs more than its own task (`run_action`)."""
    tool = config.offered.get(item.name) if type(item) is ToolCall else None
    return tool is not None and not tool.is_async and not tool.inline


def _future_of(value: object) -> asyncio.Future[object] | None:
    """What a suspended coroutine yielded, as the future it waits on (or None)."""
    return cast("asyncio.Future[object]", value) if isinstance(value, asyncio.Future) else None


class _Through:
    """What a driven call awaits (a future, or ``None``: a bare yield), awaited by the
    task that drives it just as the call's own task would await it: woken, or thrown
    the future's error or cancellation, in the same loop turn."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[object] | None) -> None:
        self.future = future

    def __await__(self) -> Generator[asyncio.Future[object] | None, None, None]:
        # Yielded as the call yielded it: a future still flagged as awaited by
        # ``yield from``, which the task takes (once) and wakes on.
        yield self.future


def _passable(future: asyncio.Future[object] | None, loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``future``, as a call yielded it, can be yielded on as it is (`_Through`):
    a future of this loop, flagged as a task takes it (an odd awaitable's may not be)."""
    return (
        future is not None
        and getattr(future, "_asyncio_future_blocking", False) is True
        and future.get_loop() is loop
    )
