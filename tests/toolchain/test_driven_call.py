"""The last call of an action starts in the caller's own task and, when it suspends, is
driven on there (one task fewer per action): it runs concurrently with the others, and is
timed, cancelled and abandoned exactly as a call in a task of its own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time

import anyio
import pytest

from formats import XMLFormat
from tests.support.tools import AsyncSleeper, Stubborn, add
from toolchain import ExecutionContext, JSONToolChain, ToolCallFinished, tool

FMT = XMLFormat()


def action(*calls: tuple[str, dict[str, object]]) -> str:
    return json.dumps([{"tool": name, "args": args} for name, args in calls])


async def test_two_calls_that_wait_on_each_other_both_finish() -> None:
    # Ping-pong, three rounds: run one after the other, either call would wait for ever.
    pings = [asyncio.Event() for _ in range(3)]
    pongs = [asyncio.Event() for _ in range(3)]

    @tool
    async def rally(side: str) -> str:
        """Plays one side of a rally."""
        for ping, pong in zip(pings, pongs, strict=True):
            if side == "first":
                await asyncio.wait_for(ping.wait(), 5)
                pong.set()
            else:
                ping.set()
                await asyncio.wait_for(pong.wait(), 5)
        return side

    chain = JSONToolChain().register_tool(rally)
    content = action(("rally", {"side": "first"}), ("rally", {"side": "last"}))
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None, None)
    assert [result.raw.output(i, str) for i in range(2)] == ["first", "last"]


async def test_the_last_call_goes_on_in_the_loop_turn_its_own_task_would() -> None:
    # What the last call awaits is done first, in the same loop turn as what the first
    # awaits: as tasks, the last goes on (and ends) first. Passed on to the caller's task
    # through a wake-up of its own, it went on a loop turn later: the order flipped.
    loop = asyncio.get_running_loop()
    awaited = {"first": loop.create_future(), "last": loop.create_future()}

    @tool
    async def wait_for(side: str) -> str:
        """Waits for its side's signal."""
        await awaited[side]
        return side

    def both() -> None:
        awaited["last"].set_result(None)
        awaited["first"].set_result(None)

    ctx = ExecutionContext()
    ended: list[str] = []
    ctx.events.subscribe(ToolCallFinished, lambda event: ended.append(event.id))
    loop.call_later(0.01, both)
    chain = JSONToolChain().register_tool(wait_for)
    content = action(("wait_for", {"side": "first"}), ("wait_for", {"side": "last"}))
    result = await chain.execute(ctx, content, FMT)
    assert result.raw.errors == (None, None)
    assert ended == ["call_2", "call_1"]


async def test_the_last_call_times_out_as_a_call_in_its_own_task() -> None:
    chain = JSONToolChain(timeout=0.2).register_tool(AsyncSleeper())
    content = action(("async_sleep", {"seconds": 0.01}), ("async_sleep", {"seconds": 5}))
    result = await chain.execute(ExecutionContext(), content, FMT)
    done, late = result.raw.errors
    assert done is None and result.raw.output(0, str) == "awake"
    assert late is not None and late.kind == "timeout"
    assert late.message == "async_sleep did not finish within 0.2 s"


async def test_cancelling_the_run_cancels_the_last_call_and_keeps_what_finished() -> None:
    ctx = ExecutionContext()
    chain = JSONToolChain().register_tool(AsyncSleeper()).register_tool(add)
    content = action(("add", {"a": 1}), ("async_sleep", {"seconds": 5}))
    task = asyncio.create_task(chain.execute(ctx, content, FMT))
    await asyncio.sleep(0.02)
    threading.Thread(target=ctx.cancel, args=("user pressed stop",)).start()
    result = await asyncio.wait_for(task, timeout=5)  # a hang guard, not a speed limit
    done, cancelled = result.raw.errors
    assert done is None and result.raw.output(0, int) == 1
    assert cancelled is not None and cancelled.kind == "cancelled"
    assert cancelled.message == "async_sleep was cancelled: user pressed stop"


def test_a_last_call_that_swallows_cancellation_is_abandoned_after_its_grace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chain = JSONToolChain(timeout=0.05, cancel_grace=0.05)
    chain.register_tool(Stubborn()).register_tool(AsyncSleeper())
    content = action(("async_sleep", {"seconds": 0.01}), ("stubborn", {"city": "x"}))
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        result = chain.execute_sync(ExecutionContext(), content, FMT)
    done, stuck = result.raw.errors
    assert done is None and result.raw.output(0, str) == "awake"
    assert stuck is not None and stuck.kind == "timeout"
    assert stuck.message == (
        "stubborn did not finish within 0.05 s (it ignored cancellation and was abandoned)"
    )
    assert [r.getMessage() for r in caplog.records] == [
        "abandoned tool call stubborn (call_2): it ignored cancellation"
    ]


class Recorder:
    """Which calls saw a cancellation."""

    def __init__(self) -> None:
        self.saw: list[str] = []


async def test_cancelling_the_caller_reaches_the_last_call_and_the_others() -> None:
    seen = Recorder()

    @tool
    async def linger(label: str) -> str:
        """Waits a long time."""
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.saw.append(label)
            raise
        return label

    chain = JSONToolChain().register_tool(linger)
    content = action(("linger", {"label": "first"}), ("linger", {"label": "last"}))
    task = asyncio.create_task(chain.execute(ExecutionContext(), content, FMT))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)  # the first call's task takes its cancellation in its own step
    assert sorted(seen.saw) == ["first", "last"]


async def test_a_last_call_that_swallows_its_callers_cancellation_cannot_keep_the_caller() -> None:
    # In a task of its own the call would be left behind at once; driven in the caller's
    # task it gets the chain's cancel_grace, then the caller's cancellation goes on.
    chain = JSONToolChain(cancel_grace=0.05).register_tool(Stubborn()).register_tool(add)
    content = action(("add", {"a": 1}), ("stubborn", {"city": "x"}))
    task = asyncio.create_task(chain.execute(ExecutionContext(), content, FMT))
    await asyncio.sleep(0.02)
    task.cancel()
    await asyncio.wait({task}, timeout=5)  # a hang guard, not a speed limit
    assert task.cancelled()


async def test_a_cancel_scope_inside_the_last_call_cancels_only_what_it_scopes() -> None:
    # The scope cancels the task the call runs in (the caller's) and takes it back as it
    # exits: the call answers, and neither the caller nor the other call is cancelled.
    @tool
    async def patient() -> str:
        """Gives up on a slow step, then answers."""
        with anyio.move_on_after(0.01):
            await anyio.sleep(5)
        await asyncio.sleep(0.01)  # and suspends again after it
        return "gave up waiting, answered anyway"

    chain = JSONToolChain().register_tool(patient).register_tool(AsyncSleeper())
    content = action(("async_sleep", {"seconds": 0.05}), ("patient", {}))
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None, None)
    assert result.raw.output(0, str) == "awake"
    assert result.raw.output(1, str) == "gave up waiting, answered anyway"


@pytest.mark.parametrize("calls", [1, 2], ids=["alone", "last of two"])
async def test_a_grace_that_ends_in_the_loop_turn_the_call_wakes_still_abandons_it(
    calls: int,
) -> None:
    # The call swallows its cancellation, then waits on a future done just before its
    # grace ends, and blocks the loop in the callback that does it: the call's wake-up
    # and the grace's end come in one loop turn, the wake-up first. The grace's end was
    # dropped there, and the call driven until it chose to end (here after 100 waits;
    # a call that never ends kept its process from ever exiting).
    grace = 0.05
    loop = asyncio.get_running_loop()

    @tool
    async def swallower() -> str:
        """Ignores cancellation, then goes on for a while."""
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)
        woken = loop.create_future()

        def wake_then_block() -> None:
            woken.set_result(None)
            time.sleep(0.02)  # the grace ends meanwhile: both are read in the next turn

        loop.call_later(grace - 0.005, wake_then_block)
        await woken
        for _ in range(100):
            await asyncio.sleep(0.001)
        return "ended on its own"

    chain = JSONToolChain(timeout=0.02, cancel_grace=grace).register_tool(swallower)
    content = action(*[("swallower", {})] * calls)
    result = await chain.execute(ExecutionContext(), content, FMT)
    last = result.raw.errors[-1]
    assert last is not None and "it ignored cancellation and was abandoned" in last.message
    # The other call's task, abandoned too, is left running (as a task always was): it
    # ends on its own, which the test waits for.
    left = asyncio.all_tasks() - {asyncio.current_task()}
    if left:
        await asyncio.wait(left)
