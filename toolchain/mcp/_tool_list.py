"""A server's tool list: listed page by page, kept as ``MCPTool`` s, registered on the
chains it is attached to, and listed again when the server says it changed.

``ToolList`` lives as long as its server: a name keeps its ``MCPTool`` across list
changes and reconnections (chains hold it). ``ListWatch`` lives as long as one
connection: a change the server announces (``notifications/tools/list_changed``, or
a ``subscriptions/listen`` event on 2026-07-28 connections) is listed again soon, once
per burst, and a step waits for it (``settled``) before it offers the tools.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolchain._errors import DuplicateToolError, describe_exception
from toolchain._redact import logger
from toolchain.mcp._failures import Redactor
from toolchain.mcp._names import tool_name
from toolchain.mcp._tool import MCPTool, ToolHost, ToolsChanged

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

    from toolchain.chain._base import ToolChain

__all__ = ["ListWatch", "ToolList"]

_log = logger("toolchain.mcp")

_MAX_PAGES = 1_000
_SETTLE_WAIT = 5.0


class Lister(ToolHost, Protocol):
    """What a tool list reads from its server, as it is at each listing (``MCPServer``)."""

    @property
    def prefix(self) -> str: ...

    @property
    def on_tools_changed(self) -> ToolsChanged | None: ...


class ToolList:
    """The tools a server lists now (``current``), every ``MCPTool`` made for it
    (``known``), and the chains they are registered on."""

    def __init__(self, server: Lister) -> None:
        self.server = server
        self.current: dict[str, MCPTool] = {}
        self.known: dict[str, MCPTool] = {}
        self._chains: list[weakref.ReferenceType[ToolChain]] = []

    def offers(self, tool: MCPTool) -> bool:
        return self.current.get(tool.name) is tool

    def attach(self, chain: ToolChain) -> None:
        """Register the current tools on ``chain``, and later ones as they come."""
        for tool in self.current.values():
            _register(chain, tool)
        if not any(ref() is chain for ref in self._chains):
            self._chains.append(weakref.ref(chain))

    def registered(self) -> set[str]:
        """The current tools that some attached chain holds."""
        found: set[str] = set()
        for ref in self._chains:
            chain = ref()
            if chain is not None:
                found.update(n for n, tool in chain.tools.items() if self.current.get(n) is tool)
        return found

    async def list_all(self, client: Client) -> list[mcp_types.Tool]:
        """Every page of ``tools/list``."""
        definitions: list[mcp_types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            definitions.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                _log.warning(
                    "the MCP server %s repeats the page cursor %r", self.server.name, cursor
                )
                break
            seen.add(cursor)
        return definitions

    def apply(self, definitions: Sequence[mcp_types.Tool], *, initial: bool = False) -> None:
        """Make ``definitions`` the current tools: known names keep their ``MCPTool``
        (chains hold it), new ones are registered on the attached chains."""
        server = self.server
        current: dict[str, MCPTool] = {}
        for definition in definitions:
            name = tool_name(server.prefix + definition.name)
            if name in current:
                _log.warning(
                    "the MCP server %s lists two tools named %r; the second is left out",
                    server.name,
                    name,
                )
                continue
            tool = self.known.get(name)
            if tool is None:
                tool = self.known[name] = MCPTool(server, name, definition)
            elif tool.definition != definition:
                tool._define(definition)  # pyright: ignore[reportPrivateUsage]  # our own class
            current[name] = tool
        changed = list(current) != list(self.current) or any(
            self.current.get(name) is not tool for name, tool in current.items()
        )
        self.current = current
        self._chains = [ref for ref in self._chains if ref() is not None]
        for ref in self._chains:
            chain = ref()
            for tool in current.values():
                if chain is not None:
                    _register(chain, tool)
        if not initial:
            _log.info("the MCP server %s now offers %d tools", server.name, len(current))
            if server.on_tools_changed is not None and changed:
                try:
                    server.on_tools_changed(tuple(current.values()))
                except Exception:
                    _log.exception("on_tools_changed failed for the MCP server %s", server.name)


class ListWatch:
    """One connection's watch on its server's tool list (see the module text)."""

    def __init__(self, tools: ToolList, redact: Redactor, closing: asyncio.Event) -> None:
        self.tools = tools
        self._redact = redact
        self._closing = closing  # close() was called: a stream ending is no news
        self._client: Client | None = None
        self._group: Any = None  # the connection's anyio task group, for refreshes
        self._settled = asyncio.Event()
        self._settled.set()
        self._wanted = self._done = 0
        self._refreshing = False

    async def first(self, client: Client) -> None:
        """List the tools as the connection opens."""
        listed = self._wanted  # changes announced from here on need a new listing
        self.tools.apply(await self.tools.list_all(client), initial=True)
        self._done = listed

    def start(self, client: Client, group: Any) -> None:
        """The connection is open: listen for changes in ``group``, and list again
        what was announced while the tools were first listed."""
        self._group = group
        if self._should_listen(client):
            group.start_soon(self._listen, client)
        self._client = client
        if self._done < self._wanted:  # announced while it was being listed
            self._refreshing = True
            group.start_soon(self._refresh)

    def end(self) -> None:
        """The connection ended: nothing more will be listed, and no step waits."""
        self._client = self._group = None
        self._settled.set()

    def changed(self) -> None:
        """The server said its list changed: list it again, soon, once per burst."""
        self._wanted += 1
        self._settled.clear()
        if not self._refreshing and self._group is not None:
            self._refreshing = True
            self._group.start_soon(self._refresh)

    async def settled(self) -> None:
        """Wait (a little) for a change announced before now to be listed."""
        if self._settled.is_set():
            return
        try:
            await asyncio.wait_for(self._settled.wait(), _SETTLE_WAIT)
        except TimeoutError:
            _log.warning("the MCP server %s is slow to list its changed tools", self._name())

    async def _refresh(self) -> None:
        try:
            while self._done < self._wanted and self._client is not None:
                target = self._wanted
                try:
                    self.tools.apply(await self.tools.list_all(self._client))
                except Exception as error:
                    _log.warning(
                        "listing the tools of the MCP server %s again failed: %s",
                        self._name(),
                        self._redact(describe_exception(error)),
                    )
                self._done = target
        finally:
            self._refreshing = False
            self._settled.set()

    def _should_listen(self, client: Client) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = client.server_capabilities.tools
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        return modern and tools is not None and bool(tools.list_changed)

    async def _listen(self, client: Client) -> None:
        """2026-07-28: list changes come on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                if not subscription.honored.tools_list_changed:
                    return
                async for _event in subscription:
                    self.changed()
        except Exception as error:
            if not self._closing.is_set():
                _log.warning(
                    "the MCP server %s stopped sending tool list changes: %s",
                    self._name(),
                    self._redact(describe_exception(error)),
                )

    def _name(self) -> str:
        return self.tools.server.name


def _register(chain: ToolChain, tool: MCPTool) -> None:
    if chain.tools.get(tool.name) is tool:
        return
    try:
        chain.register_tool(tool)
    except DuplicateToolError:
        _log.warning(
            "the chain already has another tool named %r; the MCP server %s's is left out "
            "(give the server a prefix)",
            tool.name,
            tool.server.name,
        )
