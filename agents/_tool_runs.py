"""A step's tool runs, shared by both agents' readers: a chain execution whose call
events pass on to the stream as they happen (the very events the chain emitted on
``ctx.events``), and the streak of failed steps. A run that is not streamed (``run``)
reads no call events, so it does not subscribe to them: the chain then builds none,
unless an observer of the run's own wants them. (A call to a tool the step's hooks
turned off is the chain's to answer: ``toolchain.runtime.narrow_chain``.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Sequence
from contextlib import aclosing

from agents._race import TIME_LIMIT, Inbox, drain
from agents._step_state import Done
from toolchain import (
    ExecutionContext,
    Stats,
    ToolCallFinished,
    ToolCallStarted,
    ToolChainResult,
)
from toolchain.runtime import SettleLater

__all__ = ["count_tool_errors", "run_tools", "step_tools", "tool_results"]


async def run_tools(
    ctx: ExecutionContext,
    work: Awaitable[ToolChainResult],
    deadline: float | None,
    *,
    streaming: bool,
) -> AsyncGenerator[ToolCallStarted | ToolCallFinished | Done[ToolChainResult], None]:
    """Run one chain execution, yielding its tool-call events as they happen when
    ``streaming``: the chain's own, as emitted (one object per fact, on the bus and in
    the stream); else only its result."""
    if not streaming:  # nothing to pass on while it runs: awaited here, no task
        yield Done(await tool_results(ctx, work, deadline))
        return
    queue: Inbox[ToolCallStarted | ToolCallFinished] = Inbox()
    draining = drain(work, queue, ctx, deadline, race_cancel=False)
    unsubscribe = [
        ctx.events.subscribe(ToolCallStarted, queue.put_nowait),
        ctx.events.subscribe(ToolCallFinished, queue.put_nowait),
    ]
    try:
        async with aclosing(draining) as items:
            async for item in items:
                yield item
    finally:
        for remove in unsubscribe:
            remove()


def tool_results(
    ctx: ExecutionContext, work: Awaitable[ToolChainResult], deadline: float | None
) -> Awaitable[ToolChainResult]:
    """One chain execution of a run that is not streamed: awaited in the run's own task
    (no events to pass on while it runs, so no task to race it in). At ``deadline`` the
    run is cancelled, as `drain` does, and what the chain hands back (what finished) is
    kept. With no deadline, in a run that settles what finishes at once, ``work`` is
    the caller's to await as it is: nothing to do around it, so no coroutine."""
    if deadline is None and SettleLater.current() is not None:
        return work
    return _timed(ctx, work, deadline)


async def _timed(
    ctx: ExecutionContext, work: Awaitable[ToolChainResult], deadline: float | None
) -> ToolChainResult:
    timer = None
    if deadline is not None:
        timer = asyncio.get_running_loop().call_at(deadline, ctx.cancel, TIME_LIMIT)
    try:
        if SettleLater.current() is not None:  # the run's: it settles what finished at once
            return await work
        return await SettleLater().awaiting(work)
    finally:
        if timer is not None:
            timer.cancel()


async def step_tools(
    ctx: ExecutionContext,
    work: Awaitable[ToolChainResult],
    deadline: float | None,
    results: list[ToolChainResult],
    *,
    streaming: bool,
) -> AsyncGenerator[ToolCallStarted | ToolCallFinished, None]:
    """`run_tools` for a step: its result appended to ``results`` (the step's), its call
    events yielded; closed with its caller."""
    async with aclosing(run_tools(ctx, work, deadline, streaming=streaming)) as items:
        async for item in items:
            if isinstance(item, Done):
                results.append(item.value)
            else:
                yield item


def count_tool_errors(ctx: ExecutionContext, results: Sequence[ToolChainResult]) -> None:
    """The consecutive-tool-error streak: a step whose calls all failed extends it, one
    call that succeeded ends it (a step that made no call leaves it)."""
    called = False
    for result in results:
        for error in result.raw.errors:
            if error is None:
                ctx.stats.set(Stats.CONSECUTIVE_TOOL_ERRORS, 0)
                return
            called = True
    if called:
        streak = ctx.stats.get(Stats.CONSECUTIVE_TOOL_ERRORS)
        ctx.stats.set(Stats.CONSECUTIVE_TOOL_ERRORS, streak + 1)
