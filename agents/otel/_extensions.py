"""What extensions and approvals tell observers, as notes on a run's spans.

Each extension event (``toolchain.relay.OutputBoxed``, discovery's ``ToolsFound`` and
``SchemasDeferred``, ``toolchain.variables.VariablesResolved``,
``toolchain.mcp.MCPToolCalled``) and the core's ``toolchain.ApprovalChecked`` (a call
that needed approval: held, approved or denied, and by whom) becomes a `Note`:
attributes for the span of the call or step it is about, counts added up there and on
the run's span, and for an MCP call a child span. Which span a note lands on is the
run's business (``_run``); here is only what each event says.

An extension's events are read only when its package was imported: one that was not
cannot be running, and a watched run does not import it for nothing.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.otel._conventions import (
    ERROR_TYPE,
    EXECUTE_TOOL,
    MCP_METHOD,
    MCP_PROTOCOL,
    NETWORK_TRANSPORT,
    OPERATION,
    SERVER_ADDRESS,
    SERVER_PORT,
    TOOL_NAME,
    Attributes,
)
from toolchain import ApprovalChecked, ToolError
from toolchain.runtime import redact

if TYPE_CHECKING:
    from toolchain.discovery import SchemasDeferred, ToolsFound
    from toolchain.mcp import MCPToolCalled
    from toolchain.relay import OutputBoxed
    from toolchain.variables import VariablesResolved

__all__ = ["Child", "Note", "Reader", "readers"]

RELAY_TOKENS_KEPT = "gent.relay.tokens_kept"
RELAY_BOXED = "gent.relay.outputs_boxed"
SEARCH_TOKENS_KEPT = "gent.tool_search.tokens_kept"
APPROVALS_HELD = "gent.approval.held_calls"


@dataclass(frozen=True, slots=True)
class Child:
    """A span made under the note's span: an MCP request, timed by the extension."""

    name: str
    start: int
    end: int
    attributes: Attributes
    error_type: str | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class Note:
    """What one extension event adds to a run's spans.

    It lands on the span of the call ``call_id`` (made later when the call has not
    begun yet), else the running call of ``tool``, else the run's next model call
    (``step``); with none of them open, on the run's span as an event named ``what``.
    ``sums`` are added up on that span and on the run's.
    """

    what: str
    attributes: Attributes = field(default_factory=lambda: {})
    call_id: str = ""
    tool: str = ""
    step: bool = False
    sums: Mapping[str, int] = field(default_factory=lambda: {})
    child: Child | None = None


Reader = Callable[[Any, bool], Note]
"""An extension event (and whether content is captured) → its note."""


def readers() -> dict[type[object], Reader]:
    """The readers of the core's approval events and of the events of every extension
    package imported so far."""
    found: dict[type[object], Reader] = {ApprovalChecked: _approval}
    if "toolchain.relay" in sys.modules:
        from toolchain.relay import OutputBoxed

        found[OutputBoxed] = _boxed
    if "toolchain.discovery" in sys.modules:
        from toolchain.discovery import SchemasDeferred, ToolsFound

        found[ToolsFound] = _found
        found[SchemasDeferred] = _deferred
    if "toolchain.variables" in sys.modules:
        from toolchain.variables import VariablesResolved

        found[VariablesResolved] = _resolved
    if "toolchain.mcp" in sys.modules:
        from toolchain.mcp import MCPToolCalled

        found[MCPToolCalled] = _mcp_call
    return found


def _boxed(event: OutputBoxed, capture: bool) -> Note:
    kept = max(0, event.original_tokens - event.shown_tokens)
    return Note(
        "gent.relay.boxed",
        {"gent.relay.boxed": True},
        call_id=event.call_id,
        sums={RELAY_TOKENS_KEPT: kept, RELAY_BOXED: 1},
    )


def _found(event: ToolsFound, capture: bool) -> Note:
    attributes: Attributes = {
        "gent.tool_search.found": list(event.found),
        "gent.tool_search.activated": list(event.activated),
    }
    if capture:
        attributes["gent.tool_search.query"] = redact(event.query)
    return Note("gent.tool_search.search", attributes, tool="tool_search")


def _deferred(event: SchemasDeferred, capture: bool) -> Note:
    attributes: Attributes = {"gent.tool_search.deferred_tools": len(event.tools)}
    return Note(
        "gent.tool_search.deferred", attributes, step=True, sums={SEARCH_TOKENS_KEPT: event.tokens}
    )


def _approval(event: ApprovalChecked, capture: bool) -> Note:
    request = event.request
    attributes: Attributes = {
        "gent.approval.outcome": event.outcome,
        "gent.approval.id": request.call_id,
        "gent.approval.risk": request.risk,
    }
    if event.decided_by:
        attributes["gent.approval.decided_by"] = event.decided_by
    if capture and event.reason:
        attributes["gent.approval.reason"] = redact(event.reason)
    held = {APPROVALS_HELD: 1} if event.outcome == "held" else {}
    return Note("gent.approval", attributes, call_id=event.call_id, sums=held)


def _resolved(event: VariablesResolved, capture: bool) -> Note:
    attributes: Attributes = {"gent.variables.resolved": list(event.names)}
    return Note("gent.variables.resolved", attributes, call_id=event.call_id)


def _mcp_call(event: MCPToolCalled, capture: bool) -> Note:
    attributes: Attributes = {
        MCP_METHOD: "tools/call",
        OPERATION: EXECUTE_TOOL,
        TOOL_NAME: event.remote_name,
        NETWORK_TRANSPORT: "pipe" if event.transport == "stdio" else "tcp",
        "gent.mcp.server": event.server,
    }
    if event.protocol_version:
        attributes[MCP_PROTOCOL] = event.protocol_version
    if event.address:
        attributes[SERVER_ADDRESS] = event.address
    if event.port is not None:
        attributes[SERVER_PORT] = event.port
    error_type: str | None = None
    message = ""
    if event.error is not None:
        error_type = _mcp_error_type(event.error)
        # What the server said may quote the arguments: content, recorded only when asked.
        message = (
            redact(str(event.error)) if capture else f"{event.remote_name} failed: {error_type}"
        )
        attributes[ERROR_TYPE] = error_type
    end = event.started + int(event.duration * 1e9)
    child = Child(
        f"tools/call {event.remote_name}", event.started, end, attributes, error_type, message
    )
    return Note("gent.mcp.call", {"gent.mcp.server": event.server}, tool=event.tool, child=child)


def _mcp_error_type(error: BaseException) -> str:
    """``tool_error`` (the conventions' word for an ``isError`` result) for what the
    server or the connection answered, ``cancelled`` for a call stopped, else the class."""
    if isinstance(error, ToolError):
        return "tool_error"
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    return type(error).__name__
