"""The spans of a run's tool calls: begun, ended, closed with their step, found again.

- a call's span begins at ``ToolCallStarted``, and its call ends at ``ToolCallFinished``;
  one refused before it began (a guard, a before hook, a limit) has only the latter
  and is dated back by its duration. The span is closed when the step ends, with the
  end time the call had: the relay boxes an output after its call ended, and says so
  on the call's span.
- a composite's sub-call (``file.write``) begins under the composite's call, and a
  child run (a sub-agent) under the call that started it. That call is known for sure
  when it runs in the same asyncio task; otherwise it is the running call of that name
  (for child runs, the one with the fewest child runs first: calls start their runs in
  the order they began).
- an extension's `Note` lands on the call it names (held until the call's span begins
  when a guard or a before hook spoke first), or on the running call of its tool.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from agents.otel import _conventions as sc
from agents.otel._content import CUT_CHARS, as_json, bounded_text

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from agents.otel._extensions import Note
    from toolchain import Tool, ToolCallFinished, ToolCallStarted

__all__ = ["CallSpans", "EndSpan", "fail", "key_of"]

PROGRAM_TOOL = "run_python"
"""Code mode's one tool (``toolchain.code.PROGRAM_TOOL``, not imported: an extra's): a
program's call is an ``execute_code`` span, and every call it makes begins under it."""

EndSpan = Callable[["Span", "int | None"], None]
"""Ends a span at a time (None: now), a failure of the span's processors contained."""


def fail(span: Span, error_type: str, message: str) -> None:
    """Mark ``span`` failed, the conventions' way: status ERROR and ``error.type``, with
    ``message`` as the description, or ``error_type`` when it is empty."""
    span.set_attribute(sc.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, message or error_type))


def key_of(event: ToolCallStarted | ToolCallFinished) -> str:
    """How a call's two events find its span: its id, or its place when it has none."""
    return event.id or f"#{event.index}:{event.name}"


def _current_task() -> object | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # a worker thread (a plain def tool): no event loop here
        return None


@dataclass(eq=False, slots=True)
class _Call:
    """A call's span while the call runs, then until its step ends."""

    span: Span
    name: str
    task: object | None
    ended: int | None = None
    """When the call ended (ns); the span is closed at the step's end with this time."""
    runs: int = 0
    """Child runs begun under it (sub-agents)."""
    sums: dict[str, int] = field(default_factory=lambda: {})
    cut: int = 0
    """Characters cut from its content attributes (``gent.content.cut_chars``)."""


def _pick(calls: Iterable[_Call], task: object | None) -> _Call | None:
    """The latest of ``calls`` running in ``task``, else the latest of them all."""
    found = list(calls)
    mine = [call for call in found if task is not None and call.task is task]
    pool = mine or found
    return pool[-1] if pool else None


def _named(call: _Call, name: str) -> bool:
    """Whether ``call`` is one of the tool ``name``: itself, or a composite's sub-call."""
    return call.name == name or call.name.endswith("." + name)


class CallSpans:
    """The tool calls of one run (see the module text). ``totals`` are the run's sums,
    added to by every note; a note with no call lands on ``run`` as an event."""

    def __init__(
        self,
        tracer: Tracer,
        run: Span,
        tools: Mapping[str, Tool[Any, Any]],
        *,
        capture: bool,
        end: EndSpan,
        totals: dict[str, int],
    ) -> None:
        self._tracer = tracer
        self._run = run
        self._context = trace.set_span_in_context(run)
        self._tools = tools
        self._capture = capture
        self._end = end
        self._totals = totals
        self._calls: dict[str, _Call] = {}
        self._closing: list[_Call] = []
        self._waiting: dict[str, list[Note]] = {}
        """Notes on calls whose span has not begun (guards and before hooks speak first)."""

    def begin(
        self, key: str, name: str, args: Mapping[str, object], start: int | None = None
    ) -> _Call:
        """The span of a call that begins (``start``: when it did, if not now)."""
        task = _current_task()
        holder = _pick(
            (
                c
                for c in self._calls.values()
                if c.ended is None and (name.startswith(c.name + ".") or c.name == PROGRAM_TOOL)
            ),
            task,
        )
        parent = trace.set_span_in_context(holder.span) if holder is not None else self._context
        program = name == PROGRAM_TOOL
        attributes: sc.Attributes = {
            sc.OPERATION: sc.EXECUTE_CODE if program else sc.EXECUTE_TOOL,
            sc.TOOL_NAME: name,
            sc.TOOL_TYPE: "function",
        }
        if not key.startswith("#"):
            attributes[sc.TOOL_CALL_ID] = key
        tool = self._tools.get(name)
        if tool is not None and tool.description:
            attributes[sc.TOOL_DESCRIPTION] = tool.description
        cut = 0
        if self._capture:
            attributes[sc.TOOL_ARGUMENTS], cut = as_json(args)
            if cut:
                attributes[CUT_CHARS] = cut
        span = self._tracer.start_span(
            sc.EXECUTE_CODE if program else f"{sc.EXECUTE_TOOL} {name}",
            parent,
            SpanKind.INTERNAL,
            attributes,
            start_time=start,
        )
        call = self._calls[key] = _Call(span, name, task, cut=cut)
        for note in self._waiting.pop(key, ()):
            self._land(note, call)
        return call

    def end(self, event: ToolCallFinished) -> None:
        """A call ended, failed or not; its span closes with the step."""
        key = key_of(event)
        now = time.time_ns()
        call = self._calls.get(key)
        if call is None or call.ended is not None:  # refused before it began
            call = self.begin(key, event.name, event.args, now - int(event.duration * 1e9))
        call.ended = now
        if event.error is not None:
            kind = event.error.kind
            # The message may quote the arguments (a validation error, what a tool
            # raised): content, so without it the description says only what failed.
            said = bounded_text(event.error.message) if self._capture else ""
            fail(call.span, kind, said or f"{event.name} failed: {kind}")
        elif self._capture and event.result is not None:
            result, cut = as_json(event.result.text)
            call.span.set_attribute(sc.TOOL_RESULT, result)
            if cut:
                call.cut += cut
                call.span.set_attribute(CUT_CHARS, call.cut)
        self._closing.append(call)

    def close_ended(self) -> None:
        """Close the spans of the calls that ended (the step is over)."""
        closing, self._closing = self._closing, []
        for call in closing:
            for key, known in list(self._calls.items()):
                if known is call:
                    del self._calls[key]
            self._end(call.span, call.ended)

    def close_all(self, error_type: str, message: str) -> None:
        """Close every span (the run ended): calls that never ended failed with
        ``error_type``; notes that found no call land on the run."""
        for call in self._calls.values():
            if call.ended is None:
                fail(call.span, error_type, message)
                call.ended = time.time_ns()
                self._closing.append(call)
        self.close_ended()
        for notes in self._waiting.values():
            for note in notes:
                self._land(note, None)
        self._waiting.clear()

    def context_for_run(self, name: str) -> Context:
        """The context a child run named ``name`` (a sub-agent) begins its span in."""
        running = [call for call in self._calls.values() if call.ended is None]
        task = _current_task()
        pool = (
            [call for call in running if task is not None and call.task is task]
            or [call for call in running if _named(call, name)]
            or running
        )
        if not pool:
            return self._context
        call = min(pool, key=lambda c: c.runs)  # the earliest of those with fewest
        call.runs += 1
        return trace.set_span_in_context(call.span)

    def note(self, note: Note) -> None:
        """Put an extension's note on its call (see the module text)."""
        call: _Call | None = None
        if note.call_id:
            call = self._calls.get(note.call_id)
            if call is None:  # a guard or a before hook: the call's span begins next
                self._waiting.setdefault(note.call_id, []).append(note)
                return
        elif note.tool:
            running = (c for c in self._calls.values() if c.ended is None and _named(c, note.tool))
            call = _pick(running, _current_task())
        self._land(note, call)

    def _land(self, note: Note, call: _Call | None) -> None:
        for key, amount in note.sums.items():
            self._totals[key] = self._totals.get(key, 0) + amount
        if call is None:
            self._run.add_event(note.what, {**note.attributes, **note.sums})
            parent = self._run
        else:
            call.span.set_attributes(note.attributes)
            for key, amount in note.sums.items():
                call.sums[key] = call.sums.get(key, 0) + amount
                call.span.set_attribute(key, call.sums[key])
            parent = call.span
        child = note.child
        if child is not None:
            span = self._tracer.start_span(
                child.name,
                trace.set_span_in_context(parent),
                SpanKind.CLIENT,
                child.attributes,
                start_time=child.start,
            )
            if child.error_type is not None:
                span.set_status(Status(StatusCode.ERROR, child.error))
            self._end(span, child.end)
