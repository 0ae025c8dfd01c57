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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
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
    """What the search uses of a compiled RE2 pattern."""

    def search(self, text: str) -> _Match | None: ...
    def finditer(self, text: str) -> Iterator[_Match]: ...


@dataclass(frozen=True, slots=True)
class _Fields:
    name: str
    texts: tuple[tuple[float, str], ...]
    """(weight, text) of every other field."""
    joined: str
    """All fields in one text: one search rules out most tools at once."""


def _clean(text: str) -> str:
    # RE2 reads UTF-8: a lone surrogate cannot be encoded, so it becomes "?".
    return text.encode("utf-8", "replace").decode("utf-8")


def _fields(doc: ToolDocument) -> _Fields:
    texts = (
        (_PARAMETER_NAMES, "\n".join(name for name, _ in doc.parameters)),
        (_DESCRIPTION, doc.description),
        (_EXTRA, "\n".join((*doc.phrases, doc.category, doc.hint))),
        (_PARAMETER_TEXT, "\n".join(text for _, text in doc.parameters)),
    )
    cleaned = tuple((weight, _clean(text)) for weight, text in texts if text)
    name = _clean(doc.name)
    return _Fields(name, cleaned, "\n".join([name, *(text for _, text in cleaned)]))


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

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self._names = tuple(doc.name for doc in documents)
        self._fields = tuple(_fields(doc) for doc in documents)

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
        for position, fields in enumerate(self._fields):
            if regex.search(fields.joined) is None:
                continue
            score = _NAME * _count(regex, fields.name)
            score += sum(weight * _count(regex, text) for weight, text in fields.texts)
            if score > 0:
                scored.append((-score, position))
        scored.sort()
        hits = tuple(Hit(self._names[i], -negated) for negated, i in scored[: max(limit, 0)])
        note = "" if scored else "no tool matches the pattern"
        return SearchOutcome(hits, self.name, None, note)

    def _compile(self, pattern: str) -> _Regex | str:
        """The compiled pattern, or why it cannot be used."""
        import re2  # lazy: loaded by the first search, not by `import toolchain`

        options = re2.Options()
        options.case_sensitive = False
        options.log_errors = False  # the note carries the error; nothing for stderr
        options.max_mem = self._max_mem
        try:
            # Multi-line: ^ and $ hold at the ends of each name, parameter name and
            # phrase (one per line), and a match in a field is a match in `joined`.
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


def _count(regex: _Regex, text: str) -> int:
    """Non-empty matches of ``regex`` in ``text``, up to ``_MATCH_CAP``."""
    if not text:
        return 0
    found = (match for match in regex.finditer(text) if match.end() > match.start())
    return sum(1 for _ in islice(found, _MATCH_CAP))
