"""One lifecycle fact, one event: a tool call starting or ending and a run ending are told
by one object each, the same on ``ctx.events`` and in an agent's stream."""

from __future__ import annotations

import asyncio
import operator
from typing import Any

import pytest

from agents import ReActAgent, RunEvent, RunFinished, ScriptedModel, ToolCallingAgent
from formats import XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCallFinished,
    ToolCallStarted,
    tool,
)

FACTS = (ToolCallStarted, ToolCallFinished, RunFinished)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


def script(native: bool) -> list[Any]:
    if native:
        first: Any = ScriptedModel.call("get_weather", {"city": "Paris"}, id="c1")
    else:
        first = '<action>{"tool": "get_weather", "args": {"city": "Paris"}}</action>'
    return [first, "21C" if native else "<answer>21C</answer>"]


@pytest.mark.parametrize("agent_type", [ReActAgent, ToolCallingAgent])
def test_one_fact_is_one_event_on_the_bus_and_in_the_stream(
    agent_type: type[ReActAgent[str] | ToolCallingAgent[str]],
) -> None:
    ctx = ExecutionContext()
    observed: list[object] = []
    for fact in FACTS:
        ctx.events.subscribe(fact, observed.append)
    model = ScriptedModel(script(agent_type is ToolCallingAgent))
    agent = agent_type(model, tool_chain=JSONToolChain().register_tool(get_weather))

    async def stream() -> list[RunEvent[str]]:
        return [event async for event in agent.stream("Weather in Paris?", ctx=ctx)]

    streamed = [event for event in asyncio.run(stream()) if isinstance(event, FACTS)]
    assert [type(event) for event in streamed] == [*FACTS]
    # The very objects the observers saw, in the same order: built once, where each
    # fact happened (the chain's call, the run's end), and delivered to both.
    assert len(observed) == len(streamed) and all(map(operator.is_, observed, streamed))
    started, finished, ended = streamed
    assert isinstance(started, ToolCallStarted) and isinstance(finished, ToolCallFinished)
    assert (started.step, started.name, dict(started.args)) == (1, "get_weather", {"city": "Paris"})
    assert (finished.step, finished.error, finished.ctx) == (1, None, ctx)
    assert isinstance(ended, RunFinished) and ended.ctx is ctx
    assert (ended.result.answer, len(ended.result.steps)) == ("21C", 2)


def test_a_call_outside_an_agent_loop_is_of_step_zero() -> None:
    ctx = ExecutionContext()
    seen: list[ToolCallStarted] = []
    ctx.events.subscribe(ToolCallStarted, seen.append)
    chain = JSONToolChain().register_tool(get_weather)
    chain.execute_sync(ctx, '{"tool": "get_weather", "args": {"city": "Oslo"}}', XMLFormat())
    assert [(event.step, event.name) for event in seen] == [(0, "get_weather")]


@pytest.mark.parametrize("agent_type", [ReActAgent, ToolCallingAgent])
def test_call_events_reach_whoever_reads_them_streamed_or_not(
    agent_type: type[ReActAgent[str] | ToolCallingAgent[str]],
) -> None:
    # run() reads no call events itself (the loop no longer subscribes to them), yet an
    # observer of ctx.events sees every call; a stream with no observer still carries them.
    native = agent_type is ToolCallingAgent
    chain = JSONToolChain().register_tool(get_weather)
    ctx = ExecutionContext()
    seen: list[ToolCallStarted | ToolCallFinished] = []
    ctx.events.subscribe(ToolCallStarted, seen.append)
    ctx.events.subscribe(ToolCallFinished, seen.append)
    result = agent_type(ScriptedModel(script(native)), tool_chain=chain).run_sync("?", ctx=ctx)
    assert result.answer == "21C"
    assert [(type(event), event.step, event.name) for event in seen] == [
        (ToolCallStarted, 1, "get_weather"),
        (ToolCallFinished, 1, "get_weather"),
    ]
    agent = agent_type(ScriptedModel(script(native)), tool_chain=chain)

    async def stream() -> list[RunEvent[str]]:
        return [event async for event in agent.stream("?")]

    calls = [e for e in asyncio.run(stream()) if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert [(type(event), event.step, event.name) for event in calls] == [
        (ToolCallStarted, 1, "get_weather"),
        (ToolCallFinished, 1, "get_weather"),
    ]
