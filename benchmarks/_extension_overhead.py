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

All eight runs (plain and each extension, text and native) are measured together, so
the ratios hold on a busy host; the model's and the tools' own time is subtracted as in
the loop benchmark.

Target (issues 20 and 27): each extension at most 1.3x the plain run per iteration, in
both modes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pydantic

from agents import ReActAgent, ToolCallingAgent
from benchmarks import loop_overhead as loop
from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table, verdict
from toolchain import ExecutionContext, Extension, Limits, Tool, ToolResult, YAMLToolChain
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

__all__ = ["run_extension_rows"]

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


def _agent(*, native: bool, extensions: Sequence[Extension]) -> Built:
    clock = loop.Clock()
    model = loop.InstantModel(loop.native_script() if native else loop.script(), clock)
    chain = YAMLToolChain().register_tool(loop.Lookup(clock))
    limits = Limits(max_iterations=loop.ITERATIONS + 1)
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


def run_extension_rows(settings: Settings) -> None:
    """Time the loop benchmark's run plain and with each extension, both agents."""
    modes = (("ReActAgent (text)", False), ("ToolCallingAgent (native)", True))
    built = [
        _agent(native=native, extensions=make())
        for _, native in modes
        for make in EXTENSIONS.values()
    ]
    timings = measure_jobs_sync([_job(each) for each in built], settings, seconds=30.0)
    per_iteration = [
        (timing.median_ns / 1e6 - clock.per_run_ms()) / loop.ITERATIONS * 1000
        for timing, (_, _, clock) in zip(timings, built, strict=True)
    ]
    print("== Extensions in the loop: the same run with each extension installed ==")
    rows: list[list[str]] = []
    verdicts: list[str] = []
    count = len(EXTENSIONS)
    for at, (mode, _) in enumerate(modes):
        plain = per_iteration[at * count]
        for index, label in enumerate(EXTENSIONS):
            here = at * count + index
            ratio = per_iteration[here] / plain
            rows.append(
                [
                    mode,
                    label,
                    f"{per_iteration[here]:,.1f}",
                    f"{ratio:.2f}x",
                    f"{timings[here].iqr_percent:.0f}%",
                    str(timings[here].runs),
                ]
            )
            if index:
                verdicts.append(
                    f"{mode}: {label} costs {ratio:.2f}x a plain run per iteration "
                    f"(target <= {TARGET_RATIO:g}x): {verdict(ratio <= TARGET_RATIO)}"
                )
    headers = ["agent (mode)", "extension", "µs/iteration", "vs plain", "IQR", "runs"]
    print(render_table(headers, rows, "llrrrr"))
    print()
    for line in verdicts:
        print(line)
    print()
