"""Incremental parsing: ``fmt.stream()``, events, and chunk boundaries."""

from __future__ import annotations

import pytest

from formats import (
    FormatParseError,
    SectionDelta,
    SectionEnd,
    SectionEvent,
    SectionStart,
    SectionStream,
)
from tests.formats._support import DIALECTS, Dialect, feed_all, joined_deltas


@pytest.fixture(params=DIALECTS, ids=lambda d: d.kind)
def dialect(request: pytest.FixtureRequest) -> Dialect:
    d: Dialect = request.param
    return d


def open_of(stream: SectionStream) -> str | None:
    """``stream.open_section``, read through a call so mypy does not narrow it."""
    return stream.open_section


def merged(events: list[SectionEvent]) -> list[SectionEvent]:
    """Consecutive deltas of one section merged, so chunking does not matter."""
    out: list[SectionEvent] = []
    for event in events:
        last = out[-1] if out else None
        if (
            isinstance(event, SectionDelta)
            and isinstance(last, SectionDelta)
            and last.name == event.name
        ):
            out[-1] = SectionDelta(event.name, last.text + event.text)
        else:
            out.append(event)
    return out


def test_xml_open_section_mid_stream() -> None:
    stream = Dialect("xml").make().stream()
    assert open_of(stream) is None
    stream.feed("Let me think. <thinking>h")
    assert open_of(stream) == "thinking"
    stream.feed("m</thinking>")
    assert open_of(stream) is None
    stream.feed("<answer>4")
    assert open_of(stream) == "answer"
    assert stream.close() == {"thinking": ["hm"], "answer": ["4"]}
    assert open_of(stream) is None


def test_xml_open_section_after_one_chunk() -> None:
    stream = Dialect("xml").make().stream()
    stream.feed("<thinking>hm</thinking><answer>4")
    assert open_of(stream) == "answer"


def test_xml_open_section_reports_the_registered_spelling() -> None:
    stream = Dialect("xml").make().stream()
    stream.feed("<THINKING>x")
    assert open_of(stream) == "thinking"


def test_markdown_open_section_mid_stream() -> None:
    stream = Dialect("markdown").make().stream()
    stream.feed("Preamble\n# Thinking\nh")
    assert open_of(stream) == "thinking"
    stream.feed("m\n# answer\n4")
    assert open_of(stream) == "answer"
    assert stream.close() == {"thinking": ["hm"], "answer": ["4"]}
    assert open_of(stream) is None


def test_xml_events_in_order() -> None:
    stream = Dialect("xml").make().stream()
    chunks = ["pre <thinking>", " h", "m ", "k\n", "</thinking>\n<answer>4", "2</answer> post"]
    returned = feed_all(stream, chunks)
    assert stream.close() == {"thinking": ["hm k"], "answer": ["42"]}
    # Whitespace is held until text follows it, so trailing whitespace is never sent.
    assert returned == [
        SectionStart("thinking"),
        SectionDelta("thinking", "h"),
        SectionDelta("thinking", "m"),
        SectionDelta("thinking", " k"),
        SectionEnd("thinking", "hm k"),
        SectionStart("answer"),
        SectionDelta("answer", "4"),
        SectionDelta("answer", "2"),
        SectionEnd("answer", "42"),
    ]
    assert stream.events() == returned


def test_markdown_events_in_order() -> None:
    stream = Dialect("markdown").make().stream()
    returned = feed_all(stream, ["pre\n# thinking\n", "hm\n", "# answer\n4", "2"])
    assert returned == [
        SectionStart("thinking"),
        SectionDelta("thinking", "hm"),
        SectionEnd("thinking", "hm"),
        SectionStart("answer"),
        SectionDelta("answer", "4"),
        SectionDelta("answer", "2"),
    ]
    assert stream.close() == {"thinking": ["hm"], "answer": ["42"]}
    # close() completes the cut-off section; events() has it, feed() could not return it.
    assert stream.events() == [*returned, SectionEnd("answer", "42")]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_events_do_not_depend_on_chunk_size(dialect: Dialect, size: int) -> None:
    output = (
        "intro\n"
        + dialect.section("thinking", "\n  a & b <c> && \\d\n")
        + "\n"
        + dialect.section("answer", "42\n", closed=False)
    )
    stream = dialect.make().stream()
    feed_all(stream, [output[i : i + size] for i in range(0, len(output), size)])
    stream.close()
    assert merged(stream.events()) == [
        SectionStart("thinking"),
        SectionDelta("thinking", "a & b <c> && \\d"),
        SectionEnd("thinking", "a & b <c> && \\d"),
        SectionStart("answer"),
        SectionDelta("answer", "42"),
        SectionEnd("answer", "42"),
    ]


def test_deltas_join_to_content(dialect: Dialect) -> None:
    output = (
        dialect.section("thinking", "  \n one\n two  \n\n")
        + "\n"
        + dialect.section("answer", " 42 \n")
    )
    for size in (1, 2, 5, len(output)):
        stream = dialect.make().stream()
        feed_all(stream, [output[i : i + size] for i in range(0, len(output), size)])
        stream.close()
        sections = joined_deltas(stream.events())
        assert [(name, content) for name, _, content in sections] == [
            ("thinking", "one\n two"),
            ("answer", "42"),
        ]
        for _, joined, content in sections:
            assert joined == content


def test_first_delta_has_no_leading_whitespace(dialect: Dialect) -> None:
    stream = dialect.make().stream()
    events = feed_all(stream, [dialect.section("answer", "", closed=False), "  ", "\n", " x"])
    deltas = [e for e in events if isinstance(e, SectionDelta)]
    assert deltas == [SectionDelta("answer", "x")]


def test_xml_answer_split_mid_tag() -> None:
    stream = Dialect("xml").make().stream()
    assert stream.feed("<ans") == []
    assert open_of(stream) is None
    assert stream.feed("wer>4") == [SectionStart("answer"), SectionDelta("answer", "4")]
    assert open_of(stream) == "answer"
    assert stream.feed("2</answer>") == [SectionDelta("answer", "2"), SectionEnd("answer", "42")]
    assert stream.close() == {"answer": ["42"]}


@pytest.mark.parametrize(
    "chunks",
    [["<answer>4</", "answer>"], ["<answer>4<", "/answer>"], ["<answer>4</answer", ">"]],
)
def test_xml_closing_tag_split(chunks: list[str]) -> None:
    stream = Dialect("xml").make().stream()
    events = feed_all(stream, chunks)
    assert merged(events) == [
        SectionStart("answer"),
        SectionDelta("answer", "4"),
        SectionEnd("answer", "4"),
    ]
    assert stream.close() == {"answer": ["4"]}


def test_xml_held_back_less_than_is_not_lost() -> None:
    stream = Dialect("xml").make().stream()
    events = feed_all(stream, ["<answer>a <", " b", " > c <", "/answer>"])
    assert merged(events) == [
        SectionStart("answer"),
        SectionDelta("answer", "a < b > c"),
        SectionEnd("answer", "a < b > c"),
    ]


@pytest.mark.parametrize(
    ("chunks", "decoded"),
    [
        (["<answer>a &am", "p; b</answer>"], "a & b"),
        (["<answer>a &", "amp; b</answer>"], "a & b"),
        (["<answer>a &amp", "; b</answer>"], "a & b"),
        (["<answer>a &l", "t;b</answer>"], "a <b"),
        (["<answer>a &g", "t; b</answer>"], "a > b"),
        (["<answer>a &amp;l", "t; b</answer>"], "a &lt; b"),
        (["<answer>a &am", "ber b</answer>"], "a &amber b"),
    ],
)
def test_xml_entity_split_mid_chunk_decodes_right_in_deltas(
    chunks: list[str], decoded: str
) -> None:
    stream = Dialect("xml").make().stream()
    events = feed_all(stream, chunks)
    deltas = [e.text for e in events if isinstance(e, SectionDelta)]
    assert "".join(deltas) == decoded
    assert stream.close() == {"answer": [decoded]}


def test_xml_partial_entity_at_the_very_end_is_flushed_by_close() -> None:
    stream = Dialect("xml").make().stream()
    stream.feed("<answer>a &am")
    assert stream.close() == {"answer": ["a &am"]}
    assert joined_deltas(stream.events()) == [("answer", "a &am", "a &am")]


@pytest.mark.parametrize(
    ("chunks", "decoded"),
    [
        (["# answer\n\\", "# x\n"], "# x"),
        (["# answer\na", "\\# x\n"], "a\\# x"),
        (["# answer\na ", "\\\\# x\n"], "a \\\\# x"),
        (["# answer\n  \\", "\\# x"], "\\# x"),
    ],
    ids=["escape-split", "mid-line-escape", "mid-line-double", "indented"],
)
def test_markdown_escapes_decode_right_in_deltas(chunks: list[str], decoded: str) -> None:
    stream = Dialect("markdown").make().stream()
    events = feed_all(stream, chunks)
    assert stream.close() == {"answer": [decoded]}
    deltas = [e.text for e in events if isinstance(e, SectionDelta)]
    deltas += [e.text for e in stream.events()[len(events) :] if isinstance(e, SectionDelta)]
    assert "".join(deltas) == decoded


def test_markdown_heading_split_across_chunks() -> None:
    stream = Dialect("markdown").make().stream()
    assert stream.feed("# ans") == []
    assert stream.feed("wer") == []
    assert open_of(stream) is None
    assert stream.feed("\n4") == [SectionStart("answer"), SectionDelta("answer", "4")]
    assert stream.close() == {"answer": ["4"]}


def test_stream_close_raises_when_no_section(dialect: Dialect) -> None:
    stream = dialect.make().stream()
    stream.feed("no sections <b> here\n## answer\n")
    with pytest.raises(FormatParseError, match="thinking, action, answer"):
        stream.close()


def test_stream_close_ends_a_cut_off_section(dialect: Dialect) -> None:
    stream = dialect.make().stream()
    stream.feed(dialect.section("answer", "partial", closed=False))
    assert open_of(stream) == "answer"
    assert stream.close() == {"answer": ["partial"]}
    assert stream.events()[-1] == SectionEnd("answer", "partial")
