# toolchain.discovery: an extension package; tool_search, a searchable tool index,
# approvals and working memory.
#
# What lives here, one job a module (each imports only those listed before it):
#   _documents   ToolDocument, Hit, SearchOutcome and the SearchBackend protocol
#   _metadata    ToolInfo, Risk, Extraction, Entity: what the index knows of a tool
#   _text        a tool's text as the backends read it (identifiers split into words)
#   _index       ToolIndex: the tools joined with their ToolInfo, checked whole
#   _keyword _bm25 _regex _embeddings _hybrid   the search backends, one a module
#   _approval    Approval, ApprovalRequest, Approver: the core's types under this package
#   _events      what discovery tells observers: searches, deferred definitions
#   _quoting     the model's text quoted back, bounded or as JSON
#   _activation  which tools a run found, used and was told of (ctx.state)
#   _saved       discovery's part of extension_state: saved and loaded
#   _found       what one search answers: the best match described, the rest named, once
#   _search_tool the tool_search tool and one search: queries, activation, suggestions
#   _gate        the guard on every call: a tool not found yet is refused
#   _tool_search ToolSearch: the options and the extension, the rest delegated
#   _memory      WorkingMemory: entities picked out of results, listed each step
#
# May import: the toolchain core through its own modules (toolchain._context, _hooks,
# _extension, _result, _tool, _errors, _observations, _tokens, _oneline); msgspec and pydantic;
# a backend's own libraries (bm25s, re2, numpy, an embeddings model or client) only in
# that backend, the heavy ones when first used. Never agents (a step request is typed
# loosely for that), never another extension.
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
- Calls to tools that ``requires_confirmation`` need approval as a tool that
  ``requires_approval`` does (the core's mechanism, the user's tool unchanged): decided
  by ``ToolSearch(approve=...)`` or the run's ``approve=``, or held: the run pauses
  with the call in ``result.pending`` and ``agent.resume`` runs it once decided.
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
from toolchain.discovery._events import ApprovalChecked, SchemasDeferred, ToolsFound
from toolchain.discovery._hybrid import HybridSearch, reciprocal_rank_fusion
from toolchain.discovery._index import ToolIndex, ToolIndexError
from toolchain.discovery._keyword import KeywordSearch
from toolchain.discovery._memory import WorkingMemory, extract_entities
from toolchain.discovery._metadata import Entity, Extraction, Extractor, Risk, ToolInfo
from toolchain.discovery._regex import RegexSearch
from toolchain.discovery._search_tool import SearchInput
from toolchain.discovery._tool_search import ToolSearch

__all__ = [
    "Approval",
    "ApprovalChecked",
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
    "SchemasDeferred",
    "SearchBackend",
    "SearchInput",
    "SearchOutcome",
    "ToolDocument",
    "ToolIndex",
    "ToolIndexError",
    "ToolInfo",
    "ToolSearch",
    "ToolsFound",
    "WorkingMemory",
    "embeddings_available",
    "extract_bundled_model",
    "extract_entities",
    "reciprocal_rank_fusion",
]
