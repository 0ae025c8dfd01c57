"""HybridSearch: each path (BM25, embeddings, fused), the fallbacks, and the fusion."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from toolchain.discovery._bm25 import BM25Search
from toolchain.discovery._documents import Hit, SearchOutcome, ToolDocument
from toolchain.discovery._embeddings import EmbeddingSearch
from toolchain.discovery._hybrid import HybridSearch, reciprocal_rank_fusion

from .fakes import BrokenEmbedder, ConceptEmbedder
from .tools import TOOLS


def _hybrid(
    embedder: ConceptEmbedder | BrokenEmbedder | None,
    *,
    high: float = 0.6,
    low: float = 0.1,
    rrf_k: float = 10.0,
    bm25_weight: float = 0.75,
) -> HybridSearch:
    embeddings = EmbeddingSearch(embedder) if embedder is not None else None
    search = HybridSearch(
        BM25Search(), embeddings, high=high, low=low, rrf_k=rrf_k, bm25_weight=bm25_weight
    )
    search.index(TOOLS)
    return search


async def test_a_confident_bm25_answer_skips_the_embeddings() -> None:
    embedder = ConceptEmbedder()
    outcome = await _hybrid(embedder).search("weather city", 3)
    assert outcome.backend == "hybrid:bm25"
    assert outcome.names[0] == "get_weather"
    assert outcome.confidence == 1.0
    assert embedder.calls == []  # not even the tools were embedded


async def test_a_polish_query_goes_to_the_embeddings() -> None:
    embedder = ConceptEmbedder()
    outcome = await _hybrid(embedder).search("Znajdź zdjęcie bohatera", 3)
    assert outcome.backend == "hybrid:embeddings"
    assert outcome.names[0] == "cms_searchImages"
    assert outcome.confidence == 0.0
    assert embedder.queries == ["Znajdź zdjęcie bohatera"]


async def test_a_partly_understood_query_fuses_both_rankings() -> None:
    # BM25 knows "page" (in two tools) but not "pogoda"; the embedder maps "pogoda"
    # to weather. Fusion keeps BM25's page tools and adds get_weather.
    query = "page pogoda bohater zdjęcie"
    search = _hybrid(ConceptEmbedder(), high=0.9, low=0.05, rrf_k=10, bm25_weight=1.0)
    outcome = await search.search(query, 4)
    assert outcome.backend == "hybrid:fused"
    assert outcome.confidence is not None
    assert 0.05 < outcome.confidence < 0.9
    lexical = await search.bm25.search(query, 30)
    assert search.embeddings is not None
    semantic = await search.embeddings.search(query, 30)
    expected = reciprocal_rank_fusion([(lexical.names, 1.0), (semantic.names, 1.0)], k=10)
    assert outcome.hits == tuple(expected[:4])
    assert "get_weather" in outcome.names
    assert set(lexical.names[:2]) <= set(outcome.names)


@pytest.mark.parametrize(
    ("high", "low", "backend"),
    [(0.9, 0.05, "hybrid:fused"), (0.15, 0.05, "hybrid:bm25"), (0.9, 0.3, "hybrid:embeddings")],
)
async def test_the_thresholds_choose_the_path(high: float, low: float, backend: str) -> None:
    # This query's confidence is about 0.16: of its three words only "page" is known,
    # and it is in two of the six tools (a low IDF beside the unknown words' highest).
    search = _hybrid(ConceptEmbedder(), high=high, low=low)
    outcome = await search.search("page pogoda bohater", 3)
    assert outcome.confidence is not None
    assert 0.15 < outcome.confidence < 0.3
    assert outcome.backend == backend


async def test_failing_embeddings_fall_back_to_bm25_with_a_note() -> None:
    outcome = await _hybrid(BrokenEmbedder()).search("page pogoda bohater", 3)
    assert outcome.backend == "hybrid:bm25"
    assert outcome.names[0] in ("cms_createPage", "cms_addSectionToPage")
    assert "embeddings failed (ConnectionError: embeddings endpoint unreachable)" in outcome.note


async def test_no_embeddings_backend_returns_bm25_with_a_note() -> None:
    outcome = await _hybrid(None).search("Znajdź zdjęcie", 3)
    assert outcome.backend == "hybrid:bm25"
    assert outcome.hits == ()
    assert outcome.note == "no embeddings backend: BM25 results only"


async def test_prepare_embeds_the_tools_once_up_front() -> None:
    embedder = ConceptEmbedder()
    search = _hybrid(embedder)
    await search.prepare()
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == len(TOOLS)
    await search.search("Znajdź zdjęcie", 3)
    assert len(embedder.calls) == 2  # the query only


async def test_limit_zero_and_invalid_thresholds() -> None:
    assert (await _hybrid(ConceptEmbedder()).search("page", 0)).hits == ()
    with pytest.raises(ValueError, match="thresholds"):
        HybridSearch(low=0.9, high=0.5)


def test_fusion_adds_reciprocal_ranks_with_weights() -> None:
    fused = reciprocal_rank_fusion([(["a", "b"], 1.0), (["b", "c"], 0.5)], k=10)
    assert fused == [
        Hit("b", 1 / 12 + 0.5 / 11),
        Hit("a", 1 / 11),
        Hit("c", 0.5 / 12),
    ]
    # Equal sums: the better single rank first, then first seen.
    tie = reciprocal_rank_fusion([(["x", "y"], 1.0), (["y", "x"], 1.0)], k=10)
    assert [hit.name for hit in tie] == ["x", "y"]


class _Recorder:
    """A backend returning fixed hits (for checking what the hybrid passes on)."""

    name = "fixed"

    def __init__(self, names: Sequence[str], confidence: float | None) -> None:
        self._outcome = SearchOutcome(tuple(Hit(n, 1.0) for n in names), "fixed", confidence)
        self.limits: list[int] = []

    def index(self, documents: Sequence[ToolDocument]) -> None:
        pass

    async def search(self, query: str, limit: int) -> SearchOutcome:
        self.limits.append(limit)
        return self._outcome


async def test_each_backend_is_asked_for_depth_hits_and_the_result_cut_to_limit() -> None:
    lexical = _Recorder(["a", "b", "c"], 0.3)
    semantic = _Recorder(["c", "d", "e"], None)
    search = HybridSearch(lexical, semantic, depth=7)
    outcome = await search.search("q", 2)
    assert lexical.limits == semantic.limits == [7]
    assert outcome.backend == "hybrid:fused"
    assert len(outcome.hits) == 2
