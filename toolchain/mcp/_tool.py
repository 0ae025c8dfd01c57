"""``MCPTool``: one tool of an MCP server, as a ``Tool`` any chain can register.

A tool asks the server that lists it (``ToolHost``: an ``MCPServer``) whether it is
still offered and to make its calls; it holds the server's definition and validates
arguments against the server's schema (``SchemaCodec``) before a call is sent.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from toolchain._context import ExecutionContext
from toolchain._result import ToolResult
from toolchain._tool import Tool
from toolchain.mcp._events import MCPToolCalled
from toolchain.mcp._schema import SchemaCodec

if TYPE_CHECKING:
    import mcp_types

    from toolchain._events import EventBus

__all__ = ["MCPTool", "ToolHost", "ToolsChanged"]

ToolsChanged = Callable[[tuple["MCPTool", ...]], None]
"""Called with a server's tools each time its list changed (``on_tools_changed``)."""


class ToolHost(Protocol):
    """What an ``MCPTool`` asks of the server that lists it (an ``MCPServer``)."""

    @property
    def name(self) -> str: ...

    @property
    def timeout(self) -> float | None: ...

    @property
    def url(self) -> str | None:
        """Where an HTTP server is (None: a stdio one)."""
        ...

    @property
    def protocol_version(self) -> str: ...

    def offers(self, tool: MCPTool) -> bool: ...

    async def call(
        self,
        tool: MCPTool,
        arguments: Mapping[str, object],
        ctx: ExecutionContext | None = None,
    ) -> ToolResult[object]: ...


class MCPTool(Tool[Any, object]):
    """One tool of an MCP server, callable through any chain (built by ``MCPServer``).

    - ``name``: the server's name for it, with the server's ``prefix``; characters a
      tool name cannot hold become ``_`` (``remote_name`` keeps the server's).
    - ``description``: the server's (or its title when it gave none).
    - ``input_schema()`` and ``prompt_schema()``: the server's JSON Schema as given;
      arguments are validated against it before they are sent.
    - ``definition``: the server's whole ``mcp_types.Tool`` (annotations, output schema …).
    - ``timeout``: the server's ``timeout`` (None: the chain's).

    A call returns the result as ``toolchain.mcp`` maps it (see the package text) and
    raises ``ToolError`` for anything that keeps it from one: an ``isError`` result
    (the server's message), the connection closing, a transport failure, a server
    that no longer offers the tool.
    """

    def __init__(self, server: ToolHost, name: str, definition: mcp_types.Tool) -> None:
        self.name = name
        self.server = server
        self.definition = definition
        self.remote_name = definition.name
        self.description = ""
        self.timeout = server.timeout
        self._define(definition)

    def _define(self, definition: mcp_types.Tool) -> None:
        """Take up ``definition``: the server listed this tool again, changed."""
        self.definition = definition
        title = definition.annotations.title if definition.annotations else None
        self.description = (
            (definition.description or "").strip()
            or (definition.title or title or "").strip()
            or f"The tool {definition.name} of the MCP server {self.server.name}."
        )
        vars(self)["_codec"] = SchemaCodec(definition.input_schema, self.name)  # read by .codec

    def prompt_schema(self) -> dict[str, object]:
        """The server's input schema, unchanged."""
        return self.input_schema()

    @property
    def offered(self) -> bool:
        """Whether the server lists this tool now (a list change may have removed it)."""
        return self.server.offers(self)

    async def call(self, ctx: ExecutionContext, input: dict[str, object]) -> ToolResult[object]:
        events: EventBus | None = getattr(ctx, "events", None)  # a direct call may pass None
        if events is None or not events.has_subscribers(MCPToolCalled):
            return await self.server.call(self, input, ctx)
        started, clock = time.time_ns(), time.perf_counter()
        error: BaseException | None = None
        try:
            return await self.server.call(self, input, ctx)
        except BaseException as raised:
            error = raised
            raise
        finally:
            events.emit(self._called(ctx, started, time.perf_counter() - clock, error))

    def _called(
        self, ctx: ExecutionContext, started: int, duration: float, error: BaseException | None
    ) -> MCPToolCalled:
        server = self.server
        address: str | None = None
        port: int | None = None
        if server.url is not None:  # it connected, so the URL parses
            where = urlsplit(server.url)
            address = where.hostname
            with contextlib.suppress(ValueError):
                port = where.port
        return MCPToolCalled(
            ctx,
            server.name,
            self.name,
            self.remote_name,
            "stdio" if server.url is None else "http",
            address,
            port,
            server.protocol_version,
            started,
            duration,
            error,
        )
