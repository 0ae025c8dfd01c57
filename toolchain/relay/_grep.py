"""Grep over a stored value: lines matching an RE2 pattern, numbered from 0, with context,
long lines shown around each match, the whole cut to fit."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from typing import Protocol

from toolchain import ToolError
from toolchain.relay._text import plural, shown_line, split_lines

__all__ = [
    "COUNT_LIMIT",
    "EXCERPT",
    "LINE_CHARS",
    "MAX_MATCHES",
    "MAX_PATTERN",
    "MAX_WINDOW",
    "compile_pattern",
    "grep",
]

MAX_MATCHES = 50
"""Matches ``internal_resource_grep`` shows at most per call."""
MAX_WINDOW = 10
"""Context lines before and after a match, at most."""
COUNT_LIMIT = 10_000
"""Matches ``internal_resource_grep`` counts; beyond, it says "more than 10000"."""
MAX_PATTERN = 1_000
LINE_CHARS = 300
"""A line grep shows longer than this is cut: around each match, or after its start."""
EXCERPT = 120
"""Characters grep shows on each side of a match in a cut line."""


class _Match(Protocol):
    def span(self) -> tuple[int, int]: ...


class _Regex(Protocol):
    """What grep uses of a compiled RE2 pattern."""

    def finditer(self, text: str) -> Iterator[_Match]: ...


def compile_pattern(pattern: str) -> _Regex:
    import re2  # lazy: loaded by the first grep, not by `import toolchain`

    options = re2.Options()
    options.log_errors = False  # the model gets the error; nothing for stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        detail = error.args[0] if error.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        hint = "; use \\z for the end of the text" if "\\Z" in pattern else ""
        raise ToolError(
            f"the pattern is not valid RE2: {detail}; lookarounds and backreferences are "
            f"not supported{hint}"
        ) from None


def _find(regex: _Regex, text: str) -> tuple[list[tuple[int, int]], int]:
    """The first ``MAX_MATCHES`` spans, and the matches counted (up to ``COUNT_LIMIT`` + 1)."""
    spans: list[tuple[int, int]] = []
    count = 0
    for match in itertools.islice(regex.finditer(text), COUNT_LIMIT + 1):
        count += 1
        if count <= MAX_MATCHES:
            spans.append(match.span())
    return spans, count


def grep(text: str, regex: _Regex, window: int, max_chars: int) -> str:
    try:
        spans, count = _find(regex, text)
    except UnicodeEncodeError:  # lone surrogates: one '?' each keeps every index
        spans, count = _find(regex, text.encode("utf-8", "replace").decode("utf-8"))
    lines = split_lines(text)
    if not lines:
        return "[the value is empty]"
    if count == 0:
        return (
            f"no match in {len(lines)} {plural(len(lines), 'line')}; try a broader "
            "pattern, or (?i) to ignore case"
        )
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    starts.pop()

    def line_of(index: int) -> int:
        return max(0, min(len(lines) - 1, bisect.bisect_right(starts, index) - 1))

    hits: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        for line in range(line_of(start), line_of(max(start, end - 1)) + 1):
            hits.setdefault(line, []).append((start, end))
    shown: list[tuple[int, int]] = []  # ranges of lines, merged
    for line in sorted(hits):
        low, high = max(0, line - window), min(len(lines) - 1, line + window)
        if shown and low <= shown[-1][1] + 1:
            shown[-1] = (shown[-1][0], max(shown[-1][1], high))
        else:
            shown.append((low, high))

    if count > COUNT_LIMIT:
        head = f"more than {COUNT_LIMIT} matches; the first {MAX_MATCHES} shown"
    elif count > MAX_MATCHES:
        head = f"{count} matches; the first {MAX_MATCHES} shown (narrow the pattern for others)"
    else:
        head = f"{count} {'match' if count == 1 else 'matches'}"
    head += " (lines numbered from 0; ':' marks a matching line, '-' a context line):"
    rows = [head]
    used = len(head)
    budget = max_chars - 200  # the note's room
    for number, (low, high) in enumerate(shown):
        # (where the row starts in the value, the row): "--" between groups of lines
        block = [(starts[low], "--")] if number and window else []
        for line in range(low, high + 1):
            block += _line_rows(line, lines[line], starts[line], hits)
        for at, row in block:
            if used + len(row) + 1 > budget:
                done = sum(1 for start, _ in spans if start < at)
                rows.append(
                    f"[output cut at {max_chars} characters: {done} of {len(spans)} matches "
                    "shown; narrow the pattern or lower window]"
                )
                return "\n".join(rows)[:max_chars]
            rows.append(row)
            used += len(row) + 1
    return "\n".join(rows)[:max_chars]


def _line_rows(
    number: int, line: str, offset: int, hits_by_line: dict[int, list[tuple[int, int]]]
) -> list[tuple[int, str]]:
    """One line as grep shows it: whole when short, else around each match (with its
    index in the value) or, for context, its start. Each row comes with the index in
    the value it starts at."""
    line = shown_line(line)
    hits = hits_by_line.get(number)
    if len(line) <= LINE_CHARS:
        return [(offset, f"{number}{':' if hits else '-'}{line}")]
    if not hits:
        return [(offset, f"{number}-{line[:LINE_CHARS]}... [{len(line)} characters]")]
    rows: list[tuple[int, str]] = []
    covered = -1
    for start, end in hits:
        begin = max(start - offset, 0)
        if begin < covered:
            continue  # inside the previous excerpt
        low = max(0, begin - EXCERPT)
        high = min(len(line), max(end - offset, begin) + EXCERPT, low + LINE_CHARS)
        covered = high
        text = ("..." if low else "") + line[low:high] + ("..." if high < len(line) else "")
        rows.append((offset + begin, f"{number}:{text} [match at index {offset + begin}]"))
    return rows
