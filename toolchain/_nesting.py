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
# this far back; a longer one is not taken as one (its node's brackets then count).
_MAX_PROPERTY = 256


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
            if depth or _starts_node(text, at, depth):
                depth += 1
                if depth > limit:
                    return True
        elif mark in "\"'":
            if _starts_node(text, at, depth):
                quoted = (_DOUBLE_QUOTED if mark == '"' else _SINGLE_QUOTED).match(text, at)
                if quoted is None:  # unterminated: the rest is one (broken) scalar
                    return False
                pos = quoted.end()
        elif depth == 0 and _starts_node(text, at, depth):  # "|" or ">": a block scalar
            pos = _past_block_scalar(text, at)
    return False


def _starts_node(text: str, at: int, depth: int) -> bool:
    """Whether a node may begin at ``at``: after indentation, an indicator or a property.

    Looks back over blanks and the node's properties (a tag and an anchor at most), never
    to the line's start, so a long line costs no more than its length whatever it holds.
    """
    for _ in range(3):
        i = at
        while i > 0 and text[i - 1] in " \t":
            i -= 1
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
        word = i - 1
        floor = max(0, i - _MAX_PROPERTY)
        while word > floor and text[word - 1] not in " \t\r\n":
            word -= 1
        if text[word] not in "!&":
            return False
        at = word
    return False


def _past_block_scalar(text: str, at: int) -> int:
    """Where the block scalar whose header is at ``at`` ends: the first line indented no
    more than the collection that holds it (the column of the line's last entry)."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    parent = len(line) - len(line.lstrip(" "))
    for entry in re.finditer(r"(?:^|[ \t])[-?](?=[ \t])|[^\s:][^:]*?:(?=[ \t]|$)", line):
        start = entry.start() + (1 if entry.group()[0] in " \t" else 0)
        parent = max(parent, start)
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
