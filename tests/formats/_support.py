"""Shared helpers for the ``formats`` tests: the two dialects and hostile text strategies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from hypothesis import strategies as st

from formats import (
    FormatParseError,
    MarkdownFormat,
    Section,
    SectionDelta,
    SectionEnd,
    SectionEvent,
    SectionStream,
    TextFormat,
    XMLFormat,
)

Kind = Literal["xml", "markdown"]
KINDS: tuple[Kind, ...] = ("xml", "markdown")
NAMES = ("thinking", "action", "answer")


@dataclass(frozen=True)
class Dialect:
    """How a model writes sections in one format, for building test outputs by hand."""

    kind: Kind

    def new(self) -> TextFormat:
        return XMLFormat() if self.kind == "xml" else MarkdownFormat()

    def make(self, *names: str) -> TextFormat:
        fmt = self.new()
        for name in names or NAMES:
            fmt.register_section(Section(name))
        return fmt

    def section(self, name: str, body: str, *, closed: bool = True) -> str:
        """A section as a model writes it (raw, not encoded). Markdown never closes."""
        if self.kind == "xml":
            return f"<{name}>{body}</{name}>" if closed else f"<{name}>{body}"
        return f"# {name}\n{body}\n"

    def nested(self, name: str, body: str) -> str:
        """A sub-section inside a section's content, for ``parse_nested``."""
        if self.kind == "xml":
            return f"<{name}>\n{body}\n</{name}>"
        return f"## {name}\n{body}\n"


DIALECTS = [Dialect(kind) for kind in KINDS]


def outcome(fmt: TextFormat, output: str) -> dict[str, list[str]] | str:
    """``parse`` result, or the error message when it raises ``FormatParseError``."""
    try:
        return fmt.parse(output)
    except FormatParseError as exc:
        return f"error: {exc}"


def feed_all(stream: SectionStream, chunks: Sequence[str]) -> list[SectionEvent]:
    """Feed every chunk; the events the feeds returned, in order."""
    events: list[SectionEvent] = []
    for chunk in chunks:
        events.extend(stream.feed(chunk))
    return events


def close_outcome(stream: SectionStream) -> dict[str, list[str]] | str:
    try:
        return stream.close()
    except FormatParseError as exc:
        return f"error: {exc}"


def split_at(text: str, cuts: Sequence[int]) -> list[str]:
    points = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in pairwise(points)]


def joined_deltas(events: Sequence[SectionEvent]) -> list[tuple[str, str, str]]:
    """For each ended section: (name, deltas joined, final content)."""
    out: list[tuple[str, str, str]] = []
    pieces: list[str] = []
    for event in events:
        if isinstance(event, SectionDelta):
            pieces.append(event.text)
        elif isinstance(event, SectionEnd):
            out.append((event.name, "".join(pieces), event.content))
            pieces = []
        else:
            pieces = []
    return out


# Fragments chosen to break naive encoders and scanners: markup of registered and other
# names in both formats, entities (whole and cut), escapes, line ends, code, unicode.
HOSTILE_FRAGMENTS = (
    "<",
    ">",
    "&",
    "&&",
    ";",
    "#",
    "##",
    "\\",
    "\\\\",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "  ",
    "<answer>",
    "</answer>",
    "<ANSWER>",
    "</Answer>",
    "<thinking>",
    "</thinking>",
    "<action>",
    "</action>",
    "<tool_x>",
    "</tool_x>",
    "</observation>",
    "<observation>",
    "<b>",
    "</",
    "<!--",
    "<?xml ?>",
    "<!DOCTYPE",
    "<_x>",
    "<a",
    "# answer",
    "# Answer:",
    "\n# answer\n",
    "\n# thinking\n",
    "## answer",
    "## direct_call",
    "# observation",
    "#answer",
    "  # action",
    "\t# answer",
    "\\# answer",
    "\\\\# answer",
    "\n\\",
    "\n#",
    "&lt;",
    "&gt;",
    "&amp;",
    "&amp;lt;",
    "&amp;amp;",
    "&lt",
    "&am",
    "&l",
    "&nbsp;",
    "```python\nprint('<answer>')\n```",
    '{"a": [1, "<b>"], "c": "&&"}',
    "if a<b && c>d:",
    "é",
    "中文",
    "🙂",
    "\x00",
    "\u2028",
    "\x85",
    "\x0b",
    "\u212a",  # KELVIN SIGN: str.lower() makes it ASCII "k"
    "<thin\u212aing>",
    "</thin\u212aing>",
    "# thin\u212aing",
    "<\u212aind>",
    "\u0130",  # LATIN CAPITAL I WITH DOT ABOVE: lower() is two code points
    "\u017f",  # LATIN SMALL LONG S: upper() is ASCII "S"
    "\u2126",  # OHM SIGN
    "\u212b",  # ANGSTROM SIGN
    "\u1e9e",  # LATIN CAPITAL SHARP S
    "\u0663",  # ARABIC-INDIC DIGIT THREE: matched by \w and \d, not ASCII
    "\uff41nswer",  # FULLWIDTH a
    "\ufeff",
    "\ufffd",
    "\u200d",
    "\U0001d400",
    "\U0010ffff",
)

hostile_text: st.SearchStrategy[str] = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_FRAGMENTS),
        st.sampled_from(HOSTILE_FRAGMENTS),
        st.text(max_size=4),
    ),
    max_size=14,
).map("".join)

# Units that a scanner might handle one at a time, repeated into long runs: blanks before
# a heading's end, "#" and backslash lines, unclosed or unmatched tags, cut entities.
RUN_UNITS = (
    " ",
    "\t",
    "\n",
    "\r\n",
    "#",
    "\\",
    "<",
    "&",
    "&am",
    "<answer>",
    "</action>",
    "<thinking>",
    "\n<answer>",
    "# answer",
    "\n# answer\n",
    "\\#",
    "\u212a",
)

long_runs: st.SearchStrategy[str] = st.builds(
    lambda unit, count: unit * count, st.sampled_from(RUN_UNITS), st.integers(0, 300)
)

# Any text, biased toward what breaks parsers: the fragments above, long runs, arbitrary
# and non-ASCII code points (st.characters never yields surrogates).
hostile_output: st.SearchStrategy[str] = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_FRAGMENTS),
        long_runs,
        st.text(max_size=8),
        st.text(st.characters(min_codepoint=0x80), max_size=4),
    ),
    max_size=12,
).map("".join)
