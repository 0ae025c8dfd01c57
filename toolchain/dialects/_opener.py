"""What the scanner looks for: literal markers, each with the reader of its format."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from toolchain._errors import ToolchainValueError
from toolchain.dialects._scan import Block, NeedMore, Scan, Skip

__all__ = ["Opener", "Openers", "Reader"]

Reader = Callable[[Scan, int, str], "Block | Skip"]
"""Reads the markup starting at an index; ``marker`` is the text the opener matched
(the marker itself, or a run of it for a repeating opener)."""

_WS_CLASS = "[ \\t\\r\\n]"


@dataclass(frozen=True, slots=True)
class Opener:
    """A marker and the reader of what follows it.

    ``gate``: a regular expression that, matching right after the marker, proves the
    reader would skip this place and could not read anything before the next opener.
    The search then passes over the marker at the regex engine's speed instead of
    calling the reader, which is what keeps hostile text (``[f(`` over and over) cheap.
    A gate must only match on evidence present in the text (no end anchors, no
    negative lookarounds): what it matches in part of a text it matches in the whole,
    so a streamed read decides as a one-shot read does.

    ``repeats``: a run of the marker (whitespace between) is one opener, read once and
    handed to the reader whole: a model that writes ``<tool_call>`` twice opened one
    block, and a thousand unclosed ones cost one read.
    """

    marker: str
    family: str
    read: Reader
    gate: str = ""
    repeats: bool = False


class Openers:
    """Finds the next opener, the longest marker at the leftmost position.

    One search with an alternation of the literal markers laid out as a trie (shared
    prefixes tested once), longest first: at a position the engine tries each
    character of each branch at most once and has nothing to backtrack into but the
    gates, which are bounded by what they prove. On a growing text, a marker may be
    arriving at its end; such a position is reported as undecided.
    """

    __slots__ = ("__weakref__", "_by_group", "_openers", "_partial", "_pattern", "longest")

    def __init__(self, openers: Iterable[Opener]) -> None:
        by_marker = {opener.marker: opener for opener in openers}
        self._openers = tuple(by_marker.values())
        root: _Node = {}
        for opener in by_marker.values():
            if opener.gate and re.compile(opener.gate).groups:
                raise ToolchainValueError(f"the gate of {opener.marker!r} has a capturing group")
            node = root
            for char in opener.marker:
                child = node.setdefault(char, {})
                assert isinstance(child, dict)
                node = child
            node[""] = opener
        # Each leaf ends with an empty group: groups are numbered in the order they are
        # written, which is the order the leaves are emitted in.
        self._by_group: dict[int, Opener] = {}
        self._pattern = re.compile(_emit(root, self._by_group))
        # A proper prefix of a marker that ends the text: the marker may be arriving.
        self._partial = re.compile(_emit_partial(root))
        self.longest = max((len(marker) for marker in by_marker), default=1)

    @property
    def openers(self) -> tuple[Opener, ...]:
        return self._openers

    def without(self, marker: str) -> Openers:
        """These openers but the one of ``marker`` (built once per set)."""
        return _without(self, marker)

    def next(self, scan: Scan, start: int) -> tuple[int, Opener | None, str]:
        """``(index, opener, matched)`` of the next opener; ``(index, None, "")`` when
        the text so far ends inside what may be a marker; ``(-1, None, "")`` when there
        is none."""
        text = scan.text
        hit = self._pattern.search(text, start)
        at = hit.start() if hit is not None else -1
        if not scan.final:
            last = at if at >= 0 else len(text) - 1
            first = max(start, len(text) - self.longest + 1)
            if first <= last:
                partial = self._partial.search(text, first)
                if partial is not None and partial.start() <= last:
                    return partial.start(), None, ""
        if hit is None:
            return -1, None, ""
        group = hit.lastindex
        assert group is not None
        opener = self._by_group[group]
        matched = hit.group()
        if opener.repeats and not scan.final:
            # The run may go on in text still to come: wait until it visibly ends.
            try:
                scan.has(opener.marker, scan.skip_ws(hit.end()))
            except NeedMore:
                return at, None, ""
        return at, opener, matched


@functools.lru_cache(maxsize=256)
def _without(openers: Openers, marker: str) -> Openers:
    return Openers(o for o in openers.openers if o.marker != marker)


_Node = dict[str, "_Node | Opener"]


def _emit_partial(node: _Node) -> str:
    """A pattern of the proper prefixes of the markers under ``node``, each followed by
    the end of the text, as a trie like the search's."""
    branches: list[str] = []
    for char, child in sorted(node.items(), key=lambda item: item[0]):
        if isinstance(child, Opener):
            continue
        deeper = [c for c in child.values() if not isinstance(c, Opener)]
        if deeper:  # a marker goes on past this character
            branches.append(f"{re.escape(char)}(?:\\Z|{_emit_partial(child)})")
    return "(?:" + "|".join(branches) + ")" if branches else "(?!)"


def _emit(node: _Node, groups: dict[int, Opener]) -> str:
    branches: list[str] = []
    ending: Opener | None = None
    for char, child in sorted(node.items(), key=lambda item: item[0]):
        if isinstance(child, Opener):
            ending = child
        else:
            branches.append(re.escape(char) + _emit(child, groups))
    if ending is not None:  # last: a longer marker through this node wins
        run = f"(?:{_WS_CLASS}*{re.escape(ending.marker)})*" if ending.repeats else ""
        gate = f"(?!{ending.gate})" if ending.gate else ""
        groups[len(groups) + 1] = ending
        branches.append(f"{run}{gate}()")
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"
