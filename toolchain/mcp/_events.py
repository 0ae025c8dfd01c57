"""What MCP tools tell observers (``ctx.events``): each call sent to a server, and how it went."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolchain._context import ExecutionContext

__all__ = ["MCPToolCalled"]


@dataclass(frozen=True, slots=True)
class MCPToolCalled:
    """A call of an MCP server's tool ended: sent to the server (``tools/call``) and
    answered, or failed with ``error`` (the ``ToolError`` it raised, or the
    ``CancelledError`` that stopped it).

    ``tool`` is the tool's name in the chain, ``remote_name`` the server's own for it.
    ``started`` is the wall clock (``time.time_ns``) when the call began, ``duration``
    its seconds. ``transport`` is ``stdio`` or ``http``; ``address`` and ``port`` are
    an HTTP server's host and port (never the URL's credentials), ``None`` for stdio.
    Emitted only while something listens.
    """

    ctx: ExecutionContext
    server: str
    tool: str
    remote_name: str
    transport: Literal["stdio", "http"]
    address: str | None
    port: int | None
    protocol_version: str
    started: int
    duration: float
    error: BaseException | None = None
