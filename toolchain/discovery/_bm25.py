"""BM25 lexical search over tool documents (``bm25s`` scoring, Snowball stemming).

The fast path of tool discovery: well under a millisecond per query for a couple of
thousand tools, no model, no network. It only matches words, so it knows when it
does not understand a query (another language, other words): its confidence says so
and ``HybridSearch`` falls back to embeddings.

Analysis (the same for tools and queries): identifiers split into words
(``cms_searchImages`` -> "cms search images"), lower case, words of two or more
letters or digits, English stopwords dropped, pure numbers dropped (a query's "10
units" names no tool), English Snowball stems ("photos" -> "photo").

Each tool's text: its name's words ``name_weight`` times (a word in the name says
more about the tool than the same word in its description), the description, the
example phrases, category, hint, and each parameter's name and description.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from toolchain._errors import ToolchainValueError
from toolchain._kept import Kept
from toolchain.discovery._documents import Hit, SearchOutcome, ToolDocument
from toolchain.discovery._text import split_identifiers

if TYPE_CHECKING:
    import bm25s
    import numpy as np
    import numpy.typing as npt
    from Stemmer import Stemmer

__all__ = ["BM25Search"]

_WORDS = re.compile(r"[^\W_]{2,}")


class _Analyser:
    """Text -> stemmed index terms (see the module text)."""

    def __init__(self) -> None:
        # Lazy: bm25s (numpy, scipy) and the stemmer load with the first index, so
        # `import toolchain` stays light.
        from bm25s.stopwords import STOPWORDS_EN
        from Stemmer import Stemmer

        self._stopwords = frozenset(STOPWORDS_EN)
        self._stemmer: Stemmer = Stemmer("english")

    def terms(self, text: str) -> list[str]:
        words = _WORDS.findall(split_identifiers(text).lower())
        kept = [w for w in words if w not in self._stopwords and not w.isdigit()]
        return self._stemmer.stemWords(kept)


@dataclass(frozen=True, slots=True)
class _Index:
    names: tuple[str, ...]
    model: bm25s.BM25
    vocabulary: dict[str, int]
    doc_terms: tuple[frozenset[int], ...]
    """Each document's term ids (for the confidence)."""
    idf: dict[int, float]
    unknown_idf: float
    """The weight of a query word no tool has: that of the rarest possible word."""


class BM25Search:
    """BM25 over tool names, descriptions, phrases and parameters.

    ``confidence`` (0-1) is how much of the query the best hit explains: the share of
    the query's distinct terms, each weighted by its IDF, that the top tool contains.
    A word no tool has counts with the largest IDF, so a query in another language
    scores 0, and one whose rare words all appear in the top tool scores 1; common
    words ("get", "data") count for little either way. It says nothing about a tie
    between tools that all contain the query: the ranking still decides among them.

    >>> import asyncio
    >>> search = BM25Search()
    >>> search.index([ToolDocument("search_images", "Find photos in the media library"),
    ...               ToolDocument("create_page", "Create a new page")])
    >>> outcome = asyncio.run(search.search("find a photo", 5))
    >>> outcome.names, outcome.confidence
    (('search_images',), 1.0)
    >>> asyncio.run(search.search("znajdź zdjęcie", 5)).confidence
    0.0
    """

    name = "bm25"

    def __init__(
        self,
        *,
        name_weight: int = 3,
        k1: float = 1.2,
        b: float = 0.75,
        parameters: bool = True,
    ) -> None:
        if name_weight < 1:
            raise ToolchainValueError("name_weight must be at least 1")
        self._name_weight = name_weight
        self._k1 = k1
        self._b = b
        self._parameters = parameters
        self._analyser: _Analyser | None = None
        self._index: _Index | None = None

    def index(self, documents: Sequence[ToolDocument]) -> None:
        analyser = self._analyser = self._analyser or _Analyser()
        # The same documents with the same settings make the same index: built once for
        # every backend given them (a ToolSearch made per request over one ToolIndex
        # would otherwise index all its tools again each time).
        docs = tuple(documents)
        settings = (type(self), self._name_weight, self._k1, self._b, self._parameters)
        seen = _SEEN.get((id(docs), settings))
        if seen is not None and seen[0] is docs:
            # The tuple a ToolIndex hands out again while its tools are the same: found
            # by identity, without hashing every document (a tuple's hash is not kept).
            self._index = seen[1]
            return
        key = (*settings, docs)
        known = _BUILT.get(key, _NOT_BUILT)
        if known is _NOT_BUILT:
            known = _BUILT.put(key, self._built(analyser, docs))
        self._index = cast("_Index | None", known)
        _SEEN.put((id(docs), settings), (docs, self._index))

    def _built(self, analyser: _Analyser, documents: tuple[ToolDocument, ...]) -> _Index | None:
        import bm25s

        corpus = [analyser.terms(self._text(doc)) for doc in documents]
        if not corpus:
            return None
        model = bm25s.BM25(k1=self._k1, b=self._b, method="lucene")
        model.index(corpus, show_progress=False)
        vocabulary = dict(model.vocab_dict)
        doc_terms = tuple(frozenset(vocabulary[t] for t in terms) for terms in corpus)
        df: dict[int, int] = {}
        for terms in doc_terms:
            for term in terms:
                df[term] = df.get(term, 0) + 1
        n = len(corpus)
        return _Index(
            names=tuple(doc.name for doc in documents),
            model=model,
            vocabulary=vocabulary,
            doc_terms=doc_terms,
            idf={term: _idf(n, count) for term, count in df.items()},
            unknown_idf=_idf(n, 0),
        )

    async def search(self, query: str, limit: int) -> SearchOutcome:
        return self.search_now(query, limit)

    def search_now(self, query: str, limit: int) -> SearchOutcome:
        """``search`` without the event loop (it never waits on anything)."""
        index = self._index
        if index is None or self._analyser is None:
            return SearchOutcome((), self.name, 0.0, "no tools are indexed")
        terms = list(dict.fromkeys(self._analyser.terms(query)))
        known = [index.vocabulary[t] for t in terms if t in index.vocabulary]
        if limit <= 0 or not known:
            return SearchOutcome((), self.name, 0.0)
        scores = index.model.get_scores_from_ids(known)
        order = _top(scores, limit)
        hits = tuple(Hit(index.names[i], float(scores[i])) for i in order)
        if not hits:
            return SearchOutcome((), self.name, 0.0)
        top_terms = index.doc_terms[int(order[0])]
        weights = [index.idf.get(index.vocabulary.get(t, -1), index.unknown_idf) for t in terms]
        covered = sum(
            weight
            for term, weight in zip(terms, weights, strict=True)
            if index.vocabulary.get(term, -1) in top_terms
        )
        return SearchOutcome(hits, self.name, round(covered / sum(weights), 4))

    def _text(self, doc: ToolDocument) -> str:
        parts = [doc.name] * self._name_weight
        parts += [doc.description, *doc.phrases, doc.category, doc.hint]
        if self._parameters:
            parts += [f"{name} {text}" for name, text in doc.parameters]
        return "\n".join(parts)


_BUILT = Kept[tuple[object, ...], "_Index | object | None"](8)
"""(settings, documents) → the index they make (`BM25Search.index`): an index is only
read once built, and searches share it."""
_NOT_BUILT = object()

_SEEN = Kept[tuple[int, tuple[object, ...]], tuple[tuple[ToolDocument, ...], "_Index | None"]](8)
"""(the id of a documents tuple, settings) → that tuple (kept alive, so its id stays its
own) and its index: `_BUILT`'s entries found by identity, for the indexes a process
builds searches over."""


def _idf(documents: int, containing: int) -> float:
    """Lucene's BM25 IDF (always positive)."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def _top(scores: npt.NDArray[np.float32], limit: int) -> list[int]:
    """Indices of the ``limit`` best positive scores, best first (ties: index order)."""
    import numpy as np

    positive = np.flatnonzero(scores > 0)
    # A stable sort of the (few) positive scores: equal scores keep document order.
    ranked = positive[np.argsort(-scores[positive], kind="stable")][:limit]
    return [int(i) for i in ranked]
