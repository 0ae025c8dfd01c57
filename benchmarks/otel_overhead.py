"""What OpenTelemetry spans add to a step: the loop benchmark's run, traced and not.

The scenario of ``loop_overhead`` (10 steps: 9 turns of two parallel calls, then an
answer, on an instant model and trivial tools), for both agents, in four ways each,
round-robin in one process: not instrumented, instrumented (``agents.otel``, the SDK's
``TracerProvider`` with a ``SimpleSpanProcessor`` to an exporter that drops the spans:
the cost of making them, not of shipping them), instrumented with
``capture_content=True``, and instrumented with a ``BatchSpanProcessor`` instead. A
``SimpleSpanProcessor`` may block in ``on_end`` (it exports there), so those spans end
on a thread of their own and each run waits for them as it ends; a
``BatchSpanProcessor`` only queues, so those end where they are. Each traced step makes
one ``chat`` span and two ``execute_tool`` spans. Needs the SDK (the dev dependencies);
skipped without it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table
from benchmarks.loop_overhead import ITERATIONS, InstantModel, agent_run, build, build_native

if TYPE_CHECKING:
    from agents import ReActAgent, ToolCallingAgent
    from agents.otel._seam import RunWatcher


def run(settings: Settings) -> None:
    """Measure and print the per-step cost of tracing, both agents."""
    print(f"== OpenTelemetry spans: the {ITERATIONS}-step loop run, traced and not ==")
    try:
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SimpleSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )
    except ImportError:
        print("skipped: the OpenTelemetry SDK is not installed (make test installs it)\n")
        return
    from agents.otel._instrument import Watcher
    from agents.otel._seam import WATCHERS

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Dropped()))
    tracer = provider.get_tracer("agents.otel")
    plain = Watcher(tracer, capture_content=False, provider=provider)
    content = Watcher(tracer, capture_content=True, provider=provider)
    batched = TracerProvider()
    batched.add_span_processor(BatchSpanProcessor(Dropped()))
    batch = Watcher(batched.get_tracer("agents.otel"), capture_content=False, provider=batched)
    print(
        "SimpleSpanProcessor (or BatchSpanProcessor) to an exporter that drops them; "
        "1 chat + 2 tool spans a step"
    )
    print()

    def traced(
        watcher: RunWatcher | None,
        agent: ReActAgent[str] | ToolCallingAgent[str],
        model: InstantModel,
    ) -> Callable[[], Awaitable[None]]:
        async def once() -> None:
            if watcher is not None:
                WATCHERS.append(watcher)
            try:
                await agent_run(agent, model)
            finally:
                if watcher is not None:
                    WATCHERS.remove(watcher)

        return once

    text, text_model, _ = build()
    native, native_model, _ = build_native()
    ways = (
        ("not traced", None),
        ("traced", plain),
        ("traced, content", content),
        ("traced, batch", batch),
    )
    jobs = [
        Job.awaited(traced(watcher, agent, model), 200, warmup=5)
        for agent, model in ((text, text_model), (native, native_model))
        for _, watcher in ways
    ]
    timings = measure_jobs_sync(jobs, settings, seconds=24.0)
    provider.shutdown()
    batched.shutdown()
    rows: list[list[str]] = []
    for at, label in ((0, "ReActAgent.run (text)"), (4, "ToolCallingAgent.run (native)")):
        base = timings[at].median_ns / 1e3 / ITERATIONS
        for offset, (way, _) in enumerate(ways):
            timing = timings[at + offset]
            per_step = timing.median_ns / 1e3 / ITERATIONS
            added = "" if offset == 0 else f"+{per_step - base:,.1f}"
            rows.append(
                [
                    label if offset == 0 else "",
                    way,
                    f"{per_step:,.1f}",
                    added,
                    f"{timing.iqr_percent:.0f}%",
                    str(timing.runs),
                ]
            )
    headers = ["loop", "tracing", "µs/step", "added µs/step", "IQR", "runs"]
    print(render_table(headers, rows, "llrrrr"))
    print()
