"""What a search backend indexes and returns: tool documents, hits and outcomes.

Every backend (BM25, regex, embeddings, hybrid) indexes the same ``ToolDocument``s
and answers a query with a ``SearchOutcome``: scored hits, best first, and what the
backend can say about them (its confidence, a note when it fell back or is missing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Hit", "SearchBackend", "SearchOutcome", "ToolDocument"]


@dataclass(frozen=True, slots=True)
class ToolDocument:
    """One tool as the search sees it.

    >>> doc = ToolDocument("get_weather", "Current weather.", parameters=(("city", ""),))
    >>> doc.parameters, doc.category
    ((('city', ''),), '')
    """

    name: str
    description: str
    category: str = ""
    phrases: tuple[str, ...] = ()
    """Example requests the tool answers (hypothetical queries): "find a photo of ..."."""
    parameters: tuple[tuple[str, str], ...] = ()
    """(parameter name, its description) for each parameter, in schema order."""
    hint: str = ""
    """A short usage hint shown with the tool when it is found."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A tool a search found, with the backend's score (higher is better)."""

    name: str
    score: float


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """One search's answer: hits best first, which backend produced them, and how sure
    it is (0 to 1, None when the backend has no notion of it)."""

    hits: tuple[Hit, ...]
    backend: str
    confidence: float | None = None
    note: str = ""
    """For the developer and the model: why a fallback happened, what is unavailable."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(hit.name for hit in self.hits)


@runtime_checkable
class SearchBackend(Protocol):
    """A way to find tools for a query.

    ``index`` (re)builds the backend over ``documents`` (called once up front and again
    when the tools change; may be slow). ``search`` returns at most ``limit`` hits.
    """

    name: str

    def index(self, documents: Sequence[ToolDocument]) -> None: ...

    async def search(self, query: str, limit: int) -> SearchOutcome: ...
