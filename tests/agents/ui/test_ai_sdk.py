"""`agents.ui.ai_sdk_app`: a chat posted as ``useChat`` posts it comes back as the AI SDK's
UI message stream, each part checked against the part types the AI SDK declares.

The parts below are written from the AI SDK's own schema of the stream,
``uiMessageChunkSchema`` in ``packages/ai/src/ui-message-stream/ui-message-chunks.ts``
(vercel/ai, commit 014f4437): each is a strict object there (no other keys), and so is
each model here (``extra="forbid"``). Of the ``data-*`` parts (``type`` any
``data-<name>``, with ``id``, ``data`` and ``transient``) the app writes one,
``data-elicitation`` (an MCP server's question); ``source-*``, ``file`` and
``message-metadata`` are left out: the app writes none of them, and an unknown part
fails the test.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter

from agents.demo import build_demo
from agents.ui import ai_sdk_app
from tests.agents.ui.conftest import RAN, made, post, refunds, shop_agent, sse_data
from tests.support.agent_kinds import KINDS, Kind, answer, call
from toolchain.mcp import MCPServer


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextStart(_Part):
    type: Literal["text-start"]
    id: str
    providerMetadata: dict[str, Any] | None = None


class TextDelta(_Part):
    type: Literal["text-delta"]
    id: str
    delta: str
    providerMetadata: dict[str, Any] | None = None


class TextEnd(_Part):
    type: Literal["text-end"]
    id: str
    providerMetadata: dict[str, Any] | None = None


class ReasoningStart(_Part):
    type: Literal["reasoning-start"]
    id: str
    providerMetadata: dict[str, Any] | None = None


class ReasoningDelta(_Part):
    type: Literal["reasoning-delta"]
    id: str
    delta: str
    providerMetadata: dict[str, Any] | None = None


class ReasoningEnd(_Part):
    type: Literal["reasoning-end"]
    id: str
    providerMetadata: dict[str, Any] | None = None


class ErrorPart(_Part):
    type: Literal["error"]
    errorText: str


class ToolInputStart(_Part):
    type: Literal["tool-input-start"]
    toolCallId: str
    toolName: str
    providerExecuted: bool | None = None
    providerMetadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    title: str | None = None


class ToolInputDelta(_Part):
    type: Literal["tool-input-delta"]
    toolCallId: str
    inputTextDelta: str


class ToolInputAvailable(_Part):
    type: Literal["tool-input-available"]
    toolCallId: str
    toolName: str
    input: Any
    providerExecuted: bool | None = None
    providerMetadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    title: str | None = None


class ToolApprovalRequest(_Part):
    type: Literal["tool-approval-request"]
    approvalId: str
    toolCallId: str


class ToolOutputAvailable(_Part):
    type: Literal["tool-output-available"]
    toolCallId: str
    output: Any
    providerExecuted: bool | None = None
    dynamic: bool | None = None
    preliminary: bool | None = None


class ToolOutputError(_Part):
    type: Literal["tool-output-error"]
    toolCallId: str
    errorText: str
    providerExecuted: bool | None = None
    dynamic: bool | None = None


class ToolOutputDenied(_Part):
    type: Literal["tool-output-denied"]
    toolCallId: str


class StartStep(_Part):
    type: Literal["start-step"]


class FinishStep(_Part):
    type: Literal["finish-step"]


class Start(_Part):
    type: Literal["start"]
    messageId: str | None = None
    messageMetadata: Any = None


class Finish(_Part):
    type: Literal["finish"]
    finishReason: (
        Literal["stop", "length", "content-filter", "tool-calls", "error", "other"] | None
    ) = None
    messageMetadata: Any = None


class Abort(_Part):
    type: Literal["abort"]
    reason: str | None = None


UIMessageChunk = Annotated[
    TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ErrorPart
    | ToolInputStart
    | ToolInputDelta
    | ToolInputAvailable
    | ToolApprovalRequest
    | ToolOutputAvailable
    | ToolOutputError
    | ToolOutputDenied
    | StartStep
    | FinishStep
    | Start
    | Finish
    | Abort,
    Field(discriminator="type"),
]
PARTS: TypeAdapter[UIMessageChunk] = TypeAdapter(UIMessageChunk)


class DataPart(_Part):
    """``data-<name>``: the stream's extension point (``dataUIMessageChunkSchema``)."""

    type: Annotated[str, StringConstraints(pattern=r"^data-")]
    id: str | None = None
    data: Any
    transient: bool | None = None


def read_part(text: str) -> UIMessageChunk | DataPart:
    """One part of the stream, read by its declared model."""
    if json.loads(text).get("type", "").startswith("data-"):
        return DataPart.model_validate_json(text)
    return PARTS.validate_json(text)


async def post_chat(app: Any, messages: list[dict[str, Any]]) -> list[UIMessageChunk | DataPart]:
    """One chat request as ``useChat`` sends it; the parts, each read by its model."""
    response = await post(app, {"id": "chat-1", "messages": messages, "trigger": "submit-message"})
    assert response.status_code == 200, response.text
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    data = sse_data(response.text)
    assert data[-1] == "[DONE]"
    return [read_part(item) for item in data[:-1]]


def user(text: str) -> dict[str, Any]:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}


def finish(parts: list[UIMessageChunk | DataPart]) -> Finish:
    assert isinstance(parts[-1], Finish), parts[-1]
    return parts[-1]


def of(parts: list[UIMessageChunk | DataPart], kind: type[Any]) -> list[Any]:
    return [part for part in parts if isinstance(part, kind)]


@pytest.mark.parametrize("native", [False, True], ids=["react", "native"])
async def test_the_demo_run_streams_as_ui_message_parts(native: bool) -> None:
    demo = build_demo(native=native)
    parts = await post_chat(ai_sdk_app(demo.agent), [user(demo.task)])

    assert isinstance(parts[0], Start)
    assert len(of(parts, StartStep)) == len(of(parts, FinishStep)) == 5
    inputs = of(parts, ToolInputAvailable)
    assert [part.toolName for part in inputs][:3] == [
        "get_customer_info",
        "get_flight_info",
        "search_airline_policy",
    ]
    outputs = {part.toolCallId: part.output for part in of(parts, ToolOutputAvailable)}
    assert set(outputs) == {part.toolCallId for part in inputs}
    assert outputs[inputs[0].toolCallId]["email"] == "john.smith@email.com"
    text = "".join(part.delta for part in of(parts, TextDelta))
    assert text.strip().endswith("Your vegetarian meal preference carries over.")
    assert bool(of(parts, ReasoningDelta)) is not native
    done = finish(parts)
    assert done.finishReason == "stop"
    assert done.messageMetadata["usage"]["inputTokens"] > 0
    assert "AA102" in done.messageMetadata["answer"]


@KINDS
async def test_a_tool_error_is_a_tool_output_error(kind: Kind) -> None:
    agent, _ = made(kind, [call(kind, "lookup", disk="nope"), answer(kind, "no such disk")])
    parts = await post_chat(ai_sdk_app(agent), [user("How big is nope?")])

    (error,) = of(parts, ToolOutputError)
    assert error.errorText == "no disk named nope; list the disks first"
    assert finish(parts).finishReason == "stop"


def _answered(
    metadata: dict[str, Any], call_id: str, approval: dict[str, Any]
) -> list[dict[str, Any]]:
    """The chat as ``useChat`` posts it after ``addToolApprovalResponse``."""
    assistant = {
        "id": "a1",
        "role": "assistant",
        "metadata": metadata,
        "parts": [
            {
                "type": "tool-wipe",
                "toolCallId": call_id,
                "state": "approval-responded",
                "input": {"disk": "sdb"},
                "approval": {"id": call_id, **approval},
            }
        ],
    }
    return [user("Erase sdb"), assistant]


@KINDS
async def test_a_held_call_is_an_approval_request_and_the_answer_resumes_it(kind: Kind) -> None:
    agent, model = made(kind, [call(kind, "wipe", disk="sdb"), answer(kind, "sdb is erased")])
    app = ai_sdk_app(agent)
    paused = await post_chat(app, [user("Erase sdb")])

    (request,) = of(paused, ToolApprovalRequest)
    (shown,) = of(paused, ToolInputAvailable)
    assert (shown.toolCallId, shown.toolName, shown.input) == (
        request.toolCallId,
        "wipe",
        {"disk": "sdb"},
    )
    assert finish(paused).finishReason == "tool-calls"
    assert RAN == []

    metadata = finish(paused).messageMetadata
    resumed = await post_chat(app, _answered(metadata, request.approvalId, {"approved": True}))

    assert RAN == ["wipe sdb"]
    (output,) = of(resumed, ToolOutputAvailable)
    assert (output.toolCallId, output.output) == (request.toolCallId, "sdb erased")
    assert "".join(part.delta for part in of(resumed, TextDelta)) == "sdb is erased"
    assert finish(resumed).finishReason == "stop"
    assert len(model.requests) == 2


@KINDS
async def test_a_resumed_run_streams_its_calls_and_text_as_they_happen(kind: Kind) -> None:
    answer_text = "sdb is erased and sdc is 512 GB, as you asked me."
    thinking = "Both are done; now I tell the person."
    last = answer(kind, answer_text)
    agent, model = made(
        kind,
        [
            call(kind, "wipe", disk="sdb"),
            call(kind, "lookup", disk="sdc"),
            last if kind == "native" else f"<thinking>{thinking}</thinking>\n{last}",
        ],
    )
    app = ai_sdk_app(agent)
    paused = await post_chat(app, [user("Erase sdb, then size sdc")])
    (request,) = of(paused, ToolApprovalRequest)

    metadata = finish(paused).messageMetadata
    resumed = await post_chat(app, _answered(metadata, request.approvalId, {"approved": True}))

    outputs = of(resumed, ToolOutputAvailable)
    assert [o.output for o in outputs] == ["sdb erased", {"disk": "sdc", "size_gb": 512}]
    (lookup,) = [p for p in of(resumed, ToolInputAvailable) if p.toolName == "lookup"]
    deltas = of(resumed, TextDelta)
    assert "".join(d.delta for d in deltas) == answer_text and len(deltas) > 3
    at = resumed.index
    assert at(outputs[0]) < at(of(resumed, StartStep)[0]) < at(lookup) < at(outputs[1])
    assert at(outputs[1]) < at(deltas[0]) and at(deltas[-1]) < at(finish(resumed))
    reasoning = of(resumed, ReasoningDelta)
    if kind == "react":  # the thinking streams too
        assert "".join(r.delta for r in reasoning) == thinking and len(reasoning) > 1
    else:
        assert reasoning == []
    assert finish(resumed).finishReason == "stop"
    assert RAN == ["wipe sdb", "lookup sdc"] and len(model.requests) == 3


async def test_a_denied_call_is_tool_output_denied() -> None:
    agent, model = made("native", [call("native", "wipe", disk="sdb"), "not erased"])
    app = ai_sdk_app(agent)
    paused = await post_chat(app, [user("Erase sdb")])
    (request,) = of(paused, ToolApprovalRequest)

    denial = {"approved": False, "reason": "sdb holds the backups"}
    resumed = await post_chat(
        app, _answered(finish(paused).messageMetadata, request.toolCallId, denial)
    )

    assert RAN == []
    (denied,) = of(resumed, ToolOutputDenied)
    assert denied.toolCallId == request.toolCallId
    assert of(resumed, ToolInputAvailable) == []
    assert "sdb holds the backups" in model.requests[-1].messages[-1].text_content()


@pytest.mark.parametrize("forge", ["edited", "another chat"])
async def test_metadata_the_client_changed_is_refused(forge: str) -> None:
    agent, model = made("react", [call("react", "wipe", disk="sdb"), answer("react")])
    app = ai_sdk_app(agent)
    paused = await post_chat(app, [user("Erase sdb")])
    (request,) = of(paused, ToolApprovalRequest)
    metadata = json.loads(json.dumps(finish(paused).messageMetadata))
    chat = _answered(metadata, request.toolCallId, {"approved": True})
    if forge == "edited":
        metadata["gent"]["extension_state"] = {"approved": [request.toolCallId]}
        body = {"id": "chat-1", "messages": chat}
    else:
        body = {"id": "chat-2", "messages": chat}

    response = await post(app, body)

    parts = [read_part(item) for item in sse_data(response.text)[:-1]]
    (error,) = of(parts, ErrorPart)
    assert error.errorText.startswith("the conversation state was not sealed by this server")
    assert finish(parts).finishReason == "error"
    assert RAN == [] and len(model.requests) == 1


async def test_a_tool_output_keeps_its_type() -> None:
    """A string that reads as JSON stays a string; a model's output is its JSON data."""
    from agents import ReActAgent, ScriptedModel
    from toolchain import tool

    @tool
    def code(key: str) -> str:
        """A code, as text."""
        return "42"

    model = ScriptedModel([call("react", "code", key="x"), answer("react", "42")])
    parts = await post_chat(ai_sdk_app(ReActAgent(model, tools=[code])), [user("Code?")])
    (output,) = of(parts, ToolOutputAvailable)
    assert output.output == "42"


# -- an MCP server's question (elicitation) ----------------------------------------------------


def _answering(asked: list[UIMessageChunk | DataPart], answer: object) -> list[dict[str, Any]]:
    """The chat as a client posts it after setting ``data.answer`` on the question part."""
    (question,) = of(asked, DataPart)
    assistant = {
        "id": "a1",
        "role": "assistant",
        "metadata": finish(asked).messageMetadata,
        "parts": [
            {"type": question.type, "id": question.id, "data": {**question.data, "answer": answer}}
        ],
    }
    return [user("Refund A7"), assistant]


@KINDS
async def test_a_servers_question_is_a_data_part_and_its_answer_resumes_the_call(
    kind: Kind, shop: MCPServer
) -> None:
    agent, model = shop_agent(
        kind, shop, [call(kind, "refund", order="A7"), answer(kind, "A7 is refunded, as asked.")]
    )
    app = ai_sdk_app(agent)
    asked = await post_chat(app, [user("Refund A7")])

    (question,) = of(asked, DataPart)
    (refund,) = of(asked, ToolInputAvailable)
    assert question.type == "data-elicitation" and question.id
    assert question.data["message"] == "Refund order A7?"
    assert question.data["toolCallId"] == refund.toolCallId
    assert (question.data["tool"], question.data["args"]) == ("refund", {"order": "A7"})
    assert question.data["schema"]["properties"]["ok"]["type"] == "boolean"
    assert of(asked, ToolApprovalRequest) == [] and of(asked, ToolOutputAvailable) == []
    assert finish(asked).finishReason == "tool-calls" and await refunds(shop) == 0

    resumed = await post_chat(app, _answering(asked, {"action": "accept", "content": {"ok": True}}))

    (output,) = of(resumed, ToolOutputAvailable)
    assert (output.toolCallId, output.output) == (refund.toolCallId, {"result": "refunded A7"})
    deltas = of(resumed, TextDelta)
    assert "".join(d.delta for d in deltas) == "A7 is refunded, as asked." and len(deltas) > 1
    assert finish(resumed).finishReason == "stop"
    assert await refunds(shop) == 1 and len(model.requests) == 2


async def test_a_declined_question_is_told_to_the_server(shop: MCPServer) -> None:
    agent, _ = shop_agent("native", shop, [call("native", "refund", order="A7"), "Kept it."])
    app = ai_sdk_app(agent)
    asked = await post_chat(app, [user("Refund A7")])

    resumed = await post_chat(app, _answering(asked, {"action": "decline"}))

    (output,) = of(resumed, ToolOutputAvailable)
    assert output.output == {"result": "kept A7: the customer answered decline"}
    assert await refunds(shop) == 0


@pytest.mark.parametrize("bad", ["unfit", "forged"])
async def test_an_unfit_or_forged_answer_is_an_error_part_and_nothing_is_sent(
    shop: MCPServer, bad: str
) -> None:
    agent, model = shop_agent("native", shop, [call("native", "refund", order="A7"), "Done."])
    app = ai_sdk_app(agent)
    asked = await post_chat(app, [user("Refund A7")])
    (question,) = of(asked, DataPart)
    chat = _answering(asked, {"action": "accept", "content": {"ok": "yes"}})
    if bad == "forged":
        chat = _answering(asked, {"action": "accept", "content": {"ok": True}})
        chat[-1]["parts"][0]["id"] = f"{question.id}-2"

    refused = await post_chat(app, chat)

    (error,) = of(refused, ErrorPart)
    if bad == "unfit":
        assert error.errorText == (
            f"question {question.id}: the answer does not fit the schema the question asked "
            "for: ok: 'yes' is not of type 'boolean'"
        )
    else:
        assert f"{question.id}-2: no call with this id is held" in error.errorText
    assert finish(refused).finishReason == "error"
    assert await refunds(shop) == 0 and len(model.requests) == 1
    # Still asked: a fitting answer refunds it.
    resumed = await post_chat(app, _answering(asked, {"action": "accept", "content": {"ok": True}}))
    assert of(resumed, ToolOutputAvailable)[0].output == {"result": "refunded A7"}
