"""Runs of identical blocks read once: a model looping on the same broken call writes
the same block a thousand times, and reading each would cost a thousand reads.

After a block, the text may go on with the very same segment (the block's text, each
copy followed by the marker that opened it). The second copy is read on a text of its
own, from its start (a reader looks back no further than the start of its run of text,
which a copy after a block is) to just after the next copy's marker: a reader never
decides on part of a text what the whole would decide otherwise (``Scan``), so if it
decides there, that decision depends on nothing else, and every later copy (the same
text, followed by the same marker) reads the same. The copies then become one block,
at the cost of one read and one regex match; when the read cannot decide, the copies
are read one by one, each costing what its own read costs.
"""

from __future__ import annotations

import functools
import re

from toolchain.dialects._opener import Opener, Openers
from toolchain.dialects._scan import Block, NeedMore, Scan

__all__ = ["repeated"]

# Blocks whose copies can be one block: what they carry is their calls and problems.
_KINDS = ("calls", "token", "inline")
_MIN_COPIES = 2


def repeated(scan: Scan, openers: Openers, opener: Opener, block: Block) -> Block | None:
    """The copies of ``block`` that follow it, as one block; ``None`` when fewer than
    two follow or what they read as cannot be shown to be the same."""
    text = scan.text
    start, end = block.start, block.end
    length = end - start
    marker = opener.marker
    if not _mergeable(block) or length <= 0 or not text.startswith(marker, start):
        return None
    segment = text[start:end]
    if not text.startswith(segment, end) or not text.startswith(marker, end + length):
        return None
    # The second copy, read on a text of its own that ends after the next copy's marker
    # (a reader looks back no further than the start of its run of text, here the copy).
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
    run = _copies(segment).match(text, end)  # a star: it always matches
    stop = run.end() if run is not None else end
    while stop > end and not text.startswith(marker, stop):
        stop -= length  # each copy is read up to the marker after it: it must be there
    copies = (stop - end) // length
    if copies < _MIN_COPIES:
        return None
    return Block(
        end,
        stop,
        second.family,
        kind=second.kind,
        calls=second.calls * copies,
        problems=second.problems,
        marked=second.marked,
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
