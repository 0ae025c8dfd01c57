"""Running calls: concurrency, order, timeouts, errors, hooks, cancellation, stats."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from formats import XMLFormat
from tests.support.tools import AsyncSleeper, Sleeper, Weather, add, all_tools, explode
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Limits,
    Stats,
    Tool,
    ToolCall,
    ToolCallFinished,
    ToolCallParseError,
    ToolCallParseFailed,
    ToolCallRefused,
    ToolCallStarted,
    ToolHook,
    ToolResult,
    tool,
)

FMT = XMLFormat()


class GateIn(BaseModel):
    label: str


class AsyncGate(Tool[GateIn, str]):
    """Returns only once `parties` calls are inside at the same time."""

    name = "async_gate"
    description = "Waits for its siblings."

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.inside = 0
        self.all_in = asyncio.Event()

    async def call(self, ctx: ExecutionContext, input: GateIn) -> ToolResult[str]:
        self.inside += 1
        if self.inside == self.parties:
            self.all_in.set()
        await asyncio.wait_for(self.all_in.wait(), timeout=2)
        return ToolResult(input.label)


class ThreadGate(Tool[GateIn, str]):
    name = "thread_gate"
    description = "Waits for its siblings, in worker threads."

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=2)

    def call(self, ctx: ExecutionContext, input: GateIn) -> ToolResult[str]:
        self.barrier.wait()
        return ToolResult(input.label)


@pytest.mark.parametrize("gate", [AsyncGate(3), ThreadGate(3)], ids=["async", "sync"])
async def test_calls_in_one_action_run_concurrently_and_keep_call_order(
    gate: AsyncGate | ThreadGate,
) -> None:
    chain = JSONToolChain().register_tool(gate)
    calls = [{"tool": gate.name, "args": {"label": label}} for label in "abc"]
    content = str(calls).replace("'", '"')
    result = await chain.execute(ExecutionContext(), content, FMT)
    # Run one after another, the first call would wait for the others and time out.
    assert result.raw.errors == (None, None, None)
    assert [r.output for r in result.raw.results if r] == ["a", "b", "c"]


async def test_one_bad_call_never_stops_the_others() -> None:
    chain = JSONToolChain().register_tool(Weather()).register_tool(explode)
    content = (
        '[{"tool": "explode", "args": {"reason": "boom"}},'
        ' {"tool": "get_weather", "args": {"city": "Oslo"}}]'
    )
    result = await chain.execute(ExecutionContext(), content, FMT)
    first, second = result.raw.errors
    assert first is not None and first.kind == "tool_error"
    assert isinstance(first.exception, RuntimeError)
    assert second is None
    assert result.raw.results[0] is None
    ok = result.raw.results[1]
    assert ok is not None and ok.output == {"city": "Oslo", "temp_c": 21, "days": 1}
    assert "Error: explode failed: RuntimeError: boom" in result.text


async def test_a_hung_sync_tool_times_out_without_blocking_the_run() -> None:
    chain = JSONToolChain().register_tool(Sleeper()).register_tool(add)
    content = '[{"tool": "sleep", "args": {"seconds": 1.0}}, {"tool": "add", "args": {"a": 1}}]'
    started = time.perf_counter()
    result = await chain.execute(ExecutionContext(), content, FMT)
    elapsed = time.perf_counter() - started
    timeout, ok = result.raw.errors
    assert timeout is not None and timeout.kind == "timeout"
    assert timeout.message == "sleep did not finish within 0.05 s"
    assert ok is None
    assert elapsed < 0.9  # returned at the timeout, not when the thread woke up


def test_execute_sync_does_not_wait_for_a_hung_tool_thread() -> None:
    chain = JSONToolChain().register_tool(Sleeper())
    started = time.perf_counter()
    result = chain.execute_sync(
        ExecutionContext(), '{"tool": "sleep", "args": {"seconds": 1.0}}', FMT
    )
    assert time.perf_counter() - started < 0.9
    assert result.raw.errors[0] is not None


async def test_chain_timeout_applies_to_tools_without_their_own() -> None:
    chain = JSONToolChain(timeout=0.05).register_tool(AsyncSleeper())
    result = await chain.execute(
        ExecutionContext(), '{"tool": "async_sleep", "args": {"seconds": 5}}', FMT
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "timeout"


async def test_cancelling_the_context_cancels_running_tools() -> None:
    ctx = ExecutionContext()
    chain = JSONToolChain().register_tool(AsyncSleeper()).register_tool(add)
    content = '[{"tool": "async_sleep", "args": {"seconds": 5}}, {"tool": "add", "args": {"a": 1}}]'
    task = asyncio.create_task(chain.execute(ctx, content, FMT))
    await asyncio.sleep(0.02)
    threading.Thread(target=ctx.cancel, args=("user pressed stop",)).start()
    result = await asyncio.wait_for(task, timeout=1)
    cancelled, done = result.raw.errors
    assert cancelled is not None and cancelled.kind == "cancelled"
    assert "user pressed stop" in cancelled.message
    assert done is None  # what already finished is kept


async def test_cancelling_the_caller_task_propagates() -> None:
    chain = JSONToolChain().register_tool(AsyncSleeper())
    task = asyncio.create_task(
        chain.execute(ExecutionContext(), '{"tool": "async_sleep", "args": {"seconds": 5}}', FMT)
    )
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class HelperIn(BaseModel):
    cleanup_seconds: float = 0.0


class AwaitsHelpers(Tool[HelperIn, str]):
    """Awaits helper tasks, as first_of in agents.durable does: on cancellation it
    cancels them and waits for them to end (a gather, which ends after its children)."""

    name = "awaits_helpers"
    description = "Waits on helper tasks."

    def __init__(self) -> None:
        self.saw: list[str] = []
        self.helpers: list[asyncio.Task[None]] = []

    async def call(self, ctx: ExecutionContext, input: HelperIn) -> ToolResult[str]:
        async def helper() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await asyncio.sleep(input.cleanup_seconds)  # stops a moment later
                raise

        self.helpers = [asyncio.ensure_future(helper()) for _ in range(2)]
        try:
            if input.cleanup_seconds:
                await asyncio.wait(self.helpers, return_when=asyncio.FIRST_COMPLETED)
            else:
                await self.helpers[0]  # a task awaited directly
        except asyncio.CancelledError:
            self.saw.append("cancelled")
            raise
        finally:
            for helper_task in self.helpers:
                helper_task.cancel()
            await asyncio.gather(*self.helpers, return_exceptions=True)
        return ToolResult("done")


@pytest.mark.parametrize("cancels", [1, 2])
async def test_a_lone_call_awaiting_tasks_sees_its_callers_cancellation(cancels: int) -> None:
    # A lone call is driven in the caller's task: its caller's cancellation reaches the
    # call as a Task would deliver it, once what the call awaits has ended (a task or a
    # gather ends after its children), however often it comes. It was delivered at
    # once: the call's await raised "await wasn't used with future", the call failed
    # with that, and execute returned as if nobody had cancelled it.
    waits = AwaitsHelpers()
    chain = JSONToolChain().register_tool(waits)
    cleanup = 0.0 if cancels == 1 else 0.05
    content = f'{{"tool": "awaits_helpers", "args": {{"cleanup_seconds": {cleanup}}}}}'
    task = asyncio.create_task(chain.execute(ExecutionContext(), content, FMT))
    await asyncio.sleep(0.02)
    for _ in range(cancels):  # a second one while the call waits for its helpers to end
        task.cancel()
        await asyncio.sleep(0.01)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert waits.saw == ["cancelled"]
    assert all(helper.cancelled() for helper in waits.helpers)


async def test_a_lone_call_awaiting_a_task_times_out_as_a_timeout() -> None:
    waits = AwaitsHelpers()
    chain = JSONToolChain(timeout=0.02).register_tool(waits)
    result = await chain.execute(ExecutionContext(), '{"tool": "awaits_helpers"}', FMT)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "timeout", error
    assert waits.saw == ["cancelled"]


async def test_before_hook_rewrites_arguments_before_validation() -> None:
    ctx = ExecutionContext()

    class HomeCity(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            if call.args.get("city") == "$home":
                return ToolCall(call.name, {**call.args, "city": "Lisbon"})
            return None

    ctx.hooks.add(HomeCity())
    started: list[ToolCallStarted] = []
    ctx.events.subscribe(ToolCallStarted, started.append)
    chain = JSONToolChain().register_tool(Weather())
    result = await chain.execute(ctx, '{"tool": "get_weather", "args": {"city": "$home"}}', FMT)
    assert result.raw.calls == (ToolCall("get_weather", {"city": "Lisbon"}, "call_1"),)
    assert '"city":"Lisbon"' in result.text
    assert started[0].args == {"city": "Lisbon"} and started[0].raw_args == {"city": "$home"}


async def test_after_hook_replaces_the_result_before_it_is_serialised() -> None:
    ctx = ExecutionContext()

    class Box(ToolHook):
        async def after_tool_call(
            self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
        ) -> ToolResult[Any] | None:
            return ToolResult("internal://weather-1")

    ctx.hooks.add(Box())
    seen: list[ToolCallFinished] = []
    ctx.events.subscribe(ToolCallFinished, seen.append)
    chain = JSONToolChain().register_tool(Weather())
    result = await chain.execute(ctx, '{"tool": "get_weather", "args": {"city": "Oslo"}}', FMT)
    assert "internal://weather-1" in result.text
    assert result.raw.output(0, str) == "internal://weather-1"
    assert seen[0].name == "get_weather" and seen[0].duration >= 0


async def test_hooks_run_in_the_order_they_were_added() -> None:
    ctx = ExecutionContext()
    order: list[str] = []

    class Note(ToolHook):
        def __init__(self, label: str) -> None:
            self.label = label

        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            order.append(f"before {self.label}")
            return None

        def after_tool_call(
            self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
        ) -> ToolResult[Any] | None:
            order.append(f"after {self.label}")
            return None

    ctx.hooks.add(Note("a"))
    remove_b = ctx.hooks.add(Note("b"))
    chain = JSONToolChain().register_tool(add)
    await chain.execute(ctx, '{"tool": "add", "args": {"a": 1}}', FMT)
    assert order == ["before a", "before b", "after a", "after b"]
    remove_b()
    order.clear()
    await chain.execute(ctx, '{"tool": "add", "args": {"a": 1}}', FMT)
    assert order == ["before a", "after a"]


async def test_a_failing_hook_fails_only_that_call() -> None:
    ctx = ExecutionContext()

    class Broken(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            if call.args.get("city") == "Oslo":
                raise KeyError("nope")
            return None

    ctx.hooks.add(Broken())
    chain = JSONToolChain().register_tool(Weather())
    content = (
        '[{"tool": "get_weather", "args": {"city": "Oslo"}},'
        ' {"tool": "get_weather", "args": {"city": "Rome"}}]'
    )
    result = await chain.execute(ctx, content, FMT)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "hook_error"
    assert "KeyError" in error.message
    assert result.raw.errors[1] is None


async def test_a_hook_may_refuse_a_call_with_a_message_for_the_model() -> None:
    ctx = ExecutionContext()

    class NeedsApproval(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            raise ToolCallRefused("a human must approve weather lookups")

    ctx.hooks.add(NeedsApproval())
    chain = JSONToolChain().register_tool(Weather())
    result = await chain.execute(ctx, '{"tool": "get_weather", "args": {"city": "Oslo"}}', FMT)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "refused"
    assert "Error: get_weather was refused: a human must approve weather lookups" in result.text


async def test_parse_failure_raises_and_emits_an_event() -> None:
    ctx = ExecutionContext()
    failures: list[ToolCallParseFailed] = []
    ctx.events.subscribe(ToolCallParseFailed, failures.append)
    with pytest.raises(ToolCallParseError):
        await JSONToolChain().execute(ctx, "{not json", FMT)
    assert failures[0].content == "{not json"


async def test_output_that_cannot_be_serialised_is_an_error() -> None:
    @tool
    def leak() -> object:
        """Returns something that is not data."""
        return threading.Lock()

    result = (
        await JSONToolChain()
        .register_tool(leak)
        .execute(ExecutionContext(), '{"tool": "leak"}', FMT)
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "output_error"
    assert "cannot be shown" in error.message


async def test_stats_count_calls_and_errors_per_tool() -> None:
    ctx = ExecutionContext()
    chain = JSONToolChain()
    for t in all_tools():
        chain.register_tool(t)
    content = (
        '[{"tool": "add", "args": {"a": 1}}, {"tool": "add", "args": {"a": "x"}},'
        ' {"tool": "nope", "args": {}}]'
    )
    await chain.execute(ctx, content, FMT)
    assert ctx.stats.get(Stats.TOOL_CALLS) == 3
    assert ctx.stats.get(Stats.per_tool(Stats.TOOL_CALLS, "add")) == 2
    assert ctx.stats.get(Stats.TOOL_ERRORS) == 2
    assert ctx.stats.get(Stats.per_tool(Stats.TOOL_ERRORS, "nope")) == 1


async def test_execute_calls_runs_structured_calls() -> None:
    chain = JSONToolChain().register_tool(add)
    result = await chain.execute_calls(ExecutionContext(), [ToolCall("add", {"a": 2, "b": 2})], FMT)
    assert result.raw.results[0] is not None
    assert result.raw.results[0].output == 4


def test_execute_sync_inside_a_running_loop_is_refused() -> None:
    async def inner() -> None:
        JSONToolChain().execute_sync(ExecutionContext(), "[]", FMT)

    with pytest.raises(RuntimeError, match="await execute"):
        asyncio.run(inner())


async def test_inline_sync_tools_run_on_the_event_loop_thread_others_do_not() -> None:
    threads: dict[str, int] = {}

    @tool(inline=True)
    def here() -> str:
        """Runs inline."""
        threads["inline"] = threading.get_ident()
        return "ok"

    @tool
    def away() -> str:
        """Runs in a worker."""
        threads["worker"] = threading.get_ident()
        return "ok"

    chain = JSONToolChain().register_tool(here).register_tool(away)
    result = await chain.execute(ExecutionContext(), '[{"tool": "here"}, {"tool": "away"}]', FMT)
    assert result.raw.errors == (None, None)
    assert threads["inline"] == threading.get_ident()
    assert threads["worker"] != threading.get_ident()


async def test_tool_call_limits_apply_within_one_action() -> None:
    ctx = ExecutionContext(limits=Limits(max_tool_calls=2))
    chain = JSONToolChain().register_tool(add)
    calls = ", ".join(f'{{"tool": "add", "args": {{"a": {i}}}}}' for i in range(5))
    result = await chain.execute(ctx, f"[{calls}]", FMT)
    kinds = [e.kind if e else None for e in result.raw.errors]
    # Reaching the limit is not passing it: two calls run, the third is refused.
    assert kinds == [None, None, "limit", "limit", "limit"]
    error = result.raw.errors[2]
    assert error is not None
    assert error.message == "add was not run: the run's max_tool_calls=2 limit is reached"


async def test_per_tool_limit_within_one_action() -> None:
    ctx = ExecutionContext(limits=Limits(max_tool_calls_per_tool={"add": 1}))
    chain = JSONToolChain().register_tool(add).register_tool(Weather())
    content = (
        '[{"tool": "add", "args": {"a": 1}}, {"tool": "add", "args": {"a": 2}},'
        ' {"tool": "get_weather", "args": {"city": "Oslo"}}]'
    )
    result = await chain.execute(ctx, content, FMT)
    assert [e.kind if e else None for e in result.raw.errors] == [None, "limit", None]


async def test_every_call_emits_after_tool_call_even_when_it_fails_early() -> None:
    ctx = ExecutionContext()
    seen: list[ToolCallFinished] = []
    ctx.events.subscribe(ToolCallFinished, seen.append)
    chain = JSONToolChain().register_tool(add)
    content = '[{"tool": "nope", "args": {}}, 42, {"tool": "add", "args": {"a": 1}}]'
    await chain.execute(ctx, content, FMT)
    assert [(e.index, e.name, e.error.kind if e.error else None) for e in seen] == [
        (0, "nope", "unknown_tool"),
        (1, "error", "parse"),
        (2, "add", None),
    ]


async def test_recursive_output_is_an_output_error() -> None:
    @tool
    def loop() -> list[object]:
        """Returns a list that contains itself."""
        items: list[object] = []
        items.append(items)
        return items

    result = (
        await JSONToolChain()
        .register_tool(loop)
        .execute(ExecutionContext(), '{"tool": "loop"}', FMT)
    )
    error = result.raw.errors[0]
    assert error is not None
    assert error.kind == "output_error"


def test_an_observer_subscribed_between_actions_sees_the_next_ones_calls() -> None:
    # The bus remembers whether anything listens for an event class (a chain asks for
    # every call); subscribing or unsubscribing must change that answer at once.
    ctx = ExecutionContext()
    chain = JSONToolChain().register_tool(add)
    action = '{"tool": "add", "args": {"a": 1, "b": 2}}'
    seen: list[str] = []

    def note(event: ToolCallStarted | ToolCallFinished | ToolCallParseFailed) -> None:
        seen.append(type(event).__name__)

    ctx.events.subscribe(ToolCallParseFailed, note)  # another class: the bus is not empty
    chain.execute_sync(ctx, action, FMT)  # nothing listens for the call events yet
    started = ctx.events.subscribe(ToolCallStarted, note)
    finished = ctx.events.subscribe(ToolCallFinished, note)
    chain.execute_sync(ctx, action, FMT)
    assert seen == ["ToolCallStarted", "ToolCallFinished"]
    started()
    chain.execute_sync(ctx, action, FMT)
    assert seen == ["ToolCallStarted", "ToolCallFinished", "ToolCallFinished"]
    finished()
    chain.execute_sync(ctx, action, FMT)
    assert len(seen) == 3 and not ctx.events.has_subscribers(ToolCallFinished)
