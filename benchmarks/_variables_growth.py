"""Whether ToolVariables' cost per iteration stays flat over a long run.

A 100-iteration run of each agent on an instant model: 99 steps of two calls to an
instant async tool (a 1.2 KB record each, so the variables' guide and list ride on
every step from the second on; one call's argument names an earlier variable,
``$lookup_1.key``), then an answer; 198 variables by the end. Each iteration's time is
the gap between two consecutive model calls (the loop, the calls, the extension's hooks,
the next step's sections). Per run, the median of the first ten iterations (2-11) and
of the last ten (a burst of another process's work shifts neither), and their ratio
(the two windows of one run see much the same load of a busy host); the median of
those ratios over the runs is the figure.

Baseline, in the same process and interleaved with it: the same run without
ToolVariables (the argument written as the value itself). Target (reported, never
asserted): the last iterations with ToolVariables at most 1.1x the first.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from agents import (
    GenerateOptions,
    Message,
    ModelResponse,
    ReActAgent,
    TextDelta,
    ToolCallingAgent,
    Usage,
)
from agents.models import ToolCallRequest
from benchmarks._timing import Settings, collector_paused, render_table, verdict
from toolchain import ExecutionContext, JSONToolChain, Limits, Tool, ToolResult
from toolchain.variables import ToolVariables

__all__ = ["Growth", "measure_growth", "report_growth", "run"]

ITERATIONS = 100
WINDOW = 10
GROWTH_TARGET = 1.1
ROUNDS = 40
_RECORD: dict[str, object] = {
    "rows": [{"id": i, "name": f"row {i}", "score": i * 7 % 13} for i in range(30)]
}


class LookupIn(BaseModel):
    key: str


class Lookup(Tool[LookupIn, dict[str, object]]):
    name = "lookup"
    description = "Look a key up."

    async def call(self, ctx: ExecutionContext, input: LookupIn) -> ToolResult[dict[str, object]]:
        return ToolResult[dict[str, object]]({"key": input.key, **_RECORD})


class StampedModel:
    """Replays two calls per step, then an answer, noting when each request comes."""

    def __init__(self, native: bool, referenced: bool) -> None:
        self.native = native
        second = "$lookup_1.key" if referenced else "alpha"
        self.calls = (("lookup", '{"key":"alpha"}'), ("lookup", f'{{"key":"{second}"}}'))
        body = ",".join(f'{{"tool":"{n}","args":{a}}}' for n, a in self.calls)
        self.action = f"<action>[{body}]</action>"
        self.stamps: list[int] = []

    @property
    def name(self) -> str:
        return "instant"

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        self.stamps.append(time.perf_counter_ns())
        turn = len(self.stamps)
        if turn >= ITERATIONS:
            text = "42" if self.native else "<answer>42</answer>"
            return ModelResponse(text, "stop", Usage(1, 1), "instant")
        if self.native:
            calls = tuple(
                ToolCallRequest(f"c{turn}_{i}", name, args)
                for i, (name, args) in enumerate(self.calls)
            )
            return ModelResponse("", "tool_use", Usage(1, 1), "instant", calls)
        return ModelResponse(self.action, "stop", Usage(1, 1), "instant")

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.generate(messages, options)


@dataclass(frozen=True, slots=True)
class Growth:
    """One agent's runs with or without ToolVariables: µs per iteration, first and last."""

    label: str
    variables: bool
    first_us: float
    """Median over the runs of iterations 2-11's median."""
    last_us: float
    """Median over the runs of the last ten iterations' median."""
    ratio: float
    """Median over the runs of each run's last ten against its first ten."""
    runs: int


class _Setup:
    def __init__(self, native: bool, variables: bool) -> None:
        self.native, self.variables = native, variables
        self.model = StampedModel(native, referenced=variables)
        extensions = [ToolVariables()] if variables else []
        chain = JSONToolChain(extensions=extensions).register_tool(Lookup())
        limits = Limits(max_steps=ITERATIONS + 1)
        self.agent: ReActAgent[str] | ToolCallingAgent[str] = (
            ToolCallingAgent(self.model, tool_chain=chain, limits=limits)
            if native
            else ReActAgent(self.model, tool_chain=chain, limits=limits)
        )
        self.first: list[float] = []
        self.last: list[float] = []

    async def run(self, keep: bool) -> None:
        self.model.stamps = []
        result = await self.agent.run("Look keys up.")
        if not result.ok or len(result.steps) != ITERATIONS:
            raise RuntimeError(f"the growth run did not finish as scripted: {result.stopped_by}")
        gaps = [b - a for a, b in zip(self.model.stamps, self.model.stamps[1:], strict=False)]
        if keep:
            self.first.append(statistics.median(gaps[1 : 1 + WINDOW]) / 1e3)
            self.last.append(statistics.median(gaps[-WINDOW:]) / 1e3)

    def growth(self) -> Growth:
        agent = "ToolCallingAgent (native)" if self.native else "ReActAgent (text)"
        return Growth(
            agent,
            self.variables,
            statistics.median(self.first),
            statistics.median(self.last),
            statistics.median(
                last / first for first, last in zip(self.first, self.last, strict=True)
            ),
            len(self.first),
        )


async def _measure(settings: Settings) -> list[Growth]:
    setups = [_Setup(native, variables) for native in (False, True) for variables in (False, True)]
    for setup in setups:
        for _ in range(2):
            await setup.run(keep=False)
    with collector_paused(settings.disable_gc):
        for _ in range(settings.runs(ROUNDS)):
            for setup in setups:
                await setup.run(keep=True)
    return [setup.growth() for setup in setups]


def measure_growth(settings: Settings) -> list[Growth]:
    """Time the 100-iteration runs, interleaved, both agents with and without variables."""
    return asyncio.run(_measure(settings))


def report_growth(growths: list[Growth]) -> None:
    rows = [
        [
            g.label,
            "ToolVariables" if g.variables else "none (baseline)",
            f"{g.first_us:,.1f}",
            f"{g.last_us:,.1f}",
            f"{g.ratio:.2f}x",
            str(g.runs),
        ]
        for g in growths
    ]
    headers = [
        "agent",
        "extension",
        f"µs/iteration, iterations 2-{WINDOW + 1}",
        f"last {WINDOW}",
        "last / first (median of runs)",
        "runs",
    ]
    print(render_table(headers, rows, "llrrrr"))
    print()
    for g in growths:
        if not g.variables:
            continue
        (plain,) = [p for p in growths if p.label == g.label and not p.variables]
        print(
            f"ToolVariables, {g.label}: the last {WINDOW} of {ITERATIONS} iterations cost "
            f"{g.ratio:.2f}x the first (without it {plain.ratio:.2f}x); target <= "
            f"{GROWTH_TARGET:g}x: {verdict(g.ratio <= GROWTH_TARGET)}"
        )
    print()


def run(settings: Settings) -> None:
    """ToolVariables per iteration over a 100-iteration run (also part of ``references``)."""
    print(f"== ToolVariables per iteration over a {ITERATIONS}-iteration run ==")
    print("two calls a step on an instant model and tool; the time between two model calls")
    print()
    report_growth(measure_growth(settings))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks._variables_growth")
