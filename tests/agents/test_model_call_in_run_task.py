"""A run that is not streamed drives its model call in its own task, as awaited code.

No task is made per model call (an instant model's whole call costs less than one), so
the call sees the run's task as its current task from start to end, in a copy of the
run's context, as a task of its own would have given it. The run's time limit and
cancellation still reach a call that waits, a call that ignores them is abandoned after
a grace, a cancellation of the caller's task reaches it, and a cancel scope inside the
call (``asyncio.timeout``) stays the call's own.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import pytest

from agents import (
    GenerateOptions,
    Message,
    ModelResponse,
    ReActAgent,
    TextDelta,
    ToolCallingAgent,
    Usage,
)
from tests.support.agent_kinds import Kind
from toolchain import ExecutionContext, JSONToolChain, Limits, tool

SEEN_IN_CALL: contextvars.ContextVar[str] = contextvars.ContextVar("seen_in_call", default="run")


@tool
async def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


class HandMadeModel:
    """A model whose call is ``body``: what a user's own client does."""

    def __init__(self, body: Callable[[], Awaitable[str]]) -> None:
        self.body = body

    @property
    def name(self) -> str:
        return "hand-made"

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        text = await self.body()
        return ModelResponse(text, "stop", Usage(10, 2), self.name)

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.generate(messages, options)


def agent_for(
    kind: Kind, body: Callable[[], Awaitable[str]], **options: Any
) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = JSONToolChain().register_tool(add)
    model = HandMadeModel(body)
    if kind == "react":
        return ReActAgent(model, tool_chain=chain, **options)
    return ToolCallingAgent(model, tool_chain=chain, **options)


def answer(kind: Kind, text: str) -> str:
    return text if kind == "native" else f"<answer>{text}</answer>"


@pytest.fixture(params=["react", "native"])
def kind(request: pytest.FixtureRequest) -> Kind:
    chosen: Kind = request.param
    return chosen


@pytest.mark.parametrize("waits", [False, True], ids=["instant", "waits"])
async def test_the_model_call_runs_in_the_runs_task_in_a_copy_of_its_context(
    kind: Kind, waits: bool
) -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def body() -> str:
        tasks.append(asyncio.current_task())
        SEEN_IN_CALL.set("call")  # stays in the call's copy of the context
        if waits:
            await asyncio.sleep(0)
            tasks.append(asyncio.current_task())
        return answer(kind, "done")

    result = await agent_for(kind, body).run("Go.")
    assert result.answer == "done"
    assert tasks == [asyncio.current_task()] * len(tasks)
    assert SEEN_IN_CALL.get() == "run"


async def test_a_model_that_waits_past_the_time_limit_is_cancelled_and_the_run_stops(
    kind: Kind,
) -> None:
    ended: list[str] = []

    async def body() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return "never"

    before = asyncio.all_tasks()
    result = await agent_for(kind, body, limits=Limits(timeout=0.05)).run("Go.")
    assert (result.stopped_by, result.limit) == ("limit", "timeout")
    assert ended == ["cancelled"]
    assert asyncio.all_tasks() - before == set()


async def test_a_model_that_ignores_the_runs_cancellation_is_abandoned_after_the_grace(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agents._race.CANCEL_GRACE", 0.05)
    thinking = asyncio.Event()
    refused: list[int] = []

    async def body() -> str:
        thinking.set()
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                refused.append(1)  # a client's retry loop that swallows it

    ctx = ExecutionContext()
    running = asyncio.ensure_future(agent_for(kind, body).run("Go.", ctx=ctx))
    await thinking.wait()
    ctx.cancel("the user pressed stop")
    result = await running
    assert result.stopped_by == "cancelled"
    assert refused == [1]  # told once, then left alone: never resumed again


async def test_cancelling_the_callers_task_reaches_the_model_call(kind: Kind) -> None:
    thinking = asyncio.Event()
    ended: list[str] = []

    async def body() -> str:
        thinking.set()
        try:
            await asyncio.sleep(3600)
        finally:
            ended.append("ended")
        return "never"

    running = asyncio.ensure_future(agent_for(kind, body).run("Go."))
    await thinking.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert ended == ["ended"]


async def test_a_time_limit_inside_the_model_call_stays_its_own(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``asyncio.timeout`` cancels the current task, which is the run's: the call takes
    that back on its way out and goes on, past the grace a refused cancellation gets."""
    monkeypatch.setattr("agents._race.CANCEL_GRACE", 0.02)

    async def body() -> str:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(3600)
        except TimeoutError:
            await asyncio.sleep(0.1)  # a retry, longer than the grace
            return answer(kind, "retried")
        return "never"

    result = await agent_for(kind, body).run("Go.")
    assert (result.stopped_by, result.answer) == ("answer", "retried")
    current = asyncio.current_task()
    assert current is not None and current.cancelling() == 0


async def test_a_deadline_that_passes_in_the_loop_turn_the_model_call_wakes_still_stops_it(
    kind: Kind,
) -> None:
    # What the call awaits is done just before the deadline, by a callback that blocks
    # the loop: the call's wake-up and the deadline come in one loop turn, the wake-up
    # first. The deadline was dropped there, and the call went on to answer late.
    loop = asyncio.get_running_loop()
    limit = 0.05

    async def body() -> str:
        woken = loop.create_future()

        def wake_then_block() -> None:
            woken.set_result(None)
            time.sleep(0.02)  # the deadline passes meanwhile: both read in the next turn

        loop.call_later(limit - 0.005, wake_then_block)
        await woken
        for _ in range(100):
            await asyncio.sleep(0.001)
        return answer(kind, "late")

    result = await agent_for(kind, body, limits=Limits(timeout=limit)).run("Go.")
    assert (result.stopped_by, result.limit) == ("limit", "timeout")
