"""Runs of identical blocks read once: a model looping on the same broken call writes
the same block a thousand times, and reading each would cost a thousand reads.

After a block, the text may go on with the very same segment (the block's text, each
copy followed by the marker that opened it). The second copy is read on a text of its
own, from its start (a reader looks back no further than the start of its run of text,
which a copy after a block is) to just after the next copy's marker: a reader never
decides on part of a text what the whole would decide otherwise (``Scan``), so if it
decides there, that decision depends on nothing else, and every later copy (the same
text where a run of text starts, followed by the same marker) reads the same. The
copies then become one block, at the cost of one read and one regex match, and the
engine keeps the copy so that copies arriving in later chunks are taken without a read.
When the read cannot decide, the copies are read one by one, each at its own cost.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from toolchain.dialects._opener import Opener, Openers
from toolchain.dialects._scan import Block, NeedMore, Scan

__all__ = ["Copy", "copies", "verified"]

# Blocks whose copies can be one block: what they carry is their calls and problems.
_KINDS = ("calls", "token", "inline")


@dataclass(frozen=True, slots=True)
class Copy:
    """A segment shown to read as ``block`` (at 0) wherever a run of text starts with
    it and the marker follows it; ``matched`` is what the opener matched there."""

    segment: str
    opener: Opener
    matched: str
    block: Block

    def arriving(self, text: str, at: int) -> bool:
        """Whether ``text`` ends, from ``at``, partway through this copy and its marker:
        a read there decides what the copy reads as, or waits."""
        rest = len(text) - at
        whole = len(self.segment) + len(self.opener.marker)
        if rest >= whole:
            return False
        return (
            text.startswith(self.segment[:rest], at)
            if rest <= len(self.segment)
            else (
                text.startswith(self.segment, at)
                and self.opener.marker.startswith(text[at + len(self.segment) :])
            )
        )


def verified(scan: Scan, openers: Openers, opener: Opener, block: Block) -> Copy | None:
    """The copy ``block``'s text makes when the text goes on with it, or ``None``."""
    text = scan.text
    start, end = block.start, block.end
    length = end - start
    marker = opener.marker
    if not _mergeable(block) or length <= 0 or not text.startswith(marker, start):
        return None
    segment = text[start:end]
    if not text.startswith(segment, end) or not text.startswith(marker, end + length):
        return None
    probe = Scan(text[end : end + length + len(marker)], False, scan.catalog)
    try:
        at, found, matched = openers.next(probe, 0)
        if at != 0 or found is not opener:
            return None
        second = opener.read(probe, 0, matched)
    except NeedMore:
        return None
    if not isinstance(second, Block) or not _mergeable(second):
        return None
    if second.start != 0 or second.end != length:
        return None
    return Copy(segment, opener, matched, second)


def copies(text: str, copy: Copy, at: int) -> Block | None:
    """The copies of ``copy`` from ``at`` (a run of text starts there), each followed by
    its marker, as one block; ``None`` when there is none."""
    segment, marker = copy.segment, copy.opener.marker
    length = len(segment)
    run = _copies(segment).match(text, at)  # a star: it always matches
    stop = run.end() if run is not None else at
    while stop > at and not text.startswith(marker, stop):
        stop -= length  # each copy is read up to the marker after it: it must be there
    count = (stop - at) // length
    if count < 1:
        return None
    block = copy.block
    return Block(
        at,
        stop,
        block.family,
        kind=block.kind,
        calls=block.calls * count,
        problems=block.problems,
        marked=block.marked,
    )


def _mergeable(block: Block) -> bool:
    return (
        block.kind in _KINDS
        and block.content is None
        and block.reasoning is None
        and block.answer is None
        and block.exclusive is None
    )


@functools.lru_cache(maxsize=64)
def _copies(segment: str) -> re.Pattern[str]:
    # One literal repeated: the engine compares characters, there is nothing to retry.
    return re.compile(f"(?:{re.escape(segment)})*")
