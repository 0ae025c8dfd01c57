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
from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolchain._errors import ToolError, describe_exception
from toolchain._redact import logger
from toolchain._result import ToolResult
from toolchain.mcp._connection import Connection, unavailable
from toolchain.mcp._results import error_message, tool_result
from toolchain.mcp._tool import MCPTool, ToolHost

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

__all__ = ["call_tool"]

_log = logger("toolchain.mcp")


async def call_tool(
    server: ToolHost,
    connection: Connection | None,
    tool: MCPTool,
    arguments: Mapping[str, object],
) -> ToolResult[object]:
    """Call ``tool`` of ``server`` on ``connection`` with ``arguments`` (already
    validated); raises ``ToolError`` with a message for the model when the call cannot
    give a result."""
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
    from mcp import MCPError

    redact = connection.redact
    try:
        result = await client.call_tool(tool.remote_name, dict(arguments))
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
    if result.is_error:
        raise ToolError(redact(error_message(result)))
    return tool_result(result)


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
