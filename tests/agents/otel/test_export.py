"""Where spans go, and what they never do: spans exported over OTLP/HTTP to a receiver on
loopback and read back there; an exporter or a span processor that fails leaves the
run as it was (and is logged); an exporter that blocks never holds a run past its
deadline, and a finished run's spans are exported as it returns; no credential reaches
an attribute, with or without content; and before ``instrument()`` a run has nothing
watching it, and ``import agents`` does not import OpenTelemetry.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents import GenerateOptions, ReActAgent, ScriptedModel, ToolCallingAgent
from agents.models import ScriptedReply, ToolCallRequest
from agents.otel import instrument, uninstrument
from tests.agents.otel.tracing import Traced, every_text, traced
from toolchain import ExecutionContext, Limits, Stats, tool

ROOT = Path(__file__).resolve().parents[3]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def adding_agent(name: str = "adder") -> ToolCallingAgent[str]:
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=3), "5"])
    return ToolCallingAgent(model, tools=[add], name=name)


# -- OTLP/HTTP to a receiver on loopback ---------------------------------------------


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: keeps each request it decodes."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.paths.append(self.path)
                received.requests.append(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def plain(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    return getattr(value, str(kind))


async def test_spans_exported_over_otlp_http_arrive_whole(receiver: Receiver) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-test"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.url)))
    instrument(provider)
    try:
        result = await adding_agent().run("2 + 3?")
        assert provider.force_flush(10_000)
    finally:
        uninstrument()
        provider.shutdown()
    assert result.answer == "5"
    assert set(receiver.paths) == {"/v1/traces"}
    arrived = [
        (resource.resource, scope.scope, span)
        for request in receiver.requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    by_name = {span.name: span for _, _, span in arrived}
    assert sorted(by_name) == ["chat scripted", "execute_tool add", "invoke_agent adder"]
    assert len(arrived) == 4  # two model calls
    for resource, scope, _ in arrived:
        service = {a.key: plain(a.value) for a in resource.attributes}["service.name"]
        assert service == "otel-test" and scope.name == "agents.otel"
    run, call = by_name["invoke_agent adder"], by_name["execute_tool add"]
    assert call.parent_span_id == run.span_id and call.trace_id == run.trace_id
    assert run.parent_span_id == b""
    attributes = {a.key: plain(a.value) for a in call.attributes}
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.description": "Add two numbers.",
    }
    chat = {a.key: plain(a.value) for a in by_name["chat scripted"].attributes}
    assert chat["gen_ai.response.finish_reasons"] in (["tool_call"], ["stop"])
    assert by_name["chat scripted"].kind == 3  # SPAN_KIND_CLIENT
    assert {a.key: plain(a.value) for a in run.attributes}["gent.run.stopped_by"] == "answer"


# -- failures of the tracing itself ----------------------------------------------------


class FailingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise ConnectionError("the collector is down")

    def shutdown(self) -> None:
        return


class FailingProcessor(SpanProcessor):
    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError(f"cannot process {span.name}")


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    made = TracerProvider()
    yield made
    uninstrument()
    made.shutdown()


async def test_a_failing_exporter_leaves_the_run_as_it_was_and_is_logged(
    provider: TracerProvider, caplog: pytest.LogCaptureFixture
) -> None:
    provider.add_span_processor(SimpleSpanProcessor(FailingExporter()))
    instrument(provider)
    ctx = ExecutionContext()
    result = await adding_agent().run("2 + 3?", ctx=ctx)
    assert result.answer == "5" and result.stopped_by == "answer"
    assert ctx.stats.get(Stats.OBSERVER_ERRORS) == 0
    failures = [r for r in caplog.records if r.getMessage() == "Exception while exporting Span."]
    assert len(failures) == 4 and all(r.levelno == logging.ERROR for r in failures)


async def test_a_span_processor_that_raises_leaves_the_run_as_it_was_and_is_logged(
    provider: TracerProvider, caplog: pytest.LogCaptureFixture
) -> None:
    provider.add_span_processor(FailingProcessor())
    instrument(provider)
    ctx = ExecutionContext()
    result = await adding_agent().run("2 + 3?", ctx=ctx)
    assert result.answer == "5" and result.stopped_by == "answer"
    assert ctx.stats.get(Stats.OBSERVER_ERRORS) == 0
    ours = [r for r in caplog.records if r.name == "agents.otel"]
    assert [(r.levelno, r.getMessage()) for r in ours if r.levelno >= logging.WARNING] == [
        (logging.WARNING, "tracing failed on the span chat scripted; the run goes on")
    ]
    assert "cannot process" in str(ours[0].exc_info[1])  # type: ignore[index]
    assert not ctx.events.has_subscribers(object)  # the run's end still let go of it


async def test_a_provider_that_cannot_start_spans_leaves_runs_unwatched(
    provider: TracerProvider, caplog: pytest.LogCaptureFixture
) -> None:
    class Refusing(SpanProcessor):
        def on_start(self, span: Span, parent_context: object = None) -> None:
            raise RuntimeError("no spans today")

    provider.add_span_processor(Refusing())
    instrument(provider)
    result = await adding_agent().run("2 + 3?")
    assert result.answer == "5"
    assert any(r.getMessage().startswith("a run watcher failed") for r in caplog.records)


# -- a slow exporter never holds the run ---------------------------------------------------


class SlowExporter(SpanExporter):
    """A collector far away: each export takes ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.exported: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self.delay)
        self.exported.extend(spans)
        return SpanExportResult.SUCCESS


@tool
async def ping(n: int) -> int:
    """Ping."""
    return n


def busy_agent() -> ToolCallingAgent[str]:
    """3 steps of 8 parallel calls, then an answer: 1 + 4 + 24 = 29 spans."""
    turn = ScriptedReply(
        tool_calls=tuple(ToolCallRequest("", "ping", f'{{"n": {n}}}') for n in range(8))
    )
    model = ScriptedModel([turn, turn, turn, "Pong."])
    return ToolCallingAgent(model, tools=[ping], name="busy", limits=Limits(timeout=TIMEOUT))


SPANS = 29
DELAY = 0.05  # per span: 1.45 s of exporting, three times the run's time limit
TIMEOUT = 0.5


async def test_a_run_ends_by_its_deadline_whatever_the_exporter_does() -> None:
    started = time.perf_counter()
    assert (await busy_agent().run("Ping.")).answer == "Pong."
    baseline = time.perf_counter() - started  # the run's own work, untraced

    exporter = SlowExporter(DELAY)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider)
    try:
        started = time.perf_counter()
        result = await busy_agent().run("Ping.")
        took = time.perf_counter() - started
        # The loop was never held: another task ran all the while.
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        second = await busy_agent().run("Ping.")
        ticker.cancel()
    finally:
        uninstrument()  # waits for the spans still being exported
        provider.shutdown()
    # Exporting takes three times the limit; the run took its own time, then waited for
    # its spans until its deadline at most, and answered.
    assert SPANS * DELAY > 2.5 * TIMEOUT
    assert took < TIMEOUT + baseline + TIMEOUT / 2, (took, baseline)
    assert result.answer == "Pong." and second.answer == "Pong."
    assert ticks >= 10  # a loop blocked in export() would have let the ticker run ~0 times
    assert len(exporter.exported) == 2 * SPANS  # all of them, in the end


async def test_a_batch_processor_s_slow_exporter_never_holds_the_run_either() -> None:
    """A ``BatchSpanProcessor`` only queues in ``on_end`` (its thread exports): spans end
    where they are, and the run has nothing to wait for."""
    exporter = SlowExporter(DELAY * 10)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1))
    instrument(provider)
    try:
        started = time.perf_counter()
        assert (await busy_agent().run("Ping.")).answer == "Pong."
        took = time.perf_counter() - started
    finally:
        uninstrument()
    provider.shutdown()  # exports what is left
    assert took < TIMEOUT, took  # one batch export alone takes as long as the limit
    assert len(exporter.exported) == SPANS


async def test_a_finished_run_s_spans_are_exported_as_it_returns() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider)
    try:
        model = ScriptedModel([ScriptedModel.call("ping", n=1), "Pong."])
        await ToolCallingAgent(model, tools=[ping], name="prompt").run("Ping.")
        # Read at once, without waiting: the run waited for them as it ended.
        names = sorted(span.name for span in exporter.get_finished_spans())
    finally:
        uninstrument()
        provider.shutdown()
    assert names == ["chat scripted", "chat scripted", "execute_tool ping", "invoke_agent prompt"]


# -- secrets ----------------------------------------------------------------------------

SECRET = "sk-proj-Zx81Qr5TtY2LmN4vB7cK9pD3"
HEADER_SECRET = "hunter2-is-not-a-token-shape"


@tool
def fetch(url: str) -> str:
    """Fetch a URL."""
    return f"401 from {url}: Incorrect API key provided: {SECRET}"


@pytest.mark.parametrize("capture_content", [False, True])
async def test_no_credential_reaches_any_span(capture_content: bool) -> None:
    model = ScriptedModel(
        [
            ScriptedModel.call("fetch", url=f"https://me:{SECRET}@example.com/v1?api_key={SECRET}"),
            f"The key {SECRET} was refused; the header was Authorization: Bearer {SECRET}.",
        ]
    )
    options = GenerateOptions(headers={"Authorization": f"Bearer {HEADER_SECRET}"})
    agent = ToolCallingAgent(model, tools=[fetch], options=options, name="leaky")
    for spans in traced(capture_content=capture_content):
        result = await agent.run(f"Use my key {SECRET} to fetch the page.")
        assert result.ok
        text = every_text(spans.spans)
        assert SECRET not in text and HEADER_SECRET not in text
        if capture_content:
            assert "[REDACTED]" in text  # the contents are there, blanked where secret
            assert "example.com" in text


# -- costs nothing before instrument() ---------------------------------------------------


async def test_an_uninstrumented_run_has_nothing_watching_it() -> None:
    watched: list[bool] = []

    @tool
    def probe(ctx: ExecutionContext) -> str:
        """Say whether anything watches the run."""
        watched.append(ctx.events.has_subscribers(object))
        return "ok"

    model = ScriptedModel([ScriptedModel.call("probe"), "ok"])
    agent = ToolCallingAgent(model, tools=[probe])
    await agent.run("Probe.")
    for spans in traced():
        model = ScriptedModel([ScriptedModel.call("probe"), "ok"])
        await ToolCallingAgent(model, tools=[probe]).run("Probe.")
        assert len(spans.spans) == 4
    model = ScriptedModel([ScriptedModel.call("probe"), "ok"])
    await ToolCallingAgent(model, tools=[probe]).run("Probe.")
    assert watched == [False, True, False]


def test_importing_agents_does_not_import_opentelemetry() -> None:
    code = """
import sys
import agents, agents.otel
from agents import ReActAgent, ScriptedModel
assert ReActAgent(ScriptedModel(["<answer>ok</answer>"])).run_sync("Hi?").answer == "ok"
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_instrumenting_again_replaces_the_settings(spans: Traced) -> None:
    second = TracerProvider()
    try:
        instrument(second)  # the fixture's provider gets nothing from now on
        ReActAgent(ScriptedModel(["<answer>ok</answer>"])).run_sync("Hi?")
        assert spans.spans == ()
    finally:
        second.shutdown()


async def test_a_stream_dropped_before_its_end_has_its_spans_ended(spans: Traced) -> None:
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=3), "5"])
    events = ToolCallingAgent(model, tools=[add], name="dropped").stream("2 + 3?")
    assert isinstance(events, AsyncGenerator)
    async for _ in events:
        break  # the first event: the model is writing
    await events.aclose()
    del events
    for _ in range(5):  # the loop closes the inner generators that held the context
        gc.collect()
        await asyncio.sleep(0)
    run = spans.one("invoke_agent dropped")
    assert dict(run.attributes or {})["error.type"] == "abandoned"
    assert all(span.end_time is not None for span in spans.spans)
    assert json.dumps(spans.tree("error.type")).count("abandoned") >= 1
