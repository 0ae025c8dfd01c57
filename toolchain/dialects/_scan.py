"""The view of the text a format reader gets, and what a reader answers.

Readers run on a text that may still grow (streaming). Every look past the end of the
text so far goes through ``Scan``, which raises ``NeedMore`` unless the text is final:
a reader therefore never decides on a prefix something the whole text would decide
otherwise, which is what makes streamed and one-shot parses agree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NoReturn

from toolchain._errors import ToolchainError
from toolchain._result import ToolCall, ToolCallError

if TYPE_CHECKING:
    from toolchain.dialects._catalog import Catalog

__all__ = ["WS", "Block", "BlockKind", "NeedMore", "Scan", "Skip", "rejected_call"]

WS = " \t\r\n"
# How far back a reader may look for a name or header written before its marker: at
# most this many characters, on the marker's line or the line before it.
BACK = 256

BlockKind = Literal["calls", "data", "token", "inline", "reasoning", "think_close"]
"""``inline``: a token inside a run of text (a citation mark): the text on both sides
stays one run, where other blocks end one."""


class NeedMore(ToolchainError):
    """The text so far cannot decide what is at this position; wait for more."""


@dataclass(frozen=True, slots=True)
class Block:
    """A span of markup a reader recognised: its calls and what else it carries.

    ``marked``: written in explicit tool-call markup. Unmarked blocks (bare JSON, a
    Python-style list) are only certain once the whole output is seen: they may turn
    out to be data, a ReAct input, or name a tool that is not offered.
    ``exclusive``: a key of which one output may hold only one block (more make every
    such block ambiguous). ``content`` / ``reasoning`` / ``answer`` are texts the block
    carries (harmony channels, a ``>>>all`` message, ``<final_answer>``).
    """

    start: int
    end: int
    family: str
    kind: BlockKind = "calls"
    calls: tuple[ToolCall, ...] = ()
    problems: tuple[str, ...] = ()
    content: str | None = None
    reasoning: str | None = None
    answer: str | None = None
    marked: bool = True
    exclusive: str | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """Not a block here: the text up to ``resume`` stays prose; scanning goes on there.

    ``retire``: no later marker of this opener can be read either, because what it
    needs (its closer) is nowhere in the rest of a final text: the scan stops looking
    for it, so a thousand unclosed openers cost one read.
    """

    resume: int
    retire: bool = False


class Scan:
    """The text (possibly partial), the tools offered, and look-ups that wait for more."""

    __slots__ = ("_found", "catalog", "final", "floor", "text")

    def __init__(self, text: str, final: bool, catalog: Catalog, floor: int = 0) -> None:
        self.text = text
        self.final = final
        self.catalog = catalog
        # Where the current run of prose starts: a reader may claim text back to here
        # (a name written just before its marker), never further.
        self.floor = floor
        # The last search for each needle: (from, found). Many openers in a row all
        # looking for a closer that never comes would otherwise each scan to the end.
        self._found: dict[str | tuple[str, ...], tuple[int, int, str]] = {}

    def need(self) -> NoReturn:
        raise NeedMore

    def find(self, sub: str, start: int, stop: int | None = None) -> int:
        """Index of ``sub`` at or after ``start`` (before ``stop`` if given); -1 only
        when the text is final or ``stop`` is given."""
        if stop is not None:
            return self.text.find(sub, start, stop)
        found = self._remembered(sub, start)
        if found is None:
            found = self.text.find(sub, start)
            self._found[sub] = (start, found, sub)
        if found < 0 and not self.final:
            raise NeedMore
        return found

    def find_any(self, subs: tuple[str, ...], start: int) -> tuple[int, str]:
        """The earliest of ``subs`` at or after ``start`` (-1, "" only when final)."""
        memo = self._found.get(subs)
        if memo is not None and memo[0] <= start and (memo[1] < 0 or memo[1] >= start):
            best, which = memo[1], memo[2]
        else:
            hit = _alternation(subs).search(self.text, start)
            best, which = (hit.start(), hit.group()) if hit is not None else (-1, "")
            self._found[subs] = (start, best, which)
        if best < 0:
            if not self.final:
                raise NeedMore
            return -1, ""
        # Callers pass terminators none of which holds another, so none can still be
        # arriving before `best`: the answer is final once one is found.
        return best, which

    def _remembered(self, sub: str, start: int) -> int | None:
        memo = self._found.get(sub)
        if memo is not None and memo[0] <= start and (memo[1] < 0 or memo[1] >= start):
            return memo[1]
        return None

    def has(self, sub: str, at: int) -> bool:
        """Whether ``sub`` is written at ``at``."""
        text = self.text
        if text.startswith(sub, at):
            return True
        if not self.final and len(text) - at < len(sub) and sub.startswith(text[at:]):
            raise NeedMore
        return False

    def char(self, at: int) -> str:
        """The character at ``at``; ``""`` past the end of a final text."""
        if at < len(self.text):
            return self.text[at]
        if not self.final:
            raise NeedMore
        return ""

    def skip_ws(self, at: int) -> int:
        """The first index at or after ``at`` that is not whitespace (may be the end)."""
        text, n = self.text, len(self.text)
        while at < n and text[at] in WS:
            at += 1
        if at == n and not self.final:
            raise NeedMore
        return at

    def line_start(self, at: int, within: int | None = BACK, lines: int = 1) -> int:
        """Where the line holding ``at`` starts (``lines=2``: the line before it), never
        before ``floor`` nor more than ``within`` characters back (``None``: no limit)."""
        low = self.floor if within is None else max(self.floor, at - within)
        for _ in range(lines):
            newline = self.text.rfind("\n", low, at)
            if newline < 0:
                return low
            at = newline
        return at + 1


@functools.cache
def _alternation(subs: tuple[str, ...]) -> re.Pattern[str]:
    # Literal alternatives, longest first: at most their total length is tried per
    # position, there is nothing to backtrack into.
    return re.compile("|".join(re.escape(s) for s in sorted(subs, key=len, reverse=True)))


def rejected_call(name: str, message: str, call_id: str = "") -> ToolCall:
    """A call recognised by name whose arguments cannot be used."""
    return ToolCall(name, {}, call_id, rejected=ToolCallError("parse", message))
