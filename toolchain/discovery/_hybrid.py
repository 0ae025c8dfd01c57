"""Hybrid search: BM25 when it is sure, embeddings when it is lost, both fused between.

The seed's smart backend. BM25 answers first (sub-millisecond, no model):

- its confidence >= ``high``: the query's words are the tools' words; BM25's hits
  are returned and no embedding is computed (``backend`` "hybrid:bm25");
- no BM25 hit, or confidence <= ``low``: the query shares (almost) no words with the
  tools (another language, a paraphrase): the embeddings' hits ("hybrid:embeddings");
- in between: both rankings fused by reciprocal rank ("hybrid:fused").

When the embeddings backend is missing or fails, BM25's hits come back with a
``note`` saying so: a search never fails because the semantic half did.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolchain._errors import ToolchainValueError, describe_exception
from toolchain.discovery._bm25 import BM25Search
from toolchain.discovery._documents import Hit, SearchBackend, SearchOutcome, ToolDocument

__all__ = ["HybridSearch", "reciprocal_rank_fusion"]


def reciprocal_rank_fusion(
    rankings: Sequence[tuple[Sequence[str], float]], *, k: float = 60.0
) -> list[Hit]:
    """Names from several rankings, by the sum of ``weight / (k + rank)`` (rank from 1).

    Ties go to the name ranked best in any list, then to the one seen first.

    >>> [hit.name for hit in reciprocal_rank_fusion([(["a", "b", "c"], 1.0),
    ...                                              (["c", "b"], 1.0)], k=1)]
    ['c', 'b', 'a']
    """
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for names, weight in rankings:
        for rank, name in enumerate(names, start=1):
            scores[name] = scores.get(name, 0.0) + weight / (k + rank)
            best[name] = min(best.get(name, rank), rank)
    seen = {name: order for order, name in enumerate(scores)}
    ordered = sorted(scores, key=lambda name: (-scores[name], best[name], seen[name]))
    return [Hit(name, scores[name]) for name in ordered]


class HybridSearch:
    """BM25 first; embeddings below its confidence threshold; fused in between.

    - ``bm25``: the lexical backend (its ``confidence`` routes the query).
    - ``embeddings``: the semantic backend (``EmbeddingSearch``; None: BM25 only).
    - ``high`` / ``low``: the confidence bounds of the two single-backend paths.
    - ``rrf_k``, ``bm25_weight``: the fusion (each backend's hits weigh
      ``weight / (rrf_k + rank)``; embeddings weigh 1).
    - ``depth``: hits taken from each backend before fusing (at least ``limit``).

    The defaults were chosen on the tuning half of ``python -m benchmarks --only
    retrieval`` (BFCL and MetaTool queries, with all-MiniLM-L6-v2); the benchmark
    reports the other half separately.

    >>> import asyncio
    >>> search = HybridSearch(BM25Search(), None)
    >>> search.index([ToolDocument("search_images", "Find photos")])
    >>> outcome = asyncio.run(search.search("find photos", 5))
    >>> outcome.backend, outcome.names
    ('hybrid:bm25', ('search_images',))
    """

    name = "hybrid"

    def __init__(
        self,
        bm25: SearchBackend | None = None,
        embeddings: SearchBackend | None = None,
        *,
        high: float = 0.6,
        low: float = 0.1,
        rrf_k: float = 10.0,
        bm25_weight: float = 0.75,
        depth: int = 30,
    ) -> None:
        if not 0.0 <= low <= high:
            raise ToolchainValueError("the thresholds must satisfy 0 <= low <= high")
        self.bm25 = bm25 if bm25 is not None else BM25Search()
        self.embeddings = embeddings
        self._high = high
        self._low = low
        self._rrf_k = rrf_k
        self._bm25_weight = bm25_weight
        self._depth = depth

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self.bm25.index(documents)
        if self.embeddings is not None:
            self.embeddings.index(documents)

    async def prepare(self) -> None:
        """Compute what the embeddings backend computes lazily (its tools' vectors)."""
        prepare = getattr(self.embeddings, "prepare", None)
        if prepare is not None:
            await prepare()

    async def search(self, query: str, limit: int) -> SearchOutcome:
        if limit <= 0:
            return SearchOutcome((), f"{self.name}:bm25", 0.0)
        depth = max(limit, self._depth)
        lexical = await self.bm25.search(query, depth)
        confidence = lexical.confidence if lexical.confidence is not None else 0.0
        if lexical.hits and confidence >= self._high:
            return self._lexical(lexical, limit, lexical.note)
        if self.embeddings is None:
            return self._lexical(lexical, limit, "no embeddings backend: BM25 results only")
        try:
            semantic = await self.embeddings.search(query, depth)
        except Exception as error:
            reason = describe_exception(error)
            return self._lexical(lexical, limit, f"embeddings failed ({reason}): BM25 results only")
        if not lexical.hits or confidence <= self._low:
            return SearchOutcome(
                semantic.hits[:limit], f"{self.name}:embeddings", confidence, semantic.note
            )
        fused = reciprocal_rank_fusion(
            [(lexical.names, self._bm25_weight), (semantic.names, 1.0)], k=self._rrf_k
        )
        return SearchOutcome(tuple(fused[:limit]), f"{self.name}:fused", confidence)

    def _lexical(self, lexical: SearchOutcome, limit: int, note: str) -> SearchOutcome:
        return SearchOutcome(lexical.hits[:limit], f"{self.name}:bm25", lexical.confidence, note)
