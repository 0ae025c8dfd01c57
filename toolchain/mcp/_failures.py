"""What went wrong with a server, told without the connection's credentials.

``MCPConnectionError`` is what ``connect`` raises. ``Redactor`` holds what one
connection sends that must never be shown (a URL's token, a header, an environment
value, a flag's value) and blanks it, with any credential of a known shape, in every
message, log line and chained cause; ``reason`` digs the first failure out of the
exception groups the SDK's task groups raise.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Iterable
from typing import cast

from toolchain._errors import ToolchainError, describe_exception
from toolchain._redact import redact

__all__ = ["MCPConnectionError", "Redactor", "reason"]


class MCPConnectionError(ToolchainError, ConnectionError):
    """The server could not be reached: its process did not start or answer, the URL
    refused the connection, or the handshake or the first tool listing failed.

    >>> str(MCPConnectionError("could not connect to the MCP server 'x'"))
    "could not connect to the MCP server 'x'"
    """


class Redactor:
    """Blanks one connection's credentials (``secrets``) and those of a known shape.

    >>> Redactor({"7f3k-99"})("denied for tenant 7f3k-99")
    'denied for tenant [REDACTED]'
    """

    __slots__ = ("_secrets",)

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = frozenset(secrets)

    def __call__(self, text: str) -> str:
        """``text`` without this connection's credentials, or any of a known shape."""
        return redact(text, self._secrets)

    def cause(self, error: BaseException) -> BaseException | None:
        """``error``, to chain to ours, unless its traceback (its own causes and, for a
        task group's, its members) would show a credential."""
        if not isinstance(error, Exception):
            return None
        shown = "".join(traceback.format_exception(error))
        return error if self(shown) == shown else None


def reason(error: BaseException) -> str:
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
