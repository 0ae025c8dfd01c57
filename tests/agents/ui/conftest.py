"""What the UI tests share: posting to an app over ASGI, reading its event stream back
through the protocol's own models, and small tools that show what ran."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx2
import pytest
from ag_ui.core import Event
from pydantic import TypeAdapter
from starlette.applications import Starlette

from agents.models import ScriptedModel
from tests.support.agent_kinds import Agent, Kind, Output, agent
from tests.support.agent_kinds import chain_for as _chain_for
from toolchain import ExecutionContext, ToolError, tool
from toolchain.mcp import MCPServer

E = TypeVar("E")

AG_UI_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)

DEMO_CALLS = [
    "get_customer_info",
    "get_flight_info",
    "search_airline_policy",
    "get_booking_info",
    "get_booking_info",
    "search_flight_schedule",
    "get_flight_seats",
    "reschedule_booking",
]
"""The tools the offline demo calls, in order."""

RAN: list[str] = []
"""What `wipe` and `lookup` did, in order (cleared by each agent `made`)."""


@tool(requires_approval=True)
def wipe(disk: str) -> str:
    """Erase a disk."""
    RAN.append(f"wipe {disk}")
    return f"{disk} erased"


@tool
def lookup(disk: str) -> dict[str, object]:
    """Look a disk up."""
    RAN.append(f"lookup {disk}")
    if disk == "nope":
        raise ToolError(f"no disk named {disk}; list the disks first")
    return {"disk": disk, "size_gb": 512}


def made(kind: Kind, outputs: Sequence[Output]) -> tuple[Agent, ScriptedModel]:
    """An agent of ``kind`` with `wipe` and `lookup` on a model scripted with ``outputs``."""
    RAN.clear()
    model = ScriptedModel(list(outputs))
    return agent(kind, model, _chain_for(kind, wipe, lookup)), model


def sse_data(text: str) -> list[str]:
    """The ``data:`` payloads of a server-sent event stream, in order."""
    return [
        line.removeprefix("data: ")
        for block in text.split("\n\n")
        for line in block.splitlines()
        if line.startswith("data: ")
    ]


async def post(app: Starlette, body: object) -> httpx2.Response:
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://ui.test") as client:
        return await client.post("/", json=body)


async def post_ag_ui(app: Starlette, body: object) -> list[Event]:
    """The AG-UI events of one run, each read by the protocol's own pydantic models."""
    response = await post(app, body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return [AG_UI_EVENTS.validate_json(data) for data in sse_data(response.text)]


def run_input(
    text: str | None,
    *,
    thread: str = "thread-1",
    run: str = "run-1",
    state: object = None,
    resume: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``RunAgentInput`` as a client writes it (camelCase JSON)."""
    body: dict[str, Any] = {"threadId": thread, "runId": run, "messages": []}
    if text is not None:
        body["messages"] = [{"id": "m1", "role": "user", "content": text}]
    if state is not None:
        body["state"] = state
    if resume is not None:
        body["resume"] = resume
    return body


def last(events: Sequence[Event], kind: type[E]) -> E:
    """The stream's last event, which must be a ``kind``."""
    assert isinstance(events[-1], kind), events[-1]
    return events[-1]


def of_type(events: Sequence[Event], name: str) -> list[Any]:
    return [event for event in events if event.type.value == name]


def wire(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The events as the JSON a client read (for the conformance validator)."""
    return [json.loads(event.model_dump_json(by_alias=True)) for event in events]


SHOP = Path(__file__).parents[2] / "toolchain" / "mcp" / "elicit_server.py"
"""A real MCP server (the official SDK's) whose tools ask questions: ``refund(order)``
asks "Refund order <order>?" for ``{"ok": boolean}``, ``ship(order)`` asks for the
address (``{"street", "city"}``, both required), ``refunds()`` counts the refunds made."""


@pytest.fixture
async def shop() -> AsyncIterator[MCPServer]:
    """`SHOP` started as a process over stdio, for one test."""
    async with MCPServer.stdio(sys.executable, [str(SHOP)]) as server:
        yield server


def shop_agent(
    kind: Kind, shop: MCPServer, outputs: Sequence[Output]
) -> tuple[Agent, ScriptedModel]:
    """An agent of ``kind`` with the shop's tools, on a model scripted with ``outputs``."""
    model = ScriptedModel(list(outputs))
    return agent(kind, model, shop.attach(_chain_for(kind))), model


async def refunds(shop: MCPServer) -> int:
    """How many refunds the shop made (its own count)."""
    [counter] = [t for t in shop.tools() if t.name == "refunds"]
    result = await counter.call(ExecutionContext(), {})
    counted = cast("dict[str, int]", result.text)
    return counted["result"]
