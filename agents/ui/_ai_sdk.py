"""An agent as a Vercel AI SDK chat endpoint: the UI message stream that ``useChat``
reads (``x-vercel-ai-ui-message-stream: v1``; the parts as the AI SDK declares them in
``packages/ai/src/ui-message-stream/ui-message-chunks.ts``).

The request is what ``useChat``'s default transport posts: ``{"id": chat id,
"messages": [UI messages]}``. The task is the last user message's text parts; the
conversation before it is the sealed ``gent`` of the ``metadata`` our last ``finish``
part gave the assistant message (``useChat`` keeps a message's metadata and sends it
back). The response streams, one SSE ``data:`` line per part, then ``data: [DONE]``:

- ``start``; per step ``start-step`` / ``finish-step``;
- the answer (``ReActAgent``) or the model's text (``ToolCallingAgent``) as
  ``text-start`` / ``text-delta`` / ``text-end``, a ReAct agent's thinking as
  ``reasoning-start`` / ``reasoning-delta`` / ``reasoning-end``;
- each tool call: ``tool-input-start`` and ``tool-input-available`` (its arguments)
  when it starts, ``tool-output-available`` (its raw output) or ``tool-output-error``
  when it ends; a denied call ``tool-output-denied``;
- a call held for approval: ``tool-input-available`` then ``tool-approval-request``
  (``approvalId`` is the call's id), and the stream finishes there;
- ``error`` for a run that could not end well (a limit, a model failure, a refused
  state or decision, the server's time limit);
- ``finish`` with ``messageMetadata``: ``gent`` (the sealed conversation), the run's
  ``usage``, ``savings`` and ``pending`` calls.

A decision comes back the AI SDK's way: ``addToolApprovalResponse`` sets the tool part's
``approval`` (``{"id", "approved", "reason"}``, state ``approval-responded``) in the last
assistant message, and the chat is posted again; those decisions resume the run, and it
streams as a new one does (``agent.resume_stream``).

An MCP server's question during a call (an ``ElicitationRequest``) is a data part, the
stream's documented extension point (the AI SDK has no part for a question asked during
a call): ``{"type": "data-elicitation", "id": <the question's id>, "data": {"message",
"schema", "toolCallId", "tool", "args"}}``, before ``finish``. The client answers by
setting ``data.answer`` on that part in the last assistant message (``{"action":
"accept", "content": {...}}``, checked against ``schema`` first, ``{"action":
"decline"}`` or ``{"action": "cancel"}``) and posting the chat again.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import cast

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
from agents.ui._state import Conversation, open_state, seal_state
from agents.ui._wire import BadRequest, answer_json, answer_of, decision_of, snapshot_of, task_of
from toolchain import Approval, ApprovalRequest, ElicitationRequest
from toolchain.runtime import Seal

__all__ = ["ai_sdk_app_of"]

Part = dict[str, object]


def ai_sdk_app_of(agent: UIAgent, bounds: Bounds, seal: Seal) -> Starlette:
    """The Starlette app of `agents.ui.ai_sdk_app`."""
    runner = Runner(agent, bounds)

    async def endpoint(request: Request) -> Response:
        chat = await admitted(request, runner, _chat)
        if isinstance(chat, Response):
            return chat
        chat_id, messages = chat
        stream = _parts(runner, seal, chat_id, messages)
        headers = {"x-vercel-ai-ui-message-stream": "v1"}
        return EventStream(stream, runner.release, headers)

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


def _chat(body: object) -> tuple[str, list[object]]:
    chat = cast(dict[str, object], body) if isinstance(body, dict) else {}
    messages = chat.get("messages")
    if not isinstance(messages, list):
        raise BadRequest('a chat request is {"id": ..., "messages": [...]}')
    return str(chat.get("id") or ""), cast(list[object], messages)


async def _parts(
    runner: Runner, seal: Seal, chat: str, messages: list[object]
) -> AsyncGenerator[str]:
    writer = _Writer(chat)
    yield _line({"type": "start", "messageId": uuid.uuid4().hex})
    try:
        conversation, decisions, task = _read(seal, chat, messages, runner)
        if decisions:
            writer.denied = {key for key, value in decisions.items() if not value.approved}
            events = runner.resume(conversation, decisions)
        else:
            events = runner.start(task, conversation)
    except AgentValueError as error:  # a refused state, no task, a malformed decision
        yield _line({"type": "error", "errorText": str(error)})
        yield _line({"type": "finish", "finishReason": "error"})
        yield "data: [DONE]\n\n"
        return
    async for event in events:
        for part in writer.write(event, seal):
            yield _line(part)
    yield "data: [DONE]\n\n"


def _read(
    seal: Seal, chat: str, messages: list[object], runner: Runner
) -> tuple[Conversation, dict[str, Approval], str]:
    """The sealed conversation, the decisions the last assistant message carries (on
    the requests its paused run holds), and the task (``""`` when resuming)."""
    typed = [cast(Mapping[str, object], m) for m in messages if isinstance(m, dict)]
    if not typed:
        raise BadRequest("the chat has no messages: nothing to run")
    last = typed[-1]
    assistants = [m for m in typed if m.get("role") == "assistant"]
    sealed = _sealed_of(assistants[-1]) if assistants else None
    conversation = Conversation() if sealed is None else open_state(seal, chat, sealed)
    if last.get("role") == "assistant":
        held = runner.held(conversation.paused) if conversation.paused else ()
        decisions = _decisions(last, {request.call_id: request for request in held})
        if not decisions:
            raise BadRequest("the last message is the assistant's and decides no held call")
        return conversation, decisions, ""
    if last.get("role") != "user":
        raise BadRequest(f"the last message must be the user's, not {last.get('role')!r}")
    text = "".join(
        str(part.get("text", "")) for part in _parts_of(last) if part.get("type") == "text"
    )
    return conversation, {}, task_of(text)


def _sealed_of(message: Mapping[str, object]) -> object:
    metadata = message.get("metadata")
    return cast(Mapping[str, object], metadata).get("gent") if isinstance(metadata, dict) else None


def _parts_of(message: Mapping[str, object]) -> list[Mapping[str, object]]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return []
    return [cast(Mapping[str, object], p) for p in cast(list[object], parts) if isinstance(p, dict)]


def _decisions(
    message: Mapping[str, object], held: Mapping[str, ApprovalRequest]
) -> dict[str, Approval]:
    decisions: dict[str, Approval] = {}
    for part in _parts_of(message):
        if part.get("type") == QUESTION:
            answered = _answer_of(part, held)
            if answered is not None:
                decisions[answered[0]] = answered[1]
            continue
        if part.get("state") != "approval-responded":
            continue
        approval = part.get("approval")
        call_id = part.get("toolCallId")
        if not isinstance(approval, dict) or not isinstance(call_id, str):
            raise BadRequest("a tool part in state approval-responded has no approval")
        fields = cast(Mapping[str, object], approval)
        answer = {key: fields[key] for key in ("approved", "reason") if key in fields}
        try:
            decisions[call_id] = decision_of(answer)
        except BadRequest as error:
            raise BadRequest(f"tool call {call_id}: {error}") from None
    return decisions


QUESTION = "data-elicitation"
"""The part an MCP server's question travels in: a data part, the stream's documented
extension point (the AI SDK has no part for a question asked during a call)."""


def _answer_of(
    part: Mapping[str, object], held: Mapping[str, ApprovalRequest]
) -> tuple[str, Approval] | None:
    """The answer a question part carries (``data.answer``, set by the client), if any."""
    data = part.get("data")
    fields: Mapping[str, object] = (
        cast(Mapping[str, object], data) if isinstance(data, dict) else {}
    )
    if "answer" not in fields:
        return None  # asked, not answered (yet)
    question_id = part.get("id")
    if not isinstance(question_id, str):
        raise BadRequest(f"a {QUESTION} part with an answer has no id")
    try:
        return question_id, answer_of(held.get(question_id), fields["answer"])
    except BadRequest as error:
        raise BadRequest(f"question {question_id}: {error}") from None


class _Writer:
    """UI events as UI message stream parts, keeping which text or reasoning is open."""

    def __init__(self, chat: str) -> None:
        self.chat = chat
        self.started: set[str] = set()  # the calls told so far
        self.open: tuple[str, str] | None = None  # ("text" | "reasoning", part id)
        self.denied: set[str] = set()

    def write(self, event: UIEvent, seal: Seal) -> list[Part]:
        if isinstance(event, Said):
            return self._say(event)
        out = self._close()
        if isinstance(event, StepBegan):
            out.append({"type": "start-step"})
        elif isinstance(event, StepEnded):
            out.append({"type": "finish-step"})
        elif isinstance(event, CallBegan):
            self.started.add(event.id)
            if event.id not in self.denied:  # a denied call was told when it was held
                out.extend(_call(event.id, event.name, event.args))
        elif isinstance(event, CallEnded):
            if event.id in self.denied:
                out.append({"type": "tool-output-denied", "toolCallId": event.id})
            elif event.error is None:
                out.append(
                    {
                        "type": "tool-output-available",
                        "toolCallId": event.id,
                        "output": event.output,
                    }
                )
            else:
                out.append(
                    {"type": "tool-output-error", "toolCallId": event.id, "errorText": event.error}
                )
        elif isinstance(event, Failed):
            out.append({"type": "error", "errorText": event.message})
            out.append({"type": "finish", "finishReason": "error"})
        else:
            out.extend(self._end(event, seal))
        return out

    def _say(self, said: Said) -> list[Part]:
        out: list[Part] = []
        if self.open is None or self.open[0] != said.kind:
            out = self._close()
            self.open = (said.kind, uuid.uuid4().hex)
            out.append({"type": f"{said.kind}-start", "id": self.open[1]})
        if said.text:
            out.append({"type": f"{said.kind}-delta", "id": self.open[1], "delta": said.text})
        return out

    def _close(self) -> list[Part]:
        if self.open is None:
            return []
        kind, part_id = self.open
        self.open = None
        return [{"type": f"{kind}-end", "id": part_id}]

    def _end(self, ended: Ended, seal: Seal) -> list[Part]:
        result = ended.result
        out: list[Part] = []
        for request in ended.held:
            if isinstance(request, ElicitationRequest):  # asked in a call told already
                out.append(_question(request, ended.calls.get(request.call_id)))
                continue
            if request.call_id not in self.started:  # told with its step, as a rule
                out.extend(_call(request.call_id, request.tool, request.args))
            out.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": request.call_id,
                    "toolCallId": request.call_id,
                }
            )
        metadata = snapshot_of(ended, seal_state(seal, self.chat, ended.conversation))
        if result.stopped_by == "answer":
            metadata["answer"] = answer_json(result.answer)
            reason = "stop"
        elif ended.held:
            reason = "tool-calls"
        elif result.stopped_by == "cancelled":
            reason = "other"
        else:
            why = result.error or f"the run reached its limit: {result.limit}"
            out.append({"type": "error", "errorText": why})
            reason = "length" if result.stopped_by == "limit" else "error"
        out.append({"type": "finish", "finishReason": reason, "messageMetadata": metadata})
        return out


def _question(request: ElicitationRequest, call_id: str | None) -> Part:
    return {
        "type": QUESTION,
        "id": request.call_id,
        "data": {
            "message": request.message,
            "schema": dict(request.schema),
            "toolCallId": call_id,
            "tool": request.tool,
            "args": dict(request.args),
        },
    }


def _call(call_id: str, name: str, args: Mapping[str, object]) -> list[Part]:
    return [
        {"type": "tool-input-start", "toolCallId": call_id, "toolName": name},
        {
            "type": "tool-input-available",
            "toolCallId": call_id,
            "toolName": name,
            "input": json.loads(json.dumps(dict(args), default=str)),
        },
    ]


def _line(part: Part) -> str:
    return f"data: {json.dumps(part, separators=(',', ':'), default=str)}\n\n"
