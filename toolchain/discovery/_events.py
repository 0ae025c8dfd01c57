"""What discovery tells observers (``ctx.events``): searches, deferred definitions, approvals.

Events only tell; they never change a run. Each is built only while something listens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolchain._context import ExecutionContext
from toolchain.discovery._approval import ApprovalRequest

__all__ = ["ApprovalChecked", "DecidedBy", "Outcome", "SchemasDeferred", "ToolsFound"]

Outcome = Literal["held", "approved", "denied"]
"""What became of a call that needs approval."""

DecidedBy = Literal["approver", "person", ""]
"""Who decided a call: the ``approve`` callback, a person (a decision passed on with
``ToolSearch.decide``), or nobody yet (``""``: the call is held)."""


@dataclass(frozen=True, slots=True)
class ToolsFound:
    """A ``tool_search`` call searched: ``query`` what it searched for (the queries of a
    list joined by ``"; "``, each in ``queries``), ``found`` the tools it matched, in
    order (none when nothing matched), ``activated`` those of them it made callable
    just now, ``named`` those it named without describing them (not callable until a
    search for their name)."""

    ctx: ExecutionContext
    query: str
    found: tuple[str, ...]
    activated: tuple[str, ...]
    named: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SchemasDeferred:
    """A step's request leaves out the definitions of deferred tools no search has
    found yet: ``tools`` names them, ``tokens`` counts their o200k tokens (each tool's
    name, description and parameter schema), kept out of this one request."""

    ctx: ExecutionContext
    tools: tuple[str, ...]
    tokens: int


@dataclass(frozen=True, slots=True)
class ApprovalChecked:
    """A call to a tool that requires confirmation was checked: it is ``held`` (waiting
    for a person; the run pauses), ``approved`` or ``denied`` (with the ``reason``
    given). ``call_id`` is the call's own id, as ``ToolCallStarted`` and
    ``ToolCallFinished`` carry it; ``request.call_id`` is the handle ``ToolSearch.decide``
    takes."""

    ctx: ExecutionContext
    call_id: str
    request: ApprovalRequest
    outcome: Outcome
    decided_by: DecidedBy = ""
    reason: str = ""
