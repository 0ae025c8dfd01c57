"""Agent loop overhead: time per iteration spent outside the model and the tools.

A 10-iteration run (9 turns of two parallel calls, then an answer) on a model that
returns canned responses instantly and tools that do trivial work, so nearly all the
time is the loop's own: prompt building, parsing, events, tool-chain execution and
bookkeeping. Time inside ``generate`` and inside the tools is measured and subtracted.

Both agents run the same scenario with the same tool and chain, in the same process:
``ReActAgent`` (text mode: the calls are YAML in an ``<action>`` section) and
``ToolCallingAgent`` (native mode: the model's replies carry structured calls, each
answered by its own tool message).

Baseline, in the same process: a minimal hand-written loop over the same model, format
and chain (``fmt.parse`` + ``chain.execute`` + a message list, as in
``examples/custom_loop.py``), which shows what the agents' extras cost on top.
Targets (reported, not asserted): at most 60 µs per iteration for ``ReActAgent`` (text)
and 50 µs for ``ToolCallingAgent`` (native). They are absolute, so they depend on the
machine: the floor's figure beside them says how fast this one is. And one that holds on
any machine (issue 27): each agent's overhead per step at most 30x the msgspec + pydantic
one-call floor (``benchmarks.toolchain_overhead``'s JSON x1 floor: decode one call,
validate its arguments, call the function, encode its output), measured in the same
group of interleaved runs.

Then the same run with each extension installed (``ToolSearch`` of 200 deferred tools,
``ToolVariables``, ``ContextRelay`` below its threshold), against the plain run
(``benchmarks._extension_overhead``; target: at most 1.3x per iteration); and the run on
an agent built for it, with its chain and extension, against one reused
(``benchmarks._fresh_agents``; target: at most 2x).
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
    ToolCallingAgent,
    Usage,
)
from agents.models import ToolCallRequest
from benchmarks import toolchain_overhead
from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table, verdict
from formats import Section, XMLFormat
from toolchain import ExecutionContext, Limits, Tool, ToolResult, YAMLToolChain

ITERATIONS = 10
TARGET_US = {"ReActAgent.run (text)": 60.0, "ToolCallingAgent.run (native)": 50.0}
MAX_STEP_FLOOR_RATIO = 30.0  # a step's overhead, against the one-call msgspec+pydantic floor


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


def script() -> list[ModelResponse]:
    """Text mode: two YAML calls in an action section per turn, then an answer section."""
    action = (
        "<thinking>Look up two more keys.</thinking>\n<action>\n"
        "- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}\n</action>"
    )
    outputs = [action] * (ITERATIONS - 1) + ["<thinking>Done.</thinking>\n<answer>42</answer>"]
    return [ModelResponse(output, "stop", Usage(100, 20), "instant") for output in outputs]


def native_script() -> list[ModelResponse]:
    """Native mode: the same two calls per turn as structured calls, then a plain answer."""
    responses: list[ModelResponse] = []
    for turn in range(1, ITERATIONS):
        calls = (
            ToolCallRequest(f"call_{turn}a", "lookup", '{"key":"alpha"}'),
            ToolCallRequest(f"call_{turn}b", "lookup", '{"key":"beta"}'),
        )
        responses.append(ModelResponse("", "tool_use", Usage(100, 20), "instant", calls))
    return [*responses, ModelResponse("42", "stop", Usage(100, 20), "instant")]


class InstantModel:
    """Replays the script with no work at all, timing itself."""

    def __init__(self, responses: list[ModelResponse], clock: Clock) -> None:
        self.responses = responses
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
    agent = ReActAgent(model, tool_chain=chain, limits=Limits(max_steps=ITERATIONS + 1))
    return agent, model, clock


def build_native() -> tuple[ToolCallingAgent[str], InstantModel, Clock]:
    clock = Clock()
    model = InstantModel(native_script(), clock)
    chain = YAMLToolChain().register_tool(Lookup(clock))
    limits = Limits(max_steps=ITERATIONS + 1)
    return ToolCallingAgent(model, tool_chain=chain, limits=limits), model, clock


async def agent_run(agent: ReActAgent[str] | ToolCallingAgent[str], model: InstantModel) -> None:
    model.turn = 0
    model.clock.runs += 1
    result = await agent.run("Find the answer.")
    if not result.ok or len(result.steps) != ITERATIONS:
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
    """Measure and print the loop overhead table, both agents against one floor."""
    print(f"== Agent loop overhead: a {ITERATIONS}-iteration scripted run ==")
    print("9 turns of 2 parallel calls, then an answer; instant model, YAML chain, XML format")
    print("ReActAgent: calls in an <action> section; ToolCallingAgent: native structured calls")
    print()
    agent, model, clock = build()
    native, native_model, native_clock = build_native()
    floor_agent, floor_model, _ = build()
    one_call = toolchain_overhead.JSON_ONE
    timings = measure_jobs_sync(
        [
            Job.awaited(lambda: agent_run(agent, model), 300, warmup=5),
            Job.awaited(lambda: agent_run(native, native_model), 300, warmup=5),
            Job.awaited(lambda: minimal_run(floor_agent, floor_model), 300, warmup=5),
            Job.sync(lambda: toolchain_overhead.json_floor(one_call), 3000, warmup=200),
        ],
        settings,
        seconds=18.0,  # measure_jobs cuts runs and time for --quick itself
    )
    call_floor_us = timings[3].median_us
    floor = "minimal loop (floor)"
    measured = (
        ("ReActAgent.run (text)", timings[0], clock),
        ("ToolCallingAgent.run (native)", timings[1], native_clock),
        (floor, timings[2], floor_model.clock),
    )
    per_iteration_ms = {
        label: (timing.median_ns / 1e6 - job_clock.per_run_ms()) / ITERATIONS
        for label, timing, job_clock in measured
    }
    rows = [
        [
            label,
            f"{timing.median_ns / 1e6:.3f}",
            f"{job_clock.per_run_ms():.4f}",
            f"{per_iteration_ms[label] * 1000:,.1f}",
            f"{per_iteration_ms[label] / per_iteration_ms[floor]:.2f}x",
            f"{timing.iqr_percent:.0f}%",
            str(timing.runs),
        ]
        for label, timing, job_clock in measured
    ]
    headers = [
        "loop",
        "run ms",
        "in model+tools ms",
        "overhead µs/iteration",
        "vs floor",
        "IQR",
        "runs",
    ]
    print(render_table(headers, rows, "lrrrrrr"))
    print()
    for label, _, _ in measured[:2]:
        us = per_iteration_ms[label] * 1000
        print(
            f"{label}: {us:,.1f} µs per iteration "
            f"({us / 1000 / per_iteration_ms[floor]:.2f}x the minimal loop, "
            f"{per_iteration_ms[floor] * 1000:,.1f} µs); "
            f"target <= {TARGET_US[label]:g} µs: {verdict(us <= TARGET_US[label])}"
        )
    print()
    print(
        f"One-call floor, same runs (msgspec decode + pydantic validate + call + encode): "
        f"{call_floor_us:,.2f} µs (IQR {timings[3].iqr_percent:.0f}%)"
    )
    for label, _, _ in measured[:2]:
        ratio = per_iteration_ms[label] * 1000 / call_floor_us
        print(
            f"{label}: {per_iteration_ms[label] * 1000:,.1f} µs per step = {ratio:.1f}x the "
            f"one-call floor; target <= {MAX_STEP_FLOOR_RATIO:g}x: "
            f"{verdict(ratio <= MAX_STEP_FLOOR_RATIO)}"
        )
    print()
    from benchmarks._extension_overhead import run_extension_rows
    from benchmarks._fresh_agents import run_fresh_rows

    run_extension_rows(settings)
    run_fresh_rows(settings)
