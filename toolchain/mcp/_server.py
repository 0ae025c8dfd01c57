"""``MCPServer``: one connection to an MCP server; ``MCPTool``: one of its tools as a ``Tool``.

The connection lives in a task of its own, started by ``connect`` (``async with``) and
ended by ``close``: the SDK's transports run task groups that a failing transport
(a refused HTTP request, a dead process) tears down, and inside that task such a
failure ends the connection, never the caller's task. Calls made while it is open
are sent from the caller's task; whatever ends them (an error answer, the connection
closing, the chain's time limit) is that call's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import logging
import math
import os
import re
import tempfile
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypedDict, TypeVar, cast

from typing_extensions import Unpack

from toolchain._context import ExecutionContext
from toolchain._errors import DuplicateToolError, ToolError, describe_exception
from toolchain._extension import Extension
from toolchain._redact import credential_values, redact
from toolchain._result import ToolResult
from toolchain._tool import Tool
from toolchain.mcp._results import error_message, tool_result
from toolchain.mcp._schema import SchemaCodec

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client
    from mcp.client.session import IncomingMessage
    from mcp.shared.exceptions import MCPError

    from toolchain._chain import ToolChain

__all__ = ["MCPConnectionError", "MCPServer", "MCPTool", "ServerOptions"]

_log = logging.getLogger("toolchain.mcp")

ChainT = TypeVar("ChainT", bound="ToolChain")
ToolsChanged = Callable[[tuple["MCPTool", ...]], None]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")
_MAX_PAGES = 1_000
_SETTLE_WAIT = 5.0
_STDERR_TAIL = 2_000
_EXTRA = "the MCP SDK is not installed: install gent-py's [mcp] extra, or pip install 'mcp>=2.3,<3'"
_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
}


class MCPConnectionError(ConnectionError):
    """The server could not be reached: its process did not start or answer, the URL
    refused the connection, or the handshake or the first tool listing failed.

    >>> str(MCPConnectionError("could not connect to the MCP server 'x'"))
    "could not connect to the MCP server 'x'"
    """


class ServerOptions(TypedDict, total=False):
    """The options ``MCPServer.stdio`` and ``MCPServer.http`` share (see ``MCPServer``)."""

    name: str | None
    prefix: str
    timeout: float | None
    connect_timeout: float
    mode: str
    show_instructions: bool
    on_tools_changed: ToolsChanged | None


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

    def __init__(self, server: MCPServer, name: str, definition: mcp_types.Tool) -> None:
        self.name = name
        self.server = server
        self.definition = definition
        self.remote_name = definition.name
        self.description = ""
        self.timeout = server.timeout
        self._define(definition)

    def _define(self, definition: mcp_types.Tool) -> None:
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
        return await self.server.call(self, input)


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
            raise ValueError("give an MCP server either a command (stdio) or a url (HTTP)")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout}")
        self.command, self.args = command, tuple(args)
        self.env, self.cwd, self._stderr = dict(env) if env is not None else None, cwd, stderr
        self.url, self.headers, self._http_client = url, dict(headers or {}), http_client
        # What this connection sends that must never be shown: blanked in every message.
        self._secrets = credential_values(url, self.headers, self.env, self.args)
        self._given_name = name
        self.name = _section_name(name) if name else _label(command or url or "")
        self.prefix = prefix
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.mode = mode
        self.show_instructions = show_instructions
        self.on_tools_changed = on_tools_changed
        self._tools: dict[str, MCPTool] = {}
        self._known: dict[str, MCPTool] = {}
        self._chains: list[weakref.ReferenceType[ToolChain]] = []
        self._instructions = ""
        self._server_info: mcp_types.Implementation | None = None
        self._protocol = ""
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self._scope: Any = None  # the runner's anyio.CancelScope
        self._group: Any = None  # the runner's anyio task group, for refreshes
        self._closing = asyncio.Event()  # close() was called
        self._stop = asyncio.Event()  # the runner closes the connection: asked, or it is dead
        self._settled = asyncio.Event()
        self._settled.set()
        self._wanted = self._done = 0
        self._refreshing = False
        self._errlog: TextIO | None = None
        self._ended = ""  # why the connection ended, when it ended by itself
        self._lost = ""  # the call during which the connection was found closed

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
        return self._client is not None

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
        return tuple(self._tools.values())

    def tool(self, name: str) -> MCPTool:
        """The tool called ``name`` (this library's name, with the prefix)."""
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(self._tools) or "none"
            message = f"the MCP server {self.name!r} has no tool {name!r} (tools: {known})"
            raise KeyError(message) from None

    def offers(self, tool: MCPTool) -> bool:
        """Whether ``tool`` is one of the tools the server lists now."""
        return self._tools.get(tool.name) is tool

    def attach(self, chain: ChainT) -> ChainT:
        """Register the server's tools on ``chain`` and keep them there as the list
        changes; the server becomes one of the chain's extensions (so an agent built on
        the chain shows each step the tools offered then). Returns ``chain``."""
        for tool in self._tools.values():
            _register(chain, tool)
        if not any(ref() is chain for ref in self._chains):
            self._chains.append(weakref.ref(chain))
        extensions: object = getattr(chain, "extensions", None)
        if isinstance(extensions, tuple):
            installed = cast("tuple[object, ...]", extensions)
            if not any(extension is self for extension in installed):
                setattr(chain, "extensions", (*installed, self))  # noqa: B010  (not in the protocol)
        return chain

    # -- Extension -------------------------------------------------------------------

    def instructions(self) -> str:
        return self._instructions if self.show_instructions else ""

    async def before_step(self, ctx: ExecutionContext, request: Any) -> Any:
        """The step offers the tools the server lists now: tools it removed are taken
        out, tools it added (registered on an attached chain) are appended.

        ``request`` is an ``agents.steps.StepRequest`` (typed loosely: toolchain does
        not import agents). A list change announced before the step is waited for.
        """
        await self._wait_settled()
        offered: tuple[str, ...] = request.tools
        kept = tuple(name for name in offered if name not in self._known or name in self._tools)
        missing = [name for name in self._tools if name not in offered]
        registered: set[str] = self._registered() if missing else set()
        added = tuple(name for name in missing if name in registered)
        described: tuple[str, ...] | None = request.described
        if described is not None:
            described = tuple(n for n in described if n not in self._known or n in self._tools)
        if kept == offered and not added and described == request.described:
            return None
        return dataclasses.replace(request, tools=kept + added, described=described)

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
        if self._runner is not None:
            if not (self._runner.done() or self._stop.is_set()):
                raise RuntimeError(f"the MCP server {self.name!r} is already connected")
            await self.close()  # the connection ended by itself: start afresh
        # The SDK takes most of a second to import: in a worker thread, the loop runs on.
        await asyncio.to_thread(_load_sdk)
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._closing = asyncio.Event()
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._settled.set()
        self._ended = self._lost = ""
        self._wanted = self._done = 0
        self._refreshing = False
        if self.command is not None and self._stderr is None:
            if self._errlog is not None:
                self._errlog.close()
            # Closed by close(), once the process is gone.
            self._errlog = tempfile.TemporaryFile(  # noqa: SIM115
                mode="w+", encoding="utf-8", errors="replace"
            )
        ready: asyncio.Future[None] = loop.create_future()
        self._runner = loop.create_task(self._run(ready), name=f"mcp server {self.name}")
        try:
            await asyncio.shield(ready)
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Close the session and stop a stdio server's process (idempotent)."""
        runner = self._runner
        if runner is None:
            return
        self._closing.set()
        self._stop.set()
        if self._client is None and self._scope is not None:
            self._scope.cancel()  # still connecting: stop the handshake
        try:
            await asyncio.wait({runner})
        except asyncio.CancelledError:
            await asyncio.wait({runner}, timeout=30)  # finish closing, then stop
            raise
        finally:
            if runner.done() and not runner.cancelled():
                runner.exception()  # retrieved: the runner logged what it had to
            self._runner = None
            if runner.done() and self._errlog is not None:
                self._errlog.close()
                self._errlog = None

    async def _run(self, ready: asyncio.Future[None]) -> None:
        """The connection's life: open it, list the tools, wait for ``close``, close it."""
        import anyio

        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                scope.deadline = anyio.current_time() + self.connect_timeout
                async with contextlib.AsyncExitStack() as stack:
                    client = await self._open(stack)
                    listed = self._wanted  # changes announced from here on need a new listing
                    self._apply(await self._list_all(client), initial=True)
                    self._done = listed
                    scope.deadline = math.inf
                    async with anyio.create_task_group() as group:
                        self._group = group
                        if self._should_listen(client):
                            group.start_soon(self._listen, client)
                        self._client = client
                        if self._done < self._wanted:  # announced while it was being listed
                            self._refreshing = True
                            group.start_soon(self._refresh)
                        ready.set_result(None)
                        await self._stop.wait()
                        self._client = None
                        group.cancel_scope.cancel()
            if not ready.done():
                why = f"it did not answer within {self.connect_timeout:g} s"
                if self._closing.is_set():
                    why = "the connection was closed while it was being made"
                ready.set_exception(MCPConnectionError(self._cannot_connect(why)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:
            if not ready.done():
                failure = MCPConnectionError(self._cannot_connect(_reason(error)))
                failure.__cause__ = self._cause(error)
                ready.set_exception(failure)
            elif not self._closing.is_set():
                self._ended = self._lost or self._redact(_reason(error))
                _log.warning(
                    "the connection to the MCP server %s ended: %s", self.name, self._ended
                )
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self._client = self._group = self._scope = None
            self._settled.set()

    async def _open(self, stack: contextlib.AsyncExitStack) -> Client:
        from mcp import Client, StdioServerParameters

        from toolchain.mcp._listing import ListingGuard

        target: Any
        if self.command is not None:
            cwd = None if self.cwd is None else os.fspath(self.cwd)
            params = StdioServerParameters(
                command=self.command, args=list(self.args), env=self.env, cwd=cwd
            )
            errlog = self._stderr or self._errlog
            from mcp.client.stdio import stdio_client

            target = (
                stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
            )
        else:
            assert self.url is not None
            from mcp.client.streamable_http import streamable_http_client

            http = self._http_client
            if http is None:
                import httpx2

                timeout = httpx2.Timeout(30.0, read=300.0)
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=self.headers, timeout=timeout)
                )
            target = streamable_http_client(self.url, http_client=http)
        listing = ListingGuard(lambda: self.name)  # a malformed tool costs itself, not all
        client = Client(
            listing.guard(target),
            mode=self.mode,
            cache=None,
            message_handler=self._on_message,
            logging_callback=self._on_log,
        )
        client = await stack.enter_async_context(client)
        listing.version = client.protocol_version
        self._server_info = client.server_info
        self._protocol = client.protocol_version
        self._instructions = (client.instructions or "").strip()
        if self._given_name is None and client.server_info is not None:
            self.name = _section_name(client.server_info.name)
        return client

    def _cannot_connect(self, why: str) -> str:
        where = (
            f"started as {' '.join([self.command, *self.args])!r}"
            if self.command is not None
            else f"at {self.url}"
        )
        message = f"could not connect to the MCP server {self.name!r} ({where}): {why}"
        return self._redact(message) + self._tail()

    def _redact(self, text: str) -> str:
        """``text`` without this connection's credentials, or any of a known shape."""
        return redact(text, self._secrets)

    def _cause(self, error: BaseException) -> BaseException | None:
        """``error``, to chain to ours, unless its traceback (its own causes and, for a
        task group's, its members) would show a credential."""
        if not isinstance(error, Exception):
            return None
        shown = "".join(traceback.format_exception(error))
        return error if self._redact(shown) == shown else None

    # -- the tool list ---------------------------------------------------------------

    async def _list_all(self, client: Client) -> list[mcp_types.Tool]:
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
                _log.warning("the MCP server %s repeats the page cursor %r", self.name, cursor)
                break
            seen.add(cursor)
        return definitions

    def _apply(self, definitions: Sequence[mcp_types.Tool], *, initial: bool = False) -> None:
        """Make ``definitions`` the current tools: known names keep their ``MCPTool``
        (chains hold it), new ones are registered on the attached chains."""
        current: dict[str, MCPTool] = {}
        for definition in definitions:
            name = _tool_name(self.prefix + definition.name)
            if name in current:
                _log.warning(
                    "the MCP server %s lists two tools named %r; the second is left out",
                    self.name,
                    name,
                )
                continue
            tool = self._known.get(name)
            if tool is None:
                tool = self._known[name] = MCPTool(self, name, definition)
            elif tool.definition != definition:
                tool._define(definition)  # pyright: ignore[reportPrivateUsage]  # our own class
            current[name] = tool
        changed = list(current) != list(self._tools) or any(
            self._tools.get(name) is not tool for name, tool in current.items()
        )
        self._tools = current
        self._chains = [ref for ref in self._chains if ref() is not None]
        for ref in self._chains:
            chain = ref()
            for tool in current.values():
                if chain is not None:
                    _register(chain, tool)
        if not initial:
            _log.info("the MCP server %s now offers %d tools", self.name, len(current))
            if self.on_tools_changed is not None and changed:
                try:
                    self.on_tools_changed(self.tools())
                except Exception:
                    _log.exception("on_tools_changed failed for the MCP server %s", self.name)

    async def refresh_tools(self) -> tuple[MCPTool, ...]:
        """List the server's tools again now (list changes do this by themselves)."""
        client = self._client
        if client is None:
            raise ToolError(self._unavailable())
        self._apply(await self._list_all(client))
        return self.tools()

    def _tools_changed(self) -> None:
        """The server said its list changed: list it again, soon, once per burst."""
        self._wanted += 1
        self._settled.clear()
        if not self._refreshing and self._group is not None:
            self._refreshing = True
            self._group.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            while self._done < self._wanted and self._client is not None:
                target = self._wanted
                try:
                    self._apply(await self._list_all(self._client))
                except Exception as error:
                    _log.warning(
                        "listing the tools of the MCP server %s again failed: %s",
                        self.name,
                        self._redact(describe_exception(error)),
                    )
                self._done = target
        finally:
            self._refreshing = False
            self._settled.set()

    async def _wait_settled(self) -> None:
        if self._settled.is_set():
            return
        try:
            await asyncio.wait_for(self._settled.wait(), _SETTLE_WAIT)
        except TimeoutError:
            _log.warning("the MCP server %s is slow to list its changed tools", self.name)

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
                    self._tools_changed()
        except Exception as error:
            if not self._closing.is_set():
                _log.warning(
                    "the MCP server %s stopped sending tool list changes: %s",
                    self.name,
                    self._redact(describe_exception(error)),
                )

    async def _on_message(self, message: IncomingMessage) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, Exception):
            _log.warning(
                "the MCP server %s: transport error: %s",
                self.name,
                self._redact(describe_exception(message)),
            )

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        level = _LOG_LEVELS.get(params.level, logging.ERROR)
        said = self._redact(str(params.data)[:_STDERR_TAIL])
        _log.log(level, "the MCP server %s says: %s", self.name, said)

    def _registered(self) -> set[str]:
        """The current tools that some attached chain holds."""
        found: set[str] = set()
        for ref in self._chains:
            chain = ref()
            if chain is not None:
                found.update(n for n, tool in chain.tools.items() if self._tools.get(n) is tool)
        return found

    # -- calling ---------------------------------------------------------------------

    async def call(self, tool: MCPTool, arguments: Mapping[str, object]) -> ToolResult[object]:
        """Call ``tool`` with ``arguments`` (already validated); raises ``ToolError``
        with a message for the model when the call cannot give a result."""
        client = self._client
        if client is None:
            raise ToolError(self._unavailable())
        if asyncio.get_running_loop() is not self._loop:
            raise ToolError(
                f"{tool.name} was called on another event loop than the one its MCP server "
                f"{self.name!r} was connected on; run the agent there (await agent.run(...))"
            )
        if not self.offers(tool):
            raise ToolError(
                f"{tool.name} is no longer offered by the MCP server {self.name!r} (its tool "
                "list changed); use one of the tools it offers now"
            )
        from mcp import MCPError

        try:
            result = await client.call_tool(tool.remote_name, dict(arguments))
        except MCPError as error:
            raise ToolError(self._refused(tool, error)) from self._cause(error)
        except asyncio.CancelledError:
            _log.info("the call of %s on the MCP server %s was stopped", tool.name, self.name)
            raise
        except Exception as error:  # a transport failure, a malformed or mismatched answer
            message = f"the call of {tool.name} on the MCP server {self.name!r} failed: "
            message += self._redact(describe_exception(error)[:1_000]) + self._tail()
            _log.warning("%s", message)  # no traceback: its messages may hold the URL
            raise ToolError(message) from self._cause(error)
        self._lost = ""  # it answered: whatever closed before was one stream's
        if result.is_error:
            raise ToolError(self._redact(error_message(result)))
        return tool_result(result)

    def _refused(self, tool: MCPTool, error: MCPError) -> str:
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if error.code == CONNECTION_CLOSED:
            if self._closing.is_set():
                message = (
                    f"the connection to the MCP server {self.name!r} was closed while "
                    f"{tool.name} ran"
                )
            elif self._lost:  # an earlier call found it closed: say when
                message = f"the MCP server {self.name!r} is disconnected: {self._lost}"
            else:
                self._lost = f"its connection closed during the call of {tool.name}"
                message = (
                    f"the connection to the MCP server {self.name!r} closed during the call "
                    f"of {tool.name} (the server exited or dropped the connection)"
                ) + self._tail()
                if self.command is not None:  # a closed pipe does not reopen: end the session
                    self._ended = self._lost
                    self._stop.set()
            _log.warning("%s", message)
            return message
        if error.code == REQUEST_TIMEOUT:
            return f"the MCP server {self.name!r} did not answer the call of {tool.name} in time"
        message = (
            f"the MCP server {self.name!r} answered the call of {tool.name} with an error: "
            f"{self._redact(error.error.message)} (code {error.code})"
        )
        _log.warning("%s", message)
        return message

    def _unavailable(self) -> str:
        if self._ended:
            return f"the MCP server {self.name!r} is disconnected: {self._ended}{self._tail()}"
        return f"the MCP server {self.name!r} is not connected"

    def _tail(self) -> str:
        """The end of a stdio server's stderr, when it wrote any: why it died, often."""
        errlog = self._errlog
        if errlog is None or errlog.closed:
            return ""
        try:
            size = os.fstat(errlog.fileno()).st_size
            start = max(0, size - _STDERR_TAIL)
            data = os.pread(errlog.fileno(), size - start, start)
        except OSError:
            return ""
        lines = data.decode("utf-8", errors="replace").strip().splitlines()[-8:]
        if not lines:
            return ""
        tail = " | ".join(line.strip() for line in lines)
        return "; its stderr ends with: " + self._redact(tail)  # a server may print its env

    def __repr__(self) -> str:
        where = self._redact(self.url) if self.url is not None else self.command
        state = "connected" if self.connected else "not connected"
        return f"<MCPServer {self.name!r} {where} ({state}, {len(self._tools)} tools)>"


def _load_sdk() -> None:
    """Import what a connection uses, or say which extra brings it."""
    try:
        for module in ("jsonschema", "mcp.client.stdio", "mcp.client.streamable_http"):
            importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"{_EXTRA} ({error})") from error


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


def _tool_name(name: str) -> str:
    """``name`` as a tool name: characters it cannot hold become ``_``.

    >>> _tool_name("get-tiny-image"), _tool_name("files/read"), _tool_name("3d_render")
    ('get-tiny-image', 'files_read', '_3d_render')
    """
    name = _UNSAFE.sub("_", name)
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "_" + name
    return name


def _section_name(name: str) -> str:
    """A server's name as an extension's: a valid section name.

    >>> _section_name("mcp-servers/everything"), _section_name("127.0.0.1")
    ('mcp-servers_everything', 'mcp_127.0.0.1')
    """
    name = _UNSAFE.sub("_", name.strip())
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "mcp_" + name
    return name.rstrip("_") or "mcp"


def _label(target: str) -> str:
    """A name for a server before it gives its own: the command's or host's.

    >>> _label("/usr/bin/node"), _label("http://127.0.0.1:8000/mcp")
    ('node', 'mcp_127.0.0.1')
    """
    if "://" in target:
        host = target.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        return _section_name(host.rsplit(":", 1)[0] if host.count(":") == 1 else host)
    return _section_name(os.path.basename(target.rstrip("/")) or target)


def _reason(error: BaseException) -> str:
    """What went wrong, from the innermost exception of a task group's exception group."""
    error = _innermost(error)
    if isinstance(error, asyncio.CancelledError):
        return "it was cancelled"
    return describe_exception(error)[:1_000]


def _innermost(error: BaseException) -> BaseException:
    if not isinstance(error, BaseExceptionGroup):
        return error
    group = cast("BaseExceptionGroup[BaseException]", error)
    return _innermost(group.exceptions[0]) if group.exceptions else group
