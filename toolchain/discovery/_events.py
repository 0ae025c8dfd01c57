"""What discovery tells observers (``ctx.events``): searches and deferred definitions.

Events only tell; they never change a run. Each is built only while something listens.
Approvals of the tools that ``requires_confirmation`` are the core's, told as the core's
``toolchain.ApprovalChecked`` (this module's name for it, as before, is the same class).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolchain._context import ExecutionContext
from toolchain._events import ApprovalChecked, DecidedBy, Outcome

__all__ = ["ApprovalChecked", "DecidedBy", "Outcome", "SchemasDeferred", "ToolsFound"]


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
