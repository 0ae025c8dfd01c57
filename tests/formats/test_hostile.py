"""Hostile outputs: work linear in the input, and section names matched in ASCII only.

Linearity is asserted by counting operations, never by timing (the wall-clock figures
are in ``benchmarks/parse_scaling.py``).
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from formats import (
    FormatParseError,
    MarkdownFormat,
    Section,
    XMLFormat,
    markdown_decode,
    markdown_encode,
)
from tests.formats._support import DIALECTS, NAMES, Dialect, close_outcome, feed_all, split_at

KELVIN = "\u212a"  # KELVIN SIGN: "thin\u212aing".lower() == "thinking"


@pytest.fixture(params=DIALECTS, ids=lambda d: d.kind)
def dialect(request: pytest.FixtureRequest) -> Dialect:
    d: Dialect = request.param
    return d


# --- XML: a closing tag finds its partner in amortised constant time --------------------


class CountedName(str):
    """A section name that counts every ``==`` / ``!=`` it takes part in."""

    comparisons: ClassVar[int] = 0

    def __eq__(self, other: object) -> bool:
        CountedName.comparisons += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        CountedName.comparisons += 1
        return str.__ne__(self, other)

    __hash__ = str.__hash__


def counted_xml() -> XMLFormat:
    fmt = XMLFormat()
    for name in NAMES:
        fmt.register_section(Section(CountedName(name)))
    return fmt


def comparisons_to_parse(fmt: XMLFormat, output: str, *, streamed: bool) -> int:
    CountedName.comparisons = 0
    if streamed:
        stream = fmt.stream()
        feed_all(stream, split_at(output, range(7, len(output), 7)))
        stream.close()
    else:
        fmt.parse(output)
    return CountedName.comparisons


N = 3000
TAG_HEAVY_OUTPUTS = {
    # n inner opening tags, then n closing tags of a name none of them has: a list scan
    # compared each closing tag with every open inner tag, n * n comparisons in all.
    "stray closes after inner opens": "<thinking>" + "<answer>" * N + "</action>" * N,
    "stray close after each inner open": "<thinking>" + "<answer> </action>" * N,
    "inner opens, one far close, stray closes": (
        "<thinking><action>" + "<answer>" * N + "</action>" + "</answer>" * N
    ),
}


@pytest.mark.parametrize("streamed", [False, True], ids=["parse", "stream"])
@pytest.mark.parametrize("output", TAG_HEAVY_OUTPUTS.values(), ids=TAG_HEAVY_OUTPUTS.keys())
def test_xml_closing_tags_cost_a_bounded_number_of_name_comparisons_each(
    output: str, streamed: bool
) -> None:
    fmt = counted_xml()
    tags = output.count("<")
    assert fmt.parse(output) == {"thinking": [output.removeprefix("<thinking>").strip()]}
    assert comparisons_to_parse(fmt, output, streamed=streamed) <= 3 * tags


def test_xml_closing_tag_drops_the_inner_tags_opened_after_its_partner() -> None:
    # </thinking> pairs with the inner <thinking>, dropping the inner <answer> after it;
    # so the next </answer> has no inner partner left and closes the open answer section.
    fmt = Dialect("xml").make()
    output = "<answer>x <thinking> <answer> y </thinking> </answer> z</answer>"
    assert fmt.parse(output) == {"answer": ["x <thinking> <answer> y </thinking>"]}


def test_xml_inner_pairs_are_forgotten_when_the_section_closes() -> None:
    fmt = Dialect("xml").make()
    output = "<thinking>a <answer> b</thinking>\n<action>c </answer> d</action>"
    assert fmt.parse(output) == {"thinking": ["a <answer> b"], "action": ["c </answer> d"]}


# --- Markdown: a heading line is recognised in linear time ------------------------------

BLANKS = 20_000  # the former heading pattern took about 10 s on one such line


@pytest.mark.parametrize("blank", [" ", "\t"])
def test_markdown_name_then_long_blank_run_then_text_is_content(blank: str) -> None:
    fmt = Dialect("markdown").make()
    line = "# answer" + blank * BLANKS + "x"
    with pytest.raises(FormatParseError):
        fmt.parse(line)
    output = f"# thinking\n{line}\n# answer\n42"
    assert fmt.parse(output) == {"thinking": [line], "answer": ["42"]}
    stream = fmt.stream()
    feed_all(stream, split_at(output, range(4, len(output), 4)))
    assert close_outcome(stream) == {"thinking": [line], "answer": ["42"]}


@pytest.mark.parametrize(
    "tail", [" " * BLANKS, " " * BLANKS + ":", ":" + "\t" * BLANKS, " " * BLANKS + ": \r"]
)
def test_markdown_name_then_long_blank_run_is_still_a_heading(tail: str) -> None:
    fmt = Dialect("markdown").make()
    assert fmt.parse(f"# answer{tail}\n42") == {"answer": ["42"]}


@pytest.mark.parametrize(
    "content",
    [
        " " * BLANKS + "\\" * BLANKS + "x",
        " " * BLANKS + "\\" * BLANKS + "#",
        "\t" * BLANKS + "#" * BLANKS,
        ("\\" * 80 + "\n") * 500,
        ("#" * 80 + "\n") * 500,
    ],
    ids=["blanks-backslashes", "blanks-backslashes-hash", "tabs-hashes", "\\-lines", "#-lines"],
)
def test_markdown_escapes_round_trip_long_runs(content: str) -> None:
    assert markdown_decode(markdown_encode(content)) == content
    fmt = Dialect("markdown").make()
    assert fmt.parse(fmt.format_section("answer", content)) == {"answer": [content.strip()]}


# --- names: ASCII only, matched ignoring ASCII letter case only -------------------------


def kelvin(name: str) -> str:
    return name.replace("k", KELVIN)


def test_kelvin_sign_name_is_not_a_registered_section(dialect: Dialect) -> None:
    fmt = dialect.make()
    output = dialect.section(kelvin("thinking"), "x")
    assert kelvin("thinking").lower() == "thinking"  # what str.lower() would have matched
    with pytest.raises(FormatParseError):
        fmt.parse(output)
    stream = fmt.stream()
    feed_all(stream, list(output))
    with pytest.raises(FormatParseError):
        stream.close()


def test_kelvin_sign_tag_inside_a_section_is_content(dialect: Dialect) -> None:
    fmt = dialect.make()
    inner = dialect.section(kelvin("thinking"), "y")  # on its own line: a section if matched
    output = dialect.section("answer", f"x\n{inner}\nz")
    expected = {"answer": [f"x\n{inner}\nz".strip()]}
    assert fmt.parse(output) == expected
    stream = fmt.stream()
    feed_all(stream, list(output))
    assert stream.close() == expected


def test_xml_kelvin_sign_closing_tag_does_not_close_the_section() -> None:
    fmt = Dialect("xml").make()
    output = f"<thinking>a</thin{KELVIN}ing> b</thinking>"
    assert fmt.parse(output) == {"thinking": [f"a</thin{KELVIN}ing> b"]}


def test_parse_nested_matches_names_in_ascii_case_only(dialect: Dialect) -> None:
    fmt = dialect.new()
    assert fmt.parse_nested(dialect.nested(kelvin("task"), "1"), ["task"]) == {}
    assert fmt.parse_nested(dialect.nested("TASK", "1"), ["task"]) == {"task": ["1"]}


NON_ASCII_NAMES = [
    kelvin("thinking"),  # folds onto a registered name under str.lower()
    "café",
    "\uff41nswer",  # FULLWIDTH LATIN SMALL LETTER A
    "a\u0663",  # ARABIC-INDIC DIGIT THREE: \w and \d match it
    "\u017fection",  # LATIN SMALL LETTER LONG S: upper() is ASCII "S"
    "\u0130d",  # LATIN CAPITAL LETTER I WITH DOT ABOVE
]


@pytest.mark.parametrize("name", NON_ASCII_NAMES)
def test_register_section_rejects_non_ascii_names(dialect: Dialect, name: str) -> None:
    fmt = dialect.new()
    with pytest.raises(ValueError, match=r"is not a valid tag name: use ASCII letters"):
        fmt.register_section(Section(name))
    assert fmt.sections == ()


@pytest.mark.parametrize("name", NON_ASCII_NAMES)
def test_format_and_parse_nested_reject_non_ascii_names(dialect: Dialect, name: str) -> None:
    fmt = dialect.new()
    with pytest.raises(ValueError, match=r"is not a valid tag name: use ASCII letters"):
        fmt.format_section(name, "x")
    with pytest.raises(ValueError, match=r"is not a valid tag name: use ASCII letters"):
        fmt.parse_nested("x", [name])


def test_kelvin_spelling_cannot_register_beside_the_ascii_name(dialect: Dialect) -> None:
    fmt = dialect.new().register_section(Section("thinking"))
    with pytest.raises(ValueError, match="not a valid tag name"):
        fmt.register_section(Section(kelvin("thinking")))
    with pytest.raises(ValueError, match="already registered"):
        fmt.register_section(Section("THINKING"))


@pytest.mark.parametrize("written", ["ANSWER", "Answer", "aNsWeR"])
def test_ascii_letter_case_still_matches(dialect: Dialect, written: str) -> None:
    fmt = dialect.make()
    assert fmt.parse(dialect.section(written, "42")) == {"answer": ["42"]}
    nested = XMLFormat() if dialect.kind == "xml" else MarkdownFormat()
    assert nested.parse_nested(dialect.nested(written, "1"), ["answer"]) == {"answer": ["1"]}


def test_format_checks_every_name_however_often_valid_ones_came_before() -> None:
    # Valid names are remembered once checked: an invalid one is refused each time,
    # before and after them, and past the names kept.
    fmt = XMLFormat()
    for turn in range(3):
        for index in range(1500):
            fmt.format_section(f"tool_{index}", "x")
        for name in ("my answer", "a" * 100 + " b", "thin\u212aing"):
            with pytest.raises(ValueError, match="is not a valid tag name"):
                fmt.format_section(name, f"turn {turn}")
