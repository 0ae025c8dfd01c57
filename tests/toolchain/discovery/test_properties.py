"""Any query string: BM25 and regex search never raise and keep to the limit."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain.discovery._bm25 import BM25Search
from toolchain.discovery._regex import RegexSearch

from .tools import TOOLS

_BM25 = BM25Search()
_BM25.index(TOOLS)
_REGEX = RegexSearch()
_REGEX.index(TOOLS)

# Regex-flavoured text beside arbitrary unicode (surrogates included).
_QUERIES = st.text() | st.text(alphabet="()[]{}*+?|^$\\.-_aAbéZ09 \n", max_size=60)


@settings(max_examples=300, deadline=None)
@given(query=_QUERIES, limit=st.integers(min_value=-2, max_value=8))
def test_bm25_never_raises_and_keeps_to_the_limit(query: str, limit: int) -> None:
    outcome = asyncio.run(_BM25.search(query, limit))
    assert len(outcome.hits) <= max(limit, 0)
    assert outcome.confidence is not None
    assert 0.0 <= outcome.confidence <= 1.0


@settings(max_examples=300, deadline=None)
@given(pattern=_QUERIES, limit=st.integers(min_value=-2, max_value=8))
def test_regex_never_raises_and_keeps_to_the_limit(pattern: str, limit: int) -> None:
    outcome = asyncio.run(_REGEX.search(pattern, limit))
    assert len(outcome.hits) <= max(limit, 0)
    assert outcome.hits or outcome.note or limit <= 0
