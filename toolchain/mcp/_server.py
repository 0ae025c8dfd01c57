"""``MCPServer``: the tools of one MCP server as ``Tool`` s, and the extension that offers them.

The server object holds what the user configured and what the server said of itself;
it delegates the rest: the connection and its task to ``_connection``, the transports
to ``_transport``, the tool list and its changes to ``_tool_list``, one call to
``_calling``, the tools themselves to ``_tool``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypedDict, TypeVar, cast

from typing_extensions import Unpack

from toolchain._approvals import calls_nest
from toolchain._context import ExecutionContext
from toolchain._errors import (
    ToolchainLookupError,
    ToolchainStateError,
    ToolchainValueError,
    ToolError,
)
from toolchain._extension import Extension, StepView
from toolchain._redact import credential_values
from toolchain._result import ToolResult
from toolchain.mcp._calling import call_tool
from toolchain.mcp._connection import Connection, unavailable
from toolchain.mcp._failures import Redactor
from toolchain.mcp._names import label, section_name
from toolchain.mcp._tool import MCPTool, ToolsChanged
from toolchain.mcp._tool_list import ToolList
from toolchain.mcp._transport import Endpoint, load_sdk

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

    from toolchain.chain._base import ToolChain

__all__ = ["MCPServer", "ServerOptions"]

ChainT = TypeVar("ChainT", bound="ToolChain")


class ServerOptions(TypedDict, total=False):
    """The options ``MCPServer.stdio`` and ``MCPServer.http`` share (see ``MCPServer``)."""

    name: str | None
    prefix: str
    timeout: float | None
    connect_timeout: float
    mode: str
    show_instructions: bool
    on_tools_changed: ToolsChanged | None


class MCPServer(Extension):
    """The tools of one MCP server as ``Tool`` s, over stdio or streamable HTTP.

    Build one with ``MCPServer.stdio(command, args)`` or ``MCPServer.http(url)`` and
    open it with ``async with`` (or ``await connect()`` … ``await close()``): it starts
    the process or connects, completes the handshake and lists every page of tools.
    ``tools()`` are the tools listed; when the server says its list changed
    (``notifications/tools/list_changed``, or a ``subscriptions/listen`` event on
    2026-07-28 connections) the list is fetched again.

    For an agent run, ``attach`` a chain: its tools are registered there, tools the
    server adds later are registered too, and as an extension of that chain the server
    shows each step the tools it offers now (and its instructions in the system
    prompt). Options, all keyword-only:

    - ``name``: how messages, logs and the prompt name the server (default: the name
      it gives in the handshake).
    - ``prefix``: put before every tool name (``github_``), for several servers in one chain.
    - ``timeout``: seconds per call (None: the chain's own limit applies).
    - ``connect_timeout``: seconds to start, handshake and list the tools.
    - ``mode``: the SDK's protocol negotiation: ``"auto"`` (2026-07-28 where the server
      speaks it, else the handshake), ``"legacy"`` (the handshake), or a version.
    - ``show_instructions``: show the server's instructions in the system prompt.
    - ``on_tools_changed``: called with the new tools whenever the list changed.

    stdio: ``env`` is added to a minimal inherited environment (``PATH``, ``HOME`` …, as
    the SDK does); the server's stderr is kept in a temporary file (its end is quoted
    when the connection fails) unless ``stderr`` names a file to write it to. HTTP:
    ``headers`` go with every request, or pass your own ``httpx2.AsyncClient``.

    >>> server = MCPServer.stdio("python", ["weather_server.py"], prefix="wx_", timeout=20)
    >>> server.name, server.connected, server.tools()
    ('python', False, ())
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: TextIO | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: Any = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float | None = None,
        connect_timeout: float = 30.0,
        mode: str = "auto",
        show_instructions: bool = True,
        on_tools_changed: ToolsChanged | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ToolchainValueError("give an MCP server either a command (stdio) or a url (HTTP)")
        if timeout is not None and timeout <= 0:
            raise ToolchainValueError(
                f"timeout must be a positive number of seconds or None, not {timeout}"
            )
        self.command, self.args = command, tuple(args)
        self.env, self.cwd, self._stderr = dict(env) if env is not None else None, cwd, stderr
        self.url, self.headers, self._http_client = url, dict(headers or {}), http_client
        # What this connection sends that must never be shown: blanked in every message.
        self._redact = Redactor(credential_values(url, self.headers, self.env, self.args))
        self._given_name = name
        self.name = section_name(name) if name else label(command or url or "")
        self.prefix = prefix
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.mode = mode
        self.show_instructions = show_instructions
        self.on_tools_changed = on_tools_changed
        self._tools = ToolList(self)
        self._connection: Connection | None = None  # the last one made, open or not
        # Its tools' calls may be held on the server's questions (elicitation): chains
        # now tell their calls' tools which call they run in (approver, clock).
        calls_nest()
        self._instructions = ""
        self._server_info: mcp_types.Implementation | None = None
        self._protocol = ""

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: TextIO | None = None,
        **options: Unpack[ServerOptions],
    ) -> MCPServer:
        """A server run as ``command args`` and spoken to over its stdin and stdout."""
        return cls(command=command, args=args, env=env, cwd=cwd, stderr=stderr, **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: Any = None,
        **options: Unpack[ServerOptions],
    ) -> MCPServer:
        """A server at ``url`` (``http://host:port/mcp``), over streamable HTTP."""
        return cls(url=url, headers=headers, http_client=http_client, **options)

    # -- what it offers --------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether the connection is open (a server that died may still count until a
        call finds out)."""
        return self._connection is not None and self._connection.client is not None

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        """The name and version the server gave, once connected."""
        return self._server_info

    @property
    def protocol_version(self) -> str:
        """The protocol version agreed on (``""`` before connecting)."""
        return self._protocol

    def tools(self) -> tuple[MCPTool, ...]:
        """The server's tools, as last listed (empty before connecting)."""
        return tuple(self._tools.current.values())

    def tool(self, name: str) -> MCPTool:
        """The tool called ``name`` (this library's name, with the prefix)."""
        try:
            return self._tools.current[name]
        except KeyError:
            known = ", ".join(self._tools.current) or "none"
            message = f"the MCP server {self.name!r} has no tool {name!r} (tools: {known})"
            raise ToolchainLookupError(message) from None

    def offers(self, tool: MCPTool) -> bool:
        """Whether ``tool`` is one of the tools the server lists now."""
        return self._tools.offers(tool)

    def attach(self, chain: ChainT) -> ChainT:
        """Register the server's tools on ``chain`` and keep them there as the list
        changes; the server becomes one of the chain's extensions (so an agent built on
        the chain shows each step the tools offered then). Returns ``chain``."""
        self._tools.attach(chain)
        extensions: object = getattr(chain, "extensions", None)
        if isinstance(extensions, tuple):
            installed = cast("tuple[object, ...]", extensions)
            if not any(extension is self for extension in installed):
                setattr(chain, "extensions", (*installed, self))  # noqa: B010  (not in the protocol)
        return chain

    # -- Extension -------------------------------------------------------------------

    def instructions(self) -> str:
        return self._instructions if self.show_instructions else ""

    async def before_step(self, ctx: ExecutionContext, request: StepView) -> StepView | None:
        """The step offers the tools the server lists now: tools it removed are taken
        out, tools it added (registered on an attached chain) are appended. A list
        change announced before the step is waited for.
        """
        if self._connection is not None:
            await self._connection.watch.settled()
        known, current = self._tools.known, self._tools.current
        offered = request.tools
        kept = tuple(name for name in offered if name not in known or name in current)
        missing = [name for name in current if name not in offered]
        registered: set[str] = self._tools.registered() if missing else set()
        added = tuple(name for name in missing if name in registered)
        described = request.described
        if described is not None:
            described = tuple(n for n in described if n not in known or n in current)
        if kept == offered and not added and described == request.described:
            return None
        return request.replace(tools=kept + added, described=described)

    # -- connecting ------------------------------------------------------------------

    async def __aenter__(self) -> MCPServer:
        return await self.connect()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def connect(self) -> MCPServer:
        """Start or reach the server, handshake and list its tools.

        Raises ``MCPConnectionError`` when that fails, with the reason (and the end of
        a stdio server's stderr). A server whose connection ended (a stdio server that
        died) can be connected again; its ``MCPTool`` s stay the same objects.
        """
        previous = self._connection
        if previous is not None and previous.runner is not None:
            if previous.alive:
                raise ToolchainStateError(f"the MCP server {self.name!r} is already connected")
            await self.close()  # the connection ended by itself: start afresh
        # The SDK takes most of a second to import: in a worker thread, the loop runs on.
        await asyncio.to_thread(load_sdk)
        if previous is not None:
            previous.release()
        endpoint = Endpoint(
            command=self.command,
            args=self.args,
            env=self.env,
            cwd=self.cwd,
            stderr=self._stderr,
            url=self.url,
            headers=self.headers,
            http_client=self._http_client,
        )
        connection = self._connection = Connection(
            endpoint,
            self._tools,
            self._redact,
            name=lambda: self.name,
            greeted=self._greeted,
            mode=self.mode,
            connect_timeout=self.connect_timeout,
        )
        try:
            await connection.open()
        except BaseException:
            await self.close()
            raise
        return self

    def _greeted(self, client: Client) -> None:
        """The handshake is done: keep what the server said of itself."""
        self._server_info = client.server_info
        self._protocol = client.protocol_version
        self._instructions = (client.instructions or "").strip()
        if self._given_name is None and client.server_info is not None:
            self.name = section_name(client.server_info.name)

    async def close(self) -> None:
        """Close the session and stop a stdio server's process (idempotent)."""
        if self._connection is not None:
            await self._connection.close()

    # -- the tool list and calls -----------------------------------------------------

    async def refresh_tools(self) -> tuple[MCPTool, ...]:
        """List the server's tools again now (list changes do this by themselves)."""
        connection = self._connection
        client = connection.client if connection is not None else None
        if client is None:
            raise ToolError(unavailable(connection, self.name))
        self._tools.apply(await self._tools.list_all(client))
        return self.tools()

    async def call(
        self,
        tool: MCPTool,
        arguments: Mapping[str, object],
        ctx: ExecutionContext | None = None,
    ) -> ToolResult[object]:
        """Call ``tool`` with ``arguments`` (already validated) in the run of ``ctx``
        (whose approver answers the server's questions); raises ``ToolError`` with a
        message for the model when the call cannot give a result."""
        return await call_tool(self, self._connection, tool, arguments, ctx)

    def __repr__(self) -> str:
        where = self._redact(self.url) if self.url is not None else self.command
        state = "connected" if self.connected else "not connected"
        return f"<MCPServer {self.name!r} {where} ({state}, {len(self._tools.current)} tools)>"
