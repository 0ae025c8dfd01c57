"""The scanning loop: text in, a list of prose runs and recognised blocks out.

The loop works on the text not yet settled (the tail). A reader that cannot decide
before more text arrives raises ``NeedMore``; the loop then keeps the tail from the start
of that line (a reader may claim a name written just before its marker) and waits.
Retrying on every chunk could rescan a long unfinished block again and again, so a
retry runs only while the total work stays within a few times the input length, or
once the tail has doubled since the last try: linear time whatever the chunking.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolchain.dialects._catalog import Catalog
from toolchain.dialects._opener import Openers
from toolchain.dialects._repeat import Copy, copies, verified
from toolchain.dialects._scan import BACK, Block, NeedMore, Scan, Skip

__all__ = ["Engine", "Piece", "Placed"]

_WORK_FACTOR = 4
_WORK_SLACK = 65_536


@dataclass(frozen=True, slots=True)
class Placed:
    """A block with the text it spans."""

    block: Block
    raw: str


Piece = str | Placed


class Engine:
    """Scans text fed in pieces into ``pieces`` (prose strings and placed blocks)."""

    __slots__ = (
        "_catalog",
        "_copy",
        "_openers",
        "_parts",
        "_pending",
        "_retry_at",
        "_search",
        "_tail",
        "_total",
        "_work",
        "max_chars",
        "pieces",
        "truncated",
    )

    def __init__(self, catalog: Catalog, openers: Openers, max_chars: int) -> None:
        self._catalog = catalog
        self._openers = openers
        self.max_chars = max_chars
        self.pieces: list[Piece] = []
        self.truncated = False
        self._tail = ""
        self._parts: list[str] = []
        self._pending = 0  # characters in _parts
        self._total = 0
        self._work = 0
        self._retry_at = 0  # tail length from which a retry is due regardless of budget
        # Where the next try resumes looking for openers, in the tail: positions before it
        # were already decided (a reader may have skipped past them), and must stay so.
        self._search = 0
        # The last block shown to read the same wherever it is copied (see _repeat).
        self._copy: Copy | None = None

    def feed(self, chunk: str) -> None:
        room = self.max_chars - self._total
        if len(chunk) > room:
            chunk = chunk[: max(room, 0)]
            self.truncated = True
        if not chunk:
            return
        self._parts.append(chunk)
        self._pending += len(chunk)
        self._total += len(chunk)
        size = len(self._tail) + self._pending
        if size >= self._retry_at or self._work + size <= _WORK_FACTOR * self._total + _WORK_SLACK:
            self._attempt(final=False)

    def finish(self) -> None:
        self._attempt(final=True)

    def _attempt(self, final: bool) -> None:
        if self._parts:
            self._tail += "".join(self._parts)
            self._parts.clear()
            self._pending = 0
        text = self._tail
        self._work += len(text)
        kept, search = self._run(Scan(text, final, self._catalog), self._search)
        self._tail = text[kept:]
        self._search = search - kept
        self._retry_at = 2 * len(self._tail)

    def _run(self, scan: Scan, search: int) -> tuple[int, int]:
        """Scan ``scan.text`` from ``search``; returns how much of it is settled (moved
        into pieces) and where the next try looks for openers."""
        text = scan.text
        pos = 0
        openers = self._openers
        while True:
            scan.floor = pos
            at, opener, matched = openers.next(scan, search)
            if at < 0:
                keep = len(text) if scan.final else _keep(scan, len(text))
                resume = max(search, len(text) - openers.longest + 1)
                return self._settle_prose(text, pos, keep), max(resume, keep)
            if opener is None:
                return self._settle_prose(text, pos, _keep(scan, at)), at
            copy = self._copy
            if copy is not None and at == pos and opener is copy.opener and matched == copy.matched:
                run = copies(text, copy, at)
                if run is not None:
                    self.pieces.append(Placed(run, text[run.start : run.end]))
                    pos = search = run.end
                    continue
                if not scan.final and copy.arriving(text, at):
                    # A copy still arriving reads as the copy or waits: no read decides more.
                    return self._settle_prose(text, pos, _keep(scan, at)), at
            try:
                outcome = opener.read(scan, at, matched)
            except NeedMore:
                return self._settle_prose(text, pos, _keep(scan, at)), at
            if isinstance(outcome, Skip):
                search = max(outcome.resume, at + 1)
                if outcome.retire:
                    openers = openers.without(opener.marker)
                continue
            if outcome.start > pos:
                self.pieces.append(text[pos : outcome.start])
            self.pieces.append(Placed(outcome, text[outcome.start : outcome.end]))
            pos = search = outcome.end
            if text.startswith(text[outcome.start : outcome.end], pos):  # copied: cheap test
                copy = verified(scan, openers, opener, outcome)
                if copy is not None:
                    self._copy = copy

    def _settle_prose(self, text: str, pos: int, keep: int) -> int:
        if keep > pos:
            self.pieces.append(text[pos:keep])
            return keep
        return pos


def _keep(scan: Scan, at: int) -> int:
    """Where the text still needed for a decision at ``at`` starts: readers look back
    at most ``BACK`` characters, and no further than the start of the line before."""
    return scan.line_start(at, BACK, lines=2)
