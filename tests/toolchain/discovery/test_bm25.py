"""BM25Search: stemming, name weighting, identifier splitting and its confidence."""

from __future__ import annotations

from toolchain.discovery._bm25 import BM25Search
from toolchain.discovery._documents import ToolDocument

from .tools import TOOLS


def _search(tools: tuple[ToolDocument, ...] = TOOLS, name_weight: int = 3) -> BM25Search:
    search = BM25Search(name_weight=name_weight)
    search.index(tools)
    return search


async def test_a_plural_finds_the_singular_through_the_stemmer() -> None:
    # "photos" is only in the query, "photo" only in a phrase of the image tool.
    outcome = await _search().search("photos", 5)
    assert outcome.names[:1] == ("cms_searchImages",)


async def test_camel_case_and_snake_case_names_are_split_into_words() -> None:
    outcome = await _search().search("create page", 5)
    assert outcome.names[0] == "cms_createPage"
    assert (await _search().search("weather", 5)).names[0] == "get_weather"


async def test_a_word_in_the_name_outweighs_the_same_word_in_a_description() -> None:
    # send_email mentions the weather in its description; only get_weather is named so.
    tools = (
        ToolDocument("get_weather", "Conditions right now.", parameters=(("city", ""),)),
        ToolDocument("send_email", "Send a message about the weather forecast."),
    )
    weighted = await _search(tools, name_weight=3).search("weather", 5)
    assert weighted.names == ("get_weather", "send_email")
    assert weighted.hits[0].score > weighted.hits[1].score


async def test_the_name_weight_is_what_ranks_the_named_tool_first() -> None:
    # With the name counted once, the longer description's two mentions win.
    tools = (
        ToolDocument("weather", "Conditions."),
        ToolDocument("report", "Weather report: weather, today."),
    )
    assert (await _search(tools, name_weight=1).search("weather", 5)).names[0] == "report"
    assert (await _search(tools, name_weight=4).search("weather", 5)).names[0] == "weather"


async def test_parameter_names_and_descriptions_are_searched() -> None:
    outcome = await _search().search("recipient address", 5)
    assert outcome.names == ("send_email",)


async def test_confidence_is_high_for_a_query_in_the_tools_words() -> None:
    outcome = await _search().search("find an image of a mountain photo", 5)
    assert outcome.names[0] == "cms_searchImages"
    assert outcome.confidence is not None
    assert outcome.confidence >= 0.6


async def test_confidence_is_zero_for_a_polish_query() -> None:
    outcome = await _search().search("Znajdź zdjęcie bohatera", 5)
    assert outcome.hits == ()
    assert outcome.confidence == 0.0


async def test_confidence_falls_with_the_share_of_the_query_the_top_tool_lacks() -> None:
    full = await _search().search("weather city", 5)
    partial = await _search().search("weather city bohatera zdjęcie", 5)
    assert full.confidence == 1.0
    assert partial.confidence is not None
    assert 0.0 < partial.confidence < 0.5


async def test_stopwords_and_numbers_alone_find_nothing() -> None:
    outcome = await _search().search("the 10 of a 2024", 5)
    assert outcome.hits == ()
    assert outcome.confidence == 0.0


async def test_limit_and_an_empty_index() -> None:
    search = _search()
    assert len((await search.search("page image weather email", 2)).hits) == 2
    assert (await search.search("page", 0)).hits == ()
    empty = BM25Search()
    assert (await empty.search("page", 5)).note == "no tools are indexed"
    empty.index([])
    assert (await empty.search("page", 5)).hits == ()


async def test_reindexing_replaces_the_tools() -> None:
    search = _search()
    search.index([ToolDocument("list_invoices", "List invoices")])
    assert (await search.search("weather invoices", 5)).names == ("list_invoices",)


async def test_hits_are_best_first_with_ties_in_index_order() -> None:
    tools = tuple(ToolDocument(f"tool_{n}", "Shared words here.") for n in range(4))
    outcome = await _search(tools).search("shared words", 3)
    assert outcome.names == ("tool_0", "tool_1", "tool_2")
    scores = [hit.score for hit in outcome.hits]
    assert scores == sorted(scores, reverse=True)
