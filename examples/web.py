"""An agent behind a chat page: the AI SDK's UI message stream over a real server.

Run as it is, it starts the agent's `ai_sdk_app` under uvicorn on 127.0.0.1 (a free
port), posts a chat the way the AI SDK's ``useChat`` does, approves the call the run
holds (``delete_note`` needs a person), and prints the stream's parts as they come. With
``--serve`` it serves the playground page for the same agent instead, on
http://127.0.0.1:8000/, until Ctrl-C (offline: a scripted model plays the model).

    python examples/web.py
    python examples/web.py --serve
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Sequence
from typing import Any

import httpx2
import uvicorn

from agents import Message, ReActAgent, ScriptedModel
from agents.ui import ai_sdk_app, playground_app
from toolchain import tool

NOTES = {"n1": "buy milk", "n2": "call the bank", "n3": "buy milk"}


@tool
def list_notes() -> dict[str, str]:
    """Every note, by id."""
    return dict(NOTES)


@tool(requires_approval=True)
def delete_note(note_id: str) -> str:
    """Delete one note."""
    return f"deleted {note_id}: {NOTES.pop(note_id)!r}"


REPLIES = [
    '<thinking>Find the duplicate first.</thinking><action>{"tool": "list_notes", "args": {}}'
    "</action>",
    "<thinking>n3 repeats n1.</thinking>"
    '<action>{"tool": "delete_note", "args": {"note_id": "n3"}}</action>',
    "<answer>Deleted n3, which repeated n1 (buy milk).</answer>",
]


def replay(messages: Sequence[Message]) -> str:
    """The script again for each conversation: its step is the replies so far."""
    said = sum(1 for message in messages if message.role == "assistant")
    return REPLIES[said % len(REPLIES)]


agent = ReActAgent(ScriptedModel(replay), tools=[list_notes, delete_note], name="notes")


async def chat(url: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Post the chat; print each part as it streams in; return them."""
    parts: list[dict[str, Any]] = []
    body = {"id": "chat-1", "messages": messages}
    async with (
        httpx2.AsyncClient(base_url=url) as client,
        client.stream("POST", "/", json=body) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data: {"):
                continue
            part = json.loads(line.removeprefix("data: "))
            parts.append(part)
            shown = {k: v for k, v in part.items() if k not in ("id", "messageMetadata")}
            print("  ", json.dumps(shown)[:110])
    return parts


async def main() -> None:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))  # loopback, a free port
    listening.listen()
    server = uvicorn.Server(uvicorn.Config(ai_sdk_app(agent), log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    try:
        ask = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Dedupe my notes"}]}
        print("you> Dedupe my notes")
        first = await chat(url, [ask])
        held = next(part for part in first if part["type"] == "tool-approval-request")
        metadata = first[-1]["messageMetadata"]
        print(f"approve {held['toolCallId']}? yes")
        answered = {
            "id": "a1",
            "role": "assistant",
            "metadata": metadata,  # the sealed conversation, as useChat keeps it
            "parts": [
                {
                    "type": "tool-delete_note",
                    "toolCallId": held["toolCallId"],
                    "state": "approval-responded",
                    "input": {"note_id": "n3"},
                    "approval": {"id": held["approvalId"], "approved": True},
                }
            ],
        }
        second = await chat(url, [ask, answered])
        usage = second[-1]["messageMetadata"]["usage"]
        print(f"notes left: {sorted(NOTES)}; tokens: {usage['inputTokens']} in")
    finally:
        server.should_exit = True
        await serving
        listening.close()


if __name__ == "__main__":
    if "--serve" in sys.argv[1:]:
        print("playground on http://127.0.0.1:8000/ (Ctrl-C stops it)")
        uvicorn.run(playground_app(agent), host="127.0.0.1", port=8000, log_level="warning")
    else:
        asyncio.run(main())
