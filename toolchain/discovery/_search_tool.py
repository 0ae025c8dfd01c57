"""The ``tool_search`` tool: one search for the model, the tools it found activated.

A search returns the tools that fit, each with a usage hint (and, in text mode, its
parameter schema: the system prompt's listing never changes, so the provider's
prompt cache holds), the workflow guidance of their categories and a note to search
again (``find``). A broken backend is a note to retry, not an error. ``suggest`` finds
a query that returns a given tool, for the answer to a call made before it was found.
"""

from __future__ import annotations

import logging
from typing import Protocol

from pydantic import BaseModel, Field

from toolchain._context import ExecutionContext
from toolchain._result import ToolResult
from toolchain._tool import Tool
from toolchain.discovery._activation import ProtocolName, discovery
from toolchain.discovery._documents import SearchBackend
from toolchain.discovery._events import ToolsFound
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._quoting import shortened

__all__ = ["FOUND_NOTE", "SearchInput", "SearchTool", "Searched", "find", "suggest"]

_log = logging.getLogger("toolchain")

FOUND_NOTE = "These tools can be called now. Search again if you need others."


class SearchInput(BaseModel):
    """Arguments of ``tool_search``."""

    query: str = Field(description="What you want to do, in a few words.")
    limit: int | None = Field(
        default=None, ge=1, le=20, description="How many tools to return at most."
    )


class Searched(Protocol):
    """What a search reads from its ``ToolSearch``, as it is at each search."""

    @property
    def index(self) -> ToolIndex: ...

    @property
    def backend(self) -> SearchBackend: ...

    @property
    def limit(self) -> int: ...

    @property
    def deferred(self) -> frozenset[str]: ...

    async def search(self, ctx: ExecutionContext, query: str, limit: int) -> dict[str, object]: ...


class SearchTool(Tool[SearchInput, dict[str, object]]):
    """``tool_search``: the model's way to ``owner.search`` (``ToolSearch.search``)."""

    name = "tool_search"
    description = (
        "Find the tools you need: describe what you want to do in a few words. Returns "
        "tools you can call from then on, with hints and workflow guidance. Search again "
        "when you need another capability."
    )

    def __init__(self, owner: Searched) -> None:
        self.owner = owner
        if owner.backend.name == "regex":
            self.description = (
                "Find the tools you need with a regular expression over their names and "
                "descriptions (e.g. 'image|photo'). Returns tools you can call from then on."
            )

    async def call(
        self, ctx: ExecutionContext, input: SearchInput
    ) -> ToolResult[dict[str, object]]:
        limit = input.limit or self.owner.limit
        return ToolResult(await self.owner.search(ctx, input.query, limit))


async def find(owner: Searched, ctx: ExecutionContext, query: str, limit: int) -> dict[str, object]:
    """Run one search for the model, activate what it found, and say what it was."""
    try:
        outcome = await owner.backend.search(query, limit)
    except Exception as error:  # a broken backend: the model can still try again
        _log.warning("tool search failed for %r", shortened(query), exc_info=True)
        return {"found": [], "note": f"the search failed ({type(error).__name__}); retry"}
    names = [name for name in outcome.names if name in owner.index.tools][:limit]
    if outcome.note:
        _log.info("tool search %r: %s", shortened(query), outcome.note)
    if ctx.events.has_subscribers(ToolsFound):
        active = discovery(ctx).active
        new = tuple(n for n in names if n in owner.deferred and n not in active)
        ctx.events.emit(ToolsFound(ctx, query, tuple(names), new))
    if not names:
        return {
            "found": [],
            "note": f"No tool matches {shortened(query)!r}. Describe what you want to "
            "do in other words, or answer without tools.",
        }
    state = discovery(ctx)
    state.active.update(dict.fromkeys(n for n in names if n in owner.deferred))
    found = [_describe(owner.index, name, state.protocol) for name in names]
    result: dict[str, object] = {"found": found}
    categories = [owner.index.info_of(name).category for name in names]
    workflow = owner.index.workflow(categories)
    if workflow:
        result["workflow"] = workflow
    result["note"] = FOUND_NOTE
    return result


def _describe(index: ToolIndex, name: str, protocol: ProtocolName) -> dict[str, object]:
    tool, info = index.tools[name], index.info_of(name)
    entry: dict[str, object] = {
        "name": name,
        "description": info.description or tool.description,
    }
    if info.hint:
        entry["hint"] = info.hint
    if info.related:
        entry["related"] = list(info.related)
    if info.requires_confirmation:
        entry["needs_approval"] = True
    if protocol == "text":  # native calls get the schema as the tool's spec instead
        entry["parameters"] = tool.prompt_schema()
    return entry


async def suggest(owner: Searched, name: str) -> str:
    """A query that finds ``name`` (its phrases or description, checked against the
    backend), or the name itself when none does."""
    info = owner.index.info_of(name)
    description = info.description or owner.index.tools[name].description
    candidates = [*info.phrases[:3], " ".join(description.split()[:8])]
    for query in candidates:
        try:
            outcome = await owner.backend.search(query, owner.limit)
        except Exception:
            break
        if name in outcome.names:
            return query
    return name
