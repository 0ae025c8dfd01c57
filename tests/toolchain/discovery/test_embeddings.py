"""EmbeddingSearch over controlled vectors; OpenAIEmbeddings against a loopback server;
LocalEmbeddings' missing-extra error and lazy imports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

import numpy as np
import pytest

from tests.support.loopback import LoopbackServer, RecordedRequest, Reply, json_reply
from tests.support.openai_replies import openai_error
from toolchain.discovery._documents import ToolDocument
from toolchain.discovery._embeddings import (
    EmbeddingError,
    EmbeddingSearch,
    EmbeddingsUnavailable,
    LocalEmbeddings,
    OpenAIEmbeddings,
    Vectors,
    embeddings_available,
)

from .fakes import ConceptEmbedder
from .tools import TOOLS

ROOT = Path(__file__).resolve().parents[3]


async def test_tools_rank_by_cosine_similarity_to_the_query() -> None:
    search = EmbeddingSearch(ConceptEmbedder())
    search.index(TOOLS)
    outcome = await search.search("Przetłumacz ten tekst", 2)  # "translate this text"
    assert outcome.names[0] == "translate_text"
    assert outcome.backend == "embeddings"
    assert outcome.confidence is None
    assert outcome.hits[0].score == pytest.approx(1.0)


class _Scaled:
    """Returns numpy vectors of very different lengths: cosine must ignore length."""

    async def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [ConceptEmbedder.vector(t) for t in texts]
        return np.array(rows) * np.arange(1, len(rows) + 1)[:, None] * 1000.0


async def test_vectors_are_normalised_and_numpy_arrays_are_accepted() -> None:
    search = EmbeddingSearch(_Scaled())
    search.index(TOOLS)
    outcome = await search.search("weather", 6)
    assert outcome.names[0] == "get_weather"
    assert all(-1.0001 <= hit.score <= 1.0001 for hit in outcome.hits)


async def test_index_only_records_tools_and_the_first_search_embeds_them() -> None:
    embedder = ConceptEmbedder()
    search = EmbeddingSearch(embedder)
    search.index(TOOLS)
    assert embedder.calls == []
    await search.search("weather", 3)
    await search.search("email", 3)
    assert [len(batch) for batch in embedder.calls] == [len(TOOLS), 1, 1]
    search.index(TOOLS[:2])
    assert len((await search.search("page", 5)).hits) == 2


async def test_an_empty_query_or_index_finds_nothing_without_embedding_the_query() -> None:
    embedder = ConceptEmbedder()
    search = EmbeddingSearch(embedder)
    search.index([])
    assert (await search.search("weather", 3)).hits == ()
    search.index(TOOLS)
    assert (await search.search("  ", 3)).hits == ()
    assert embedder.queries == []


class _Wrong:
    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return self.rows


@pytest.mark.parametrize(
    ("rows", "message"),
    [([[1.0, 0.0]], r"shape \(1, 2\) for 6 texts"), ([[1.0], [1.0, 2.0]], "one length")],
)
async def test_an_embedder_returning_the_wrong_vectors_raises_embedding_error(
    rows: list[list[float]], message: str
) -> None:
    search = EmbeddingSearch(_Wrong(rows))
    search.index(TOOLS)
    with pytest.raises(EmbeddingError, match=message):
        await search.search("weather", 3)


async def test_a_query_vector_of_another_length_raises_embedding_error() -> None:
    class Shifting(ConceptEmbedder):
        async def embed(self, texts: Sequence[str]) -> Vectors:
            rows = [self.vector(t) for t in texts]
            return rows if len(texts) > 1 else [[*rows[0], 0.0]]

    search = EmbeddingSearch(Shifting())
    search.index(TOOLS)
    with pytest.raises(EmbeddingError, match="7 dimensions, the tools' 6"):
        await search.search("weather", 3)


# --- OpenAIEmbeddings against a real HTTP server on 127.0.0.1 -------------------------


def _embeddings_handler(request: RecordedRequest) -> Reply:
    """Vectors [len(text), position] for each input, listed in reverse order."""
    inputs = request.json()["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(text)), float(i)]}
        for i, text in enumerate(inputs)
    ]
    body = {
        "object": "list",
        "data": data[::-1],
        "model": request.json()["model"],
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }
    return json_reply(body)


async def test_openai_embeddings_sends_batches_and_keeps_input_order() -> None:
    with LoopbackServer() as server:
        server.respond_with(_embeddings_handler)
        embedder = OpenAIEmbeddings(
            "text-embedding-3-small", server.openai_base_url, "sk-test", batch_size=2
        )
        vectors = await embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"])
        requests = server.requests
    assert [list(v) for v in vectors] == [
        [1.0, 0.0],
        [2.0, 1.0],
        [3.0, 0.0],
        [4.0, 1.0],
        [5.0, 0.0],
    ]
    assert [r.json()["input"] for r in requests] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert all(r.path == "/v1/embeddings" for r in requests)
    assert requests[0].headers["authorization"] == "Bearer sk-test"
    first = requests[0].json()
    assert first["model"] == "text-embedding-3-small"
    assert first["encoding_format"] == "float"
    assert "dimensions" not in first


async def test_openai_embeddings_pass_dimensions_and_drive_a_search() -> None:
    with LoopbackServer() as server:
        server.respond_with(_embeddings_handler)
        embedder = OpenAIEmbeddings("m", server.openai_base_url, "k", dimensions=2)
        search = EmbeddingSearch(embedder)
        search.index([ToolDocument("a", "x"), ToolDocument("b", "y")])
        outcome = await search.search("anything", 2)
        assert server.requests[0].json()["dimensions"] == 2
    assert len(outcome.hits) == 2


async def test_openai_embeddings_errors_reach_the_caller() -> None:
    from openai import BadRequestError

    with LoopbackServer() as server:
        server.enqueue(openai_error(400, "input is too long", error_type="invalid_request_error"))
        embedder = OpenAIEmbeddings("m", server.openai_base_url, "k")
        with pytest.raises(BadRequestError, match="input is too long"):
            await embedder.embed(["x"])


async def test_openai_embeddings_with_fewer_vectors_than_texts_raise() -> None:
    def short(request: RecordedRequest) -> Reply:
        body = {
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": [1.0]}],
            "model": "m",
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        return json_reply(body)

    with LoopbackServer() as server:
        server.respond_with(short)
        embedder = OpenAIEmbeddings("m", server.openai_base_url, "k")
        with pytest.raises(EmbeddingError, match="1 vectors for 2 texts"):
            await embedder.embed(["x", "y"])


# --- LocalEmbeddings without its extra ---------------------------------------------


def test_local_embeddings_name_the_extra_when_torch_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def without_torch(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "torch" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_torch)
    assert embeddings_available() is False
    with pytest.raises(EmbeddingsUnavailable) as caught:
        LocalEmbeddings()
    assert "torch" in str(caught.value)
    assert "install gent-py's [embeddings] extra" in str(caught.value)
    assert isinstance(caught.value, ImportError)


def test_the_discovery_backends_import_no_heavy_package_until_used() -> None:
    script = """
import json, sys
from toolchain.discovery import _bm25, _embeddings, _hybrid, _regex
_embeddings.embeddings_available()
_hybrid.HybridSearch()
heavy = ["torch", "sentence_transformers", "bm25s", "Stemmer", "numpy", "re2", "openai"]
print(json.dumps([name for name in heavy if name in sys.modules]))
"""
    output = subprocess.check_output([sys.executable, "-c", script], cwd=ROOT, timeout=120)
    assert json.loads(output.decode().strip().splitlines()[-1]) == []
