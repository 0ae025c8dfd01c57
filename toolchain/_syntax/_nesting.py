"""How deeply JSON or YAML text nests, measured by our own linear scan before any parser runs.

A limit we promise (``MAX_DEPTH`` levels of calls, arguments and typed answers) must be
enforced by our code, with our message, whatever the parser's version does: PyYAML 6.0.4's
libyaml stops at 1,000 flow levels with an error of its own while it looks ahead, and
msgspec or ``json`` stop wherever the interpreter's recursion limit lies. These scans read
the text once, in C where they can (``str.count``, compiled patterns), and are only run
when the text holds more brackets or indicators than the limit, which a tool call rarely does.

>>> json_nesting_exceeds('{"a": [[1], "]]]]"]}', 3)
False
>>> json_nesting_exceeds("[" * 3, 2)
True
>>> yaml_flow_nesting_exceeds("a: '[[[['\\nb: [[c]]", 2)
False
>>> yaml_flow_nesting_exceeds("a: [[[c]]]", 2)
True
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_DEPTH", "json_nesting_exceeds", "yaml_flow_nesting_exceeds"]

MAX_DEPTH: Final = 64
"""Nesting levels a tool call's arguments or a typed answer may have, in JSON or YAML."""

# A whole JSON string (escapes included; an unterminated one runs to the end) or a bracket.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)

# What can change YAML's flow depth, or hide brackets from it.
_YAML_MARK = re.compile(r"[\[\]{}\"'#|>]")
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SINGLE_QUOTED = re.compile(r"'(?:[^']|'')*'")
_INDENT = re.compile(r"[ ]*")
# A node property (tag or anchor) before a node, `!!str "x"` or `&a [1]`, is looked for
# this far back; a longer one is not taken as one.
_MAX_PROPERTY = 256
# The last blank of a stretch, found in one match (`.*` runs to the stretch's end and
# backs up to the blank).
_LAST_BLANK = re.compile(r".*[ \t\r\n]", re.DOTALL)
# A run of blanks this long is remembered once crossed: many marks may look back over it.
_LONG_BLANKS = 32
# Where an entry of a block line may start: a `- ` or `? ` indicator, or a key's first
# character (the key then runs to the first `: `).
_INDICATOR = re.compile(r"(?:^|[ \t])[-?](?=[ \t])")
_KEY_START = re.compile(r"[^\s:]")


def json_nesting_exceeds(text: str, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` arrays or objects inside each other.

    Brackets inside strings do not count. Text that is not JSON is measured the same way,
    so the answer is an upper bound a decoder can only fall short of.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > limit:
                return True
        elif mark in "]}":
            depth -= 1
    return False


def yaml_flow_nesting_exceeds(text: str, limit: int) -> bool:
    """Whether YAML ``text`` nests more than ``limit`` flow collections (``[…]``, ``{…}``).

    A lexer's view: brackets in quoted scalars, comments, block scalars (``|``, ``>``) and
    inside plain scalars (``a: x[1``) do not count. Where the text is ambiguous a bracket
    counts, so the answer errs towards refusing, never towards letting a parser meet a
    depth it cannot take. Block nesting is measured on the parser's events instead (they
    come one by one, with no look-ahead), by the caller.
    """
    if sum(text.count(ch) for ch in "[{") <= limit:
        return False
    back = _LookBack(text)
    depth = 0
    pos = 0
    while (found := _YAML_MARK.search(text, pos)) is not None:
        at = found.start()
        mark = text[at]
        pos = at + 1
        if mark == "#":
            if at == 0 or text[at - 1] in " \t\r\n":  # a comment runs to the end of its line
                end = text.find("\n", at)
                if end < 0:
                    return False
                pos = end + 1
        elif mark in "]}":
            depth = max(0, depth - 1)
        elif mark in "[{":
            if depth or _starts_node(back, at, depth):
                depth += 1
                if depth > limit:
                    return True
        elif mark in "\"'":
            if _starts_node(back, at, depth):
                quoted = (_DOUBLE_QUOTED if mark == '"' else _SINGLE_QUOTED).match(text, at)
                if quoted is None:  # unterminated: the rest is one (broken) scalar
                    return False
                pos = quoted.end()
        elif depth == 0 and _starts_node(back, at, depth):  # "|" or ">": a block scalar
            pos = _past_block_scalar(text, at)
    return False


class _LookBack:
    """Where the blanks and the word written before an index start, for marks met from
    left to right, each stretch of text searched about once however many marks look
    back over it: looking back afresh from each mark cost up to ``_MAX_PROPERTY`` steps
    per mark (1 MB of ``x{`` took 8 to 15 s), and a run of blanks before a property
    was crossed again by every mark behind it."""

    __slots__ = ("_blanks", "_end", "_start", "properties", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        # Without "!" or "&" no word is a property: no word need be looked back over.
        self.properties = "!" in text or "&" in text
        self._blanks: dict[int, int] = {}
        # The last word asked for in order: it ends at _end and starts at _start (or
        # further back, where it was cut at that ask's floor).
        self._end = self._start = 0

    def blanks(self, at: int) -> int:
        """Where the spaces and tabs just before ``at`` start."""
        start = self._blanks.get(at)
        if start is None:
            text = self.text
            start = at
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            if at - start >= _LONG_BLANKS:  # runs do not overlap: few are this long
                self._blanks[at] = start
        return start

    def word(self, end: int) -> int:
        """Where the word (no blank in it) that ends at ``end`` starts, looking back no
        further than ``_MAX_PROPERTY`` characters."""
        text = self.text
        floor = max(0, end - _MAX_PROPERTY)
        in_order = end >= self._end
        # Asked in order, the text before the last word's end was searched already.
        low = max(floor, self._end) if in_order else floor
        blank = _LAST_BLANK.match(text, low, end)
        if blank is not None:
            start = blank.end()
        elif in_order and self._end > floor:
            start = max(self._start, floor)  # the last word goes on to here
        else:
            start = floor
        if in_order:
            self._end, self._start = end, start
        return start


def _starts_node(back: _LookBack, at: int, depth: int) -> bool:
    """Whether a node may begin at ``at``: after indentation, an indicator or a property.

    Looks back over blanks and the node's properties (a tag and an anchor at most), never
    to the line's start, so a long line costs no more than its length whatever it holds.
    """
    text = back.text
    for _ in range(3):
        i = back.blanks(at)
        if i == 0 or text[i - 1] in "\r\n":
            return True
        last = text[i - 1]
        if last in "[{,":  # indicators only inside a flow collection
            return depth > 0
        if last == ":":  # "k: x"; in a flow collection also "k":x
            return i < at or depth > 0
        if last in "-?":  # "- x", "? x": a blank on both sides
            before = text[i - 2] if i > 1 else "\n"
            return i < at and (before in " \t\r\n" or (depth > 0 and before in "[{,"))
        if not back.properties:
            return False
        word = back.word(i)
        if word and text[word - 1] not in " \t\r\n":
            return False  # longer than _MAX_PROPERTY: not taken as a property
        if text[word] not in "!&":
            return False
        at = word
    return False


def _past_block_scalar(text: str, at: int) -> int:
    """Where the block scalar whose header is at ``at`` ends: the first line indented no
    more than the collection that holds it (the column of the line's last entry)."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    parent = max(len(line) - len(line.lstrip(" ")), _last_entry(line))
    pos = text.find("\n", at)
    while pos >= 0:
        start = pos + 1
        indent = _INDENT.match(text, start)
        width = indent.end() - start if indent else 0
        end = text.find("\n", start)
        blank = not text[start + width : end if end >= 0 else len(text)].strip()
        if not blank and width <= parent:
            return start
        pos = end
    return len(text)


def _last_entry(line: str) -> int:
    r"""Where the line's last entry starts (``-1``: it has none), an entry being what the
    pattern ``(?:^|[ \t])[-?](?=[ \t])|[^\s:][^:]*?:(?=[ \t]|$)`` finds from left to
    right (the indicator's blank not counted).

    The pattern itself took quadratic time: from every character of a word it runs to the
    next colon before failing. Here each kind of entry is searched for once per stretch of
    line: the next one found stays the next one until the search passes it.
    """
    n = len(line)
    last = -1
    pos = 0
    indicator = _INDICATOR.search(line)
    key: tuple[int, int] | None = _next_key(line, 0)
    while pos < n:
        if indicator is not None and indicator.start() < pos:
            indicator = _INDICATOR.search(line, pos)
        if key is not None and key[0] < pos:
            key = _next_key(line, pos)
        if indicator is not None and (key is None or indicator.start() <= key[0]):
            last = indicator.start() + (1 if line[indicator.start()] in " \t" else 0)
            pos = indicator.end()
        elif key is not None:
            last, pos = key
        else:
            break
    return last


def _next_key(line: str, pos: int) -> tuple[int, int] | None:
    """The first ``key:`` at or after ``pos`` (a colon followed by a blank or the end),
    as (where the key starts, where the match ends)."""
    low = pos
    while (colon := line.find(":", low)) >= 0:
        good = colon + 1 == len(line) or line[colon + 1] in " \t"
        if good:
            start = _KEY_START.search(line, low, colon)
            if start is not None:
                return start.start(), colon + 1
        low = colon + 1
    return None
