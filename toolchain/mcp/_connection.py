"""One connection to a server, in a task of its own: opened, listed, kept, closed.

The SDK's transports run task groups that a failing transport (a refused HTTP
request, a dead process) tears down. Inside the connection's own task, started by
``open`` and ended by ``close``, such a failure ends the connection, never the
caller's task: ``ended`` says why, and the next call is told. A server that dies is
reconnected by calling ``MCPServer.connect`` again, which makes a new ``Connection``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolchain._errors import describe_exception
from toolchain._redact import logger
from toolchain.mcp._elicit import Asking, answer_legacy
from toolchain.mcp._failures import MCPConnectionError, Redactor, reason
from toolchain.mcp._tool_list import ListWatch, ToolList
from toolchain.mcp._transport import Endpoint, StderrLog

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client
    from mcp.client.context import ClientRequestContext
    from mcp.client.session import IncomingMessage

__all__ = ["Connection", "unavailable"]

_log = logger("toolchain.mcp")

_LOG_CHARS = 2_000
_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
}


class Connection:
    """One connection's life (see the module text). Built in ``MCPServer.connect``, on
    the event loop its calls must use (``loop``).

    - ``name``: the server's name as it is now (the handshake may change it).
    - ``greeted``: told the client once the handshake is done, before the listing.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        tools: ToolList,
        redact: Redactor,
        *,
        name: Callable[[], str],
        greeted: Callable[[Client], None],
        mode: str,
        connect_timeout: float,
    ) -> None:
        self.endpoint = endpoint
        self.redact = redact
        self._name = name
        self._greeted = greeted
        self._mode = mode
        self._connect_timeout = connect_timeout
        self.loop = asyncio.get_running_loop()
        self.client: Client | None = None  # set while the connection is open
        self.runner: asyncio.Task[None] | None = None
        self._scope: Any = None  # the runner's anyio.CancelScope
        self.closing = asyncio.Event()  # close() was called
        self.stop = asyncio.Event()  # the runner closes the connection: asked, or it is dead
        self.watch = ListWatch(tools, redact, self.closing)
        self.ended = ""  # why the connection ended, when it ended by itself
        self.lost = ""  # the call during which the connection was found closed
        self.asking: list[Asking] = []  # calls in flight a server's question may come from
        self.errlog: StderrLog | None = None  # closed by release(), once the process is gone
        if endpoint.command is not None and endpoint.stderr is None:
            self.errlog = StderrLog()

    @property
    def name(self) -> str:
        """The server's name, as it is now."""
        return self._name()

    @property
    def alive(self) -> bool:
        """Whether the connection is being made or is open (not ended, not closed)."""
        runner = self.runner
        return runner is not None and not (runner.done() or self.stop.is_set())

    async def open(self) -> None:
        """Start the connection's task; return once it is open, or raise
        ``MCPConnectionError`` (the task is then closing)."""
        ready: asyncio.Future[None] = self.loop.create_future()
        self.runner = self.loop.create_task(self._run(ready), name=f"mcp server {self._name()}")
        await asyncio.shield(ready)

    async def close(self) -> None:
        """Close the session and stop a stdio server's process (idempotent)."""
        runner = self.runner
        if runner is None:
            return
        self.closing.set()
        self.stop.set()
        if self.client is None and self._scope is not None:
            self._scope.cancel()  # still connecting: stop the handshake
        try:
            await asyncio.wait({runner})
        except asyncio.CancelledError:
            await asyncio.wait({runner}, timeout=30)  # finish closing, then stop
            raise
        finally:
            if runner.done() and not runner.cancelled():
                runner.exception()  # retrieved: the runner logged what it had to
            self.runner = None
            if runner.done():
                self.release()

    def release(self) -> None:
        """Close the stderr file (the process is gone, or a new connection replaces this one)."""
        if self.errlog is not None:
            self.errlog.close()
            self.errlog = None

    def end(self, why: str) -> None:
        """End the connection from outside its task (a closed pipe does not reopen)."""
        self.ended = why
        self.stop.set()

    def tail(self) -> str:
        """The end of a stdio server's stderr, when it wrote any: why it died, often."""
        tail = self.errlog.tail() if self.errlog is not None else ""
        return (
            "; its stderr ends with: " + self.redact(tail) if tail else ""
        )  # it may print its env

    async def _run(self, ready: asyncio.Future[None]) -> None:
        """The connection's life: open it, list the tools, wait for ``close``, close it."""
        import anyio

        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                scope.deadline = anyio.current_time() + self._connect_timeout
                async with contextlib.AsyncExitStack() as stack:
                    client = await self._open(stack)
                    await self.watch.first(client)
                    scope.deadline = math.inf
                    async with anyio.create_task_group() as group:
                        self.watch.start(client, group)
                        self.client = client
                        ready.set_result(None)
                        await self.stop.wait()
                        self.client = None
                        group.cancel_scope.cancel()
            if not ready.done():
                why = f"it did not answer within {self._connect_timeout:g} s"
                if self.closing.is_set():
                    why = "the connection was closed while it was being made"
                ready.set_exception(MCPConnectionError(self._cannot_connect(why)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:
            if not ready.done():
                failure = MCPConnectionError(self._cannot_connect(reason(error)))
                failure.__cause__ = self.redact.cause(error)
                ready.set_exception(failure)
            elif not self.closing.is_set():
                self.ended = self.lost or self.redact(reason(error))
                _log.warning(
                    "the connection to the MCP server %s ended: %s", self._name(), self.ended
                )
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self.client = self._scope = None
            self.watch.end()

    async def _open(self, stack: contextlib.AsyncExitStack) -> Client:
        """Open the transport and the session, and complete the handshake."""
        from mcp import Client

        from toolchain.mcp._listing import ListingGuard

        target = await self.endpoint.open(stack, self.errlog)
        listing = ListingGuard(self._name)  # a malformed tool costs itself, not all
        client = Client(
            listing.guard(target),
            mode=self._mode,
            cache=None,
            message_handler=self._on_message,
            logging_callback=self._on_log,
            elicitation_callback=self._on_elicit,
        )
        client = await stack.enter_async_context(client)
        listing.version = client.protocol_version
        self._greeted(client)
        return client

    def _cannot_connect(self, why: str) -> str:
        where = self.endpoint.where()
        message = f"could not connect to the MCP server {self._name()!r} ({where}): {why}"
        return self.redact(message) + self.tail()

    async def _on_message(self, message: IncomingMessage) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.watch.changed()
        elif isinstance(message, Exception):
            _log.warning(
                "the MCP server %s: transport error: %s",
                self._name(),
                self.redact(describe_exception(message)),
            )

    async def _on_elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """A question of a pre-2026 connection (``elicitation/create``), asked during
        a call in flight; a 2026-07-28 connection's come with the call's answer."""
        import mcp_types

        if not isinstance(params, mcp_types.ElicitRequestFormParams):
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_PARAMS, message="this client answers form questions only"
            )
        return await answer_legacy(self.asking, params)

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        level = _LOG_LEVELS.get(params.level, logging.ERROR)
        said = self.redact(str(params.data)[:_LOG_CHARS])
        _log.log(level, "the MCP server %s says: %s", self._name(), said)


def unavailable(connection: Connection | None, name: str) -> str:
    """Why no call can be made: the connection ended (and how), or was never made."""
    if connection is not None and connection.ended:
        return f"the MCP server {name!r} is disconnected: {connection.ended}{connection.tail()}"
    return f"the MCP server {name!r} is not connected"
