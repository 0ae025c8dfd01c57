"""Sync tools that never return: their threads are abandoned and replaced, so they never
starve the calls after them; past a ceiling a new sync call fails at once, naming them.

Every stuck tool here blocks on a `threading.Event` the fixture sets at the end, and the
fixture waits until the pool has seen each of them return: nothing is left running for
the tests after these.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agents import ScriptedModel, ToolCallingAgent
from formats import XMLFormat
from toolchain import CompositeTool, ExecutionContext, JSONToolChain, Tool, tool
from toolchain._concurrency import MAX_ABANDONED, MAX_WORKERS, stuck_calls

FMT = XMLFormat()
HANG_GUARD = 60.0  # seconds; a guard against a hang, not a speed limit


class Gate:
    """Stuck tools wait here until the test ends; ``started`` counts their calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0
        self._lock = threading.Lock()

    def stuck_tool(self, name: str) -> Tool[Any, Any]:
        gate = self

        def hang(n: int) -> int:
            with gate._lock:
                gate.started += 1
            gate.release.wait()
            return n

        # Its own short timeout: the chain gives up on it long before the test ends.
        return tool(name=name, description="Never returns.", timeout=0.05)(hang)


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.release.set()
    give_up = time.monotonic() + HANG_GUARD
    while stuck_calls() and time.monotonic() < give_up:
        time.sleep(0.01)
    assert stuck_calls() == [], "stuck calls outlived their release"


def get_stuck(chain: JSONToolChain, name: str, count: int) -> None:
    """One action of ``count`` calls to ``name``, each of which times out stuck."""
    calls = ", ".join(f'{{"tool": "{name}", "args": {{"n": {n}}}}}' for n in range(count))
    result = chain.execute_sync(ExecutionContext(), f"[{calls}]", FMT)
    assert [error.kind if error else None for error in result.raw.errors] == ["timeout"] * count


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_forty_five_stuck_calls_never_starve_the_sync_calls_after_them(
    gate: Gate, caplog: pytest.LogCaptureFixture
) -> None:
    chain = JSONToolChain(cancel_grace=0.05).register_tool(gate.stuck_tool("lookup"))
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        for _ in range(3):
            get_stuck(chain, "lookup", 15)
    assert MAX_WORKERS < 3 * 15
    assert gate.started == 45  # each call got a thread: none waited behind the stuck ones

    # Each stuck call's thread, abandoned and replaced. (On a busy host a call may also
    # outlast the chain's 0.05 s grace after its cancellation and be abandoned by the
    # chain too, with a message of its own: not what this counts.)
    threads = [r for r in caplog.records if "its thread is abandoned" in r.getMessage()]
    abandoned = [r.getMessage() for r in threads]
    assert len(abandoned) == 45
    assert all(r.levelno == logging.WARNING for r in threads)
    assert abandoned[-1].startswith("sync tool lookup (call call_15) still runs after its call")
    assert f"45 stuck now (at {MAX_ABANDONED}, new sync calls fail at once)" in abandoned[-1]
    assert len(stuck_calls()) == 45

    # A trivial sync tool under the chain's default timeout (60 s) answers at once, and
    # so does a scripted run with no limits given.
    result = (
        JSONToolChain()
        .register_tool(add)
        .execute_sync(ExecutionContext(), '{"tool": "add", "args": {"a": 1, "b": 2}}', FMT)
    )
    assert result.raw.errors == (None,)
    assert result.raw.output(0, int) == 3
    model = ScriptedModel([ScriptedModel.call("add", a=n, b=1) for n in range(4)] + ["Done."])
    run = ToolCallingAgent(model, tools=[add]).run_sync("Add one to 0, 1, 2 and 3.")
    assert run.answer == "Done."
    outputs = [r.raw.output(0, int) for step in run.steps for r in step.tool_results]
    assert outputs == [1, 2, 3, 4]


def test_at_the_ceiling_a_sync_call_fails_at_once_naming_the_stuck_tools(
    gate: Gate, caplog: pytest.LogCaptureFixture
) -> None:
    chain = JSONToolChain(cancel_grace=0.05)
    chain.register_tool(gate.stuck_tool("fetch_page")).register_tool(gate.stuck_tool("query_db"))
    chain.register_tool(add)
    batch = MAX_WORKERS
    for name in ["fetch_page", "query_db"] * (MAX_ABANDONED // (2 * batch)):
        get_stuck(chain, name, batch)
    assert len(stuck_calls()) == MAX_ABANDONED
    half = MAX_ABANDONED // 2

    with caplog.at_level(logging.ERROR, logger="toolchain"):
        result = chain.execute_sync(
            ExecutionContext(), '{"tool": "add", "args": {"a": 1, "b": 2}}', FMT
        )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "limit"
    expected = (
        f"add was not run: {MAX_ABANDONED} sync tool calls in this process are still "
        f"running after they timed out or were cancelled (fetch_page ({half}), "
        f"query_db ({half})), the most it keeps ({MAX_ABANDONED}); it runs no sync tool "
        "until some of them return. Do without this tool for now, or try it again later."
    )
    assert error.message == expected
    assert f"Error: {expected}" in result.text  # what the model reads
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [expected]

    # A sync sub-tool of a composite is refused alike, as that sub-call's error.
    chain.register_tool(CompositeTool("math", "Sums.", [add]))
    sums = '{"tool": "math", "args": {"calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}}'
    composite = chain.execute_sync(ExecutionContext(), sums, FMT)
    assert composite.raw.output(0, dict)["results"] == [{"name": "add", "error": expected}]

    # Once the stuck calls return, sync tools run again.
    gate.release.set()
    give_up = time.monotonic() + HANG_GUARD
    while stuck_calls() and time.monotonic() < give_up:
        time.sleep(0.01)
    again = chain.execute_sync(ExecutionContext(), '{"tool": "add", "args": {"a": 2, "b": 2}}', FMT)
    assert again.raw.output(0, int) == 4
