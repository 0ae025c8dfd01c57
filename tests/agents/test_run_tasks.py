"""A run leaves no task behind: once ``await agent.run(...)`` returns, or the last event
of ``agent.stream(...)`` is read, every task the run started is done.

Checked by comparing ``asyncio.all_tasks()`` (which lists only unfinished tasks) before
and after multi-step runs of both agents: tool calls one at a time and several at once,
tools that finish at once, suspend or block, streamed runs, and runs stopped by a limit,
by cancellation and by the deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Literal

import pytest

from agents import (
    AgentResult,
    ReActAgent,
    RunFinished,
    ScriptedModel,
    ToolCallingAgent,
    run_prompt,
)
from agents.compaction import SummarizingCompaction
from agents.models import ScriptedReply, ToolCallRequest
from agents.prompt import Prompt
from tests.support.agent_kinds import Kind
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer
from toolchain import ExecutionContext, JSONToolChain, Limits, tool

STEPS = 10  # tool-calling steps; the eleventh answers


@tool
async def add(a: int, b: int) -> int:
    """Add two whole numbers (finishes without suspending)."""
    return a + b


@tool
async def pause(a: int) -> int:
    """Give the loop a turn, then return ``a``."""
    await asyncio.sleep(0)
    return a


@tool
def block(a: int) -> int:
    """Run on a worker thread and return ``a``."""
    time.sleep(0.001)
    return a


@tool
async def stop_run(ctx: ExecutionContext) -> str:
    """Cancel the run from inside a tool."""
    ctx.cancel("the user pressed stop")
    return "stopping"


def calls_of(step: int) -> list[tuple[str, dict[str, int]]]:
    """One call on even steps, three at once (instant, suspending, blocking) on odd."""
    if step % 2 == 0:
        return [("add", {"a": step, "b": 1})]
    return [("add", {"a": step, "b": 1}), ("pause", {"a": step}), ("block", {"a": step})]


def script(kind: Kind, steps: int = STEPS) -> list[str | ScriptedReply]:
    outputs: list[str | ScriptedReply] = []
    for step in range(steps):
        calls = calls_of(step)
        if kind == "native":
            requests = tuple(
                ToolCallRequest("", name, str(args).replace("'", '"')) for name, args in calls
            )
            outputs.append(ScriptedReply("", requests))
        else:
            listed = ", ".join(
                f'{{"tool": "{name}", "args": {str(args).replace(chr(39), chr(34))}}}'
                for name, args in calls
            )
            outputs.append(f"<action>[{listed}]</action>")
    outputs.append("done" if kind == "native" else "<answer>done</answer>")
    return outputs


def call_alone(kind: Kind, name: str) -> str | ScriptedReply:
    """A reply calling the tool ``name`` with no arguments."""
    if kind == "native":
        return ScriptedModel.call(name)
    return f'<action>{{"tool": "{name}"}}</action>'


def agent_for(
    kind: Kind, outputs: Sequence[str | ScriptedReply], **options: Any
) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = JSONToolChain()
    for each in (add, pause, block, stop_run):
        chain.register_tool(each)
    model = ScriptedModel(list(outputs))
    if kind == "react":
        return ReActAgent(model, tool_chain=chain, **options)
    return ToolCallingAgent(model, tool_chain=chain, **options)


@pytest.fixture(params=["react", "native"])
def kind(request: pytest.FixtureRequest) -> Kind:
    chosen: Kind = request.param
    return chosen


def left_behind(before: set[asyncio.Task[Any]]) -> list[str]:
    """The unfinished tasks that were not there ``before``, by coroutine name."""
    return sorted(
        getattr(task.get_coro(), "__qualname__", repr(task))
        for task in asyncio.all_tasks() - before
    )


async def streamed(agent: ReActAgent[str] | ToolCallingAgent[str]) -> AgentResult[str]:
    last = None
    async for event in agent.stream("Work through the steps."):
        last = event
    assert isinstance(last, RunFinished)
    return last.result


async def test_a_run_leaves_no_task(kind: Kind) -> None:
    agent = agent_for(kind, script(kind))
    before = asyncio.all_tasks()
    result = await agent.run("Work through the steps.")
    assert left_behind(before) == []
    assert result.stopped_by == "answer"
    assert len(result.steps) == STEPS + 1


async def test_a_streamed_run_leaves_no_task(kind: Kind) -> None:
    agent = agent_for(kind, script(kind))
    before = asyncio.all_tasks()
    result = await streamed(agent)
    assert left_behind(before) == []
    assert result.stopped_by == "answer"


@pytest.mark.parametrize("streaming", [False, True], ids=["run", "stream"])
async def test_a_run_stopped_by_a_limit_leaves_no_task(kind: Kind, streaming: bool) -> None:
    agent = agent_for(kind, script(kind), limits=Limits(max_steps=4))
    before = asyncio.all_tasks()
    result = await (streamed(agent) if streaming else agent.run("Work through the steps."))
    assert left_behind(before) == []
    assert result.stopped_by == "limit"


@pytest.mark.parametrize("streaming", [False, True], ids=["run", "stream"])
async def test_a_cancelled_run_leaves_no_task(kind: Kind, streaming: bool) -> None:
    outputs = script(kind, 3)
    stop: str | ScriptedReply = (
        ScriptedModel.call("stop_run")
        if kind == "native"
        else '<action>{"tool": "stop_run"}</action>'
    )
    agent = agent_for(kind, [*outputs[:3], stop, *outputs[3:]])
    before = asyncio.all_tasks()
    result = await (streamed(agent) if streaming else agent.run("Work through the steps."))
    assert left_behind(before) == []
    assert result.stopped_by == "cancelled"


async def test_a_run_cancelled_while_the_model_thinks_leaves_no_task(kind: Kind) -> None:
    """Cancelled from outside while the model call is under way."""
    ctx = ExecutionContext()
    agent = agent_for(kind, script(kind))
    thinking = asyncio.Event()
    original = agent.model.generate

    async def generate(*args: Any, **kwargs: Any) -> Any:
        thinking.set()
        await asyncio.sleep(3600)
        return await original(*args, **kwargs)

    agent.model.generate = generate  # type: ignore[method-assign]  # a model that hangs
    before = asyncio.all_tasks()
    running = asyncio.ensure_future(agent.run("Work through the steps.", ctx=ctx))
    await thinking.wait()
    ctx.cancel("enough")
    result = await running
    assert left_behind(before) == []
    assert result.stopped_by == "cancelled"


async def test_a_run_past_its_deadline_leaves_no_task(kind: Kind) -> None:
    @tool
    async def slow_tool() -> str:
        """Outlast the run's time limit."""
        await asyncio.sleep(3600)
        return "never"

    chain = JSONToolChain().register_tool(slow_tool)
    first: str | ScriptedReply = (
        ScriptedModel.call("slow_tool")
        if kind == "native"
        else '<action>{"tool": "slow_tool"}</action>'
    )
    model = ScriptedModel([first, "done"])
    limits = Limits(timeout=0.05)
    agent: ReActAgent[str] | ToolCallingAgent[str] = (
        ReActAgent(model, tool_chain=chain, limits=limits)
        if kind == "react"
        else ToolCallingAgent(model, tool_chain=chain, limits=limits)
    )
    before = asyncio.all_tasks()
    result = await agent.run("Be quick.")
    assert left_behind(before) == []
    assert result.stopped_by == "limit"


async def test_a_run_that_summarises_leaves_no_task(kind: Kind) -> None:
    """A step hook making model calls of its own (`SummarizingCompaction`)."""
    summaries = ScriptedModel(lambda messages: "The steps so far added numbers.")
    compaction = SummarizingCompaction(summaries, keep_steps=1, trigger_steps=2)
    agent = agent_for(kind, script(kind), step_hooks=[compaction])
    before = asyncio.all_tasks()
    result = await agent.run("Work through the steps.")
    assert left_behind(before) == []
    assert result.stopped_by == "answer"
    assert len(summaries.requests) > 1


@pytest.mark.parametrize("protocol", ["native", "text"])
async def test_a_prompt_run_leaves_no_task(protocol: Literal["native", "text"]) -> None:
    kind: Kind = "native" if protocol == "native" else "react"

    def build(prompt: Prompt) -> None:
        for each in (add, pause, block):
            prompt.def_tool(each)
        prompt.user("Work through the steps.")

    before = asyncio.all_tasks()
    result = await run_prompt(build, model=ScriptedModel(script(kind)), protocol=protocol)
    assert left_behind(before) == []
    assert result.stopped_by == "answer"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("streaming", [False, True], ids=["run", "stream"])
async def test_a_run_over_http_leaves_no_task(
    server: LoopbackServer, provider: str, streaming: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real SDKs. One task is not ours: after ``[DONE]`` the OpenAI SDK
    leaves its own event iterator (an async generator) unclosed, and asyncio closes it in
    a task of its own (``async_generator_athrow``), at the loop's next turn."""
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "sk-loopback")
    base = server.openai_base_url if provider == "openai" else server.base_url
    monkeypatch.setenv(f"{provider.upper()}_API_BASE", base)
    outputs = [output for output in script("react", 3) if isinstance(output, str)]
    server.respond_with(chat_script(outputs, chunk_size=5))
    agent = ReActAgent(f"{provider}:m", tool_chain=agent_for("react", ()).tool_chain)
    before = asyncio.all_tasks()
    result = await (streamed(agent) if streaming else agent.run("Work through the steps."))
    left = left_behind(before)
    if provider == "openai" and streaming:
        left = [name for name in left if "async_generator_athrow" not in name]
    assert left == []
    assert result.stopped_by == "answer"


async def test_a_long_run_of_instant_steps_holds_a_bounded_number_of_tasks(kind: Kind) -> None:
    """A run that is not streamed settles its finished-at-once tasks together when it
    ends (no loop turn per step), but never holds more than a bound of them."""
    unfinished: list[int] = []

    @tool
    async def count(a: int) -> int:
        """Finish at once, noting how many tasks are unfinished."""
        unfinished.append(len(asyncio.all_tasks()))
        return a

    steps = 400
    calls = [("count", {"a": 1}), ("count", {"a": 2})]
    outputs: list[str | ScriptedReply] = []
    for _ in range(steps):
        if kind == "native":
            requests = tuple(ToolCallRequest("", name, '{"a": 1}') for name, _ in calls)
            outputs.append(ScriptedReply("", requests))
        else:
            listed = ", ".join('{"tool": "count", "args": {"a": 1}}' for _ in calls)
            outputs.append(f"<action>[{listed}]</action>")
    outputs.append("done" if kind == "native" else "<answer>done</answer>")
    chain = JSONToolChain().register_tool(count)
    model = ScriptedModel(outputs)
    limits = Limits(max_steps=steps + 1, max_tool_calls=None)
    if kind == "react":
        agent: ReActAgent[str] | ToolCallingAgent[str] = ReActAgent(
            model, tool_chain=chain, limits=limits
        )
    else:
        agent = ToolCallingAgent(model, tool_chain=chain, limits=limits)
    before = asyncio.all_tasks()
    result = await agent.run("Count.")
    assert result.stopped_by == "answer" and len(unfinished) == 2 * steps
    assert left_behind(before) == []
    # Three tasks a step (the model call's, two calls'), 1,200 in all: at most 256 held.
    assert max(unfinished) - len(before) <= 256 + 3
