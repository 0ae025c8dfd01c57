"""A ToolSearch made per request over one ToolIndex (as a web handler builds its agent)
does not index or count the index's tools again: what follows from the same
tools is made once and shared, and made again when a tool changed."""

from __future__ import annotations

import gc
import itertools
import weakref

import bm25s
import pytest

import toolchain._tokens
from toolchain import ExecutionContext, tool
from toolchain.discovery import ToolIndex, ToolSearch

_NUMBERS = itertools.count()


def _index() -> ToolIndex:
    """An index of tools no other test has (the shared work is keyed by what they are)."""
    n = next(_NUMBERS)

    @tool(name=f"send_invoice_{n}")
    def send_invoice(customer: str) -> str:
        """Send the customer's open invoice by mail."""
        return customer

    @tool(name=f"archive_page_{n}")
    def archive_page(slug: str) -> str:
        """Archive a page of the site."""
        return slug

    return ToolIndex([send_invoice, archive_page])


def test_a_search_made_per_request_indexes_its_tools_once(monkeypatch: pytest.MonkeyPatch) -> None:
    indexed: list[object] = []
    index_corpus = bm25s.BM25.index

    def counted(self: bm25s.BM25, *args: object, **kwargs: object) -> object:
        indexed.append(self)
        return index_corpus(self, *args, **kwargs)  # type: ignore[arg-type]  # passed on as given

    monkeypatch.setattr(bm25s.BM25, "index", counted)
    index = _index()
    first = ToolSearch(index, defer=True)
    assert len(indexed) == 1
    second = ToolSearch(index, defer=True)
    assert len(indexed) == 1  # the same documents: the same index, not built again
    assert second.definition_tokens == first.definition_tokens > 0


async def test_a_search_over_a_changed_tool_indexes_it_again() -> None:
    index = _index()
    invoices = next(t for t in index.tools.values() if t.name.startswith("send_invoice"))
    before = ToolSearch(index, defer=True).definition_tokens  # counted when first read
    invoices.description = "Book a meeting room for the whole team, on any floor, for a day."
    after = ToolSearch(index, defer=True)
    ctx = ExecutionContext()
    found = await after.search(ctx, "book a meeting room", 1)
    assert invoices.name in str(found)
    assert after.definition_tokens != before


def test_definitions_are_counted_once_for_the_same_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    counts: list[str] = []
    count = toolchain._tokens.count_tokens

    def counted(text: str) -> int:
        counts.append(text)
        return count(text)

    monkeypatch.setattr(toolchain._tokens, "count_tokens", counted)
    index = _index()
    ToolSearch(index)
    ToolSearch(index)
    assert len(counts) == 1


def test_an_index_reads_each_tool_once_while_it_is_the_same() -> None:
    index = _index()
    invoices = next(t for t in index.tools.values() if t.name.startswith("send_invoice"))
    first = index.documents()
    assert index.documents() is first  # the same tuple: a backend knows it at once
    assert index.definition(invoices) is index.definition(invoices)


def test_an_index_reads_a_tool_again_when_it_changed() -> None:
    from toolchain.discovery import ToolInfo

    index = _index()
    invoices = next(t for t in index.tools.values() if t.name.startswith("send_invoice"))
    assert index.document(invoices).description == "Send the customer's open invoice by mail."
    invoices.description = "Mail the open invoice."
    assert index.document(invoices).description == "Mail the open invoice."
    assert index.definition(invoices).startswith(f"{invoices.name}: Mail the open invoice.\n")
    index.info[invoices.name] = ToolInfo(invoices.name, category="billing", hint="Mail once.")
    document = index.document(invoices)
    assert (document.category, document.hint) == ("billing", "Mail once.")


def test_an_index_lets_go_of_a_tool_removed_from_it() -> None:
    index = _index()
    pages = next(t for t in index.tools.values() if t.name.startswith("archive_page"))
    index.documents()
    gone = weakref.ref(pages)
    del index.tools[pages.name], pages
    assert [d.name for d in index.documents()] == list(index.tools)
    gc.collect()  # (a tool made by @tool may sit in a cycle of its own)
    assert gone() is None, "the index still holds what it read of a tool removed from it"
