"""What passing by reference costs per call: ``execute_calls`` timed with and without.

``execute_calls`` of one call on an instant async tool, five ways, interleaved in the
same process: a small call without references through a plain chain and through the
extension's chain (what the extension's hooks cost any call); the values themselves in
the call through a plain chain (the baseline: the tool receives the same values by
reference) and through the extension's chain (a model that copies); and references in
the call through the extension's chain. The overhead is the last median minus the
baseline's, per call; for ToolVariables two weather dicts, for the relay a 2,500-character
text and `RelayWorld`'s long transcript. Target (reported, never asserted): < 20 µs per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agents.evals.toolsets import LONG_TRANSCRIPT, RELAY_THRESHOLD
from benchmarks._reference_tasks import WEATHER, ScriptError
from benchmarks._timing import Job, Settings, Timing, measure_jobs, render_table, verdict
from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolCall, ToolResult
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

__all__ = ["Overhead", "measure_overheads", "report_overheads"]

OVERHEAD_TARGET_US = 20.0
RUNS = 3000
WARMUP = 200
BLOCK = 100


class CompareIn(BaseModel):
    a: dict[str, object]
    b: dict[str, object]


class InstantCompare(Tool[CompareIn, str]):
    name = "compare_weather"
    description = "Compare two weather reports."

    async def call(self, ctx: ExecutionContext, input: CompareIn) -> ToolResult[str]:
        return ToolResult[str]("ok")


class LocationIn(BaseModel):
    location: str


class InstantWeather(Tool[LocationIn, dict[str, object]]):
    name = "get_weather"
    description = "Get current weather for a location."

    async def call(self, ctx: ExecutionContext, input: LocationIn) -> ToolResult[dict[str, object]]:
        return ToolResult[dict[str, object]](WEATHER[input.location])


class TextIn(BaseModel):
    text: str


class InstantCheck(Tool[TextIn, str]):
    name = "deep_check"
    description = "Analyse a text in depth."

    async def call(self, ctx: ExecutionContext, input: TextIn) -> ToolResult[str]:
        return ToolResult[str]("ok")


def _fixed_name(tool_name: str, args: Any, output: object) -> str | None:
    """``weather_<location>``; every other output overwrites one variable (bounded memory)."""
    return f"weather_{args['location']}" if tool_name == "get_weather" else "last"


Timed = tuple[JSONToolChain, ExecutionContext, ToolCall]


@dataclass(frozen=True, slots=True)
class Overhead:
    """One extension's timings: plain chain against the extension, per call."""

    mechanism: str
    value: str
    small_plain: Timing
    """A call with small arguments and no reference, through a plain chain."""
    small_extension: Timing
    """The same small call through the extension's chain."""
    plain: Timing
    """The baseline: the values themselves in the call, through a plain chain."""
    literal: Timing
    """The values themselves in the call, through the extension's chain."""
    referenced: Timing
    """References in the call, through the extension's chain."""

    @property
    def overhead_us(self) -> float:
        """By reference through the extension, over the plain chain given the values."""
        return self.referenced.median_us - self.plain.median_us

    @property
    def fixed_us(self) -> float:
        """What the extension's hooks cost on any call (the small call's difference)."""
        return self.small_extension.median_us - self.small_plain.median_us

    @property
    def literal_us(self) -> float:
        """The values written out in the call, through the extension, over the baseline."""
        return self.literal.median_us - self.plain.median_us


def _executor(
    chain: JSONToolChain, ctx: ExecutionContext, call: ToolCall, fmt: XMLFormat
) -> Callable[[], Awaitable[object]]:
    return lambda: chain.execute_calls(ctx, [call], fmt)


async def _measure(settings: Settings, mechanism: str, value: str, timed: list[Timed]) -> Overhead:
    fmt = XMLFormat()
    jobs: list[Job] = []
    for chain, ctx, call in timed:
        result = await chain.execute_calls(ctx, [call], fmt)
        if not result.raw.ok:
            raise ScriptError(f"the timed call fails: {result.text}")
        jobs.append(Job.awaited(_executor(chain, ctx, call, fmt), RUNS, WARMUP))
    timings = await measure_jobs(jobs, settings, seconds=8.0, block=BLOCK)
    return Overhead(mechanism, value, *timings)


async def _variables_overhead(settings: Settings) -> Overhead:
    plain = JSONToolChain().register_tool(InstantCompare())
    named = JSONToolChain(extensions=[ToolVariables(_fixed_name)])
    named.register_tool(InstantCompare()).register_tool(InstantWeather())
    ctx = ExecutionContext()
    for city in WEATHER:
        await named.execute_calls(ctx, [ToolCall("get_weather", {"location": city})], XMLFormat())
    small = ToolCall("compare_weather", {"a": {}, "b": {}})
    copied = ToolCall("compare_weather", {"a": WEATHER["NYC"], "b": WEATHER["London"]})
    referenced = ToolCall("compare_weather", {"a": "$weather_nyc", "b": "$weather_london"})
    plain_ctx = ExecutionContext()
    timed = [
        (plain, plain_ctx, small),
        (named, ctx, small),
        (plain, plain_ctx, copied),
        (named, ctx, copied),
        (named, ctx, referenced),
    ]
    return await _measure(settings, "ToolVariables", "2 weather dicts", timed)


async def _relay_overhead(settings: Settings, value: str, label: str) -> Overhead:
    plain = JSONToolChain().register_tool(InstantCheck())
    relay = ContextRelay(RELAY_THRESHOLD)
    relayed = JSONToolChain(extensions=[relay]).register_tool(InstantCheck())
    ctx = ExecutionContext()
    reference = await relay.box(ctx, "yt_transcribe", value)
    small = ToolCall("deep_check", {"text": "A short text."})
    literal = ToolCall("deep_check", {"text": value})
    referenced = ToolCall("deep_check", {"text": reference})
    plain_ctx = ExecutionContext()
    timed = [
        (plain, plain_ctx, small),
        (relayed, ctx, small),
        (plain, plain_ctx, literal),
        (relayed, ctx, literal),
        (relayed, ctx, referenced),
    ]
    return await _measure(settings, "ContextRelay", label, timed)


async def measure_overheads(settings: Settings) -> list[Overhead]:
    small = LONG_TRANSCRIPT[: RELAY_THRESHOLD + 500]
    return [
        await _variables_overhead(settings),
        await _relay_overhead(settings, small, f"{len(small):,}-character text"),
        await _relay_overhead(
            settings, LONG_TRANSCRIPT, f"{len(LONG_TRANSCRIPT):,}-character transcript"
        ),
    ]


def report_overheads(overheads: list[Overhead]) -> None:
    rows: list[list[str]] = []
    for o in overheads:
        for what, timing in (
            ("plain chain, a small call", o.small_plain),
            ("extension, the same small call", o.small_extension),
            ("plain chain, the values in the call (baseline)", o.plain),
            ("extension, the values in the call", o.literal),
            ("extension, by reference", o.referenced),
        ):
            rows.append(
                [
                    o.mechanism,
                    o.value,
                    what,
                    f"{timing.median_us:,.1f}",
                    f"{timing.iqr_percent:.0f}%",
                    str(timing.runs),
                ]
            )
    headers = ["extension", "value passed", "execute_calls of one call", "median µs", "IQR", "runs"]
    print(render_table(headers, rows, "lllrrr"))
    print()
    for o in overheads:
        print(
            f"{o.mechanism} ({o.value}): by reference {o.overhead_us:,.1f} µs per call over "
            f"the baseline; target < {OVERHEAD_TARGET_US:g} µs: "
            f"{verdict(o.overhead_us < OVERHEAD_TARGET_US)}"
        )
        print(
            f"  of which {o.fixed_us:,.1f} µs the hooks cost any call (the small call), "
            f"{o.overhead_us - o.fixed_us:,.1f} µs finding and resolving the references; "
            f"the values written out instead: {o.literal_us:,.1f} µs over the baseline"
        )
    print()
