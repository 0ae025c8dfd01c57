"""The calls of an action start in the caller's own task, in order, while each before
them finished without suspending (no task when they all do); the first that suspends is
driven on there, and the calls after it run as tasks of their own. Driven or not, a call
runs concurrently with the others, in a context of its own, and is timed, cancelled and
abandoned exactly as a call in a task of its own."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import threading
import time
from collections.abc import Generator, Mapping
from typing import Any

import anyio
import pytest

from formats import XMLFormat
from tests.support.tools import AsyncSleeper, Sleeper, Stubborn, add
from toolchain import ExecutionContext, JSONToolChain, ToolCallFinished, ToolChainResult, tool

FMT = XMLFormat()


Call = tuple[str, Mapping[str, object]]


def action(*calls: Call) -> str:
    return json.dumps([{"tool": name, "args": args} for name, args in calls])


@tool
async def echo(text: str) -> str:
    """Answers at once, never suspending."""
    return text


@contextlib.contextmanager
def tasks_made() -> Generator[list[object], None, None]:
    """The coroutines the running loop makes tasks for meanwhile."""
    loop = asyncio.get_running_loop()
    made: list[object] = []
    before = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, /, **kwargs: Any) -> asyncio.Task[Any]:
        made.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counting)
    try:
        yield made
    finally:
        loop.set_task_factory(before)


async def test_an_action_whose_calls_all_finish_at_once_makes_no_task() -> None:
    chain = JSONToolChain().register_tool(echo)
    content = action(*[("echo", {"text": word}) for word in ("one", "two", "three")])
    with tasks_made() as made:
        result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None, None, None)
    assert [result.raw.output(i, str) for i in range(3)] == ["one", "two", "three"]
    assert made == []


async def test_only_a_worker_threads_call_and_those_after_the_first_to_suspend_get_tasks() -> None:
    # The sync call always suspends (a worker thread runs it): a task of its own, which
    # leaves the caller's task to the next; the first async call that suspends is driven
    # there, and the one after it gets a task.
    chain = JSONToolChain().register_tool(echo).register_tool(add).register_tool(AsyncSleeper())
    content = action(
        ("echo", {"text": "before"}),
        ("add", {"a": 1, "b": 2}),
        ("echo", {"text": "between"}),
        ("async_sleep", {"seconds": 0.01}),
        ("echo", {"text": "after"}),
    )
    with tasks_made() as made:
        result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None,) * 5
    assert [result.raw.output(i, object) for i in range(5)] == [
        "before",
        3,
        "between",
        "awake",
        "after",
    ]
    assert len(made) == 2


async def test_a_call_waiting_on_an_event_a_later_call_sets_does_not_deadlock() -> None:
    event = asyncio.Event()

    @tool
    async def wait_for_it() -> str:
        """Waits for the event."""
        await asyncio.wait_for(event.wait(), 5)
        return "woken"

    @tool
    async def set_it() -> str:
        """Sets the event, after a pause."""
        await asyncio.sleep(0.01)
        event.set()
        return "set"

    chain = JSONToolChain().register_tool(wait_for_it).register_tool(set_it)
    content = action(("echo", {"text": "first"}), ("wait_for_it", {}), ("set_it", {}))
    chain.register_tool(echo)
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None, None, None)
    assert [result.raw.output(i, str) for i in range(3)] == ["first", "woken", "set"]


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


@pytest.mark.parametrize("done_first", ["first", "last"])
async def test_each_call_goes_on_in_the_loop_turn_its_own_task_would(done_first: str) -> None:
    # Both calls suspend: the first is driven in the caller's task, the last runs in a
    # task of its own. What one awaits is done just before what the other awaits, in the
    # same loop turn: as tasks, that one goes on (and ends) first. A driven call woken
    # through a wake-up of its own went on a loop turn later: the order flipped.
    loop = asyncio.get_running_loop()
    awaited = {"first": loop.create_future(), "last": loop.create_future()}

    @tool
    async def wait_for(side: str) -> str:
        """Waits for its side's signal."""
        await awaited[side]
        return side

    def both() -> None:
        awaited[done_first].set_result(None)
        awaited["last" if done_first == "first" else "first"].set_result(None)

    ctx = ExecutionContext()
    ended: list[str] = []
    ctx.events.subscribe(ToolCallFinished, lambda event: ended.append(event.id))
    loop.call_later(0.01, both)
    chain = JSONToolChain().register_tool(wait_for)
    content = action(("wait_for", {"side": "first"}), ("wait_for", {"side": "last"}))
    result = await chain.execute(ctx, content, FMT)
    assert result.raw.errors == (None, None)
    assert ended == (["call_1", "call_2"] if done_first == "first" else ["call_2", "call_1"])


_label: contextvars.ContextVar[str] = contextvars.ContextVar("label", default="unset")


@tool
async def relabel(label: str, pause: float = 0.0) -> str:
    """Sets the label, and says what it was before and after a pause."""
    before = _label.get()
    _label.set(label)
    if pause:
        await asyncio.sleep(pause)
    return f"{before} -> {_label.get()}"


async def test_what_a_call_sets_in_its_context_neither_the_caller_nor_the_other_calls_see() -> None:
    # As a task of its own would: the calls in the caller's task, the one driven there
    # (its value kept across its suspension) and those in tasks after it.
    chain = JSONToolChain().register_tool(relabel)
    content = action(
        ("relabel", {"label": "a"}),
        ("relabel", {"label": "b", "pause": 0.01}),
        ("relabel", {"label": "c"}),
        ("relabel", {"label": "d", "pause": 0.01}),
    )
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.errors == (None,) * 4
    assert [result.raw.output(i, str) for i in range(4)] == [
        "unset -> a",
        "unset -> b",
        "unset -> c",
        "unset -> d",
    ]
    assert _label.get() == "unset"


@tool
async def fail_now(reason: str) -> str:
    """Fails at once."""
    raise RuntimeError(reason)


@tool
async def fail_later(reason: str) -> str:
    """Fails after a pause."""
    await asyncio.sleep(0.01)
    raise RuntimeError(reason)


async def test_results_and_failures_read_as_when_the_calls_run_one_by_one() -> None:
    def chain(max_concurrency: int | None) -> JSONToolChain:
        chain = JSONToolChain(max_concurrency=max_concurrency)
        for each in (echo, fail_now, fail_later, AsyncSleeper(), add):
            chain.register_tool(each)
        return chain

    content = action(
        ("echo", {"text": "one"}),
        ("fail_now", {"reason": "boom"}),
        ("async_sleep", {"seconds": 0.02}),
        ("fail_later", {"reason": "bang"}),
        ("add", {"a": 2, "b": 3}),
        ("echo", {"text": "six"}),
    )
    together = await chain(None).execute(ExecutionContext(), content, FMT)
    one_by_one = await chain(1).execute(ExecutionContext(), content, FMT)
    assert together.text == one_by_one.text

    def seen(result: ToolChainResult) -> list[tuple[object, ...]]:  # exceptions: by identity
        return [(o.id, o.name, o.text, o.media, o.instructions) for o in result.observations]

    assert seen(together) == seen(one_by_one)
    errors = [None if e is None else (e.kind, e.message) for e in together.raw.errors]
    assert errors == [None if e is None else (e.kind, e.message) for e in one_by_one.raw.errors]
    assert [None if e is None else e.kind for e in together.raw.errors] == [
        None,
        "tool_error",
        None,
        "tool_error",
        None,
        None,
    ]
    assert [together.raw.output(i, object) for i in (0, 2, 4, 5)] == ["one", "awake", 5, "six"]
    assert "boom" in together.text and "bang" in together.text


SLOW: Call = ("async_sleep", {"seconds": 5})


@pytest.mark.parametrize("driven", [True, False], ids=["driven", "in its own task"])
async def test_a_call_times_out_alike_driven_or_in_its_own_task(driven: bool) -> None:
    quick: Call = ("async_sleep", {"seconds": 0.01})
    calls: list[Call] = [
        ("echo", {"text": "at once"}),
        *((SLOW, quick) if driven else (quick, SLOW)),
    ]
    chain = JSONToolChain(timeout=0.2).register_tool(AsyncSleeper()).register_tool(echo)
    result = await chain.execute(ExecutionContext(), action(*calls), FMT)
    slow = 1 if driven else 2
    assert [result.raw.output(i, str) for i in range(3) if i != slow] == ["at once", "awake"]
    late = result.raw.errors[slow]
    assert late is not None and late.kind == "timeout"
    assert late.message == "async_sleep did not finish within 0.2 s"


@pytest.mark.parametrize(
    "calls",
    [
        [("echo", {"text": "done"}), SLOW],
        [SLOW, ("echo", {"text": "done"})],
        [("async_sleep", {"seconds": 0.01}), SLOW],
    ],
    ids=["driven after one at once", "driven first", "in its own task"],
)
async def test_cancelling_the_run_cancels_a_waiting_call_and_keeps_what_finished(
    calls: list[Call],
) -> None:
    ctx = ExecutionContext()
    chain = JSONToolChain().register_tool(AsyncSleeper()).register_tool(echo)
    task = asyncio.create_task(chain.execute(ctx, action(*calls), FMT))
    await asyncio.sleep(0.05)
    threading.Thread(target=ctx.cancel, args=("user pressed stop",)).start()
    result = await asyncio.wait_for(task, timeout=5)  # a hang guard, not a speed limit
    slow = calls.index(SLOW)
    done, cancelled = result.raw.errors[1 - slow], result.raw.errors[slow]
    assert done is None and result.raw.output(1 - slow, str) in ("done", "awake")
    assert cancelled is not None and cancelled.kind == "cancelled"
    assert cancelled.message == "async_sleep was cancelled: user pressed stop"


STUBBORN: Call = ("stubborn", {"city": "x"})


@pytest.mark.parametrize(
    "calls",
    [[STUBBORN, ("async_sleep", {"seconds": 0.01})], [("echo", {"text": "awake"}), STUBBORN]],
    ids=["driven first", "driven after one at once"],
)
def test_a_driven_call_that_swallows_cancellation_is_abandoned_after_its_grace(
    caplog: pytest.LogCaptureFixture, calls: list[Call]
) -> None:
    chain = JSONToolChain(timeout=0.05, cancel_grace=0.05).register_tool(echo)
    chain.register_tool(Stubborn()).register_tool(AsyncSleeper())
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        result = chain.execute_sync(ExecutionContext(), action(*calls), FMT)
    stuck_at = calls.index(STUBBORN)
    done, stuck = result.raw.errors[1 - stuck_at], result.raw.errors[stuck_at]
    assert done is None and result.raw.output(1 - stuck_at, str) == "awake"
    assert stuck is not None and stuck.kind == "timeout"
    assert stuck.message == (
        "stubborn did not finish within 0.05 s (it ignored cancellation and was abandoned)"
    )
    # Driven, it is no task left running: execute_sync does not log it a second time.
    assert [r.getMessage() for r in caplog.records] == [
        f"abandoned tool call stubborn (call_{stuck_at + 1}): it ignored cancellation"
    ]


class Recorder:
    """Which calls saw a cancellation."""

    def __init__(self) -> None:
        self.saw: list[str] = []


async def test_cancelling_the_caller_reaches_the_driven_call_and_the_others() -> None:
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

    chain = JSONToolChain().register_tool(linger).register_tool(echo)
    content = action(
        ("echo", {"text": "at once"}),
        ("linger", {"label": "driven"}),
        ("linger", {"label": "in a task"}),
    )
    task = asyncio.create_task(chain.execute(ExecutionContext(), content, FMT))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)  # the other call's task takes its cancellation in its own step
    assert sorted(seen.saw) == ["driven", "in a task"]


@pytest.mark.parametrize(
    "calls",
    [[("add", {"a": 1}), STUBBORN], [STUBBORN, ("echo", {"text": "x"})]],
    ids=["after a worker's call", "first"],
)
async def test_a_driven_call_that_swallows_its_callers_cancellation_cannot_keep_the_caller(
    calls: list[Call],
) -> None:
    # In a task of its own the call would be left behind at once; driven in the caller's
    # task it gets the chain's cancel_grace, then the caller's cancellation goes on.
    chain = JSONToolChain(cancel_grace=0.05).register_tool(Stubborn()).register_tool(add)
    chain.register_tool(echo)
    task = asyncio.create_task(chain.execute(ExecutionContext(), action(*calls), FMT))
    await asyncio.sleep(0.02)
    task.cancel()
    await asyncio.wait({task}, timeout=5)  # a hang guard, not a speed limit
    assert task.cancelled()


@tool
async def patient(scope: str) -> str:
    """Gives up on a slow step, then answers."""
    if scope == "anyio":
        with anyio.move_on_after(0.01):
            await anyio.sleep(5)
    else:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
    await asyncio.sleep(0.01)  # and suspends again after it
    return "gave up waiting, answered anyway"


@pytest.mark.parametrize("scope", ["anyio", "asyncio"])
@pytest.mark.parametrize("first", [True, False], ids=["driven first", "driven after one"])
async def test_a_cancel_scope_inside_the_driven_call_cancels_only_what_it_scopes(
    scope: str, first: bool
) -> None:
    # The scope cancels the task the call runs in (the caller's) and takes it back as it
    # exits: the call answers, and neither the caller nor the other calls are cancelled.
    chain = JSONToolChain().register_tool(patient).register_tool(AsyncSleeper())
    chain.register_tool(echo)
    calls: list[Call] = [("patient", {"scope": scope}), ("async_sleep", {"seconds": 0.05})]
    if not first:
        calls.insert(0, ("echo", {"text": "at once"}))
    result = await chain.execute(ExecutionContext(), action(*calls), FMT)
    assert result.raw.errors == (None,) * len(calls)
    outputs = [result.raw.output(i, str) for i in range(len(calls))]
    assert outputs[-2:] == ["gave up waiting, answered anyway", "awake"]


async def test_sync_calls_on_worker_threads_run_beside_the_driven_call() -> None:
    # Each sync call gets a task of its own (a worker thread runs it), wherever it stands.
    chain = JSONToolChain().register_tool(Sleeper()).register_tool(AsyncSleeper())
    chain.register_tool(echo)
    content = action(
        ("sleep", {"seconds": 0.01}),
        ("async_sleep", {"seconds": 0.01}),
        ("sleep", {"seconds": 0.01}),
        ("sleep", {"seconds": 0.3}),
        ("echo", {"text": "at once"}),
    )
    result = await chain.execute(ExecutionContext(), content, FMT)
    late = result.raw.errors[3]
    assert late is not None and late.message == "sleep did not finish within 0.05 s"
    assert result.raw.errors[:3] == (None, None, None) and result.raw.errors[4] is None
    outputs = [result.raw.output(i, str) for i in (0, 1, 2, 4)]
    assert outputs == ["awake", "awake", "awake", "at once"]


@pytest.mark.parametrize(
    "calls",
    [["swallower"], ["swallower", "echo"], ["swallower", "swallower"]],
    ids=["alone", "driven, first of two", "driven and in a task"],
)
async def test_a_grace_that_ends_in_the_loop_turn_the_call_wakes_still_abandons_it(
    calls: list[str],
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
    chain.register_tool(echo)
    content = action(*[(name, {"text": "at once"} if name == "echo" else {}) for name in calls])
    result = await chain.execute(ExecutionContext(), content, FMT)
    for name, error in zip(calls, result.raw.errors, strict=True):
        if name == "echo":
            assert error is None
        else:
            assert error is not None
            assert "it ignored cancellation and was abandoned" in error.message
    # The other call's task, abandoned too, is left running (as a task always was): it
    # ends on its own, which the test waits for.
    left = asyncio.all_tasks() - {asyncio.current_task()}
    if left:
        await asyncio.wait(left)
