"""What an installed extension costs per loop iteration, for ``benchmarks.loop_overhead``.

The loop benchmark's scripted run (9 turns of two ``lookup`` calls, then an answer),
once as it is and once with each extension installed on the agent, doing only what an
extension does on every step and call of a run that never needs it:

- ``ToolSearch`` of 200 deferred tools (each with three described parameters, as an
  API's tools have); the model never searches: building the run's prompt, the step hook
  that hides the deferred tools, the gate on each call;
- ``ToolVariables`` (default ``auto`` style): every output saved and named beside its
  result (``$lookup_1 = ...``); no argument names one, and the outputs are too small for
  the guide and the list to pay;
- ``ContextRelay`` below its threshold (2,000 characters; each output is some 30): its
  reader tools offered, its guide in the system prompt, its hooks on every call; nothing
  is boxed.

All eight runs (plain and each extension, text and native) are measured together,
round by round, so the ratios hold on a busy host; the model's and the tools' own time is
subtracted as in the loop benchmark. Each run's wall time is measured and, beside it,
this thread's CPU time: on a shared host the wall time also holds the time other
processes took while the run waited for a core, the CPU time only the run's own work.

Target (issues 20 and 27): each extension at most 1.3x the plain run per iteration, in
both modes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pydantic

from agents import ReActAgent, ToolCallingAgent
from benchmarks import loop_overhead as loop
from benchmarks._timing import Settings, Timing, collector_paused, render_table, verdict
from toolchain import ExecutionContext, Extension, Limits, Tool, ToolResult, YAMLToolChain
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

__all__ = ["EXTENSIONS", "TOOLS", "ApiTool", "agent_for", "run_extension_rows"]

TOOLS = 200
TARGET_RATIO = 1.3


class ApiTool(Tool[pydantic.BaseModel, dict[str, object]]):
    """One of the 200 deferred tools (never called: the model does not search)."""

    def __init__(self, number: int) -> None:
        self.name = f"api_{number:03d}"
        self.description = f"Operation {number} of the service: reads or changes record {number}."
        fields: dict[str, Any] = {
            "id": (str, pydantic.Field(description="The record's id.")),
            "fields": (
                dict[str, str] | None,
                pydantic.Field(default=None, description="Fields to set, by name."),
            ),
            "limit": (
                int | None,
                pydantic.Field(default=None, description="How many to return, 1 to 100."),
            ),
        }
        self.input_type = pydantic.create_model(f"Api{number:03d}Input", **fields)

    async def call(
        self, ctx: ExecutionContext, input: pydantic.BaseModel
    ) -> ToolResult[dict[str, object]]:
        return ToolResult({"ok": True})


def _search() -> ToolSearch:
    return ToolSearch(ToolIndex([ApiTool(n) for n in range(TOOLS)]), defer=True)


EXTENSIONS: dict[str, Callable[[], Sequence[Extension]]] = {
    "plain": lambda: (),
    f"ToolSearch ({TOOLS} deferred tools)": lambda: (_search(),),
    "ToolVariables": lambda: (ToolVariables(),),
    "ContextRelay (below its threshold)": lambda: (ContextRelay(),),
}

Built = tuple[ReActAgent[str] | ToolCallingAgent[str], loop.InstantModel, loop.Clock]


def agent_for(*, native: bool, extensions: Sequence[Extension]) -> Built:
    """The loop benchmark's agent (its chain, instant model and clock) with ``extensions``."""
    clock = loop.Clock()
    model = loop.InstantModel(loop.native_script() if native else loop.script(), clock)
    chain = YAMLToolChain().register_tool(loop.Lookup(clock))
    limits = Limits(max_steps=loop.ITERATIONS + 1)
    if native:
        return (
            ToolCallingAgent(model, tool_chain=chain, limits=limits, extensions=extensions),
            model,
            clock,
        )
    return ReActAgent(model, tool_chain=chain, limits=limits, extensions=extensions), model, clock


def _runner(
    agent: ReActAgent[str] | ToolCallingAgent[str], model: loop.InstantModel
) -> Callable[[], Awaitable[None]]:
    return lambda: loop.agent_run(agent, model)


async def _measure(built: list[Built], settings: Settings) -> tuple[list[Timing], list[Timing]]:
    """Each run's wall time and this thread's CPU time, the jobs interleaved round by
    round (as ``measure_jobs`` does): on a shared host the wall time also holds what
    other processes took, the CPU time only this run's own work."""
    runs = [_runner(agent, model) for agent, model, _ in built]
    for run in runs:
        for _ in range(5):
            await run()
    wall: list[list[int]] = [[] for _ in runs]
    cpu: list[list[int]] = [[] for _ in runs]
    with collector_paused(settings.disable_gc):
        deadline = time.perf_counter() + settings.seconds(30.0)
        for done in range(1, settings.runs(300) + 1):
            for run, walls, cpus in zip(runs, wall, cpu, strict=True):
                started, used = time.perf_counter_ns(), time.thread_time_ns()
                await run()
                cpus.append(time.thread_time_ns() - used)
                walls.append(time.perf_counter_ns() - started)
            if time.perf_counter() > deadline and done >= 3:
                break
    return [Timing(tuple(sorted(w))) for w in wall], [Timing(tuple(sorted(c))) for c in cpu]


def run_extension_rows(settings: Settings) -> None:
    """Time the loop benchmark's run plain and with each extension, both agents."""
    modes = (("ReActAgent (text)", False), ("ToolCallingAgent (native)", True))
    built = [
        agent_for(native=native, extensions=make())
        for _, native in modes
        for make in EXTENSIONS.values()
    ]
    wall, cpu = asyncio.run(_measure(built, settings))

    def per_iteration(timings: list[Timing]) -> list[float]:
        return [
            (timing.median_ns / 1e6 - clock.per_run_ms()) / loop.ITERATIONS * 1000
            for timing, (_, _, clock) in zip(timings, built, strict=True)
        ]

    wall_us, cpu_us = per_iteration(wall), per_iteration(cpu)
    print("== Extensions in the loop: the same run with each extension installed ==")
    print("wall: the run's own time; CPU: this thread's (what other processes take left out)")
    rows: list[list[str]] = []
    verdicts: list[str] = []
    count = len(EXTENSIONS)
    for at, (mode, _) in enumerate(modes):
        plain = at * count
        for index, label in enumerate(EXTENSIONS):
            here = plain + index
            ratio, cpu_ratio = wall_us[here] / wall_us[plain], cpu_us[here] / cpu_us[plain]
            rows.append(
                [
                    mode,
                    label,
                    f"{wall_us[here]:,.1f}",
                    f"{ratio:.2f}x",
                    f"{cpu_us[here]:,.1f}",
                    f"{cpu_ratio:.2f}x",
                    f"{wall[here].iqr_percent:.0f}% / {cpu[here].iqr_percent:.0f}%",
                    str(wall[here].runs),
                ]
            )
            if index:
                verdicts.append(
                    f"{mode}: {label} costs {ratio:.2f}x a plain run per iteration "
                    f"({cpu_ratio:.2f}x in CPU time); target <= {TARGET_RATIO:g}x: "
                    f"{verdict(ratio <= TARGET_RATIO)} (CPU: {verdict(cpu_ratio <= TARGET_RATIO)})"
                )
    headers = [
        "agent (mode)",
        "extension",
        "wall µs/iteration",
        "vs plain",
        "CPU µs/iteration",
        "vs plain",
        "IQR wall / CPU",
        "runs",
    ]
    print(render_table(headers, rows, "llrrrrrr"))
    print()
    for line in verdicts:
        print(line)
    print()
