"""Property tests: round trips, no forging from tool output, streamed == whole parse,
and any text at all parses (or raises ``FormatParseError``) the same streamed or whole."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import (
    FormattedSection,
    MarkdownFormat,
    Section,
    SectionDelta,
    SectionEnd,
    SectionStart,
    TextFormat,
    XMLFormat,
    markdown_decode,
    markdown_encode,
    xml_decode,
    xml_encode,
)
from formats._markdown import _heading_name
from formats._xml import _XMLScanner
from tests.formats._support import (
    DIALECTS,
    NAMES,
    Dialect,
    close_outcome,
    feed_all,
    hostile_output,
    hostile_text,
    long_runs,
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
    """Raw model output: sections (closed or not, any case), hostile text, long runs."""
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
            st.one_of(st.sampled_from(["", ":", " : ", "\r", "  "]), heading_tail),
            hostile_text,
        )
        tag = st.builds(
            lambda hashes, name: f"\n{hashes} {name}\n", st.sampled_from(["#", "##"]), names
        )
    piece = st.one_of(section, section, tag, hostile_text, long_runs, st.text(max_size=8))
    return st.lists(piece, max_size=8).map("".join)


# After a heading's name: a long blank run, then an end that makes it a heading or not.
heading_tail = st.builds(
    lambda blanks, end: blanks + end,
    st.text(st.sampled_from(" \t"), max_size=300),
    st.sampled_from(["", ":", ": ", " :\t", "x", ": x", "::", "\r", "\r\r", "\r:"]),
)


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
    assert_streams_like_whole_parse(fmt, output, cuts)


@dialects
@PROPERTY
@given(data=st.data())
def test_any_text_parses_or_raises_format_parse_error_and_streams_the_same(
    dialect: Dialect, data: st.DataObject
) -> None:
    """No input makes parse, stream or parse_nested raise anything but FormatParseError."""
    fmt = dialect.make(*NAMES)
    output = data.draw(st.one_of(hostile_output, st.text()), label="output")
    cuts = data.draw(st.lists(st.integers(0, len(output)), max_size=12), label="cuts")
    assert_streams_like_whole_parse(fmt, output, cuts)
    result = outcome(fmt, output)
    if isinstance(result, dict):
        assert set(result) <= set(NAMES)
    nested = fmt.parse_nested(output, NAMES)  # never requires a section: never raises
    assert set(nested) <= set(NAMES)


def assert_streams_like_whole_parse(fmt: TextFormat, output: str, cuts: list[int]) -> None:
    """Whole, cut at ``cuts`` and one character at a time: the same sections and events.

    Only ``FormatParseError`` is caught (by ``outcome``/``close_outcome``): any other
    exception fails the test.
    """
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


# --- the linear scanners decide exactly as the simple (super-linear) ones did ----------

# The heading pattern the Markdown scanner used, backtracking quadratically over a long
# blank run after the name; names ASCII-only as they are now. Run on short lines only.
REFERENCE_HEADING = {
    level: re.compile("#" * level + r"(?!#)[ \t]*([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*:?[ \t]*\r?\n?\Z")
    for level in (1, 2)
}
heading_like_line = st.builds(
    lambda hashes, lead, name, tail, end: hashes + lead + name + tail + end,
    st.sampled_from(["", "#", "##", "###", " #", "\\#"]),
    st.text(st.sampled_from(" \t"), max_size=3),
    st.one_of(
        st.sampled_from([*NAMES, "Answer", "a.b-c", "_x", "1x", "thin\u212aing", ""]), hostile_text
    ),
    st.one_of(st.text(st.sampled_from(" \t:\rx#"), max_size=6), hostile_text),
    st.sampled_from(["", "\n", "\r\n"]),
)


@pytest.mark.parametrize("level", [1, 2])
@PROPERTY
@given(line=st.one_of(heading_like_line, hostile_text))
def test_heading_recognition_matches_the_reference_pattern(level: int, line: str) -> None:
    line = line.split("\n", 1)[0] + ("\n" if "\n" in line else "")  # one line, as fed
    match = REFERENCE_HEADING[level].match(line)
    assert _heading_name(line, level) == (match.group(1) if match else None)


# Lines at the edges of the heading rule, each checked against the reference pattern.
EDGE_HEADINGS = (
    "# answer\r\r\n",
    "## ANSWER \t:\t\r\n",
    "# answer\r:",
    "# answer::",
    "#answer",
    "# answer x",
    "#",
    " # answer",
    "\\# answer",
    "# thin\u212aing",
    "# answers",
    "# Thinking",
    "### answer",
)


def check_one_shot_heading(level: int, line: str) -> None:
    """``parse`` and ``parse_nested`` split by pattern, not by the scanner: same headings."""
    line = line.split("\n", 1)[0] + ("\n" if "\n" in line else "")
    match = REFERENCE_HEADING[level].match(line)
    written = match.group(1).lower() if match else None
    opens = written in NAMES
    fmt = MarkdownFormat().register_section(Section("Answer"))
    fmt.register_section(Section("thinking")).register_section(Section("action"))
    output = line + "\n body"
    canonical = "Answer" if written == "answer" else written
    if level == 1:
        result = outcome(fmt, output)
        assert result == {canonical: ["body"]} if opens else isinstance(result, str)
    else:
        expected = {canonical: ["body"]} if opens else {}
        assert fmt.parse_nested(output, ["Answer", "thinking", "action"]) == expected


@pytest.mark.parametrize("level", [1, 2])
@PROPERTY
@given(line=st.one_of(heading_like_line, hostile_text))
def test_one_shot_markdown_parse_opens_sections_as_the_reference_pattern(
    level: int, line: str
) -> None:
    check_one_shot_heading(level, line)


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("line", EDGE_HEADINGS)
def test_one_shot_markdown_parse_on_edge_headings(level: int, line: str) -> None:
    check_one_shot_heading(level, line)


class ListScanXMLScanner(_XMLScanner):
    """The XML scanner with its former pairing: a list scanned for every closing tag."""

    def _opening(self, name: str, tag: str) -> None:
        if self._collector.open_section is None or self._line_blank:
            self._collector.open(name)
            self._inner.clear()
            self._line_blank = False
            return
        self._inner.append(name)
        self._text(tag)

    def _closing(self, name: str, tag: str) -> None:
        current = self._collector.open_section
        if current is None:
            self._line_blank = False
            return
        if name in self._inner:
            while self._inner.pop() != name:
                pass
            self._text(tag)
        elif name == current:
            self._collector.close_current()
            self._inner.clear()
            self._line_blank = False
        else:
            self._text(tag)


# Registered tags only, nested and crossed every way: what the pairing has to decide.
tag_soup = st.lists(
    st.sampled_from([f"<{s}{n}>" for s in ("", "/") for n in NAMES] + ["\n", " ", "x"]),
    max_size=40,
).map("".join)


@PROPERTY
@given(output=st.one_of(tag_soup, model_output("xml"), hostile_output))
def test_xml_pairing_with_counts_matches_the_list_scan(output: str) -> None:
    def run(scanner: _XMLScanner) -> tuple[object, list[object]]:
        scanner.feed(output)
        return close_outcome(scanner), merged_text(scanner.events())

    assert run(_XMLScanner(NAMES, require_section=True)) == run(
        ListScanXMLScanner(NAMES, require_section=True)
    )


# ``parse`` and ``parse_nested`` split the output by a pattern of the registered names
# (formats._xml._split_sections); the streaming scanner reads every tag. Same result.
XML_ONE_SHOT_EDGES = (
    "<ANSWER>42</Answer>",
    "<thin\u212aing>k</thin\u212aing><answer>1</answer>",  # KELVIN SIGN is not k
    "<answerx>no</answerx><answer>a<b>c</answer>",
    "<<answer>>x</answer>>",
    "<answer>a\n<thinking>t</answer>b</thinking>",
    "<thinking>I will answer in <answer> tags.</thinking>\n<answer>42</answer>",
    "<thinking>x\n  <action>- tool: a</action>",
    "<answer>1</answer><answer>2",
    "pre\n <answer> &lt;b&gt; &amp;amp;</answer>",
    "<answer>a<answer>b</answer>c</answer>d</answer>",
    "</answer><answer></answer>",
    "no sections at all",
    "",
)


def check_one_shot_xml(output: str) -> None:
    fmt = XMLFormat()
    for name in ("thinking", "action", "Answer"):
        fmt.register_section(Section(name))
    scanner = _XMLScanner(["thinking", "action", "Answer"], require_section=True)
    scanner.feed(output)
    assert outcome(fmt, output) == close_outcome(scanner)
    nested = _XMLScanner(["Answer", "thinking"], require_section=False, decode=False)
    nested.feed(output)
    assert fmt.parse_nested(output, ["Answer", "thinking"]) == nested.close()


@PROPERTY
@given(output=st.one_of(tag_soup, model_output("xml"), hostile_output))
def test_one_shot_xml_parse_equals_the_scanner(output: str) -> None:
    check_one_shot_xml(output)


@pytest.mark.parametrize("output", XML_ONE_SHOT_EDGES)
def test_one_shot_xml_parse_on_edge_tags(output: str) -> None:
    check_one_shot_xml(output)
