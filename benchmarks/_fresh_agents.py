"""What an agent built per request costs, for ``benchmarks.loop_overhead``.

A web handler often builds its chain, its extensions and its agent for each request,
then runs it once. The loop benchmark's scripted run (9 turns of two calls, then an
answer), once on an agent built anew for the run (a new chain, agent and extension:
``ToolSearch`` over one ``ToolIndex`` of 200 tools kept by the process, as an index is
built once) and once on one agent reused for every run, as the loop benchmark does.
What the fresh agent pays on top is what a chain, an agent and its extension set up:
tool schemas, listings, a search index, the guides' tokens (the work that follows from
the same tools alone is made once per process, not per agent).

Target: an agent built per request costs at most ``TARGET_RATIO`` times a reused
agent's run (building it costs no more than running it once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from benchmarks import _extension_overhead as eo
from benchmarks import loop_overhead as loop
from benchmarks._timing import Job, Settings, measure_jobs, render_table, verdict
from toolchain import Extension
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

__all__ = ["run_fresh_rows"]

TARGET_RATIO = 2.0

_INDEX = ToolIndex([eo.ApiTool(n) for n in range(eo.TOOLS)])

EXTENSIONS: dict[str, Callable[[], Sequence[Extension]]] = {
    "plain": lambda: (),
    f"ToolSearch ({eo.TOOLS} deferred tools, one index)": lambda: (ToolSearch(_INDEX, defer=True),),
    "ToolVariables": lambda: (ToolVariables(),),
    "ContextRelay": lambda: (ContextRelay(),),
}


def _fresh(native: bool, make: Callable[[], Sequence[Extension]]) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        agent, model, _ = eo.agent_for(native=native, extensions=make())
        await loop.agent_run(agent, model)

    return run


def _reused(native: bool, make: Callable[[], Sequence[Extension]]) -> Callable[[], Awaitable[None]]:
    agent, model, _ = eo.agent_for(native=native, extensions=make())
    return lambda: loop.agent_run(agent, model)


def run_fresh_rows(settings: Settings) -> None:
    """Time the loop benchmark's run on an agent built for it and on one reused."""
    modes = (("ReActAgent (text)", False), ("ToolCallingAgent (native)", True))
    cases = [
        (mode, label, native, make) for mode, native in modes for label, make in EXTENSIONS.items()
    ]
    jobs: list[Job] = []
    for _, _, native, make in cases:
        jobs.append(Job.awaited(_fresh(native, make), 100, warmup=3))
        jobs.append(Job.awaited(_reused(native, make), 100, warmup=3))
    timings = asyncio.run(measure_jobs(jobs, settings, seconds=12.0))
    print("== Agents built per request: the same run on an agent built for it ==")
    print(f"a new chain, agent and extension each run (ToolSearch over one index of {eo.TOOLS})")
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for at, (mode, label, _, _) in enumerate(cases):
        fresh, reused = timings[2 * at], timings[2 * at + 1]
        ratio = fresh.median_ns / reused.median_ns
        rows.append(
            [
                mode,
                label,
                f"{fresh.median_us:,.0f}",
                f"{reused.median_us:,.0f}",
                f"{ratio:.2f}x",
                f"{fresh.iqr_percent:.0f}% / {reused.iqr_percent:.0f}%",
                str(fresh.runs),
            ]
        )
        verdicts.append(
            f"{mode}: {label}: an agent built per run costs {ratio:.2f}x a reused agent's "
            f"run; target <= {TARGET_RATIO:g}x: {verdict(ratio <= TARGET_RATIO)}"
        )
    headers = ["agent (mode)", "extension", "built µs/run", "reused µs/run", "ratio", "IQR", "runs"]
    print(render_table(headers, rows, "llrrrrr"))
    print()
    for line in verdicts:
        print(line)
    print()
