"""Spans as the tests read them: the finished spans of a run, as a tree and by name."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agents.otel import instrument, uninstrument
from agents.otel._ending import ENDER


@dataclass
class Traced:
    """What a test reads: the in-memory exporter's spans, through the run's provider."""

    exporter: InMemorySpanExporter
    provider: TracerProvider

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        """The spans exported so far, once every span already ended has been: spans end
        on a thread of their own, and a run waits for them as it ends, but a run dropped
        before its end (an abandoned stream) has nothing to wait for it.
        test_export.py checks that a finished run's spans are there as it returns."""
        ENDER.wait(5.0)
        return tuple(self.exporter.get_finished_spans())

    def tree(self, *shown: str) -> str:
        """The span tree, one span a line, indented under its parent, in start order;
        ``shown`` attributes follow each name (``name key=value``)."""
        return tree(self.spans, *shown)

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.tree()}"
        return found[0]

    def clear(self) -> None:
        self.exporter.clear()


def traced(*, capture_content: bool = False) -> Iterator[Traced]:
    """A provider with an in-memory exporter, instrumented for the test, then not."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider, capture_content=capture_content)
    try:
        yield Traced(exporter, provider)
    finally:
        uninstrument()
        provider.shutdown()


def tree(spans: Sequence[ReadableSpan], *shown: str) -> str:
    ids = {span.context.span_id for span in spans if span.context is not None}

    def parent_of(span: ReadableSpan) -> int | None:  # one outside ``spans``: a root here
        parent = span.parent
        return parent.span_id if parent is not None and parent.span_id in ids else None

    lines: list[str] = []

    def under(parent: int | None, depth: int) -> None:
        for span in sorted(spans, key=lambda s: s.start_time or 0):
            if parent_of(span) != parent:
                continue
            attributes = span.attributes or {}
            extra = [f"{key}={_shown(attributes[key])}" for key in shown if key in attributes]
            lines.append("  " * depth + " ".join([span.name, *extra]))
            assert span.context is not None
            under(span.context.span_id, depth + 1)

    under(None, 0)
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def failed(span: ReadableSpan) -> str | None:
    """The span's ``error.type`` when its status is ERROR, else None (and no error.type)."""
    attributes = span.attributes or {}
    if span.status.status_code is StatusCode.ERROR:
        return str(attributes["error.type"])
    assert "error.type" not in attributes, f"{span.name} has error.type but no error status"
    return None


def every_text(spans: Sequence[ReadableSpan]) -> str:
    """Every attribute value, event attribute and status message of ``spans``, as text."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        parts.append(span.status.description or "")
        for event in span.events:
            parts.append(event.name + json.dumps(dict(event.attributes or {}), default=str))
    return "\n".join(parts)
