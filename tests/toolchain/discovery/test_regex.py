"""RegexSearch: matches ranked name first, bounded patterns, errors as notes."""

from __future__ import annotations

import time

import pytest

from toolchain.discovery._documents import ToolDocument
from toolchain.discovery._regex import MAX_PATTERN_LENGTH, RegexSearch

from .tools import TOOLS


def _search() -> RegexSearch:
    search = RegexSearch()
    search.index(TOOLS)
    return search


async def test_a_match_in_the_name_ranks_before_matches_elsewhere() -> None:
    # "weather" is get_weather's name and only a word in send_email's description.
    outcome = await _search().search("weather", 5)
    assert outcome.names == ("get_weather", "send_email")
    assert outcome.hits[0].score > outcome.hits[1].score


async def test_patterns_are_case_insensitive_and_search_every_field() -> None:
    assert (await _search().search("^CMS_", 5)).names == (
        "cms_searchImages",
        "cms_createPage",
        "cms_addSectionToPage",
    )
    assert (await _search().search("recipient", 5)).names == ("send_email",)  # parameter text
    assert (await _search().search("^slug$", 5)).names == ("cms_createPage",)  # parameter name
    assert (await _search().search("look for photo", 5)).names == ("cms_searchImages",)


async def test_more_matches_and_weightier_fields_rank_higher() -> None:
    search = RegexSearch()
    search.index(
        [
            ToolDocument("one", "An invoice."),
            ToolDocument("two", "An invoice, and another invoice."),
            ToolDocument("three", "Lists an invoice.", parameters=(("invoice_id", ""),)),
        ]
    )
    outcome = await search.search("invoice", 5)
    # A parameter name counts 8, a description match 4.
    assert outcome.names == ("three", "two", "one")
    assert [hit.score for hit in outcome.hits] == [12.0, 8.0, 4.0]


async def test_an_invalid_pattern_gives_no_hits_and_a_note() -> None:
    outcome = await _search().search("(unclosed", 5)
    assert outcome.hits == ()
    assert "not valid RE2 syntax" in outcome.note
    lookaround = await _search().search("(?=x)", 5)
    assert "no lookarounds or backreferences" in lookaround.note


async def test_a_pattern_over_the_length_cap_is_refused() -> None:
    pattern = "a" * (MAX_PATTERN_LENGTH + 1)
    outcome = await _search().search(pattern, 5)
    assert outcome.hits == ()
    assert f"the limit is {MAX_PATTERN_LENGTH}" in outcome.note
    assert (await _search().search("a" * MAX_PATTERN_LENGTH, 5)).note != outcome.note


async def test_a_catastrophic_backtracking_pattern_returns_at_once() -> None:
    # (a+)+$ against "aaaa…b" takes exponential time in a backtracking engine.
    search = RegexSearch()
    search.index([*TOOLS, ToolDocument("aaa", "a" * 5_000 + "b")])
    started = time.perf_counter()
    outcome = await search.search("(a+)+$", 5)
    assert time.perf_counter() - started < 1.0
    assert outcome.names[0] == "aaa"  # "aaa" matches at its end: the name is all a's


@pytest.mark.parametrize("pattern", ["", "^", "(?:)", r"\b", "q{0}"])
async def test_patterns_that_match_only_empty_text_find_nothing(pattern: str) -> None:
    outcome = await _search().search(pattern, 5)
    assert outcome.hits == ()
    assert outcome.note


async def test_the_limit_caps_the_hits() -> None:
    assert len((await _search().search("e", 2)).hits) == 2
    assert (await _search().search("e", 0)).hits == ()
