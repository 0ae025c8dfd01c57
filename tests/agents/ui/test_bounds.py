"""What an app allows: a request's size, runs at once, a run's time; and a client that
goes away cancels its run, its tool seeing the cancellation and nothing left running
(the suite's leak guard fails a test that leaves a task or a server behind). One test
goes through a real uvicorn server on loopback, disconnecting mid-run over the socket."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx2
import pytest
import uvicorn
from ag_ui.core import RunErrorEvent
from starlette.applications import Starlette

from agents.models import ScriptedModel
from agents.ui import ag_ui_app, ai_sdk_app
from tests.agents.ui.conftest import last, post, post_ag_ui, run_input, sse_data
from tests.support.agent_kinds import KINDS, Kind, agent, answer, call, chain_for
from toolchain import ExecutionContext, tool


class Gate:
    """What the `hang` tool of one test saw: that it started, and how it ended."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.ended = asyncio.Event()
        self.seen: list[str] = []


def hanging(kind: Kind, gate: Gate, **options: Any) -> Starlette:
    """An AG-UI app whose agent calls `hang`, which waits for ``gate.release``."""

    @tool
    async def hang(ctx: ExecutionContext, disk: str) -> str:
        """Wait for the test."""
        gate.started.set()
        try:
            await gate.release.wait()
        except asyncio.CancelledError:
            gate.seen.append(f"cancelled (ctx.cancelled={ctx.cancelled})")
            gate.ended.set()
            raise
        return f"{disk} done"

    model = ScriptedModel([call(kind, "hang", disk="sdb"), answer(kind, "done")])
    return ag_ui_app(agent(kind, model, chain_for(kind, hang)), **options)


async def test_a_body_over_the_limit_is_refused_before_any_run() -> None:
    model = ScriptedModel([answer("react")])
    for make in (ag_ui_app, ai_sdk_app):
        app = make(agent("react", model, chain_for("react")), max_body=200)
        response = await post(app, run_input("x" * 300))
        assert response.status_code == 413
        assert response.json() == {
            "error": {
                "code": "bad_request",
                "message": "the request body is over this server's 200 bytes",
            }
        }
    assert model.requests == []


async def test_a_run_over_the_limit_of_runs_at_once_is_refused_with_429() -> None:
    gate = Gate()
    app = hanging("react", gate, max_runs=1)
    first = asyncio.create_task(post_ag_ui(app, run_input("Wait")))
    await gate.started.wait()

    refused = await post(app, run_input("Another"))

    assert refused.status_code == 429
    assert refused.json()["error"]["message"] == (
        "this server runs at most 1 runs at once: try again when one has ended"
    )
    gate.release.set()
    events = await first
    assert events[-1].type.value == "RUN_FINISHED"
    # Its slot is free again once it ended.
    again = await post(app, run_input("Again"))
    assert again.status_code == 200


@KINDS
async def test_a_run_over_its_time_is_stopped_and_its_tool_cancelled(kind: Kind) -> None:
    gate = Gate()
    app = hanging(kind, gate, run_timeout=0.2)  # the tool never ends by itself

    events = await post_ag_ui(app, run_input("Wait"))

    error = last(events, RunErrorEvent)
    assert error.code == "run_timeout"
    assert error.message == "the run took longer than this server allows (0.2 s) and was stopped"
    assert gate.seen == ["cancelled (ctx.cancelled=True)"]


async def _asgi_post(app: Starlette, body: dict[str, Any], gone: asyncio.Event) -> list[bytes]:
    """``app`` called as a server calls it: the request's body, then a disconnect once
    ``gone`` is set. Returns what the app sent as the response body."""
    sent: list[bytes] = []
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
    ]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return sent


@KINDS
async def test_a_client_that_goes_away_cancels_its_run(kind: Kind) -> None:
    """Under ASGI spec 2.4 Starlette's own streaming response would notice only when
    a write fails; the run waits on its tool and writes nothing, so it must listen."""
    gate, gone = Gate(), asyncio.Event()
    app = hanging(kind, gate)
    served = asyncio.create_task(_asgi_post(app, run_input("Wait"), gone))
    await gate.started.wait()

    gone.set()
    sent = await served

    assert gate.seen == ["cancelled (ctx.cancelled=True)"]
    streamed = [json.loads(data)["type"] for data in sse_data(b"".join(sent).decode())]
    assert streamed[0] == "RUN_STARTED" and "RUN_FINISHED" not in streamed
    assert "TOOL_CALL_START" in streamed


@pytest.fixture
async def served_on_loopback() -> AsyncIterator[tuple[str, Gate]]:
    """A hanging AG-UI app under a real uvicorn server on 127.0.0.1 (an ephemeral port)."""
    gate = Gate()
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))  # bound and listening before the client connects
    listening.listen()
    config = uvicorn.Config(hanging("native", gate), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        yield f"http://127.0.0.1:{listening.getsockname()[1]}", gate
    finally:
        server.should_exit = True
        await serving
        listening.close()


async def test_over_a_real_socket_events_stream_and_a_closed_connection_cancels_the_run(
    served_on_loopback: tuple[str, Gate],
) -> None:
    url, gate = served_on_loopback
    seen: list[str] = []
    async with (
        httpx2.AsyncClient(base_url=url) as client,
        client.stream("POST", "/", json=run_input("Wait")) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                seen.append(json.loads(line.removeprefix("data: "))["type"])
            if seen and seen[-1] == "TOOL_CALL_END":
                break  # the tool is running: the client leaves
    # The connection closed with the client: the server sees it go and ends the run.
    await gate.ended.wait()
    assert seen[:2] == ["RUN_STARTED", "STEP_STARTED"]
    assert gate.seen == ["cancelled (ctx.cancelled=True)"]
