"""Property tests: round trips, no forging from tool output, streamed == whole parse."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import (
    FormattedSection,
    SectionDelta,
    SectionEnd,
    SectionStart,
    markdown_decode,
    markdown_encode,
    xml_decode,
    xml_encode,
)
from tests.formats._support import (
    DIALECTS,
    Dialect,
    close_outcome,
    feed_all,
    hostile_text,
    outcome,
    split_at,
)

# Registered spellings used by the round trips (mixed case, '.', '-', '_' included).
ROUND_TRIP_NAMES = ("thinking", "action", "answer", "Tool_x", "a.b-c", "observation")
# Names a model writes: registered ones in other letter cases, and unregistered ones.
WRITTEN_NAMES = ("thinking", "THINKING", "Thinking", "action", "answer", "Answer", "other", "b")

PROPERTY = settings(max_examples=200, deadline=None)

dialects = pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.kind)


def model_output(kind: str) -> st.SearchStrategy[str]:
    """Raw model output: sections (closed or not, any case), hostile text, garbage."""
    names = st.sampled_from(WRITTEN_NAMES)
    section: st.SearchStrategy[str]
    if kind == "xml":
        section = st.builds(
            lambda newline, name, body, closed: (
                ("\n" if newline else "") + f"<{name}>{body}" + (f"</{name}>" if closed else "")
            ),
            st.booleans(),
            names,
            hostile_text,
            st.booleans(),
        )
        tag = st.builds(lambda slash, name: f"<{slash}{name}>", st.sampled_from(["", "/"]), names)
    else:
        section = st.builds(
            lambda name, suffix, body: f"\n# {name}{suffix}\n{body}",
            names,
            st.sampled_from(["", ":", " : ", "\r", "  "]),
            hostile_text,
        )
        tag = st.builds(
            lambda hashes, name: f"\n{hashes} {name}\n", st.sampled_from(["#", "##"]), names
        )
    piece = st.one_of(section, section, tag, hostile_text, st.text(max_size=8))
    return st.lists(piece, max_size=8).map("".join)


# --- encoders -----------------------------------------------------------------------


@PROPERTY
@given(content=hostile_text)
def test_xml_decode_inverts_encode(content: str) -> None:
    assert xml_decode(xml_encode(content)) == content


@PROPERTY
@given(content=hostile_text)
def test_markdown_decode_inverts_encode(content: str) -> None:
    assert markdown_decode(markdown_encode(content)) == content


# --- round trips --------------------------------------------------------------------


@dialects
@PROPERTY
@given(name=st.sampled_from(ROUND_TRIP_NAMES), content=hostile_text)
def test_round_trip_one_section(dialect: Dialect, name: str, content: str) -> None:
    fmt = dialect.make(*ROUND_TRIP_NAMES)
    assert fmt.parse(fmt.format_section(name, content)) == {name: [content.strip()]}


@dialects
@PROPERTY
@given(content=st.text())
def test_round_trip_arbitrary_unicode(dialect: Dialect, content: str) -> None:
    fmt = dialect.make("answer")
    assert fmt.parse(fmt.format_section("answer", content)) == {"answer": [content.strip()]}


@dialects
@PROPERTY
@given(
    sections=st.lists(
        st.tuples(st.sampled_from(ROUND_TRIP_NAMES), hostile_text), min_size=1, max_size=6
    )
)
def test_round_trip_several_sections(dialect: Dialect, sections: list[tuple[str, str]]) -> None:
    fmt = dialect.make(*ROUND_TRIP_NAMES)
    text = fmt.format_sections([FormattedSection(name, content) for name, content in sections])
    expected: dict[str, list[str]] = {}
    for name, content in sections:
        expected.setdefault(name, []).append(content.strip())
    result = fmt.parse(text)
    assert result == expected
    assert list(result) == list(expected)  # first-appearance order


# --- no forging ---------------------------------------------------------------------

REGISTERED_TAG = re.compile(r"</?(?:thinking|action|answer)>", re.IGNORECASE)
TAG_START = re.compile(r"<[/!?A-Za-z_]")


def assert_encoding_is_inert(dialect: Dialect, content: str, observation: str) -> None:
    if dialect.kind == "xml":
        encoded = xml_encode(content)
        assert TAG_START.search(encoded) is None, encoded
        assert REGISTERED_TAG.search(observation) is None, observation
    else:
        encoded = markdown_encode(content)
        for line in encoded.split("\n"):
            assert not line.lstrip(" \t").startswith("#"), line
        for line in observation.split("\n"):
            if line.startswith("#"):
                assert line == "# observation" or line.startswith("##"), line


@dialects
@PROPERTY
@given(content=hostile_text)
def test_tool_output_cannot_forge_sections(dialect: Dialect, content: str) -> None:
    fmt = dialect.make("thinking", "action", "answer")
    observation = fmt.wrap_observation(fmt.format_sections([FormattedSection("tool_x", content)]))
    output = observation + "\n" + fmt.format_section("answer", "ok")
    assert fmt.parse(output) == {"answer": ["ok"]}
    assert_encoding_is_inert(dialect, content, observation)


@dialects
@PROPERTY
@given(
    tools=st.lists(st.tuples(hostile_text, hostile_text), min_size=1, max_size=3),
)
def test_tool_output_with_children_cannot_forge_sections(
    dialect: Dialect, tools: list[tuple[str, str]]
) -> None:
    fmt = dialect.make("thinking", "action", "answer")
    formatted = [
        FormattedSection(f"tool_{i}", content, children=(FormattedSection("instructions", note),))
        for i, (content, note) in enumerate(tools)
    ]
    observation = fmt.wrap_observation(fmt.format_sections(formatted))
    output = observation + "\n" + fmt.format_section("answer", "ok")
    assert fmt.parse(output) == {"answer": ["ok"]}
    for content, note in tools:
        assert_encoding_is_inert(dialect, content, observation)
        assert_encoding_is_inert(dialect, note, observation)


# --- streaming ----------------------------------------------------------------------


@dialects
@PROPERTY
@given(data=st.data())
def test_streamed_parse_equals_whole_parse(dialect: Dialect, data: st.DataObject) -> None:
    fmt = dialect.make("thinking", "action", "answer")
    output = data.draw(model_output(dialect.kind), label="output")
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=12), label="cuts")
    expected = outcome(fmt, output)

    whole = fmt.stream()
    whole_returned = feed_all(whole, [output])
    assert close_outcome(whole) == expected

    for chunks in (split_at(output, cuts), list(output)):
        stream = fmt.stream()
        returned = feed_all(stream, chunks)
        assert close_outcome(stream) == expected
        events = stream.events()
        assert events[: len(returned)] == returned
        assert merged_text(events) == merged_text(whole.events())
    assert whole.events()[: len(whole_returned)] == whole_returned
    check_events(whole.events(), expected)


def merged_text(events: list[SectionDelta | SectionStart | SectionEnd]) -> list[object]:
    out: list[object] = []
    for event in events:
        if isinstance(event, SectionDelta) and out and isinstance(out[-1], SectionDelta):
            out[-1] = SectionDelta(event.name, out[-1].text + event.text)
        else:
            out.append(event)
    return out


def check_events(
    events: list[SectionDelta | SectionStart | SectionEnd], expected: dict[str, list[str]] | str
) -> None:
    """Start, non-empty deltas, end per section; the deltas join to the content exactly."""
    ended: dict[str, list[str]] = {}
    current: str | None = None
    pieces: list[str] = []
    for event in events:
        if isinstance(event, SectionStart):
            assert current is None
            current, pieces = event.name, []
        elif isinstance(event, SectionDelta):
            assert event.name == current
            assert event.text
            pieces.append(event.text)
        else:
            assert event.name == current
            joined = "".join(pieces)
            assert joined == event.content
            ended.setdefault(event.name, []).append(event.content)
            current = None
    assert current is None
    if isinstance(expected, dict):
        assert ended == expected


@dialects
@PROPERTY
@given(data=st.data())
def test_streamed_round_trip_deltas(dialect: Dialect, data: st.DataObject) -> None:
    fmt = dialect.make(*ROUND_TRIP_NAMES)
    sections = data.draw(
        st.lists(st.tuples(st.sampled_from(ROUND_TRIP_NAMES), hostile_text), max_size=4)
    )
    output = fmt.format_sections([FormattedSection(n, c) for n, c in sections])
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=12))
    stream = fmt.stream()
    feed_all(stream, split_at(output, cuts))
    result = close_outcome(stream)
    assert result == outcome(fmt, output)
    check_events(stream.events(), result)
