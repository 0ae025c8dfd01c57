"""`ExecutionContext.child`: stats add up into the parent, cancellation flows down."""

from __future__ import annotations

import asyncio
import threading

from toolchain import ExecutionContext, Limits, Stats


def test_child_increments_show_in_parent() -> None:
    run = ExecutionContext()
    sub = run.child("researcher")
    sub.stats.increment(Stats.INPUT_TOKENS, 120)
    sub.stats.increment(Stats.OUTPUT_TOKENS, 30)
    assert sub.stats.count_call(Stats.TOOL_CALLS, "search") == 1
    sub.stats.count_call(Stats.TOOL_ERRORS, "search")
    assert run.stats.get(Stats.INPUT_TOKENS) == 120
    assert run.stats.get(Stats.OUTPUT_TOKENS) == 30
    assert run.stats.get(Stats.TOOL_CALLS) == 1
    assert run.stats.get(Stats.per_tool(Stats.TOOL_CALLS, "search")) == 1
    assert run.stats.get(Stats.per_tool(Stats.TOOL_ERRORS, "search")) == 1


def test_parent_increments_do_not_show_in_child() -> None:
    run = ExecutionContext()
    sub = run.child("researcher")
    run.stats.increment(Stats.INPUT_TOKENS, 50)
    run.stats.count_call(Stats.TOOL_CALLS, "add")
    sub.stats.increment(Stats.INPUT_TOKENS, 5)
    assert sub.stats.get(Stats.INPUT_TOKENS) == 5
    assert sub.stats.get(Stats.TOOL_CALLS) == 0
    assert run.stats.get(Stats.INPUT_TOKENS) == 55


def test_grandchildren_add_up_to_the_root_and_siblings_stay_apart() -> None:
    run = ExecutionContext()
    a, b = run.child("a"), run.child("b")
    leaf = a.child("leaf")
    leaf.stats.count_call(Stats.TOOL_CALLS, "x")
    b.stats.count_call(Stats.TOOL_CALLS, "y")
    assert leaf.name == "run/a/leaf"
    assert (leaf.stats.get(Stats.TOOL_CALLS), a.stats.get(Stats.TOOL_CALLS)) == (1, 1)
    assert (b.stats.get(Stats.TOOL_CALLS), run.stats.get(Stats.TOOL_CALLS)) == (1, 2)
    assert a.stats.get("tool_calls:y") == 0
    assert run.stats.snapshot() == {"tool_calls": 2, "tool_calls:x": 1, "tool_calls:y": 1}


def test_loop_local_counters_and_set_stay_in_the_child() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    sub.stats.increment(Stats.STEPS, 7)
    sub.stats.increment(Stats.CONSECUTIVE_TOOL_ERRORS, 2)
    sub.stats.increment(Stats.CONSECUTIVE_PARSE_ERRORS)
    sub.stats.set(Stats.TOOL_CALLS, 9)
    assert run.stats.snapshot() == {}
    assert sub.stats.get(Stats.STEPS) == 7


def test_child_tool_calls_count_against_the_parent_limits() -> None:
    run = ExecutionContext(limits=Limits(max_tool_calls=2))
    sub = run.child("sub", limits=Limits())
    for _ in range(3):
        sub.stats.count_call(Stats.TOOL_CALLS, "search")
    assert sub.limits.exceeded(sub.stats) is None
    assert run.limits.exceeded(run.stats) == "max_tool_calls"


def test_child_observer_errors_count_in_the_parent() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    sub.stats.increment(Stats.OBSERVER_ERRORS)
    assert run.stats.get(Stats.OBSERVER_ERRORS) == 1


def test_concurrent_child_increments_all_reach_the_parent() -> None:
    run = ExecutionContext()
    children = [run.child(f"c{i}") for i in range(4)]

    def work(ctx: ExecutionContext) -> None:
        for _ in range(2000):
            ctx.stats.increment(Stats.OUTPUT_TOKENS)
            ctx.stats.count_call(Stats.TOOL_CALLS, "t")

    threads = [threading.Thread(target=work, args=(c,)) for c in children]
    for thread in threads:
        thread.start()
    run.stats.increment(Stats.OUTPUT_TOKENS)
    for thread in threads:
        thread.join()
    assert run.stats.get(Stats.OUTPUT_TOKENS) == 8001
    assert run.stats.get(Stats.TOOL_CALLS) == 8000
    assert all(c.stats.get(Stats.TOOL_CALLS) == 2000 for c in children)


def test_cancel_propagates_down() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    leaf = sub.child("leaf")
    run.cancel("user pressed stop")
    assert sub.cancelled and leaf.cancelled
    assert leaf.cancel_reason == "user pressed stop"


def test_cancelling_a_child_leaves_the_parent_running() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    sub.cancel("sub-agent gave up")
    assert sub.cancelled
    assert not run.cancelled


async def test_a_child_waiting_on_cancellation_wakes_when_the_parent_cancels() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    waiter = asyncio.create_task(sub.wait_cancelled())
    await asyncio.sleep(0)
    run.cancel("stop")
    await asyncio.wait_for(waiter, 1)
    assert sub.cancel_reason == "stop"


def test_a_child_has_its_own_state_and_call_ids() -> None:
    run = ExecutionContext()
    sub = run.child("sub")
    assert sub.parent is run and sub.stats.parent is run.stats
    assert run.stats.parent is None
    assert sub.state is not run.state
    assert sub.new_call_id() == "call_1" and run.new_call_id() == "call_1"
