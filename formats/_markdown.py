"""Markdown sections: a ``# name`` heading line opens a section, the next one ends it.

Encoding. A content line whose first non-blank character is ``#`` (after any
backslashes) gets one more backslash before it, so tool output can never write a
heading; parsing removes exactly one. ``parse(format_section(n, c))[n] == [c.strip()]``
for every string ``c``.

Parsing. Only headings of registered names count, with an optional trailing colon;
``# Other`` headings and ``##`` sub-headings are content. Names are ASCII
(``[A-Za-z_][A-Za-z0-9_.-]*``) and letter case is ignored in ASCII only: ``# ANSWER``
is ``answer``, but ``thin`` + U+212A KELVIN SIGN + ``ing`` is not ``thinking``. A
heading must start its line, so a name mentioned in prose never splits a section. Text
before the first section is ignored; the last section runs to the end of the output.

Cost. Parsing is linear in the output, however hostile. The streaming scanner
recognises a heading line by stripping and splitting it by hand; a one-shot ``parse``
splits the whole output with one pattern of the registered names whose blank runs are
possessive (``[ \t]*+``), so it cannot backtrack over a long run of blanks either. The
escape patterns touch each line's leading blanks and backslashes a bounded number of
times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from formats._collector import SectionCollector, as_is
from formats._registry import SectionRegistry
from formats._section import (
    NAME_PATTERN,
    FormatParseError,
    FormattedSection,
    check_name,
    fold_name,
)
from formats._stream import SectionEvent, SectionStream

__all__ = ["MarkdownFormat", "markdown_decode", "markdown_encode"]

_ESCAPE = re.compile(r"^([ \t]*)(\\*#)", re.MULTILINE)
_UNESCAPE = re.compile(r"^([ \t]*)\\(\\*#)", re.MULTILINE)
_NAME = re.compile(NAME_PATTERN)


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


def _heading_name(line: str, level: int) -> str | None:
    r"""The name a heading line of ``level`` ``#`` s gives, as written; None if not one.

    The line is ``#`` * level (no more), blanks, a name, blanks, an optional ``:``,
    blanks, then an optional ``\r`` and ``\n`` that end it. Stripped by hand: the same
    rule as a pattern ``[ \t]*NAME[ \t]*:?[ \t]*`` but in linear time, where such a
    pattern backtracks quadratically over ``# answer`` and a long run of spaces.

    >>> _heading_name("# Answer :\r\n", 1), _heading_name("## answer", 1), _heading_name("#", 1)
    ('Answer', None, None)
    """
    if not line.startswith("#" * level) or line.startswith("#", level):
        return None
    body = line[level:]
    if body.endswith("\n"):
        body = body[:-1]
    if body.endswith("\r"):
        body = body[:-1]
    body = body.strip(" \t")
    if body.endswith(":"):
        body = body[:-1].rstrip(" \t")
    return body if _NAME.fullmatch(body) else None


@lru_cache(maxsize=64)
def _heading_splitter(folded: tuple[str, ...], level: int) -> re.Pattern[str]:
    """A pattern matching a whole heading line of one of ``folded`` names at ``level``.

    The same rule as ``_heading_name``; its one group is the name as written. ASCII-only
    case folding (``re.ASCII``), so no non-ASCII letter matches a name's letter.
    """
    names = "|".join(re.escape(n) for n in sorted(folded, key=len, reverse=True))
    heading = rf"^{'#' * level}[ \t]*+({names})[ \t]*+(?::[ \t]*+)?\r?(?:\n|\Z)"
    return re.compile(heading, re.MULTILINE | re.IGNORECASE | re.ASCII)


def _split_sections(
    output: str, names_by_fold: Mapping[str, str], *, level: int, decode: bool
) -> dict[str, list[str]]:
    """The one-shot parse: every section's contents, as the scanner would find them.

    ``re.split`` with the heading pattern cuts the output at each heading line in C,
    leaving ``[before, name, content, name, content, ...]``: the loop below then runs
    once per section, not once per line.
    """
    result: dict[str, list[str]] = {}
    if not names_by_fold:
        return result
    parts = _heading_splitter(tuple(names_by_fold), level).split(output)
    unescape = _UNESCAPE.sub
    for index in range(1, len(parts), 2):
        name = names_by_fold[parts[index].lower()]
        content = parts[index + 1]
        if decode and "\\" in content:
            content = unescape(r"\1\2", content)
        contents = result.get(name)
        if contents is None:
            result[name] = [content.strip()]
        else:
            contents.append(content.strip())
    return result


class _MarkdownScanner:
    """Incremental line scanner for headings of one level."""

    def __init__(
        self, names: Iterable[str], *, level: int, require_section: bool, decode: bool = True
    ) -> None:
        names_by_lower = {fold_name(n): n for n in names}
        self._collector = SectionCollector(
            names_by_lower,
            markdown_decode if decode else as_is,
            require_section=require_section,
        )
        self._level = level
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
        written = _heading_name(line, self._level)
        name = None if written is None else self._collector.canonical(fold_name(written))
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
        names_by_fold = {fold_name(check_name(n)): n for n in names}
        return _split_sections(content, names_by_fold, level=2, decode=False)

    def parse(self, output: str) -> dict[str, list[str]]:
        """Every registered section's contents, in order (stripped of outer whitespace).

        Gives what ``stream()`` fed the whole output gives, in one pass over it.
        Raises ``FormatParseError`` when no registered section is present.

        >>> from formats import Section
        >>> MarkdownFormat().register_section(Section("answer")).parse("# Answer:\\n42")
        {'answer': ['42']}
        """
        names_by_fold = {fold_name(s.name): s.name for s in self._sections.values()}
        result = _split_sections(output, names_by_fold, level=1, decode=True)
        if not result:
            raise FormatParseError(list(names_by_fold.values()))
        return result

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
