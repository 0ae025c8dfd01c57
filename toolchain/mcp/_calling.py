"""One call of a server's tool: sent on the open connection, every failure told to the model.

The chain has already validated the arguments against the server's schema
(``SchemaCodec``) and runs the call under its time limit: when that limit stops it,
the SDK tells the server to cancel. Whatever keeps the call from a result becomes
that call's ``ToolError``, with a message for the model and never the connection's
credentials: an ``isError`` result (the server's message), an error answer, the
connection closing (quoting the end of a stdio server's stderr), a transport
failure, a tool the server no longer offers, a call made on another event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from toolchain._approvals import CallHeld, held_error
from toolchain._context import ExecutionContext
from toolchain._elicitation import ElicitationRequest
from toolchain._errors import ToolError, describe_exception
from toolchain._redact import logger
from toolchain._result import Approval, ToolCallError, ToolResult
from toolchain.mcp._connection import Connection, unavailable
from toolchain.mcp._elicit import Asking, settled
from toolchain.mcp._results import error_message, tool_result
from toolchain.mcp._tool import MCPTool, ToolHost

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CallToolResult, ElicitResult, InputResponses

__all__ = ["call_tool"]

_log = logger("toolchain.mcp")
_T = TypeVar("_T")
_MAX_ROUNDS = 10
"""Rounds of questions one call may ask before it is given up (the SDK's own cap)."""


async def call_tool(
    server: ToolHost,
    connection: Connection | None,
    tool: MCPTool,
    arguments: Mapping[str, object],
    ctx: ExecutionContext | None = None,
) -> ToolResult[object]:
    """Call ``tool`` of ``server`` on ``connection`` with ``arguments`` (already
    validated) in the run of ``ctx``; raises ``ToolError`` with a message for the model
    when the call cannot give a result, and ``CallHeld`` when the server asked a
    question nobody can answer now (``toolchain.mcp._elicit``)."""
    name = server.name
    client = connection.client if connection is not None else None
    if connection is None or client is None:
        raise ToolError(unavailable(connection, name))
    if asyncio.get_running_loop() is not connection.loop:
        raise ToolError(
            f"{tool.name} was called on another event loop than the one its MCP server "
            f"{name!r} was connected on; run the agent there (await agent.run(...))"
        )
    if not server.offers(tool):
        raise ToolError(
            f"{tool.name} is no longer offered by the MCP server {name!r} (its tool "
            "list changed); use one of the tools it offers now"
        )
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    asking = Asking(ctx, tool.name, arguments)
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await _rounds(connection, tool, asking, None, None, 0)
    connection.asking.append(asking)  # its elicitation/create requests come to this call
    work = asyncio.ensure_future(client.call_tool(tool.remote_name, dict(arguments)))
    return await _legacy(connection, tool, asking, work)


async def _answered(connection: Connection, tool: MCPTool, work: Awaitable[_T]) -> _T:
    """What ``work`` (the call, or one round of it) answered; every failure of it as
    the call's ``ToolError``."""
    from mcp import MCPError

    name, redact = connection.name, connection.redact
    try:
        answered = await work
    except MCPError as error:
        raise ToolError(_refused(connection, name, tool, error)) from redact.cause(error)
    except asyncio.CancelledError:
        _log.info("the call of %s on the MCP server %s was stopped", tool.name, name)
        raise
    except Exception as error:  # a transport failure, a malformed or mismatched answer
        message = f"the call of {tool.name} on the MCP server {name!r} failed: "
        message += redact(describe_exception(error)[:1_000]) + connection.tail()
        _log.warning("%s", message)  # no traceback: its messages may hold the URL
        raise ToolError(message) from redact.cause(error)
    connection.lost = ""  # it answered: whatever closed before was one stream's
    return answered


def _result(connection: Connection, asking: Asking, result: CallToolResult) -> ToolResult[object]:
    if asking.failed:  # an answer we could not send: the model is told why, whatever came
        raise ToolError(asking.failed)
    if result.is_error:
        raise ToolError(connection.redact(error_message(result)))
    return tool_result(result)


async def _rounds(
    connection: Connection,
    tool: MCPTool,
    asking: Asking,
    responses: InputResponses | None,
    state: str | None,
    rounds: int,
) -> ToolResult[object]:
    """A call on a 2026-07-28 connection, from a round carrying ``responses`` and
    ``state``: each "input required" answer's questions put to the approver and the
    call retried with the answers, until the result; a question nobody can answer now
    holds the call (`CallHeld`), and deciding it retries from there."""
    import mcp_types

    client = connection.client
    if client is None:
        raise ToolError(unavailable(connection, connection.name))
    while True:
        work = client.session.call_tool(
            tool.remote_name,
            dict(asking.arguments),
            input_responses=responses,
            request_state=state,
            allow_input_required=True,
        )
        answered = await _answered(connection, tool, _unless_stale(work))
        if answered is None:  # the server's listing of the tool changed: the SDK re-lists
            connection.asking.append(asking)  # and resends; its questions come as requests
            again = client.call_tool(
                tool.remote_name,
                dict(asking.arguments),
                input_responses=responses,
                request_state=state,
            )
            return await _legacy(connection, tool, asking, asyncio.ensure_future(again))
        if not isinstance(answered, mcp_types.InputRequiredResult):
            return _result(connection, asking, answered)
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise ToolError(
                f"the MCP server {connection.name!r} asked for input more than {_MAX_ROUNDS} "
                f"times during the call of {tool.name}; it was given up"
            )
        state = answered.request_state
        responses = {}
        held: dict[str, ElicitationRequest] = {}
        for key, question in (answered.input_requests or {}).items():
            params = question.params if isinstance(question, mcp_types.ElicitRequest) else None
            if not isinstance(params, mcp_types.ElicitRequestFormParams):
                raise ToolError(
                    f"the MCP server {connection.name!r} asked for {question.method} during "
                    f"the call of {tool.name}, which this client does not offer"
                )
            request = asking.request(key, params)
            decided = await asking.decide(request)
            if decided is None:
                held[key] = request
                continue
            responses[key] = settled(asking, decided, request)
            if asking.failed:
                raise ToolError(asking.failed)
        if held:
            raise _held_rounds(connection, tool, asking, held, responses, state, rounds)


async def _unless_stale(work: Awaitable[_T]) -> _T | None:
    """What ``work`` answered, or None when the server refused it because this client's
    listing of the tool is stale (``HEADER_MISMATCH``, 2026-07-28)."""
    from mcp import MCPError
    from mcp_types import HEADER_MISMATCH

    try:
        return await work
    except MCPError as error:
        if error.code != HEADER_MISMATCH:
            raise
        return None


def _held_rounds(
    connection: Connection,
    tool: MCPTool,
    asking: Asking,
    held: dict[str, ElicitationRequest],
    responses: InputResponses,
    state: str | None,
    rounds: int,
) -> CallHeld:
    """The call held on ``held`` (the server's key → its question): once they are all
    decided, the call is retried with every answer and the server's ``state``; nothing
    waits meanwhile (the protocol is stateless)."""
    by_id = {request.call_id: key for key, request in held.items()}

    async def settle(
        decisions: Mapping[str, Approval],
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        answers = dict(responses)
        still = dict(held)
        for call_id, decision in decisions.items():
            key = by_id.get(call_id)
            if key is not None:
                answers[key] = settled(asking, decision, held[key])
                del still[key]

        async def go_on() -> ToolResult[object]:
            if asking.failed:
                raise ToolError(asking.failed)
            if still:  # some questions of the round are still undecided
                raise _held_rounds(connection, tool, asking, still, answers, state, rounds)
            return await _rounds(connection, tool, asking, answers, state, rounds)

        return await _outcome(go_on())

    first, *more = held.values()
    return CallHeld(first, settle=settle, more=tuple(more))


async def _legacy(
    connection: Connection, tool: MCPTool, asking: Asking, work: asyncio.Future[CallToolResult]
) -> ToolResult[object]:
    """A call on a pre-2026 connection: its result, or, when the server's question is
    held, the call held on it while the server waits (``toolchain.mcp._elicit``)."""
    question = asyncio.ensure_future(asking.held.get())
    either: set[asyncio.Future[Any]] = {work, question}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the call's time limit, or the run's cancellation
        work.cancel()
        _forget(connection, asking)
        raise
    finally:
        if not question.done():
            question.cancel()
    if not work.done():
        request, answer = question.result()
        raise _held_legacy(connection, tool, asking, work, request, answer)
    _forget(connection, asking)
    return _result(connection, asking, await _answered(connection, tool, work))


def _held_legacy(
    connection: Connection,
    tool: MCPTool,
    asking: Asking,
    work: asyncio.Future[CallToolResult],
    request: ElicitationRequest,
    answer: asyncio.Future[ElicitResult],
) -> CallHeld:
    """The call held on ``request``, which the server waits on (see `HOLD_TIMEOUT`)."""
    # Paused for good (never resumed): its end is nobody's to read, and the server's
    # later questions are not this call's.
    work.add_done_callback(_retrieved)
    work.add_done_callback(lambda _: _forget(connection, asking))

    async def settle(
        decisions: Mapping[str, Approval],
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        decision = decisions[request.call_id]
        if not answer.done():
            answer.set_result(settled(asking, decision, request))
        return await _outcome(_legacy(connection, tool, asking, work))

    return CallHeld(request, settle=settle)


async def _outcome(
    work: Awaitable[ToolResult[object]],
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    """A held call's settle: the call's result once answered, its failure, or held again
    (the server asked another question)."""
    try:
        return await work, None
    except ToolError as error:
        return None, ToolCallError("tool_error", str(error), error)
    except CallHeld as again:
        return None, held_error(again)


def _retrieved(work: asyncio.Future[CallToolResult]) -> None:
    if not work.cancelled():
        work.exception()


def _forget(connection: Connection, asking: Asking) -> None:
    if asking in connection.asking:
        connection.asking.remove(asking)


def _refused(connection: Connection, name: str, tool: MCPTool, error: MCPError) -> str:
    """The message for an error answer, or for a connection that closed."""
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    if error.code == CONNECTION_CLOSED:
        if connection.closing.is_set():
            message = f"the connection to the MCP server {name!r} was closed while {tool.name} ran"
        elif connection.lost:  # an earlier call found it closed: say when
            message = f"the MCP server {name!r} is disconnected: {connection.lost}"
        else:
            connection.lost = f"its connection closed during the call of {tool.name}"
            message = (
                f"the connection to the MCP server {name!r} closed during the call "
                f"of {tool.name} (the server exited or dropped the connection)"
            ) + connection.tail()
            if connection.endpoint.command is not None:  # a closed pipe does not reopen
                connection.end(connection.lost)
        _log.warning("%s", message)
        return message
    if error.code == REQUEST_TIMEOUT:
        return f"the MCP server {name!r} did not answer the call of {tool.name} in time"
    message = (
        f"the MCP server {name!r} answered the call of {tool.name} with an error: "
        f"{connection.redact(error.error.message)} (code {error.code})"
    )
    _log.warning("%s", message)
    return message
