"""Regex search: the model writes a pattern, tools whose text matches it are found.

Anthropic's tool-search variant: instead of words, the model sends a regular
expression (``"weather|forecast"``, ``"^cms_.*image"``) matched, case-insensitively,
against each tool's name, description, parameter names and descriptions, phrases,
category and hint; ``^`` and ``$`` match at the ends of each line (the name, each
parameter name, each phrase). Patterns run on RE2 (linear time: no pattern can backtrack), are
capped in length and in the memory RE2 may use to compile them. A pattern RE2 cannot
compile gives no hits and a ``note`` saying why; a search never raises.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from toolchain.discovery._documents import Hit, SearchOutcome, ToolDocument

__all__ = ["MAX_PATTERN_LENGTH", "RegexSearch"]

MAX_PATTERN_LENGTH = 200
"""The longest pattern accepted (as Anthropic's regex tool search)."""

_MATCH_CAP = 3
"""Matches counted per field: past a few, more repeats say little."""

# Per-field weight of one match. A match in the name outweighs any number of matches
# elsewhere (100 > 3 x (8 + 4 + 2 + 1)), so tools named by the pattern come first.
_NAME, _PARAMETER_NAMES, _DESCRIPTION, _EXTRA, _PARAMETER_TEXT = 100.0, 8.0, 4.0, 2.0, 1.0


class _Match(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...


class _Regex(Protocol):
    """What the search uses of a compiled RE2 pattern (over UTF-8 bytes)."""

    def search(self, text: bytes, pos: int) -> _Match | None: ...
    def finditer(self, text: bytes) -> Iterator[_Match]: ...


@dataclass(frozen=True, slots=True)
class _Fields:
    name: bytes
    texts: tuple[tuple[float, bytes], ...]
    """(weight, text) of every other field."""


def _utf8(text: str) -> bytes:
    # Encoded once at index time: RE2 reads UTF-8, and the wrapper would otherwise
    # encode every text again on every call. A lone surrogate becomes "?".
    return text.encode("utf-8", "replace")


def _fields(doc: ToolDocument) -> _Fields:
    texts = (
        (_PARAMETER_NAMES, "\n".join(name for name, _ in doc.parameters)),
        (_DESCRIPTION, doc.description),
        (_EXTRA, "\n".join((*doc.phrases, doc.category, doc.hint))),
        (_PARAMETER_TEXT, "\n".join(text for _, text in doc.parameters)),
    )
    return _Fields(_utf8(doc.name), tuple((w, _utf8(t)) for w, t in texts if t))


class RegexSearch:
    """Tools whose text matches a regular expression (RE2 syntax, case-insensitive).

    Score: per field, up to three matches count, a match in the name 100, in a
    parameter name 8, in the description 4, in phrases/category/hint 2, in a
    parameter description 1. Empty matches do not count.

    >>> import asyncio
    >>> search = RegexSearch()
    >>> search.index([ToolDocument("get_weather", "Current weather for a city"),
    ...               ToolDocument("get_forecast", "Weather forecast for the week")])
    >>> asyncio.run(search.search("forecast|weather", 5)).names
    ('get_forecast', 'get_weather')
    >>> asyncio.run(search.search("(?<=x)y", 5)).note[:40]
    'the pattern is not valid RE2 syntax: inv'
    """

    name = "regex"

    def __init__(
        self, *, max_pattern_length: int = MAX_PATTERN_LENGTH, max_mem: int = 8 << 20
    ) -> None:
        self._max_length = max_pattern_length
        self._max_mem = max_mem
        self._names: tuple[str, ...] = ()
        self._fields: tuple[_Fields, ...] = ()
        self._corpus = b""
        self._starts: list[int] = []

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self._names = tuple(doc.name for doc in documents)
        self._fields = tuple(_fields(doc) for doc in documents)
        # Every tool's fields, one per line, tools one after another: one scan of this
        # text rules out the tools the pattern cannot match.
        texts = [b"\n".join([f.name, *(text for _, text in f.texts)]) for f in self._fields]
        self._corpus = b"\n".join(texts)
        self._starts = list(itertools.accumulate((len(t) + 1 for t in texts[:-1]), initial=0))

    async def search(self, query: str, limit: int) -> SearchOutcome:
        return self.search_now(query, limit)

    def search_now(self, pattern: str, limit: int) -> SearchOutcome:
        """``search`` without the event loop (it never waits on anything)."""
        if not pattern:
            return self._refuse("the pattern is empty: write a regular expression")
        if len(pattern) > self._max_length:
            return self._refuse(
                f"the pattern is {len(pattern)} characters long; the limit is {self._max_length}"
            )
        regex = self._compile(pattern)
        if isinstance(regex, str):
            return self._refuse(regex)
        scored: list[tuple[float, int]] = []
        for position in self._candidates(regex):
            fields = self._fields[position]
            score = _NAME * _count(regex, fields.name)
            score += sum(weight * _count(regex, text) for weight, text in fields.texts)
            if score > 0:
                scored.append((-score, position))
        scored.sort()
        hits = tuple(Hit(self._names[i], -negated) for negated, i in scored[: max(limit, 0)])
        note = "" if scored else "no tool matches the pattern"
        return SearchOutcome(hits, self.name, None, note)

    def _candidates(self, regex: _Regex) -> list[int]:
        """Positions of the tools the pattern may match in (a superset).

        A tool holding a match is always touched by some match of a left-to-right scan
        of the whole text (matches do not overlap, so one that hides it overlaps it);
        after a match the scan jumps to the next untouched tool, so it takes at most
        one search per tool.
        """
        corpus, starts = self._corpus, self._starts
        found: list[int] = []
        position = 0
        while starts:
            match = regex.search(corpus, position)
            if match is None:
                break
            first = bisect.bisect_right(starts, match.start()) - 1
            last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            found.extend(range(max(first, found[-1] + 1 if found else 0), last + 1))
            if last + 1 >= len(starts):
                break
            position = starts[last + 1]
        return found

    def _compile(self, pattern: str) -> _Regex | str:
        """The compiled pattern, or why it cannot be used."""
        import re2  # lazy: loaded by the first search, not by `import toolchain`

        options = re2.Options()
        options.case_sensitive = False
        options.log_errors = False  # the note carries the error; nothing for stderr
        options.max_mem = self._max_mem
        try:
            # Multi-line: ^ and $ hold at the ends of each name, parameter name and
            # phrase (one per line), in a field as in the whole text.
            return re2.compile(f"(?m){pattern}", options)
        except re2.error as error:
            detail = error.args[0] if error.args else ""
            if isinstance(detail, bytes):
                detail = detail.decode("utf-8", "replace")
            return (
                f"the pattern is not valid RE2 syntax: {detail or 'too large'} "
                "(RE2 has no lookarounds or backreferences)"
            )
        except (UnicodeEncodeError, TypeError, ValueError) as error:
            return f"the pattern cannot be used: {error}"

    def _refuse(self, note: str) -> SearchOutcome:
        return SearchOutcome((), self.name, None, note)


def _count(regex: _Regex, text: bytes) -> int:
    """Non-empty matches of ``regex`` in ``text``, up to ``_MATCH_CAP``."""
    if not text:
        return 0
    found = (match for match in regex.finditer(text) if match.end() > match.start())
    return sum(1 for _ in itertools.islice(found, _MATCH_CAP))
