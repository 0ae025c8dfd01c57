"""What the scanner looks for: literal markers, each with the reader of its format."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from toolchain.dialects._scan import Block, Scan, Skip

__all__ = ["Opener", "Openers", "Reader"]

Reader = Callable[[Scan, int, str], "Block | Skip"]
"""Reads the markup starting at an index (where ``marker`` was found)."""


@dataclass(frozen=True, slots=True)
class Opener:
    marker: str
    family: str
    read: Reader


class Openers:
    """Finds the next opener, the longest marker at the leftmost position.

    One search with an alternation of the literal markers, longest first: the engine
    tries at most the markers' total length per position and has nothing to backtrack
    into, so the search is linear. On a growing text, a marker may be arriving at its
    end; such a position is reported as undecided.
    """

    __slots__ = ("_by_marker", "_pattern", "_prefixes", "longest")

    def __init__(self, openers: Iterable[Opener]) -> None:
        self._by_marker = {opener.marker: opener for opener in openers}
        markers = sorted(self._by_marker, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(marker) for marker in markers))
        self._prefixes = frozenset(m[:k] for m in markers for k in range(1, len(m)))
        self.longest = max((len(marker) for marker in markers), default=1)

    def next(self, scan: Scan, start: int) -> tuple[int, Opener | None]:
        """``(index, opener)`` of the next opener; ``(index, None)`` when the text so
        far ends inside what may be a marker; ``(-1, None)`` when there is none."""
        text = scan.text
        hit = self._pattern.search(text, start)
        at = hit.start() if hit is not None else -1
        if not scan.final:
            last = at if at >= 0 else len(text) - 1
            for position in range(max(start, len(text) - self.longest + 1), last + 1):
                if text[position:] in self._prefixes:
                    return position, None
        if hit is None:
            return -1, None
        return at, self._by_marker[hit.group()]
