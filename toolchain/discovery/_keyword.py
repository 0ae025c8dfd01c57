"""``KeywordSearch``: the simplest search backend, tools ranked by the query words they hold."""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolchain.discovery._documents import Hit, SearchOutcome, ToolDocument

__all__ = ["KeywordSearch"]


class KeywordSearch:
    """The simplest backend: tools ranked by how many query words their text holds.

    For tests and tiny tool sets; ``BM25Search`` ranks far better.

    >>> import asyncio
    >>> backend = KeywordSearch()
    >>> backend.index([ToolDocument("create_page", "Create a new page"),
    ...                ToolDocument("find_image", "Search images by description")])
    >>> asyncio.run(backend.search("find an image", 5)).names
    ('find_image',)
    """

    name = "keyword"

    def __init__(self) -> None:
        self._words: list[tuple[str, frozenset[str]]] = []

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self._words = [(doc.name, frozenset(_words(_text_of(doc)))) for doc in documents]

    async def search(self, query: str, limit: int) -> SearchOutcome:
        wanted = set(_words(query))
        scored = [
            Hit(name, float(len(wanted & words))) for name, words in self._words if wanted & words
        ]
        scored.sort(key=lambda hit: -hit.score)
        return SearchOutcome(tuple(scored[:limit]), self.name)


def _text_of(doc: ToolDocument) -> str:
    params = " ".join(f"{name} {text}" for name, text in doc.parameters)
    return " ".join((doc.name, doc.description, doc.category, *doc.phrases, params))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2]
