"""Stage 3 of a chain, for the action: its calls run concurrently (at most the chain's
``max_concurrency`` at a time), under timeouts and the run's cancellation, and none can
hang it.

Each call runs eagerly, as its own task, up to its first real suspension: most finish
there, and the chain has their outcome without waiting. One call alone is driven in the
caller's own task (`run_alone`): no task, no loop turn when it finishes without
suspending, and task-bound state (cancel scopes) intact. A call that ignores its
cancellation is given ``cancel_grace`` seconds, then abandoned and reported.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Mapping
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
    context = contextvars.copy_context()
    for index, item in enumerate(items):
        if runner is not None:  # a durable run's step state is per call: a context each
            context = contextvars.copy_context()
        task, first = eager_task(start(config, ctx, index, item, signals), context=context)
        if not first.done:
            tasks[index] = task
            continue
        finished.append(task)
        if first.error is None:
            done[index] = first.value
        else:  # run_call contains every failure: this would be a bug in the chain
            done[index] = _internal_error(ctx, item, first.error)
    if tasks:
        await _wait(config, ctx, items, tasks, signals)
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


async def _drive_alone(
    config: ChainConfig,
    ctx: ExecutionContext,
    item: Planned,
    index: int,
    signals: Signals,
    step: Coroutine[Any, Any, Outcome],
    waiting_on: object,
) -> Outcome:
    """`run_alone` after the call first suspended (``waiting_on`` what it yielded)."""
    loop = asyncio.get_running_loop()
    wake: asyncio.Future[Wake] = loop.create_future()

    def signal(kind: Wake) -> None:
        if not wake.done():
            wake.set_result(kind)

    def on_cancel() -> None:
        loop.call_soon_threadsafe(signal, "cancelled")

    def ready(_: object) -> None:
        signal("ready")

    limit = _timeout(config, item)
    timer = None if limit is None else loop.call_later(limit, signal, "timeout")

    def rearm(_: int) -> None:  # the call went on after a wait that is not timed
        nonlocal timer
        if limit is not None:
            if timer is not None:
                timer.cancel()
            timer = loop.call_later(limit, signal, "timeout")

    signals.rearm = rearm
    remove = ctx.on_cancel(on_cancel)
    grace: asyncio.TimerHandle | None = None
    must_cancel: asyncio.CancelledError | None = None  # thrown in when the call resumes
    watched: object = None
    try:
        while True:
            pending = _future_of(waiting_on)
            if pending is None:  # a bare yield (asyncio.sleep(0)): one loop turn
                loop.call_soon(signal, "ready")
            elif pending is not watched:  # once a future: a cancellation waits on it
                pending.add_done_callback(ready)
                watched = pending
            interrupt: asyncio.CancelledError | None = None
            try:
                kind = await wake
            except asyncio.CancelledError as error:
                # This task was cancelled (its caller, or a cancel scope inside the call).
                kind, interrupt = "ready", error
            wake = loop.create_future()
            if interrupt is None:
                if kind == "abandon":
                    abandon(step)
                    return _stopped(config, ctx, item, signals.why.get(index), abandoned=True)
                if kind == "timeout" and index in signals.untimed:
                    continue  # it waits for a person: its time starts afresh after (rearm)
                if kind in ("timeout", "cancelled") and index not in signals.why:
                    signals.why[index] = "timeout" if kind == "timeout" else "cancelled"
                    grace = loop.call_later(config.cancel_grace, signal, "abandon")
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
                waiting_on = step.throw(thrown)
            else:
                waiting_on = step.send(None)
    except StopIteration as stop:
        outcome: Outcome = stop.value
        return outcome
    except asyncio.CancelledError:
        # The chain's own cancellation (a timeout, the run's) reached a stage that does
        # not turn it into the call's error (an async hook or guard): the call ends as
        # stopped, as it would in a task of its own, and never cancels the caller.
        why = signals.why.get(index)
        if why is None:
            raise
        return _stopped(config, ctx, item, why, abandoned=False)
    finally:
        remove()
        for handle in (timer, grace):
            if handle is not None:
                handle.cancel()


async def _wait(
    config: ChainConfig,
    ctx: ExecutionContext,
    items: list[Planned],
    tasks: dict[int, asyncio.Task[Outcome]],
    signals: Signals,
) -> None:
    """Wait for the suspended calls, enforcing timeouts and cancellation.

    A call that ignores its cancellation is waited for ``cancel_grace`` seconds,
    then abandoned: its task is left running and the call reported as such.
    """
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
        loop.call_later(grace + 1e-3, give_up)

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
    try:
        await waiter
    except asyncio.CancelledError:
        for task in tasks.values():
            task.cancel()
        raise
    finally:
        remove()
        for timer in (*timers, *own.values()):
            timer.cancel()


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


def _future_of(value: object) -> asyncio.Future[object] | None:
    """What a suspended coroutine yielded, as the future it waits on (or None)."""
    return cast("asyncio.Future[object]", value) if isinstance(value, asyncio.Future) else None
