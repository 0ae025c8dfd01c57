"""ReAct loop overhead: time per iteration spent outside the model and the tools.

A 10-iteration run (9 actions of two parallel calls, then an answer) on a model that
returns canned responses instantly and tools that do trivial work, so nearly all the
time is the loop's own: prompt building, parsing, events, tool-chain execution and
bookkeeping. Time inside ``generate`` and inside the tools is measured and subtracted.

Baseline, in the same process: a minimal hand-written loop over the same model, format
and chain (``fmt.parse`` + ``chain.execute`` + a message list, as in
``examples/custom_loop.py``), which shows what the agent's extras cost on top.
Target (reported, not asserted): under 1 ms per iteration.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence

from pydantic import BaseModel

from agents import (
    GenerateOptions,
    Message,
    ModelResponse,
    ReActAgent,
    TextDelta,
    Usage,
)
from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table, verdict
from formats import Section, XMLFormat
from toolchain import ExecutionContext, Limits, Tool, ToolResult, YAMLToolChain

ITERATIONS = 10
TARGET_MS = 1.0


class Clock:
    """Nanoseconds spent inside the model and the tools, over all runs."""

    def __init__(self) -> None:
        self.inside_ns = 0
        self.runs = 0  # warm-up runs included: the clock sees them too

    def per_run_ms(self) -> float:
        return self.inside_ns / 1e6 / max(1, self.runs)


class LookupIn(BaseModel):
    key: str


class Lookup(Tool[LookupIn, dict[str, object]]):
    name = "lookup"
    description = "Look a key up."

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def call(self, ctx: ExecutionContext, input: LookupIn) -> ToolResult[dict[str, object]]:
        started = time.perf_counter_ns()
        result = ToolResult[dict[str, object]]({"key": input.key, "value": len(input.key)})
        self.clock.inside_ns += time.perf_counter_ns() - started
        return result


def script() -> list[str]:
    action = (
        "<thinking>Look up two more keys.</thinking>\n<action>\n"
        "- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}\n</action>"
    )
    return [action] * (ITERATIONS - 1) + ["<thinking>Done.</thinking>\n<answer>42</answer>"]


class InstantModel:
    """Replays the script with no work at all, timing itself."""

    def __init__(self, outputs: list[str], clock: Clock) -> None:
        self.responses = [ModelResponse(o, "stop", Usage(100, 20), "instant") for o in outputs]
        self.clock = clock
        self.turn = 0

    @property
    def name(self) -> str:
        return "instant"

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        started = time.perf_counter_ns()
        response = self.responses[self.turn % len(self.responses)]
        self.turn += 1
        self.clock.inside_ns += time.perf_counter_ns() - started
        return response

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.generate(messages, options)


def build() -> tuple[ReActAgent[str], InstantModel, Clock]:
    clock = Clock()
    model = InstantModel(script(), clock)
    chain = YAMLToolChain().register_tool(Lookup(clock))
    agent = ReActAgent(model, tool_chain=chain, limits=Limits(max_iterations=ITERATIONS + 1))
    return agent, model, clock


async def agent_run(agent: ReActAgent[str], model: InstantModel) -> None:
    model.turn = 0
    model.clock.runs += 1
    result = await agent.run("Find the answer.")
    if not result.ok or len(result.iterations) != ITERATIONS:
        raise RuntimeError(f"the benchmark run did not finish as scripted: {result.stopped_by}")


async def minimal_run(agent: ReActAgent[str], model: InstantModel) -> None:
    """The floor: the same model, format and chain, in the smallest possible loop."""
    model.turn = 0
    model.clock.runs += 1
    fmt: XMLFormat = XMLFormat().register_section(Section("thinking"))
    fmt.register_section(agent.tool_chain).register_section(Section("answer"))
    ctx = ExecutionContext()
    messages = [Message.text("system", "tools"), Message.text("user", "Find the answer.")]
    for _ in range(ITERATIONS):
        output = (await model.generate(messages)).text
        messages.append(Message.text("assistant", output))
        sections = fmt.parse(output)
        if "action" not in sections:
            return
        for action in sections["action"]:
            result = await agent.tool_chain.execute(ctx, action, fmt)
            messages.append(Message("user", result.as_content_parts()))
    raise RuntimeError("the minimal loop never reached the answer")


def run(settings: Settings) -> None:
    """Measure and print the loop overhead table."""
    print(f"== ReAct loop overhead: a {ITERATIONS}-iteration scripted run ==")
    print("9 actions of 2 parallel calls (YAML, XML format) then an answer; instant model")
    print()
    agent, model, clock = build()
    floor_agent, floor_model, _ = build()
    runs = settings.runs(300)
    timings = measure_jobs_sync(
        [
            Job.awaited(lambda: agent_run(agent, model), runs, warmup=5),
            Job.awaited(lambda: minimal_run(floor_agent, floor_model), runs, warmup=5),
        ],
        settings,
        seconds=settings.seconds(12.0),
    )
    rows = []
    per_iteration_ms: dict[str, float] = {}
    for label, timing, job_clock in (
        ("ReActAgent.run", timings[0], clock),
        ("minimal loop (floor)", timings[1], floor_model.clock),
    ):
        inside_ms = job_clock.per_run_ms()
        total_ms = timing.median_ns / 1e6
        per_iteration_ms[label] = (total_ms - inside_ms) / ITERATIONS
        rows.append(
            [
                label,
                f"{total_ms:.3f}",
                f"{inside_ms:.4f}",
                f"{per_iteration_ms[label] * 1000:,.1f}",
                f"{timing.iqr_percent:.0f}%",
                str(timing.runs),
            ]
        )
    headers = ["loop", "run ms", "in model+tools ms", "overhead µs/iteration", "IQR", "runs"]
    print(render_table(headers, rows, "lrrrrr"))
    agent_ms = per_iteration_ms["ReActAgent.run"]
    floor_ms = per_iteration_ms["minimal loop (floor)"]
    print()
    print(
        f"agent overhead per iteration: {agent_ms * 1000:,.1f} µs "
        f"({agent_ms / floor_ms:.1f}x the minimal loop); target < {TARGET_MS:g} ms: "
        f"{verdict(agent_ms < TARGET_MS)}"
    )
    print()
