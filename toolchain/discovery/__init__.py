"""Tool discovery: ``tool_search``, a searchable tool index, approvals and working memory.

Agents with many tools drown in their definitions. With ``ToolSearch`` the model starts
with one discovery tool (and any tools kept always active), searches for what it
needs, and the tools it finds become callable; ``WorkingMemory`` lists the entities
tool results named. Both are ``toolchain.Extension``s: they work with ``ReActAgent``,
``ToolCallingAgent`` and a bare chain in a custom loop.

- ``ToolIndex`` joins the tools with their ``ToolInfo`` (category, example phrases,
  related tools, risk, confirmation, an ``Extraction`` schema) and checks it whole.
- Search backends share one protocol (``SearchBackend``): BM25, regex, embeddings
  (local or an OpenAI-compatible endpoint) and a hybrid of BM25 and embeddings.
- Calls to tools that ``requires_confirmation`` wait for an ``Approver``; a run can
  pause with the call held and resume with the decision (``ToolSearch.decide``).
"""

from __future__ import annotations

from toolchain.discovery._approval import Approval, ApprovalRequest, Approver
from toolchain.discovery._bm25 import BM25Search
from toolchain.discovery._documents import Hit, SearchBackend, SearchOutcome, ToolDocument
from toolchain.discovery._embeddings import (
    Embedder,
    EmbeddingError,
    EmbeddingSearch,
    EmbeddingsUnavailable,
    LocalEmbeddings,
    OpenAIEmbeddings,
    embeddings_available,
    extract_bundled_model,
)
from toolchain.discovery._hybrid import HybridSearch, reciprocal_rank_fusion
from toolchain.discovery._index import ToolIndex, ToolIndexError
from toolchain.discovery._memory import WorkingMemory, extract_entities
from toolchain.discovery._metadata import Entity, Extraction, Extractor, Risk, ToolInfo
from toolchain.discovery._regex import RegexSearch
from toolchain.discovery._tool_search import KeywordSearch, SearchInput, ToolSearch

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "BM25Search",
    "Embedder",
    "EmbeddingError",
    "EmbeddingSearch",
    "EmbeddingsUnavailable",
    "Entity",
    "Extraction",
    "Extractor",
    "Hit",
    "HybridSearch",
    "KeywordSearch",
    "LocalEmbeddings",
    "OpenAIEmbeddings",
    "RegexSearch",
    "Risk",
    "SearchBackend",
    "SearchInput",
    "SearchOutcome",
    "ToolDocument",
    "ToolIndex",
    "ToolIndexError",
    "ToolInfo",
    "ToolSearch",
    "WorkingMemory",
    "embeddings_available",
    "extract_bundled_model",
    "extract_entities",
    "reciprocal_rank_fusion",
]
