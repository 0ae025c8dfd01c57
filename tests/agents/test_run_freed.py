"""A finished run is freed when its last reference goes, not when the garbage collector
next looks: an agent serving many runs keeps no run's context, hooks, records or
stored values alive between collections (each run used to leave a cycle through its
context's event bus: some 14 to 41 objects a run, freed only by a collection)."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import pytest

from agents import ReActAgent, ToolCallingAgent
from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    ScriptedReply,
    ToolCallRequest,
)
from formats import TextFormat, XMLFormat
from toolchain import ExecutionContext, Extension, JSONToolChain, Tool, tool
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

SEEN: list[weakref.ref[ExecutionContext]] = []


@tool
def lookup(ctx: ExecutionContext, key: str) -> dict[str, object]:
    """Look a key up."""
    SEEN.append(weakref.ref(ctx))
    return {"key": key, "value": len(key)}


@tool
def archive(key: str) -> str:
    """Archive a record (found by search)."""
    return key


EXTENSIONS: dict[str, Callable[[], Sequence[Extension]]] = {
    "plain": lambda: (),
    "variables": lambda: (ToolVariables(),),
    "relay": lambda: (ContextRelay(),),
    "search": lambda: (ToolSearch(ToolIndex([archive]), defer=True),),
}


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _agent(
    native: bool,
    extensions: Sequence[Extension],
    *,
    runs: int = 1,
    called: Tool[Any, Any] = lookup,
    model: type[ScriptedModel] = ScriptedModel,
) -> ReActAgent[str] | ToolCallingAgent[str]:
    """An agent whose ``model`` calls ``called`` once and answers, ``runs`` times."""
    chain = JSONToolChain().register_tool(called)
    if native:
        call = ScriptedModel.call(called.name, key="alpha")
        return ToolCallingAgent(
            model([call, "done"] * runs), tool_chain=chain, extensions=extensions
        )
    action = f'<action>{{"tool": "{called.name}", "args": {{"key": "alpha"}}}}</action>'
    return ReActAgent(
        model([action, "<answer>done</answer>"] * runs), tool_chain=chain, extensions=extensions
    )


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
@pytest.mark.parametrize("extensions", list(EXTENSIONS), ids=list(EXTENSIONS))
def test_a_run_is_freed_without_the_collector(native: bool, extensions: str) -> None:
    SEEN.clear()
    agent = _agent(native, EXTENSIONS[extensions]())
    result = asyncio.run(agent.run("Look alpha up."))
    assert result.ok, result.stopped_by
    assert len(SEEN) == 1  # the tool ran, in the run's own context
    del result
    assert SEEN[0]() is None, "the run's context outlived the run: a reference cycle holds it"


@tool
def broken(ctx: ExecutionContext, key: str) -> str:
    """Always fails."""
    SEEN.append(weakref.ref(ctx))
    raise ValueError(f"no record {key}")


@pytest.fixture
def no_log_records() -> Iterator[None]:
    """No record kept: a captured record's traceback holds the failed call's frames."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.usefixtures("collector_off", "no_log_records")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_a_run_whose_tool_raised_is_freed_without_the_collector(native: bool) -> None:
    SEEN.clear()
    chain = JSONToolChain().register_tool(broken)
    agent: ReActAgent[str] | ToolCallingAgent[str]
    if native:
        model = ScriptedModel([ScriptedModel.call("broken", key="alpha"), "done"])
        agent = ToolCallingAgent(model, tool_chain=chain)
    else:
        action = '<action>{"tool": "broken", "args": {"key": "alpha"}}</action>'
        agent = ReActAgent(ScriptedModel([action, "<answer>done</answer>"]), tool_chain=chain)
    result = asyncio.run(agent.run("Look alpha up."))
    assert result.steps[0].tool_results[0].raw.errors[0] is not None  # it did fail
    assert SEEN[0]() is not None  # the result keeps the error, and so its run
    del result
    assert SEEN[0]() is None, "the run's context outlived the run: a reference cycle holds it"


@pytest.mark.usefixtures("collector_off", "no_log_records")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_a_run_whose_model_failed_is_freed_without_the_collector(native: bool) -> None:
    agent = _agent(native, ())
    asyncio.run(agent.run("Look alpha up."))  # the script's two replies used up
    ctx = ExecutionContext()
    run = weakref.ref(ctx)
    result = asyncio.run(agent.run("Look alpha up.", ctx=ctx))  # its first call fails
    assert result.stopped_by == "error"
    del result, ctx
    assert run() is None, "the run's context outlived the run: a reference cycle holds it"


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
@pytest.mark.parametrize("extensions", list(EXTENSIONS), ids=list(EXTENSIONS))
def test_a_run_leaves_no_garbage_for_the_collector(native: bool, extensions: str) -> None:
    """Nothing of a run is left in a cycle: its sync tool's call (driven while it waits
    for its worker thread) used to leave its driver's closures, some 22 objects a call."""
    agent = _agent(native, EXTENSIONS[extensions](), runs=2)

    async def runs() -> int:
        await agent.run("Look alpha up.")  # the agent's first run: what it sets up once
        gc.collect()
        result = await agent.run("Look alpha up.")
        assert result.ok, result.stopped_by
        del result
        return gc.collect()

    left = asyncio.run(runs())
    assert left == 0, f"the run left {left} objects in reference cycles"


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
@pytest.mark.parametrize("extensions", list(EXTENSIONS), ids=list(EXTENSIONS))
def test_an_agent_built_per_request_is_freed_without_the_collector(
    native: bool, extensions: str
) -> None:
    """An agent built for one request and dropped goes with its last reference: it used
    to be a cycle with its own replies (their feedback, a bound method of the agent), and
    a text agent's chain with its format (the chain's cache held the format, whose
    sections hold the chain), so the agent and everything it holds waited for a
    collection."""

    async def served() -> tuple[weakref.ref[object], int]:
        agent = _agent(native, EXTENSIONS[extensions]())
        result = await agent.run("Look alpha up.")
        assert result.ok, result.stopped_by
        gone = weakref.ref[object](agent)
        del agent, result
        return gone, gc.collect()

    asyncio.run(served())  # what the first agent of a process sets up once
    gone, left = asyncio.run(served())
    assert gone() is None, "the agent outlived its last reference: a reference cycle holds it"
    assert left == 0, f"the agent left {left} objects in reference cycles"


class _Slotted:
    """A text format of one's own that takes no weak reference (``__slots__`` and no
    ``__weakref__``): the XML format's behaviour, delegated."""

    __slots__ = ("_inner",)

    def __init__(self) -> None:
        self._inner = XMLFormat()

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_a_format_that_takes_no_weak_reference_still_runs() -> None:
    chain = JSONToolChain().register_tool(lookup)
    action = '<action>{"tool": "lookup", "args": {"key": "alpha"}}</action>'
    model = ScriptedModel([action, "<answer>done</answer>"] * 2)
    fmt = cast(TextFormat, _Slotted())  # a TextFormat by what it does (delegated)
    agent = ReActAgent(model, tool_chain=chain, text_format=fmt)
    for _ in range(2):  # the chain's reserved names made each time, not kept
        result = asyncio.run(agent.run("Look alpha up."))
        assert result.ok, result.stopped_by
        raw = result.steps[0].tool_results[0].raw
        assert raw.errors == (None,) and raw.results[0] is not None


async def _a_scope_cancels_and_takes_it_back() -> None:
    """What a cancel scope of an HTTP client may do inside a call: cancel the task it
    runs in, and take that cancellation back (the call goes on)."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        task.uncancel()


class _ScopedModel(ScriptedModel):
    """Replies as scripted, after a cancel scope inside the call cancelled the call's
    task and took the cancellation back (as the OpenAI SDK's HTTP client's scopes do)."""

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        await _a_scope_cancels_and_takes_it_back()
        return await super().generate(messages, options)


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_a_run_whose_model_call_took_a_cancellation_back_is_freed_without_the_collector(
    native: bool,
) -> None:
    """The cancellation the call caught held the frame that delivered it (in its
    traceback), which held it: a cycle, and the run's context with it."""
    SEEN.clear()
    agent = _agent(native, (), model=_ScopedModel)
    result = asyncio.run(agent.run("Look alpha up."))
    assert result.ok, result.stopped_by
    del result
    assert SEEN[0]() is None, "the run's context outlived the run: a reference cycle holds it"


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_a_run_whose_calls_waited_at_once_leaves_no_garbage_for_the_collector(
    native: bool,
) -> None:
    """Two sync calls of one step wait for their threads at once: the watch over them
    used to stay on the action's signals, a cycle each such step."""
    chain = JSONToolChain().register_tool(lookup)
    agent: ReActAgent[str] | ToolCallingAgent[str]
    if native:
        both = ScriptedReply(
            "",
            (
                ToolCallRequest("c1", "lookup", '{"key": "alpha"}'),
                ToolCallRequest("c2", "lookup", '{"key": "beta"}'),
            ),
        )
        agent = ToolCallingAgent(ScriptedModel([both, "done"] * 2), tool_chain=chain)
    else:
        action = (
            '<action>[{"tool": "lookup", "args": {"key": "alpha"}},'
            ' {"tool": "lookup", "args": {"key": "beta"}}]</action>'
        )
        agent = ReActAgent(ScriptedModel([action, "<answer>done</answer>"] * 2), tool_chain=chain)

    async def runs() -> int:
        await agent.run("Look alpha and beta up.")
        gc.collect()
        result = await agent.run("Look alpha and beta up.")
        assert result.ok, result.stopped_by
        assert len(result.steps[0].tool_results[0].raw.results) == 2
        del result
        return gc.collect()

    left = asyncio.run(runs())
    assert left == 0, f"the run left {left} objects in reference cycles"


@tool
async def scoped_lookup(ctx: ExecutionContext, key: str) -> str:
    """Look a key up through a client whose cancel scope cancels its task and takes the
    cancellation back (as an HTTP client's timeouts do)."""
    SEEN.append(weakref.ref(ctx))
    await _a_scope_cancels_and_takes_it_back()
    return key


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_a_run_whose_tool_took_a_cancellation_back_is_freed_without_the_collector(
    native: bool,
) -> None:
    SEEN.clear()
    agent = _agent(native, (), called=scoped_lookup)
    result = asyncio.run(agent.run("Look alpha up."))
    assert result.ok, result.stopped_by
    assert result.steps[0].tool_results[0].raw.results[0] is not None  # it ran to its end
    del result
    assert SEEN[0]() is None, "the run's context outlived the run: a reference cycle holds it"
