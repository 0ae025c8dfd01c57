"""The HTTP side both apps share: a bounded request body, refusals as JSON, and a
server-sent event stream that notices a client going away.

Starlette's ``StreamingResponse`` only listens for the client's disconnect on ASGI
servers older than spec 2.4; on newer ones it learns of it when a write fails, which
a run waiting on a slow tool may not make for minutes. `EventStream` always listens, so
a closed tab cancels its run at once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from typing import TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.types import Receive, Scope, Send

from agents._errors import AgentValueError
from agents.ui._runs import Runner
from agents.ui._wire import BadRequest

__all__ = ["BodyRefused", "EventStream", "admitted", "read_json", "refusal"]

T = TypeVar("T")


class BodyRefused(AgentValueError):
    """A request body this app will not read (``status`` 413 or 400); internal to the apps."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def refusal(status: int, code: str, message: str) -> JSONResponse:
    """A request refused before any run: ``{"error": {"code": ..., "message": ...}}``."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


async def read_json(request: Request, max_body: int) -> object:
    """The request's JSON body, read up to ``max_body`` bytes (`BodyRefused` past it,
    before reading the rest, or when it is not JSON)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise BodyRefused(413, f"the request body is over this server's {max_body} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise BodyRefused(413, f"the request body is over this server's {max_body} bytes")
    try:
        return json.loads(body)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError both are
        raise BodyRefused(400, f"the request body is not JSON: {error}") from None


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response of ``chunks`` that listens for the client going
    away; ``done`` runs once it ends, however it ends (finished, client gone, server
    stopping)."""

    def __init__(
        self,
        chunks: AsyncGenerator[str, None],
        done: Callable[[], None],
        headers: dict[str, str] | None = None,
    ) -> None:
        extra = {"cache-control": "no-cache", "x-accel-buffering": "no", **(headers or {})}
        # x-accel-buffering: a proxy in front must not hold events back.
        super().__init__(chunks, media_type="text/event-stream", headers=extra)
        self.chunks = chunks
        self.done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    await self.stream_response(send)
                    group.cancel_scope.cancel()

                async def listen() -> None:
                    await _wait_for_disconnect(receive)
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                group.start_soon(listen)
        finally:
            with anyio.CancelScope(shield=True):
                await self.chunks.aclose()
            self.done()


async def admitted(
    request: Request, runner: Runner, parse: Callable[[object], T]
) -> T | JSONResponse:
    """The request's body read by ``parse`` once a run slot is taken (`Runner.admit`;
    the caller releases it), or the refusal to answer with: 413 or 400 for a body
    too large or not JSON, 400 for one ``parse`` refuses (`BadRequest`), 429 when
    ``max_runs`` runs are going."""
    try:
        parsed = parse(await read_json(request, runner.bounds.max_body))
    except BodyRefused as refused:
        return refusal(refused.status, "bad_request", refused.message)
    except BadRequest as error:
        return refusal(400, "bad_request", str(error))
    if not runner.admit():
        return refusal(
            429,
            "too_many_runs",
            f"this server runs at most {runner.bounds.max_runs} runs at once: "
            "try again when one has ended",
        )
    return parsed


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
