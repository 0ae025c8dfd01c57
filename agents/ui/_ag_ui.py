"""An agent as an AG-UI endpoint: ``POST`` a ``RunAgentInput``, read the run as events.

The request is the protocol's ``RunAgentInput``: the task is its last user message; the
conversation before it is the sealed ``state["gent"]`` the previous response's
``STATE_SNAPSHOT`` carried (the messages a client sends besides its last one are not
read: the conversation is ours, and a client could write anything there). The
response streams, as server-sent events of the protocol's own models
(``ag_ui.core``):

- ``RUN_STARTED``; per step ``STEP_STARTED`` / ``STEP_FINISHED`` (``step N``);
- what the model says: the answer (``ReActAgent``) or its text (``ToolCallingAgent``) as
  ``TEXT_MESSAGE_START`` / ``_CONTENT`` / ``_END``, a ReAct agent's thinking as
  ``REASONING_START`` / ``REASONING_MESSAGE_*`` / ``REASONING_END``;
- each tool call as ``TOOL_CALL_START`` / ``_ARGS`` (its arguments, as JSON) / ``_END``
  when it starts, and ``TOOL_CALL_RESULT`` when it ends (its raw output as JSON, or
  ``Error: ...``, the message the model read);
- a ``STATE_SNAPSHOT`` before the end: ``gent`` (the sealed conversation, to send back
  as ``state``), ``usage`` (the run's tokens), ``savings`` (per extension) and
  ``pending`` (held calls);
- the end: ``RUN_FINISHED`` (outcome ``success``, ``interrupt`` or ``cancelled``, with
  the run's usage) or ``RUN_ERROR`` (a limit, a model failure, a refused state or
  decision, the server's time limit).

A call held for approval is a ``TOOL_CALL_START`` / ``_ARGS`` / ``_END`` with no result
and an interrupt of the ``RUN_FINISHED`` (reason ``tool_approval``, its id the call's
id). The next request sends the state back with ``resume``: one entry per interrupt,
``status: "resolved"`` with ``payload: {"approved": true}`` or ``{"approved": false,
"reason": "..."}``, or ``status: "cancelled"`` (denied). The held calls then run (or are
answered with the denial) and the run goes on, streamed: ``agent.resume_stream``.

An MCP server's question during a call (an ``ElicitationRequest``) is an interrupt of
reason ``input_required``: ``message`` is the question, ``tool_call_id`` the call it was
asked in, ``response_schema`` the answer's shape, whose ``content`` is the server's
schema. The answer is ``payload: {"action": "accept", "content": {...}}`` (checked
against that schema first), ``{"action": "decline"}``, or ``status: "cancelled"``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import Any, cast

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents._errors import AgentValueError
from agents.ui._http import EventStream, admitted
from agents.ui._runs import (
    Bounds,
    CallBegan,
    CallEnded,
    Ended,
    Failed,
    Runner,
    Said,
    StepBegan,
    StepEnded,
    UIAgent,
    UIEvent,
)
from agents.ui._state import Conversation, StateRefused, open_state, seal_state
from agents.ui._wire import BadRequest, answer_json, answer_of, answer_schema, snapshot_of, task_of
from toolchain import Approval, ApprovalRequest, ElicitationRequest
from toolchain.runtime import Seal

__all__ = ["ag_ui_endpoint"]

_ENCODER = EventEncoder()


def ag_ui_endpoint(runner: Runner, seal: Seal) -> Route:
    """The ``POST /`` route of the AG-UI app (the playground mounts it too)."""

    async def endpoint(request: Request) -> Response:
        run_input = await admitted(request, runner, _run_input)
        if isinstance(run_input, Response):
            return run_input
        return EventStream(_events(runner, seal, run_input), runner.release)

    return Route("/", endpoint, methods=["POST"])


def _run_input(body: object) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate(body)
    except ValidationError as error:
        raise BadRequest(f"not an AG-UI RunAgentInput: {error}") from None


async def _events(runner: Runner, seal: Seal, run_input: RunAgentInput) -> AsyncGenerator[str]:
    thread, run_id = run_input.thread_id, run_input.run_id
    writer = _Writer(thread, run_id)
    yield _encode(RunStartedEvent(thread_id=thread, run_id=run_id))
    try:
        conversation = _conversation(seal, thread, run_input.state)
        resume = run_input.resume or []
        if resume:
            held = runner.held(conversation.paused) if conversation.paused else ()
            decisions = _decisions(resume, {request.call_id: request for request in held})
            events = runner.resume(conversation, decisions)
        else:
            events = runner.start(task_of(_last_user_text(run_input)), conversation)
    except AgentValueError as error:  # a refused state, no task, a malformed decision
        code = "state_refused" if isinstance(error, StateRefused) else "bad_request"
        yield _encode(RunErrorEvent(message=str(error), code=code))
        return
    async for event in events:
        for out in writer.write(event, seal):
            yield _encode(out)


def _encode(event: BaseEvent) -> str:
    event.timestamp = time.time_ns() // 1_000_000  # milliseconds, as every AG-UI SDK writes
    return _ENCODER.encode(event)


def _conversation(seal: Seal, thread: str, state: object) -> Conversation:
    sealed = cast(Mapping[str, object], state).get("gent") if isinstance(state, dict) else None
    return Conversation() if sealed is None else open_state(seal, thread, sealed)


def _last_user_text(run_input: RunAgentInput) -> str:
    for message in reversed(run_input.messages):
        if message.role == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "".join(str(getattr(part, "text", "")) for part in content)
    raise BadRequest("the request has no user message and no resume entries: nothing to run")


def _decisions(
    entries: list[ResumeEntry], held: Mapping[str, ApprovalRequest]
) -> dict[str, Approval]:
    decisions: dict[str, Approval] = {}
    for entry in entries:
        request = held.get(entry.interrupt_id)
        if entry.status == "cancelled":
            decisions[entry.interrupt_id] = (
                request.cancel("the person dismissed the question")
                if isinstance(request, ElicitationRequest)
                else Approval.denied("the person cancelled this call")
            )
            continue
        try:
            decisions[entry.interrupt_id] = answer_of(request, entry.payload)
        except BadRequest as error:
            raise BadRequest(f"interrupt {entry.interrupt_id}: {error}") from None
    return decisions


class _Writer:
    """UI events as AG-UI events, keeping which message is open."""

    def __init__(self, thread: str, run_id: str) -> None:
        self.thread = thread
        self.run_id = run_id
        self.started: set[str] = set()  # the calls told so far
        self.open: tuple[str, str] | None = None  # (kind, message id)

    def write(self, event: UIEvent, seal: Seal) -> list[BaseEvent]:
        if isinstance(event, Said):
            return self._say(event)
        out = self._close()
        if isinstance(event, StepBegan):
            out.append(StepStartedEvent(step_name=f"step {event.step}"))
        elif isinstance(event, StepEnded):
            out.append(StepFinishedEvent(step_name=f"step {event.step}"))
        elif isinstance(event, CallBegan):
            self.started.add(event.id)
            out.extend(_call(event.id, event.name, event.args))
        elif isinstance(event, CallEnded):
            content = event.output_text if event.error is None else f"Error: {event.error}"
            out.append(
                ToolCallResultEvent(
                    message_id=_id(), tool_call_id=event.id, content=content, role="tool"
                )
            )
        elif isinstance(event, Failed):
            out.append(RunErrorEvent(message=event.message, code=event.code))
        else:
            out.extend(self._end(event, seal))
        return out

    def _say(self, said: Said) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self.open is None or self.open[0] != said.kind:
            out = self._close()
            self.open = (said.kind, _id())
            message_id = self.open[1]
            if said.kind == "text":
                out.append(TextMessageStartEvent(message_id=message_id, role="assistant"))
            else:
                out.append(ReasoningStartEvent(message_id=message_id))
                out.append(ReasoningMessageStartEvent(message_id=message_id))
        if not said.text:
            return out
        message_id = self.open[1]
        if said.kind == "text":
            out.append(TextMessageContentEvent(message_id=message_id, delta=said.text))
        else:
            out.append(ReasoningMessageContentEvent(message_id=message_id, delta=said.text))
        return out

    def _close(self) -> list[BaseEvent]:
        if self.open is None:
            return []
        kind, message_id = self.open
        self.open = None
        if kind == "text":
            return [TextMessageEndEvent(message_id=message_id)]
        return [
            ReasoningMessageEndEvent(message_id=message_id),
            ReasoningEndEvent(message_id=message_id),
        ]

    def _end(self, ended: Ended, seal: Seal) -> list[BaseEvent]:
        result = ended.result
        out: list[BaseEvent] = []
        for request in ended.held:
            asked = isinstance(request, ElicitationRequest)  # asked in a call told already
            if not asked and request.call_id not in self.started:  # told with its step
                out.extend(_call(request.call_id, request.tool, request.args))
        snapshot = snapshot_of(ended, seal_state(seal, self.thread, ended.conversation))
        out.append(StateSnapshotEvent(snapshot=snapshot))
        usage = [
            TokenUsage(
                model=ended.model or None,
                input_tokens=result.usage.input_tokens,
                output_tokens=result.usage.output_tokens,
                total_tokens=result.usage.input_tokens + result.usage.output_tokens,
            )
        ]

        def finished(outcome: _Outcome, answer: object = None) -> RunFinishedEvent:
            return RunFinishedEvent(
                thread_id=self.thread,
                run_id=self.run_id,
                usage=usage,
                outcome=outcome,
                result=answer,
            )

        if result.stopped_by == "answer":
            out.append(finished(RunFinishedSuccessOutcome(), answer_json(result.answer)))
        elif ended.held:
            interrupts = [_interrupt(request, ended.calls) for request in ended.held]
            out.append(finished(RunFinishedInterruptOutcome(interrupts=interrupts)))
        elif result.stopped_by == "cancelled":
            out.append(finished(RunFinishedCancelledOutcome()))
        else:
            why = result.error or (f"the run reached its limit: {result.limit}")
            out.append(RunErrorEvent(message=why, code=result.stopped_by, usage=usage))
        return out


_Outcome = RunFinishedSuccessOutcome | RunFinishedInterruptOutcome | RunFinishedCancelledOutcome

_DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}


def _interrupt(request: ApprovalRequest, calls: Mapping[str, str]) -> Interrupt:
    """A held call as an approval interrupt; a server's question as an ``input_required``
    one whose ``response_schema`` is the answer's (`answer_schema`)."""
    metadata = {"tool": request.tool, "args": dict(request.args)}
    if isinstance(request, ElicitationRequest):
        return Interrupt(
            id=request.call_id,
            reason="input_required",
            message=request.message,
            tool_call_id=calls.get(request.call_id),
            response_schema=answer_schema(request),
            metadata=metadata,
        )
    return Interrupt(
        id=request.call_id,
        reason="tool_approval",
        message=f"{request.tool} waits for your approval",
        tool_call_id=request.call_id,
        response_schema=_DECISION_SCHEMA,
        metadata=metadata,
    )


def _call(call_id: str, name: str, args: Mapping[str, object]) -> list[BaseEvent]:
    return [
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name),
        ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(dict(args), default=str)),
        ToolCallEndEvent(tool_call_id=call_id),
    ]


def _id() -> str:
    return uuid.uuid4().hex


def ag_ui_app_of(agent: UIAgent, bounds: Bounds, seal: Seal) -> Starlette:
    """The Starlette app of `agents.ui.ag_ui_app`."""
    return Starlette(routes=[ag_ui_endpoint(Runner(agent, bounds), seal)])
