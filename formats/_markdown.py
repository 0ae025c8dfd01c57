"""Markdown sections: a ``# name`` heading line opens a section, the next one ends it.

Encoding. A content line whose first non-blank character is ``#`` (after any
backslashes) gets one more backslash before it, so tool output can never write a
heading; parsing removes exactly one. ``parse(format_section(n, c))[n] == [c.strip()]``
for every string ``c``.

Parsing. Only headings of registered names count (any letter case, an optional
trailing colon); ``# Other`` headings and ``##`` sub-headings are content. A heading
must start its line, so a name mentioned in prose never splits a section. Text before
the first section is ignored; the last section runs to the end of the output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from formats._collector import SectionCollector, as_is
from formats._registry import SectionRegistry
from formats._section import FormattedSection, check_name
from formats._stream import SectionEvent, SectionStream

__all__ = ["MarkdownFormat", "markdown_decode", "markdown_encode"]

_ESCAPE = re.compile(r"^([ \t]*)(\\*#)", re.MULTILINE)
_UNESCAPE = re.compile(r"^([ \t]*)\\(\\*#)", re.MULTILINE)


def markdown_encode(content: str) -> str:
    r"""Escape heading-like lines with one backslash.

    >>> markdown_encode("# answer\nx # y\n\\# z")
    '\\# answer\nx # y\n\\\\# z'
    """
    if "#" not in content:
        return content
    return _ESCAPE.sub(r"\1\\\2", content)


def markdown_decode(content: str) -> str:
    r"""Remove one escaping backslash from heading-like lines.

    >>> markdown_decode("\\# answer")
    '# answer'
    """
    if "\\" not in content:
        return content
    return _UNESCAPE.sub(r"\1\2", content)


class _MarkdownScanner:
    """Incremental line scanner for headings of one level."""

    def __init__(
        self, names: Iterable[str], *, level: int, require_section: bool, decode: bool = True
    ) -> None:
        names_by_lower = {n.lower(): n for n in names}
        self._collector = SectionCollector(
            names_by_lower,
            markdown_decode if decode else as_is,
            require_section=require_section,
        )
        self._heading = re.compile(
            "#" * level + r"(?!#)[ \t]*([A-Za-z_][\w.\-]*)[ \t]*:?[ \t]*\r?\n?\Z"
        )
        # The unfinished current line, held back until it shows what it is. Pieces are
        # joined once: re-scanning a growing string per chunk was quadratic.
        self._parts: list[str] = []
        self._line_is_text = False  # the current line is known not to be a heading
        self._undecided = False  # its first non-blank character is "#" or "\\"

    @property
    def open_section(self) -> str | None:
        return self._collector.open_section

    def events(self) -> list[SectionEvent]:
        return self._collector.events()

    def feed(self, chunk: str) -> list[SectionEvent]:
        start = 0
        while True:
            newline = chunk.find("\n", start)
            if newline == -1:
                self._partial(chunk[start:])
                break
            self._partial(chunk[start : newline + 1])
            self._end_line()
            start = newline + 1
        return self._collector.take_new()

    def close(self) -> dict[str, list[str]]:
        self._end_line()
        return self._collector.finish()

    def _partial(self, piece: str) -> None:
        if not piece:
            return
        if self._line_is_text:
            # Mid-line: escapes only sit at a line's start, so the piece decodes to itself
            # (decoding it alone would strip a backslash from "a" + "\\# x").
            self._collector.append(piece, decoded=piece)
            return
        self._parts.append(piece)
        if self._undecided or piece.endswith("\n"):
            return  # a possible heading or escaped line, or a whole line: _end_line decides
        rest = piece.lstrip(" \t")
        if not rest:
            return  # only blanks so far
        if rest[0] in "#\\":
            self._undecided = True
            return
        # Not a heading nor an escaped line: stream it from here on.
        self._line_is_text = True
        line, self._parts = "".join(self._parts), []
        self._collector.append(line)

    def _end_line(self) -> None:
        line, self._parts = "".join(self._parts), []
        was_text, self._line_is_text, self._undecided = self._line_is_text, False, False
        if was_text or not line:
            return
        match = self._heading.match(line)
        name = self._collector.canonical(match.group(1).lower()) if match else None
        if name is None:
            self._collector.append(line)
        else:
            self._collector.open(name)


class MarkdownFormat(SectionRegistry):
    """Sections as ``# name`` headings; observations under ``# observation``.

    >>> from formats import Section
    >>> fmt = MarkdownFormat().register_section(Section("thinking"))
    >>> fmt = fmt.register_section(Section("answer"))
    >>> fmt.parse("# Thinking\\nUse # answer below.\\n# Answer\\n42")
    {'thinking': ['Use # answer below.'], 'answer': ['42']}
    >>> print(fmt.format_section("weather", "21C"))
    # weather
    21C
    """

    structure_intro = "Format your response using Markdown headings for each section:"

    def parse_nested(self, content: str, names: Iterable[str]) -> dict[str, list[str]]:
        """Sub-sections (``## name`` headings) of a section's content; ``{}`` when none.

        ``content`` is what ``parse`` returned, already decoded, so it is not decoded again.

        >>> MarkdownFormat().parse_nested("## direct_call\\n[1]", ["direct_call"])
        {'direct_call': ['[1]']}
        """
        scanner = _MarkdownScanner(
            [check_name(n) for n in names], level=2, require_section=False, decode=False
        )
        scanner.feed(content)
        return scanner.close()

    def stream(self) -> SectionStream:
        """An incremental parser over the registered sections."""
        return _MarkdownScanner(
            [s.name for s in self._sections.values()], level=1, require_section=True
        )

    def format_sections(self, sections: Sequence[FormattedSection]) -> str:
        """Several sections separated by blank lines; children as deeper headings."""
        return "\n\n".join(_render(section, 1) for section in sections)

    def wrap_observation(self, text: str) -> str:
        """Put tool sections under ``# observation``, one heading level down.

        Content lines are escaped, so every unescaped ``#`` line is a heading we wrote
        and can safely be demoted. ``""`` stays ``""``.
        """
        if not text:
            return ""
        return "# observation\n\n" + re.sub(r"(?m)^#", "##", text)


def _render(section: FormattedSection, level: int) -> str:
    name = check_name(section.name)
    lines = [f"{'#' * level} {name}"]
    if section.content:
        lines.append(markdown_encode(section.content) if section.escape else section.content)
    lines.extend(_render(child, level + 1) for child in section.children)
    return "\n".join(lines)
