"""Reaching a server: a command started and spoken to over stdio, or a URL over streamable HTTP.

``Endpoint`` says where a server is and opens the SDK's transport to it; ``StderrLog``
keeps a stdio server's stderr in a temporary file, so that a failure can quote its
end (why the server died, often). ``load_sdk`` imports what a connection uses, or
says which extra brings it: importing ``toolchain.mcp`` does not import the SDK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import tempfile
from typing import Any, TextIO

from toolchain._extras import MissingExtra, requires_extra

__all__ = ["Endpoint", "StderrLog", "load_sdk"]

_TAIL_BYTES = 2_000
_TAIL_LINES = 8


def load_sdk() -> None:
    """Import what a connection uses, or say which extra brings it."""
    with requires_extra("mcp", "toolchain.mcp", "mcp", "mcp_types"):
        try:
            for module in ("jsonschema", "mcp.client.stdio", "mcp.client.streamable_http"):
                importlib.import_module(module)
        except ModuleNotFoundError:
            raise
        except ImportError as error:  # installed, but not a version this library speaks
            raise MissingExtra(
                f"toolchain.mcp needs mcp>=2.3,<3: pip install 'gent-py[mcp]' ({error})"
            ) from error


@dataclasses.dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a server is: a ``command`` to start (stdio) or a ``url`` (streamable HTTP).

    stdio: ``env`` is added to a minimal inherited environment (as the SDK does), and
    the server's stderr goes to ``stderr`` when given. HTTP: ``headers`` go with every
    request, on ``http_client`` when given (an ``httpx2.AsyncClient``).
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: TextIO | None = None
    url: str | None = None
    headers: dict[str, str] = dataclasses.field(default_factory=lambda: {})
    http_client: Any = None

    def where(self) -> str:
        """Where the server is, for messages (not yet redacted).

        >>> Endpoint(command="node", args=("server.js",)).where()
        "started as 'node server.js'"
        """
        if self.command is not None:
            return f"started as {' '.join([self.command, *self.args])!r}"
        return f"at {self.url}"

    async def open(self, stack: contextlib.AsyncExitStack, errlog: StderrLog | None) -> Any:
        """The SDK's transport to the server, for its ``Client``; an HTTP client made
        here is closed with ``stack``. A stdio server's stderr goes to ``stderr`` or
        else to ``errlog``."""
        if self.command is not None:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            cwd = None if self.cwd is None else os.fspath(self.cwd)
            params = StdioServerParameters(
                command=self.command, args=list(self.args), env=self.env, cwd=cwd
            )
            sink = self.stderr or (errlog.file if errlog is not None else None)
            return stdio_client(params, errlog=sink) if sink is not None else stdio_client(params)
        assert self.url is not None
        from mcp.client.streamable_http import streamable_http_client

        http = self.http_client
        if http is None:
            import httpx2

            timeout = httpx2.Timeout(30.0, read=300.0)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self.headers, timeout=timeout)
            )
        return streamable_http_client(self.url, http_client=http)


class StderrLog:
    """A stdio server's stderr, kept in a temporary file until ``close``."""

    __slots__ = ("file",)

    def __init__(self) -> None:
        self.file: TextIO = tempfile.TemporaryFile(  # noqa: SIM115  (closed by close())
            mode="w+", encoding="utf-8", errors="replace"
        )

    def tail(self) -> str:
        """The last lines the server wrote, joined with `` | `` (``""``: none, or closed)."""
        if self.file.closed:
            return ""
        try:
            size = os.fstat(self.file.fileno()).st_size
            start = max(0, size - _TAIL_BYTES)
            data = os.pread(self.file.fileno(), size - start, start)
        except OSError:
            return ""
        lines = data.decode("utf-8", errors="replace").strip().splitlines()[-_TAIL_LINES:]
        return " | ".join(line.strip() for line in lines)

    def close(self) -> None:
        self.file.close()
