"""``ToolSearch``'s cost per loop iteration, for ``benchmarks.loop_overhead``.

The loop benchmark's scripted run (9 turns of two ``lookup`` calls, then an answer),
once as it is and once with a ``ToolSearch`` of 200 deferred tools installed (each
with three described parameters, as an API's tools have). The model never searches:
the figure is what having discovery installed costs each iteration (building the
run's prompt, the step hook that hides the deferred tools, the gate on each call).
Both runs are measured together, so the ratio holds on a busy host; the model's and
the tools' own time is subtracted as in the loop benchmark.

Target (issue 20): at most 1.3x the plain run per iteration, in both modes.
"""

from __future__ import annotations

from typing import Any

import pydantic

from agents import ReActAgent, ToolCallingAgent
from benchmarks import loop_overhead as loop
from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table, verdict
from toolchain import ExecutionContext, Limits, Tool, ToolResult, YAMLToolChain
from toolchain.discovery import ToolIndex, ToolSearch

__all__ = ["run_toolsearch_rows"]

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


Built = tuple[ReActAgent[str] | ToolCallingAgent[str], loop.InstantModel, loop.Clock]


def _agent(*, native: bool, search: bool) -> Built:
    clock = loop.Clock()
    model = loop.InstantModel(loop.native_script() if native else loop.script(), clock)
    chain = YAMLToolChain().register_tool(loop.Lookup(clock))
    limits = Limits(max_steps=loop.ITERATIONS + 1)
    extensions = [_search()] if search else []
    if native:
        return (
            ToolCallingAgent(model, tool_chain=chain, limits=limits, extensions=extensions),
            model,
            clock,
        )
    return ReActAgent(model, tool_chain=chain, limits=limits, extensions=extensions), model, clock


def _job(built: Built) -> Job:
    agent, model, _ = built
    return Job.awaited(lambda: loop.agent_run(agent, model), 300, warmup=5)


def run_toolsearch_rows(settings: Settings) -> None:
    """Time the loop benchmark's run with and without ``ToolSearch``, both agents."""
    built = [
        _agent(native=native, search=search) for native in (False, True) for search in (False, True)
    ]
    timings = measure_jobs_sync([_job(each) for each in built], settings, seconds=16.0)
    per_iteration = [
        (timing.median_ns / 1e6 - clock.per_run_ms()) / loop.ITERATIONS * 1000
        for timing, (_, _, clock) in zip(timings, built, strict=True)
    ]
    print(f"== ToolSearch in the loop: the same run with a ToolSearch of {TOOLS} deferred tools ==")
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for mode, offset in (("ReActAgent (text)", 0), ("ToolCallingAgent (native)", 2)):
        plain, search = per_iteration[offset], per_iteration[offset + 1]
        ratio = search / plain
        rows.append(
            [
                mode,
                f"{plain:,.1f}",
                f"{search:,.1f}",
                f"{ratio:.2f}x",
                f"{timings[offset].iqr_percent:.0f}% / {timings[offset + 1].iqr_percent:.0f}%",
            ]
        )
        verdicts.append(
            f"{mode}: ToolSearch costs {ratio:.2f}x a plain run per iteration "
            f"(target <= {TARGET_RATIO:g}x): {verdict(ratio <= TARGET_RATIO)}"
        )
    headers = ["agent (mode)", "plain µs/iteration", "ToolSearch µs/iteration", "ratio", "IQR"]
    print(render_table(headers, rows, "lrrrr"))
    print()
    for line in verdicts:
        print(line)
    print()
