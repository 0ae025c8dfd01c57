"""Token counts of any size: exact where the text is cut at o200k's own piece boundaries,
linear in the text's length, and the two users of big counts (ToolSearch over a large
tool set, ContextRelay counting in tokens) working on texts past the encoder's limits."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from formats import XMLFormat
from tests.support.timing import costlier_than
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult, tool
from toolchain._tokens import (
    CHUNK_CHARS,
    FORCED_CUT_TOKENS,
    SAFE_CUTS,
    chunks,
    count_tokens,
    encoding,
)
from toolchain.discovery import ToolSearch
from toolchain.relay import ContextRelay

ROOT = Path(__file__).resolve().parents[2]
# Real prose with code: the pages of the docs, about 100 KB together (the README was, once).
DOCS_TEXT = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))

# Characters that decide where o200k splits: letters of each case and script, marks,
# digits, apostrophes (contractions), every kind of whitespace and line break, '/', and
# punctuation, plus a few multi-character runs.
TRICKY = [
    *"aAzZéÉßǅ日本ü\u0301\u0300",
    *"0123456789٣½Ⅻ",
    *"'\u2019\"/\\.,:;!?-_=+*#@$%^&()[]{}<>|~`€😀",
    *" \t\n\r\v\f\x1c\x85\xa0\u2028\u3000",
    "'s",
    "'LL",
    " the",
    "\r\n",
    "\n\n",
    "  ",
    "ing",
    "\ud83d",
]


def encoded(text: str) -> int:
    return len(encoding().encode_ordinary(text))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=40).map("".join))
def test_every_cut_position_splits_the_count_exactly(text: str) -> None:
    for found in SAFE_CUTS.finditer(text):
        at = found.start()
        assert encoded(text[:at]) + encoded(text[at:]) == encoded(text), (text, at)


def test_real_texts_counted_in_pieces_are_exact() -> None:
    texts = [
        DOCS_TEXT,
        (ROOT / "toolchain" / "relay" / "_readers.py").read_text(encoding="utf-8"),
        (ROOT / "uv.lock").read_text(encoding="utf-8")[:300_000],
    ]
    for text in texts:
        for size in (256, 4_096):
            pieces = chunks(text, size)
            assert "".join(pieces) == text
            assert max(map(len, pieces)) <= size
            ends = [len(piece) for piece in pieces[:-1]]
            positions = [sum(ends[: n + 1]) for n in range(len(ends))]
            if all(SAFE_CUTS.match(text, at) for at in positions):  # no forced cut
                assert sum(map(encoded, pieces)) == encoded(text), size


def test_a_forced_cut_moves_the_count_by_at_most_the_stated_bound() -> None:
    made = random.Random(17)
    alphabets = [
        "abcdefghXYZ",  # one long word
        "AZaz09+/",  # base64
        "日本語中文字",
        "-=*#_",
        " \t\n",
        "0123456789",
    ]
    for alphabet in alphabets:
        for _ in range(40):
            text = "".join(made.choice(alphabet) for _ in range(made.randint(20, 300)))
            for at in range(1, len(text)):
                moved = encoded(text[:at]) + encoded(text[at:]) - encoded(text)
                assert abs(moved) <= FORCED_CUT_TOKENS, (text, at, moved)


_PIECES = st.lists(st.sampled_from(TRICKY), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_PIECES, _PIECES, _PIECES, _PIECES, st.integers(0, 600))
def test_a_difference_is_the_difference_of_the_counts(
    head: str, middle: str, other: str, tail: str, padding: int
) -> None:
    # Heads and tails past the reach searched for a cut too (a long shared start).
    head = "x y " * (padding // 4) + head
    text, minus = head + middle + tail, head + other + tail
    assert count_tokens(text, minus=minus) == encoded(text) - encoded(minus)
    assert count_tokens(minus, minus=text) == encoded(minus) - encoded(text)
    assert count_tokens(text, minus=text) == 0


def test_a_name_before_a_large_output_is_counted_without_counting_the_output() -> None:
    output = (ROOT / "README.md").read_text(encoding="utf-8") * 8  # some 500 KB
    named = "$readme_1 = " + output
    assert count_tokens(named, minus=output) == count_tokens(named) - count_tokens(output)
    # Comparing the texts is linear too, but in C: a small share of counting one of them.
    whole, difference = lambda: count_tokens(output), lambda: count_tokens(named, minus=output)
    assert costlier_than(0.05, whole, difference) is None


def test_texts_over_the_encoders_limits_are_counted() -> None:
    assert count_tokens("Hello world " * 200_000) == 400_001  # 2.4 million characters
    # 900,000 characters, under the encoder's million, but 450,001 tokens: over its 200,000
    assert count_tokens("\u4e00 " * 450_000) == 450_001
    blob = "A" * (3 * CHUNK_CHARS)  # no safe place at all: forced cuts, close
    assert abs(count_tokens(blob) - 3 * count_tokens("A" * CHUNK_CHARS)) <= 3 * FORCED_CUT_TOKENS


def test_counting_is_linear() -> None:
    unit = DOCS_TEXT
    small, large = unit * 8, unit * 32

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            count_tokens(text)
            best = min(best, time.process_time() - started)
        return best

    count_tokens(unit)  # the encoder's tables load once
    ratio = cost(large) / max(cost(small), 1e-6)
    assert ratio < 8, ratio  # 4 times the text: about 4 times the time


# -- the users of big counts ---------------------------------------------------------


class Booking(BaseModel):
    city: str = Field(description="The city where the booking takes place, e.g. Lisbon or Kyoto.")
    check_in: str = Field(description="The first night, as an ISO date (2025-06-01).")
    nights: int = Field(ge=1, le=30, description="How many nights to stay, from 1 to 30.")
    guests: int = Field(default=1, description="How many people stay, children included.")
    notes: str = Field(default="", description="Anything the property should know in advance.")


class BookTool(Tool[Booking, str]):
    """One of many near-identical booking tools, as a large catalogue holds them."""

    def __init__(self, number: int) -> None:
        self.name = f"book_stay_{number}"
        self.description = (
            f"Book a stay with partner {number} of the travel catalogue: hotels, hostels "
            "and apartments, with free cancellation up to two days before arrival. "
            "Returns a confirmation code the traveller can quote to the property."
        )

    def call(self, ctx: ExecutionContext, input: Booking) -> ToolResult[str]:
        return ToolResult(f"booked {input.city}")


def test_tool_search_over_a_catalogue_of_a_million_characters_is_built() -> None:
    tools: list[Tool[Any, Any]] = [BookTool(number) for number in range(1_883)]
    search = ToolSearch(tools)  # counted every definition: over a million characters
    assert search.definition_tokens > 200_000 and search.defers
    chain = JSONToolChain(extensions=[search])
    found = chain.execute_sync(
        ExecutionContext(),
        '{"tool": "tool_search", "args": {"query": "book a stay with partner 1234"}}',
        XMLFormat(),
    )
    assert found.raw.errors == (None,)


@tool
def export_log() -> str:
    """The whole server log."""
    return "GET /index.html 200\n" * 60_000  # 1.2 million characters


def test_the_relay_counting_tokens_boxes_an_output_of_a_million_characters() -> None:
    relay = ContextRelay(threshold=5_000, unit="tokens")
    chain = JSONToolChain(extensions=[relay]).register_tool(export_log)
    result = chain.execute_sync(
        ExecutionContext(), '{"tool": "export_log", "args": {}}', XMLFormat()
    )
    assert result.raw.errors == (None,)
    assert result.observations[0].text.startswith("internal://")
    assert len(result.raw.output(0, str)) == 1_200_000
