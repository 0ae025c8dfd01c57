"""The ``tool_search`` tool: one search for the model, the tools it found activated.

A search takes one query or a list of them (everything a task needs, in one request
instead of one per capability). For each query the best match is described and made
callable; the other matches are named, callable too (their first call activates
them: ``_gate``), and a query that is a tool's exact name finds that tool alone
(``_found`` says what the answer holds, and why). In text mode a described tool's
parameter schema comes in the answer (the system prompt's listing never changes, so
the provider's prompt cache holds). A broken backend is a note to retry, not an
error. ``suggest`` finds a query that returns a given tool, for the answer to a call
made before it was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from toolchain._context import ExecutionContext
from toolchain._redact import logger
from toolchain._result import ToolResult
from toolchain._tool import Tool
from toolchain.discovery._activation import discovery
from toolchain.discovery._documents import SearchBackend
from toolchain.discovery._events import ToolsFound
from toolchain.discovery._found import Answer
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._quoting import shortened

__all__ = ["MAX_QUERIES", "SearchInput", "SearchTool", "Searched", "find", "suggest"]

_log = logger("toolchain")

MAX_QUERIES = 10
"""Queries one search runs; the rest of a longer list are left out, and the model told."""


def _without_class_text(schema: dict[str, Any]) -> None:
    # The class's docstring is for Python readers; in every request it is tokens.
    schema.pop("description", None)


class SearchInput(BaseModel):
    """Arguments of ``tool_search``."""

    model_config = ConfigDict(json_schema_extra=_without_class_text)

    query: str | list[str] = Field(description="A few words, or a list of them.")
    limit: int | None = Field(default=None, ge=1, le=20, description="Most tools per query.")


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

    async def search(
        self, ctx: ExecutionContext, query: str | Sequence[str], limit: int
    ) -> dict[str, object]: ...


class SearchTool(Tool[SearchInput, dict[str, object]]):
    """``tool_search``: the model's way to ``owner.search`` (``ToolSearch.search``)."""

    name = "tool_search"
    description = (
        "Find tools by what you want to do (a few words, or a list of them for several "
        "needs at once). The best match of each is described; it and other_matches can "
        "be called from then on."
    )

    def __init__(self, owner: Searched) -> None:
        self.owner = owner
        if owner.backend.name == "regex":
            self.description = (
                "Find tools with a regular expression over their names and descriptions "
                "(e.g. 'image|photo'), or a list of them. The best match of each is "
                "described; it and other_matches can be called from then on."
            )

    async def call(
        self, ctx: ExecutionContext, input: SearchInput
    ) -> ToolResult[dict[str, object]]:
        limit = input.limit or self.owner.limit
        return ToolResult(await self.owner.search(ctx, input.query, limit))


async def find(
    owner: Searched, ctx: ExecutionContext, query: str | Sequence[str], limit: int
) -> dict[str, object]:
    """Run one search for the model, activate what it found, and say what it was."""
    asked = [query] if isinstance(query, str) else list(query)
    queries = list(dict.fromkeys(q.strip() for q in asked))
    left_out = queries[MAX_QUERIES:]
    queries = queries[:MAX_QUERIES]
    state = discovery(ctx)
    answer = Answer(owner.index, owner.deferred, state)
    unmatched: list[str] = []
    failed: str | None = None
    searched: list[str] = []
    matched: dict[str, None] = {}
    activated: list[str] = []
    named: list[str] = []
    for text in queries:
        try:
            names = await _matches(owner, text, limit)
        except Exception as error:  # a broken backend: the model can still try again
            _log.warning("tool search failed for %r", shortened(text), exc_info=True)
            failed = type(error).__name__
            continue
        searched.append(text)
        matched.update(dict.fromkeys(names))
        now, listed = answer.add(names, exact=names == [text])
        activated += now
        named += listed
        if not names:
            unmatched.append(text)
    result = answer.result()
    if searched and ctx.events.has_subscribers(ToolsFound):
        named = [name for name in named if name in answer.other]  # a later query's best
        event = ToolsFound(
            ctx,
            "; ".join(searched),
            tuple(matched),
            tuple(activated),
            tuple(named),
            tuple(searched),
        )
        ctx.events.emit(event)
    notes: list[str] = []
    if unmatched:
        which = ", ".join(repr(shortened(q)) for q in unmatched) or "''"
        notes.append(
            f"No tool matches {which}. Describe what you want to do in other words, or "
            "answer without tools."
        )
    if failed is not None:
        notes.append(f"the search failed ({failed}); retry")
    if left_out:
        notes.append(f"Only the first {MAX_QUERIES} queries were searched; search the rest again.")
    if not queries:
        notes.append("No tool matches ''. Say what you want to do.")
    if notes:
        result["note"] = " ".join([*notes, str(result.get("note", ""))]).strip()
    return result


async def _matches(owner: Searched, text: str, limit: int) -> list[str]:
    """The index tools that match one query, best first, at most ``limit``; a query
    that is a tool's exact name finds that tool alone."""
    if text in owner.index.tools:  # the model asks for a tool it saw named
        return [text]
    outcome = await owner.backend.search(text, limit)
    if outcome.note:
        _log.info("tool search %r: %s", shortened(text), outcome.note)
    return [name for name in outcome.names if name in owner.index.tools][:limit]


async def suggest(owner: Searched, name: str) -> str:
    """A query that finds ``name`` as its best match, so a search for it makes the tool
    callable (its phrases or description, checked against the backend), or the name
    itself when none does (a search for a name finds that tool)."""
    info = owner.index.info_of(name)
    description = info.description or owner.index.tools[name].description
    candidates = [*info.phrases[:3], " ".join(description.split()[:8])]
    for query in candidates:
        try:
            outcome = await owner.backend.search(query, owner.limit)
        except Exception:
            break
        if outcome.names[:1] == (name,):
            return query
    return name
