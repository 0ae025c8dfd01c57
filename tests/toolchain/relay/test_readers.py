"""The context relay's reader tools on a fake reader: both reference forms, bounds,
negative indexes, errors the model can act on, RE2 patterns, and what a chain shows."""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

import pytest

from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolCall, ToolError, ToolResult
from toolchain.relay import ContextRelay, UnknownReference, reader_tools, relay_guide
from toolchain.relay._grep import COUNT_LIMIT, MAX_MATCHES
from toolchain.relay._readers import InternalResourceGrep
from toolchain.relay._references import parse_reference
from toolchain.relay._text import MAX_LINES, OFFLOAD_CHARS

Mode = Literal["opaque", "json"]
NAMES = [
    "internal_resource_length",
    "internal_resource_grep",
    "internal_resource_read_lines",
    "internal_resource_read_slice",
    "internal_resource_read",
]


def _transcript() -> str:
    speakers = ["Host", "Guest", "Caller"]
    lines = [
        f"[{i // 60:02d}:{i % 60:02d}] {speakers[i % 3]}: point {i} of the talk, "
        "with a few words of filler to make the line longer."
        for i in range(600)
    ]
    return "\n".join([*lines, "[10:00] Host: and the final number is 4217."]) + "\n"


def _page() -> str:
    """A large HTML page (the seed's web1 case): navigation, scripts, text, 12 images."""
    parts = ["<!doctype html>", "<html>", "<head>", "<title>Gallery</title>"]
    parts += [f'<script src="/static/chunk-{i}.js"></script>' for i in range(40)]
    parts += ["</head>", "<body>", '<nav class="top">']
    parts += [f'  <a href="/section/{i}">Section {i}</a>' for i in range(200)]
    parts.append("</nav>")
    for i in range(1200):
        parts.append(f'<div class="card" id="card-{i}">')
        parts.append(f"  <p>Card {i}: lorem ipsum dolor sit amet, consectetur adipiscing.</p>")
        if i % 100 == 0:
            parts.append(f'  <img src="/img/photo-{i // 100}.jpg" alt="Photo {i // 100}">')
        parts.append("</div>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


TRANSCRIPT = _transcript()
PAGE = _page()
MINIFIED = PAGE.replace("\n", "")
IMAGES = [f"/img/photo-{k}.jpg" for k in range(12)]


class FakeReader:
    """Values by id; records every read."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.reads: list[str] = []

    async def read(self, ctx: ExecutionContext, reference: str) -> str:
        assert reference.startswith("internal://"), "the tools pass the canonical form"
        id = reference.removeprefix("internal://")
        self.reads.append(id)
        if id not in self.values:
            raise UnknownReference.of(reference)
        return self.values[id]


VALUES = {
    "t1": TRANSCRIPT,
    "web1": PAGE,
    "mini": MINIFIED,
    "empty": "",
    "crlf": "first\r\nsecond\r\nthird",
    "short": "hello world",
}


@pytest.fixture
def reader() -> FakeReader:
    return FakeReader(VALUES)


def tools_of(
    reader: FakeReader, mode: Mode = "opaque", max_chars: int = 20_000
) -> dict[str, Tool[Any, str]]:
    return {tool.name: tool for tool in reader_tools(reader, mode=mode, max_chars=max_chars)}


async def run(tool: Tool[Any, str], **args: object) -> str:
    """Call ``tool`` as a chain would: arguments validated by its codec, then ``call``."""
    outcome = tool.call(ExecutionContext(), tool.codec.validate(args))
    assert not isinstance(outcome, ToolResult)  # the reader tools are async
    result = await outcome
    return result.text


def link(id: str) -> dict[str, object]:
    return {"type": "resource_link", "uri": f"internal://{id}"}


def in_daemon(work: Callable[[], object], timeout: float = 60.0) -> object:
    """``work()`` on a daemon thread: a hang fails the test instead of hanging pytest."""
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"did not finish within {timeout} s"
    return box[0]


# -- references -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "internal://a1B2-c3_",
        "  internal://a1B2-c3_\n",
        "INTERNAL://a1B2-c3_",
        '{"type":"resource_link","uri":"internal://a1B2-c3_"}',
        ' { "type": "resource_link", "uri": "internal://a1B2-c3_" } ',
        {"type": "resource_link", "uri": "internal://a1B2-c3_"},
        {"uri": "internal://a1B2-c3_"},
        {"type": "resource_link", "uri": "internal://a1B2-c3_", "name": "page", "mimeType": "x"},
    ],
)
def test_parse_reference_reads_both_forms(value: object) -> None:
    assert parse_reference(value) == "a1B2-c3_"


@pytest.mark.parametrize(
    "value",
    [
        "the transcript",
        "internal://",
        "internal://a/b",
        "internal://a b",
        "see internal://abc",
        "http://abc",
        '{"type":"resource_link","uri":"internal://a"',
        '{"type":"text","uri":"internal://a"}',
        {"type": "text", "uri": "internal://a"},
        {"uri": 5},
        "internal://" + "a" * 201,
        "{" + " " * 2000 + '"uri":"internal://a"}',
        None,
        42,
        ["internal://a"],
    ],
)
def test_parse_reference_rejects_everything_else(value: object) -> None:
    assert parse_reference(value) is None


def test_unknown_reference_is_a_tool_error_and_a_lookup_error_and_pickles() -> None:
    error = UnknownReference.of("a1b2")
    assert isinstance(error, LookupError)
    assert isinstance(error, ToolError)
    assert str(error).startswith("internal://a1b2 is unknown or expired")
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.reference, str(again)) == (UnknownReference, "a1b2", str(error))
    plain = UnknownReference("custom words")
    assert (str(plain), plain.reference) == ("custom words", "")


# -- the tools, their names, schemas and texts -----------------------------------------


def test_reader_tools_have_the_fixed_names_and_the_seeds_arguments(reader: FakeReader) -> None:
    tools = tools_of(reader)
    assert list(tools) == NAMES
    arguments: dict[str, list[str]] = {}
    for name, tool in tools.items():
        schema: Any = tool.prompt_schema()
        arguments[name] = list(schema["properties"])
    assert arguments == {
        "internal_resource_length": ["opaque_reference"],
        "internal_resource_grep": ["opaque_reference", "pattern", "window"],
        "internal_resource_read_lines": ["opaque_reference", "start_line", "line_count"],
        "internal_resource_read_slice": ["opaque_reference", "start_index", "length"],
        "internal_resource_read": ["opaque_reference"],
    }


def test_bad_options_fail_at_construction(reader: FakeReader) -> None:
    with pytest.raises(ValueError, match="mode must be"):
        reader_tools(reader, mode="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1000"):
        reader_tools(reader, max_chars=10)
    with pytest.raises(ValueError, match="mode must be"):
        relay_guide("xml", few_shot=False)  # type: ignore[arg-type]


def test_the_reference_argument_is_a_string_in_opaque_mode_and_also_an_object_in_json_mode(
    reader: FakeReader,
) -> None:
    def argument(mode: Mode) -> dict[str, Any]:
        schema: Any = tools_of(reader, mode)["internal_resource_grep"].prompt_schema()
        found: dict[str, Any] = schema["properties"]["opaque_reference"]
        return found

    opaque, as_json = argument("opaque"), argument("json")
    assert opaque["type"] == "string"
    assert "internal://a1b2c3" in opaque["description"]
    assert "resource_link" not in opaque["description"]
    assert [option["type"] for option in as_json["anyOf"]] == ["string", "object"]
    assert '{"type":"resource_link","uri":"internal://a1b2c3"}' in as_json["description"]


def test_descriptions_teach_when_to_use_each_tool_in_each_mode(reader: FakeReader) -> None:
    nouns: list[tuple[Mode, str]] = [
        ("opaque", "internal://<id> reference"),
        ("json", '"resource_link"'),
    ]
    for mode, noun in nouns:
        tools = tools_of(reader, mode, max_chars=12_345)
        for tool in tools.values():
            assert noun in tool.description
        read = tools["internal_resource_read"]
        assert read.policy.startswith("Last resort")
        assert "pass the reference itself" in read.policy
        assert "12345" in read.description
        assert "<img" in tools["internal_resource_grep"].policy
        assert "lookarounds" in tools["internal_resource_grep"].policy
        assert "negative counts from the end" in tools["internal_resource_read_slice"].description


def test_chain_prompt_lists_the_tools_with_their_policies(reader: FakeReader) -> None:
    chain = JSONToolChain()
    for tool in reader_tools(reader, mode="json"):
        chain.register_tool(tool)
    prompt = chain.available_tools_prompt()
    assert prompt.count("Policy: ") == 5
    assert "- internal_resource_read: Return the whole value behind a resource link" in prompt


@pytest.mark.parametrize("mode", ["opaque", "json"])
def test_relay_guide_per_mode(mode: Mode) -> None:
    short, long = relay_guide(mode, few_shot=False), relay_guide(mode, few_shot=True)
    assert long.startswith(short)
    assert "Examples" in long and "Examples" not in short
    assert "$" not in long
    assert "last resort" in short
    assert "start_index=-300" in long
    assert 'pattern="<img"' in long
    if mode == "opaque":
        assert "internal://a1b2c3" in short and "resource_link" not in long
        assert 'content="internal://a1b2c3"' in long
    else:
        assert '{"type":"resource_link","uri":"internal://a1b2c3"}' in short
        assert 'content={"type":"resource_link","uri":"internal://a1b2c3"}' in long
    assert len(long) < 2_500  # concise: it rides in every prompt


def test_the_relays_guide_follows_its_mode_and_few_shot_when_they_change() -> None:
    relay = ContextRelay()  # the guide is made once per mode and few_shot, not per run
    assert relay.instructions() == relay_guide("opaque", few_shot=False)
    relay.few_shot = True
    assert relay.instructions() == relay_guide("opaque", few_shot=True)
    relay.mode = "json"
    assert relay.instructions() == relay_guide("json", few_shot=True)
    relay.few_shot = False
    assert relay.instructions() == relay_guide("json", few_shot=False)


# -- both reference forms --------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "reference"),
    [
        ("opaque", "internal://short"),
        ("opaque", " INTERNAL://short\n"),
        ("opaque", '{"type":"resource_link","uri":"internal://short"}'),
        ("json", "internal://short"),
        ("json", '{"type":"resource_link","uri":"internal://short"}'),
        ("json", link("short")),
    ],
)
async def test_every_tool_takes_either_reference_form(
    reader: FakeReader, mode: Mode, reference: object
) -> None:
    tools = tools_of(reader, mode)
    assert await run(tools["internal_resource_read"], opaque_reference=reference) == "hello world"
    slice_ = tools["internal_resource_read_slice"]
    assert await run(slice_, opaque_reference=reference, start_index=-5, length=5) == "world"
    length = await run(tools["internal_resource_length"], opaque_reference=reference)
    assert length == "11 characters, 1 line"
    lines = tools["internal_resource_read_lines"]
    assert await run(lines, opaque_reference=reference, start_line=0) == (
        "hello world\n[lines 0-0 of 1]"
    )
    grep = tools["internal_resource_grep"]
    assert "0:hello world" in await run(grep, opaque_reference=reference, pattern="wor")
    assert reader.reads == ["short"] * 5


async def test_an_object_is_not_a_reference_in_opaque_mode(reader: FakeReader) -> None:
    chain = JSONToolChain().register_tool(tools_of(reader)["internal_resource_read"])
    call = ToolCall("internal_resource_read", {"opaque_reference": link("short")})
    result = await chain.execute_calls(ExecutionContext(), [call], XMLFormat())
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert reader.reads == []


# -- internal_resource_read --------------------------------------------------------------


async def test_read_returns_a_short_value_whole(reader: FakeReader) -> None:
    text = await run(tools_of(reader)["internal_resource_read"], opaque_reference="internal://crlf")
    assert text == VALUES["crlf"]


async def test_read_cuts_at_max_chars_and_says_where_to_read_on(reader: FakeReader) -> None:
    assert len(TRANSCRIPT) > 50_000
    tools = tools_of(reader)
    text = await run(tools["internal_resource_read"], opaque_reference="internal://t1")
    assert len(text) <= 20_000
    body, note = text.rsplit("\n[", 1)
    assert TRANSCRIPT.startswith(body)
    kept = len(body)
    assert note == (
        f"cut at {kept} of {len(TRANSCRIPT)} characters; read on with "
        f"internal_resource_read_slice from start_index {kept}, or search with "
        "internal_resource_grep]"
    )
    following = await run(
        tools["internal_resource_read_slice"],
        opaque_reference="internal://t1",
        start_index=kept,
        length=100,
    )
    assert following == TRANSCRIPT[kept : kept + 100]


# -- internal_resource_read_slice --------------------------------------------------------


@pytest.mark.parametrize(
    ("start_index", "length", "expected"),
    [
        (0, 10, TRANSCRIPT[:10]),
        (100, 50, TRANSCRIPT[100:150]),
        (-47, 47, TRANSCRIPT[-47:]),
        (-47, 10, TRANSCRIPT[-47:-37]),
        (-(10**9), 10, TRANSCRIPT[:10]),  # before the start: clamped, as text[-10**9:]
    ],
)
async def test_slice_counts_python_style(
    reader: FakeReader, start_index: int, length: int, expected: str
) -> None:
    tool = tools_of(reader)["internal_resource_read_slice"]
    text = await run(tool, opaque_reference="internal://t1", start_index=start_index, length=length)
    assert text == expected


async def test_slice_answers_the_seeds_case3_from_the_end(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_slice"]
    end = await run(tool, opaque_reference="internal://t1", start_index=-300, length=300)
    assert "the final number is 4217." in end
    assert len(end) == 300


async def test_slice_past_the_end_says_so(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_slice"]
    text = await run(tool, opaque_reference="internal://short", start_index=6, length=100)
    assert text == "world\n[the value ends here, at 11 characters]"
    for start in (11, 10**12):
        with pytest.raises(
            ToolError, match=rf"start_index {start} is past the end: the value has 11"
        ):
            await run(tool, opaque_reference="internal://short", start_index=start, length=5)
    empty = await run(tool, opaque_reference="internal://empty", start_index=0, length=5)
    assert empty == "[the value is empty]"


@pytest.mark.parametrize("length", [0, -1, -500])
async def test_slice_length_below_one_is_an_error(reader: FakeReader, length: int) -> None:
    tool = tools_of(reader)["internal_resource_read_slice"]
    with pytest.raises(ToolError, match=r"length must be at least 1.*negative start_index"):
        await run(tool, opaque_reference="internal://t1", start_index=-10, length=length)
    assert reader.reads == []  # checked before reading


async def test_slice_longer_than_max_chars_is_cut_and_continues(reader: FakeReader) -> None:
    tool = tools_of(reader, max_chars=5_000)["internal_resource_read_slice"]
    text = await run(tool, opaque_reference="internal://t1", start_index=1_000, length=30_000)
    assert len(text) <= 5_000
    body, note = text.rsplit("\n[", 1)
    assert body == TRANSCRIPT[1_000 : 1_000 + len(body)]
    assert note == (
        f"cut at {len(body)} of the 30000 characters asked for (5000 per call); "
        f"continue with start_index {1_000 + len(body)}]"
    )


# -- internal_resource_length -----------------------------------------------------------


@pytest.mark.parametrize(
    ("id", "expected"),
    [
        ("t1", f"{len(TRANSCRIPT)} characters, 601 lines"),
        ("empty", "0 characters, 0 lines"),
        ("crlf", "20 characters, 3 lines"),
        ("short", "11 characters, 1 line"),
    ],
)
async def test_length_counts_characters_and_lines(
    reader: FakeReader, id: str, expected: str
) -> None:
    tool = tools_of(reader)["internal_resource_length"]
    assert await run(tool, opaque_reference=f"internal://{id}") == expected


# -- internal_resource_read_lines ---------------------------------------------------------


async def test_lines_from_the_start_and_from_the_end(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_lines"]
    lines = TRANSCRIPT.splitlines()
    first = await run(tool, opaque_reference="internal://t1", start_line=0, line_count=3)
    assert first == "\n".join([*lines[:3], "[lines 0-2 of 601; next start_line 3]"])
    last = await run(tool, opaque_reference="internal://t1", start_line=-2, line_count=5)
    assert last == "\n".join([*lines[-2:], "[lines 599-600 of 601]"])
    clamped = await run(tool, opaque_reference="internal://t1", start_line=-(10**6), line_count=1)
    assert clamped.startswith(lines[0] + "\n[lines 0-0 of 601")


async def test_lines_drop_carriage_returns(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_lines"]
    text = await run(tool, opaque_reference="internal://crlf", start_line=1)
    assert text == "second\nthird\n[lines 1-2 of 3]"


async def test_lines_past_the_end_and_bad_counts_are_errors(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_lines"]
    with pytest.raises(ToolError, match=r"start_line 601 is past the end: the value has 601 lines"):
        await run(tool, opaque_reference="internal://t1", start_line=601)
    with pytest.raises(ToolError, match="line_count must be at least 1"):
        await run(tool, opaque_reference="internal://t1", start_line=0, line_count=0)
    empty = await run(tool, opaque_reference="internal://empty", start_line=0)
    assert empty == "[the value is empty]"


async def test_lines_are_bounded_by_count_and_by_characters(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_read_lines"]
    many = await run(tool, opaque_reference="internal://t1", start_line=10, line_count=10_000)
    assert many.endswith(
        f"[lines 10-{10 + MAX_LINES - 1} of 601; next start_line {10 + MAX_LINES} "
        f"(at most {MAX_LINES} lines per call)]"
    )
    small = tools_of(reader, max_chars=2_000)["internal_resource_read_lines"]
    text = await run(small, opaque_reference="internal://t1", start_line=0, line_count=100)
    assert len(text) <= 2_000
    *rows, footer = text.split("\n")
    assert rows == TRANSCRIPT.splitlines()[: len(rows)]
    assert footer == (
        f"[lines 0-{len(rows) - 1} of 601; next start_line {len(rows)} "
        "(at most 2000 characters per call)]"
    )


async def test_a_line_longer_than_max_chars_is_cut_with_its_index(reader: FakeReader) -> None:
    tool = tools_of(reader, max_chars=5_000)["internal_resource_read_lines"]
    text = await run(tool, opaque_reference="internal://mini", start_line=0)
    assert len(text) <= 5_000
    body, note = text.rsplit("\n[", 1)
    assert MINIFIED.startswith(body)
    assert note == (
        f"line 0 cut at {len(body)} of its {len(MINIFIED)} characters; read on with "
        f"internal_resource_read_slice from start_index {len(body)}]"
    )


# -- internal_resource_grep ------------------------------------------------------------------


async def test_grep_finds_the_images_of_the_web1_page_without_a_full_read(
    reader: FakeReader,
) -> None:
    assert len(PAGE) > 80_000
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://web1", pattern="<img", window=0)
    head, *rows = text.split("\n")
    assert head.startswith("12 matches (lines numbered from 0")
    assert len(rows) == 12
    page_lines = PAGE.splitlines()
    for row, source in zip(rows, IMAGES, strict=True):
        number, line = row.split(":", 1)
        assert source in line
        assert page_lines[int(number)] == line  # the same numbers read_lines takes
    assert len(text) < 2_000


async def test_grep_shows_context_lines_and_separates_groups(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://web1", pattern="photo-(0|1)\\.jpg")
    page_lines = PAGE.splitlines()
    first = next(i for i, line in enumerate(page_lines) if "photo-0.jpg" in line)
    blocks = text.split("\n", 1)[1].split("\n--\n")
    assert len(blocks) == 2
    assert blocks[0].split("\n") == [
        f"{first - 2}-{page_lines[first - 2]}",
        f"{first - 1}-{page_lines[first - 1]}",
        f"{first}:{page_lines[first]}",
        f"{first + 1}-{page_lines[first + 1]}",
        f"{first + 2}-{page_lines[first + 2]}",
    ]


async def test_grep_on_one_long_line_shows_each_match_with_its_index(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://mini", pattern="<img", window=0)
    rows = text.split("\n")[1:]
    assert len(rows) == 12
    for row, source in zip(rows, IMAGES, strict=True):
        assert row.startswith("0:...") or row.startswith("0:<!doctype")
        assert source in row
        index = int(row.rsplit("[match at index ", 1)[1].rstrip("]"))
        assert MINIFIED[index : index + 4] == "<img"
        assert len(row) < 400


async def test_grep_counts_more_matches_than_it_shows(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://t1", pattern="Host", window=0)
    head = text.split("\n", 1)[0]
    assert head.startswith(f"201 matches; the first {MAX_MATCHES} shown (narrow the pattern")
    assert text.count("\n") == MAX_MATCHES
    every = await run(tool, opaque_reference="internal://mini", pattern="i", window=0)
    assert every.startswith(f"more than {COUNT_LIMIT} matches; the first {MAX_MATCHES} shown")


async def test_grep_with_no_match_says_so(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://t1", pattern="zebra")
    assert text == "no match in 601 lines; try a broader pattern, or (?i) to ignore case"
    found = await run(tool, opaque_reference="internal://t1", pattern="(?i)FINAL NUMBER", window=0)
    assert found.endswith("600:[10:00] Host: and the final number is 4217.")


async def test_grep_matches_may_span_lines(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(
        tool, opaque_reference="internal://t1", pattern=r"point 598 .*\n.*Caller", window=0
    )
    lines = TRANSCRIPT.splitlines()
    assert text.split("\n")[1:] == [f"598:{lines[598]}", f"599:{lines[599]}"]


@pytest.mark.parametrize("max_chars", [1_000, 3_000, 20_000])
async def test_grep_output_stays_within_max_chars(reader: FakeReader, max_chars: int) -> None:
    tool = tools_of(reader, max_chars=max_chars)["internal_resource_grep"]
    for id in ("t1", "web1", "mini"):
        text = await run(tool, opaque_reference=f"internal://{id}", pattern="o", window=10)
        assert len(text) <= max_chars
    text = await run(tool, opaque_reference="internal://t1", pattern="Host", window=10)
    if max_chars < 20_000:
        assert text.endswith("matches shown; narrow the pattern or lower window]")


async def test_grep_cut_inside_one_long_line_counts_the_matches_shown(
    reader: FakeReader,
) -> None:
    tool = tools_of(reader, max_chars=1_000)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://mini", pattern="<img", window=0)
    *rows, note = text.split("\n")[1:]
    assert len(rows) == 2 and all("[match at index" in row for row in rows)
    assert note == (
        "[output cut at 1000 characters: 2 of 12 matches shown; narrow the pattern or lower window]"
    )


async def test_grep_window_is_clamped_and_must_not_be_negative(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    text = await run(tool, opaque_reference="internal://t1", pattern="point 300 ", window=1_000)
    assert text.count("\n") == 1 + 10 + 10  # the head, the match, 10 lines each side
    with pytest.raises(ToolError, match="window must be 0 or more"):
        await run(tool, opaque_reference="internal://t1", pattern="x", window=-1)
    with pytest.raises(ToolError, match="pattern is empty"):
        await run(tool, opaque_reference="internal://t1", pattern="")
    with pytest.raises(ToolError, match="pattern is too long"):
        await run(tool, opaque_reference="internal://t1", pattern="a" * 1_001)


@pytest.mark.parametrize(
    ("pattern", "detail"),
    [
        ("(?=Host)", "invalid perl operator: (?="),
        ("(?<=a)b", "invalid perl operator: (?<="),
        ("(?!a)", "invalid perl operator: (?!"),
        (r"(a)\1", r"invalid escape sequence: \1"),
        ("[", "missing ]: ["),
        ("a{2,1}", "invalid repetition size: {2,1}"),
    ],
)
async def test_patterns_re2_cannot_compile_are_clear_errors(
    reader: FakeReader, pattern: str, detail: str
) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    with pytest.raises(ToolError) as caught:
        await run(tool, opaque_reference="internal://t1", pattern=pattern)
    assert str(caught.value) == (
        f"the pattern is not valid RE2: {detail}; lookarounds and backreferences are not supported"
    )
    assert reader.reads == []  # no read for a pattern that cannot run


async def test_python_end_anchor_gets_a_hint(reader: FakeReader) -> None:
    tool = tools_of(reader)["internal_resource_grep"]
    with pytest.raises(ToolError, match=r"use \\z for the end of the text"):
        await run(tool, opaque_reference="internal://t1", pattern=r"4217\.\Z")


@pytest.mark.parametrize(
    ("value", "pattern", "head"),
    [
        ("a" * 50_000 + "b", "(a+)+$", "no match"),  # catastrophic in Python's re
        ("x" * 20_000, "(x+x+)+y", "no match"),
        ("ab" * 20_000 + "c", "(a|ab|b)*$", "2 matches"),  # one empty, at the very end
    ],
)
def test_backtracking_patterns_finish_at_once(value: str, pattern: str, head: str) -> None:
    grep = InternalResourceGrep(FakeReader({"v": value}))
    found = in_daemon(
        lambda: asyncio.run(run(grep, opaque_reference="internal://v", pattern=pattern))
    )
    assert isinstance(found, str)
    assert found.startswith(head)


def test_re2_is_not_loaded_by_import_toolchain() -> None:
    code = "import sys, toolchain, toolchain.relay; assert 're2' not in sys.modules, 're2 loaded'"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


async def test_grep_survives_lone_surrogates() -> None:
    tool = InternalResourceGrep(FakeReader({"s": "ok \ud800 here\nnext line"}))
    text = await run(tool, opaque_reference="internal://s", pattern="next", window=1)
    assert text.endswith("1:next line")


# -- large values --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ten_mb() -> str:
    line = "2026-11-22T07:00:00Z INFO worker=7 handled request id=abcdef in 12 ms"
    lines = [f"{line} #{i}" for i in range(10_500_000 // (len(line) + 3))]
    lines[-5] = "2026-11-22T07:00:00Z ERROR worker=3 disk full on /var/data"
    text = "\n".join(lines) + "\n"
    assert len(text) > 10_000_000 > OFFLOAD_CHARS
    return text


async def test_ten_megabyte_values_stay_bounded(ten_mb: str) -> None:
    reader = FakeReader({"big": ten_mb})
    tools = tools_of(reader)
    ref = "internal://big"

    def checked(text: str) -> str:
        assert len(text) <= 20_000
        return text

    read = checked(await run(tools["internal_resource_read"], opaque_reference=ref))
    body, note = read.rsplit("\n[", 1)
    assert ten_mb.startswith(body)
    assert note.startswith(f"cut at {len(body)} of {len(ten_mb)} characters")
    length = await run(tools["internal_resource_length"], opaque_reference=ref)
    assert length == f"{len(ten_mb)} characters, {ten_mb.count(chr(10))} lines"
    end = checked(
        await run(
            tools["internal_resource_read_slice"],
            opaque_reference=ref,
            start_index=-200,
            length=200,
        )
    )
    assert end == ten_mb[-200:]
    lines = checked(
        await run(
            tools["internal_resource_read_lines"], opaque_reference=ref, start_line=-6, line_count=3
        )
    )
    assert "ERROR worker=3 disk full" in lines
    found = checked(
        await run(tools["internal_resource_grep"], opaque_reference=ref, pattern="ERROR", window=1)
    )
    assert found.startswith("1 match")
    assert "disk full on /var/data" in found
    every = checked(
        await run(tools["internal_resource_grep"], opaque_reference=ref, pattern="INFO", window=0)
    )
    assert every.startswith(f"more than {COUNT_LIMIT} matches")


# -- unknown references ----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
async def test_an_unknown_reference_fails_the_call_with_its_message(
    reader: FakeReader, name: str
) -> None:
    args: dict[str, dict[str, object]] = {
        "internal_resource_grep": {"pattern": "x"},
        "internal_resource_read_lines": {"start_line": 0},
        "internal_resource_read_slice": {"start_index": 0, "length": 5},
    }
    tool = tools_of(reader)[name]
    with pytest.raises(UnknownReference, match="internal://gone is unknown or expired"):
        await run(tool, opaque_reference="internal://gone", **args.get(name, {}))
    with pytest.raises(UnknownReference, match="'the transcript' is not a reference"):
        await run(tool, opaque_reference="the transcript", **args.get(name, {}))


# -- through a real chain: what the model sees ----------------------------------------------


async def test_through_a_json_chain_the_model_sees_outputs_and_plain_errors(
    reader: FakeReader,
) -> None:
    chain = JSONToolChain()
    for tool in reader_tools(reader, mode="json"):
        chain.register_tool(tool)
    calls = [
        ToolCall("internal_resource_length", {"opaque_reference": link("t1")}, id="c1"),
        ToolCall(
            "internal_resource_grep",
            {"opaque_reference": json.dumps(link("web1")), "pattern": "<img", "window": 0},
            id="c2",
        ),
        ToolCall(
            "internal_resource_read_slice",
            {"opaque_reference": "internal://t1", "start_index": -10, "length": 10},
            id="c3",
        ),
        ToolCall("internal_resource_read", {"opaque_reference": link("gone")}, id="c4"),
        ToolCall(
            "internal_resource_grep",
            {"opaque_reference": link("t1"), "pattern": "(?<=x)y"},
            id="c5",
        ),
        ToolCall(
            "internal_resource_read_lines",
            {"opaque_reference": link("t1"), "start_line": 5_000},
            id="c6",
        ),
    ]
    result = await chain.execute_calls(ExecutionContext(), calls, XMLFormat())
    seen = {observation.id: observation.text for observation in result.observations}
    assert seen["c1"] == f"{len(TRANSCRIPT)} characters, 601 lines"
    assert seen["c2"].startswith("12 matches") and all(src in seen["c2"] for src in IMAGES)
    assert seen["c3"] == TRANSCRIPT[-10:]
    assert seen["c4"] == (
        "Error: internal://gone is unknown or expired (references belong to one run): use "
        "only a reference a tool returned in this run, unchanged"
    )
    assert seen["c5"].startswith("Error: the pattern is not valid RE2: invalid perl operator")
    assert seen["c6"].startswith("Error: start_line 5000 is past the end: the value has 601")
    kinds = [error.kind if error else None for error in result.raw.errors]
    assert kinds == [None, None, None, "tool_error", "tool_error", "tool_error"]
    assert isinstance(result.raw.errors[3] and result.raw.errors[3].exception, UnknownReference)
    assert "<internal_resource_grep>\n12 matches" in result.text
    assert result.raw.output(0, str) == seen["c1"]
