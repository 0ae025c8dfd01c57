"""One run's spans, made from the events on its context (``ctx.events``) as they come.

A run is an ``invoke_agent`` span, each model call a ``chat`` span under it, each tool
call an ``execute_tool`` span (kept by `CallSpans`, with what extensions note on them).
The events only tell, so all of it is read from them: a model call begins at
``BeforeModelCall`` (its options from the step's ``StepReady``) and ends at
``AfterModelCall`` or ``ModelCallFailed``; the run ends at ``RunFinished``, closing
whatever it left open.

Every handler runs under the run's lock, and one that fails (a span processor that
raises, say) is logged on the ``agents.otel`` logger: the run goes on. Nothing here
holds the run's context, so a run whose context is dropped before it ends (a stream
closed early and let go) is closed by a finalizer, as ``abandoned``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from agents.events import (
    AfterModelCall,
    BeforeModelCall,
    ModelCallFailed,
    OutputRejected,
    RunFinished,
    StepFinished,
    StepReady,
)
from agents.otel import _conventions as sc
from agents.otel._calls import CallSpans, fail, key_of
from agents.otel._content import (
    CUT_CHARS,
    EARLIER_MESSAGES,
    Content,
    Transcript,
    answer_messages,
    bounded_text,
    output_messages,
)
from agents.otel._ending import ENDER
from agents.otel._extensions import Note, Reader, readers
from toolchain import StateKey, ToolCallFinished, ToolCallParseFailed, ToolCallStarted
from toolchain.runtime import logger, redact

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from agents.otel._seam import WatchedAgent
    from agents.result import AgentResult
    from agents.steps import StepRequest
    from toolchain import ExecutionContext, Tool

__all__ = ["RunSpans"]

_log = logger("agents.otel")
_SUBSCRIPTION = StateKey["Callable[[], None] | None"]("agents.otel.subscription")
"""The run's subscription to its events, kept by the context itself (see `RunSpans`)."""


class RunSpans:
    """The spans of one run (see the module text); made by the watcher as it starts."""

    def __init__(
        self,
        tracer: Tracer,
        ctx: ExecutionContext,
        agent: WatchedAgent,
        *,
        capture: bool,
        streaming: bool,
        parent: Context | None,
        ended: Callable[[ExecutionContext, RunSpans], None],
        inline: bool = False,
    ) -> None:
        self._tracer = tracer
        self._capture = capture
        self._streaming = streaming
        self._ended = ended
        self._inline = inline  # spans end here, not on ENDER's thread (see _ending)
        self._tools: Mapping[str, Tool[Any, Any]] = agent.tool_chain.tools
        self._lock = threading.RLock()  # the abandonment finalizer may run inside a handler
        provider, model = sc.model_parts(agent.model.name)
        attributes: sc.Attributes = {
            sc.OPERATION: sc.INVOKE_AGENT,
            sc.PROVIDER: provider,
            sc.AGENT_NAME: agent.name,
            sc.REQUEST_MODEL: model,
            sc.RUN_ID: ctx.run_id,
            sc.PROTOCOL: agent.protocol,
        }
        self.span = tracer.start_span(
            f"invoke_agent {agent.name}", parent, SpanKind.INTERNAL, attributes
        )
        self._context = trace.set_span_in_context(self.span)
        self._totals: dict[str, int] = {}
        self._calls = CallSpans(
            tracer, self.span, self._tools, capture=capture, end=self._end, totals=self._totals
        )
        self._transcript = Transcript() if capture else None
        self._chat: Span | None = None
        self._cut = 0  # characters cut from the content of the span being made
        self._request: StepRequest | None = None
        self._step_attributes: sc.Attributes = {}
        self._step_sums: dict[str, int] = {}
        self._error_type = ""
        self._failures = 0
        self._done = False
        self._handlers: dict[type[object], Callable[[Any], None]] = {
            StepReady: self._step_ready,
            BeforeModelCall: self._model_called,
            AfterModelCall: self._model_answered,
            ModelCallFailed: self._model_failed,
            OutputRejected: self._rejected,
            ToolCallStarted: self._tool_called,
            ToolCallFinished: self._calls.end,
            ToolCallParseFailed: self._unreadable,
            StepFinished: self._step_ended,
            RunFinished: self._run_ended,
        }
        for kind, read in readers().items():
            self._handlers[kind] = self._reader(read)
        # One subscription for every event: a dict look-up each, rather than a handler
        # per class that the bus tests every event against. The context keeps the
        # subscription's remover (it holds the bus, so the context): this object holds
        # only a weak reference, and a dropped context can be collected.
        self._ctx = weakref.ref(ctx)
        ctx.state.set(_SUBSCRIPTION, ctx.events.subscribe(object, self._on_event))
        self._finalizer = weakref.finalize(ctx, self.abandon)
        self._finalizer.atexit = False

    def context_for_run(self, name: str) -> Context:
        """The context a child run named ``name`` (a sub-agent) begins its span in."""
        with self._lock:
            return self._calls.context_for_run(name)

    # -- dispatch --------------------------------------------------------------------

    def _on_event(self, event: object) -> None:
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        with self._lock:
            if self._done:
                return
            try:
                handler(event)
            except Exception:
                self._failed(f"the event {type(event).__name__}")

    def _failed(self, what: str) -> None:
        """Tracing failed (a span processor raised, say): logged, the first time in a run
        with its traceback; the run is not touched."""
        self._failures += 1
        if self._failures == 1:
            _log.warning("tracing failed on %s; the run goes on", what, exc_info=True)
        else:
            _log.debug("tracing failed again, on %s", what, exc_info=True)

    def _end(self, span: Span, end_time: int | None = None) -> None:
        """End ``span``, off the event loop (`ENDER`) unless its processors never block;
        a processor that raises fails that span alone, not those after it."""
        if not self._inline:
            ENDER.end(span, end_time, self._end_failed)
            return
        try:
            span.end(end_time=end_time)
        except Exception:
            self._end_failed(getattr(span, "name", ""))

    def _end_failed(self, name: str) -> None:
        with self._lock:  # told on the ender's thread
            self._failed(f"the span {name}".rstrip())

    def _reader(self, read: Reader) -> Callable[[Any], None]:
        def note(event: object) -> None:
            self._note(read(event, self._capture))

        return note

    def _note(self, note: Note) -> None:
        if not note.step:
            self._calls.note(note)
            return
        self._step_attributes.update(note.attributes)  # for the step's model call
        for key, amount in note.sums.items():
            self._step_sums[key] = self._step_sums.get(key, 0) + amount
            self._totals[key] = self._totals.get(key, 0) + amount

    # -- model calls -----------------------------------------------------------------

    def _step_ready(self, event: StepReady) -> None:
        self._request = event.request

    def _model_called(self, event: BeforeModelCall) -> None:
        if self._chat is not None:  # its end was never told: close it, as it is
            self._end(self._chat)
        provider, model = sc.model_parts(event.model)
        attributes: sc.Attributes = {
            sc.OPERATION: sc.CHAT,
            sc.PROVIDER: provider,
            sc.REQUEST_MODEL: model,
            sc.REQUEST_STREAM: self._streaming,
            sc.STEP: event.step,
            **sc.server_attributes(event.base_url),
        }
        request = self._request
        if request is not None and request.index == event.step:
            attributes.update(sc.request_attributes(request.options))
        transcript = self._transcript
        self._cut = 0
        if transcript is not None:
            messages, earlier = transcript.input_messages(event.messages)
            self._content(attributes, sc.INPUT_MESSAGES, messages)
            if earlier:
                attributes[EARLIER_MESSAGES] = earlier
            system = transcript.system_instructions(event.messages)
            if system is not None:
                self._content(attributes, sc.SYSTEM_INSTRUCTIONS, system)
            if request is not None:
                shown = request.shown_tools
                definitions = transcript.tool_definitions(shown, self._tools)
                self._content(attributes, sc.TOOL_DEFINITIONS, definitions)
        attributes.update(self._step_attributes)
        attributes.update(self._step_sums)
        self._step_attributes, self._step_sums = {}, {}
        self._chat = self._tracer.start_span(
            f"chat {model}", self._context, SpanKind.CLIENT, attributes
        )

    def _content(self, attributes: sc.Attributes, key: str, content: Content) -> None:
        """Put a content attribute among a span's ``attributes``, with what was cut from
        the span's content so far (``_chat_cut``: the chat span's, or the run's)."""
        text, cut = content
        attributes[key] = text
        if cut:
            self._cut += cut
            attributes[CUT_CHARS] = self._cut

    def _model_answered(self, event: AfterModelCall) -> None:
        chat, self._chat = self._chat, None
        if chat is None:
            return
        response = event.response
        reason = sc.finish_reason(response.stop_reason)
        usage = response.usage
        attributes: sc.Attributes = {
            sc.RESPONSE_MODEL: response.model,
            sc.FINISH: [reason],
            sc.INPUT_TOKENS: usage.input_tokens,
            sc.OUTPUT_TOKENS: usage.output_tokens,
        }
        if usage.cached_input_tokens:
            attributes[sc.CACHE_READ_TOKENS] = usage.cached_input_tokens
        if response.id:
            attributes[sc.RESPONSE_ID] = response.id
        if self._capture:
            self._content(attributes, sc.OUTPUT_MESSAGES, output_messages(response, reason))
        chat.set_attributes(attributes)
        self._end(chat)

    def _model_failed(self, event: ModelCallFailed) -> None:
        status = event.status_code
        self._error_type = str(status) if status is not None else event.kind
        chat, self._chat = self._chat, None
        if chat is not None:
            fail(chat, self._error_type, redact(event.message))
            self._end(chat)

    def _rejected(self, event: OutputRejected) -> None:
        attributes: sc.Attributes = {sc.STEP: event.step, "gent.rejection.kind": event.kind}
        if self._capture:
            attributes["gent.rejection.feedback"] = bounded_text(event.feedback)
        self.span.add_event("gent.output_rejected", attributes)

    def _unreadable(self, event: ToolCallParseFailed) -> None:
        attributes: sc.Attributes = {}
        if self._capture:
            attributes["gent.parse_error"] = bounded_text(event.message)
        self.span.add_event("gent.tool_calls_unreadable", attributes)

    # -- tool calls and steps ------------------------------------------------------------

    def _tool_called(self, event: ToolCallStarted) -> None:
        self._calls.begin(key_of(event), event.name, event.args)

    def _step_ended(self, event: StepFinished) -> None:
        self._calls.close_ended()

    # -- the end ---------------------------------------------------------------------

    def _run_ended(self, event: RunFinished[Any]) -> None:
        result = event.result
        error_type, message = self._ending(result)
        self._close(error_type or sc.OTHER_ERROR, message or result.stopped_by)
        attributes: sc.Attributes = {
            sc.STOPPED_BY: result.stopped_by,
            sc.STEPS: len(result.steps),
            sc.INPUT_TOKENS: result.usage.input_tokens,
            sc.OUTPUT_TOKENS: result.usage.output_tokens,
            **self._totals,
        }
        if result.usage.cached_input_tokens:
            attributes[sc.CACHE_READ_TOKENS] = result.usage.cached_input_tokens
        if self._capture and result.answer is not None:
            self._cut = 0
            self._content(attributes, sc.OUTPUT_MESSAGES, answer_messages(result.answer))
        self.span.set_attributes(attributes)
        if error_type is not None:
            fail(self.span, error_type, message)
        self._finish()

    def _ending(self, result: AgentResult[Any]) -> tuple[str | None, str]:
        """The run's ``error.type`` and status message; None for a run that answered or
        paused (a pause waits for a person: nothing failed)."""
        stopped = result.stopped_by
        if stopped in ("answer", "paused"):
            return None, ""
        if stopped == "cancelled":
            return "cancelled", "the run was cancelled"
        if stopped == "limit":
            limit = result.limit or "limit"
            return limit, f"the run reached its limit: {limit}"
        return self._error_type or sc.OTHER_ERROR, redact(result.error or "the run failed")

    def _close(self, error_type: str, message: str) -> None:
        """End whatever of the run is open: a model call or tool calls that never ended
        (the run stopped under them), and notes no span took."""
        chat, self._chat = self._chat, None
        if chat is not None:
            fail(chat, error_type, message)
            self._end(chat)
        self._calls.close_all(error_type, message)

    def _finish(self) -> None:
        self._done = True
        ctx = self._ctx()
        try:
            self._end(self.span)
        finally:
            self._finalizer.detach()
            if ctx is not None:  # else it is gone, and its subscription with it
                unsubscribe = ctx.state.get(_SUBSCRIPTION)
                if unsubscribe is not None:
                    unsubscribe()
                    ctx.state.set(_SUBSCRIPTION, None)
                self._ended(ctx, self)

    def abandon(self) -> None:
        """End the run's spans before its end was told: its context was dropped (a
        stream closed early and let go), or began another run. None is left open."""
        with self._lock:
            if self._done:
                return
            try:
                why = "the run was abandoned before it ended"
                self._close("abandoned", why)
                fail(self.span, "abandoned", why)
                self._finish()
            except Exception:
                self._failed("an abandoned run")
