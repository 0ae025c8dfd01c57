"""Python-style calls: ``[get_weather(city='Paris'), ping()]`` (Llama 3.2/4 and the
models vLLM's pythonic parser serves), optionally inside Llama 4's
``<|python_start|>…<|python_end|>``, and Llama 3.1's built-in ``<|python_tag|>tool.call(…)``.

Arguments are keyword-only Python literals. A call whose value cannot be JSON
(``b'bytes'``, ``1e999``) is rejected on its own; a syntax error keeps the calls before
it (vLLM's salvage) and, when there are none, leaves the text as content.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, problem_block
from toolchain.dialects._literals import LiteralError, LiteralReader
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, NeedMore, Scan, Skip, rejected_call

__all__ = ["FAMILY", "OPENERS", "CallSyntaxError", "call_at", "read_list"]

FAMILY = "pythonic"
_NAME = re.compile(r"[^\W\d][\w\-]*(?:\.[^\W\d][\w\-]*)*")


class CallSyntaxError(Exception):
    """Not a Python-style call; ``position`` is where it stopped being one."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def read_list(scan: Scan, at: int, *, marked: bool) -> Block | Skip:
    """The list of calls whose ``[`` is at ``at``."""
    text = scan.text
    found: list[ToolCall] = []
    cursor = at + 1
    try:
        while True:
            call, cursor = call_at(scan, _ws(scan, cursor))
            found.append(call)
            cursor = _ws(scan, cursor)
            char = scan.char(cursor)
            if char == ",":
                cursor = _ws(scan, cursor + 1)
                if scan.char(cursor) == "]":
                    return calls_block(at, cursor + 1, FAMILY, found, marked=marked)
                continue
            if char == "]":
                return calls_block(at, cursor + 1, FAMILY, found, marked=marked)
            raise CallSyntaxError(cursor)
    except CallSyntaxError as broken:
        if not found:
            return Skip(max(broken.position, at + 1))
        newline = scan.find("\n", broken.position)
        end = len(text) if newline < 0 else newline
        problem = "a call after the ones read is not valid Python call syntax"
        return calls_block(at, end, FAMILY, found, [problem], marked=marked)


def call_at(scan: Scan, at: int) -> tuple[ToolCall, int]:
    """``name(key=value, …)`` at ``at`` (``name.call(…)`` names ``name``)."""
    text = scan.text
    named = _NAME.match(text, at)
    if named is None:
        scan.char(at)  # at the end of a growing text, wait
        raise CallSyntaxError(at)
    if named.end() + 1 >= len(text) and not scan.final:
        raise NeedMore  # `name` or `name.` may go on (`name.call`)
    name = named.group().removesuffix(".call")
    cursor = _ws(scan, named.end())
    if scan.char(cursor) != "(":
        raise CallSyntaxError(cursor)
    reader = LiteralReader(text)
    args: dict[str, object] = {}
    cursor = _ws(scan, cursor + 1)
    while scan.char(cursor) != ")":
        key = _NAME.match(text, cursor)
        if key is None or "." in key.group():
            raise CallSyntaxError(cursor)
        cursor = _ws(scan, key.end())
        if scan.char(cursor) != "=":
            raise CallSyntaxError(cursor)
        try:
            value, cursor = reader.value(cursor + 1)
        except LiteralError as error:
            if error.at_end and not scan.final:
                raise NeedMore from None
            raise CallSyntaxError(error.position) from None
        args[key.group()] = value
        cursor = _ws(scan, cursor)
        if scan.char(cursor) == ",":
            cursor = _ws(scan, cursor + 1)
        elif scan.char(cursor) != ")":
            raise CallSyntaxError(cursor)
    name = scan.catalog.resolve(name)
    if reader.problems:
        return rejected_call(name, f"{name}: " + "; ".join(reader.problems)), cursor + 1
    return ToolCall(name, args), cursor + 1


def _ws(scan: Scan, at: int) -> int:
    text = scan.text
    while at < len(text) and text[at] in WS:
        at += 1
    return at


def _read_tagged(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``<|python_start|>[…]``: the list right after the tag."""
    start = scan.skip_ws(at + len(marker))
    if scan.char(start) != "[":
        return problem_block(at, start, FAMILY, "<|python_start|> is not followed by a call list")
    found = read_list(scan, start, marked=True)
    if isinstance(found, Skip):
        return problem_block(at, start, FAMILY, "the calls after <|python_start|> are not valid")
    return Block(
        at,
        found.end,
        FAMILY,
        calls=found.calls,
        problems=found.problems,
        marked=True,
    )


OPENERS = (Opener("<|python_start|>", FAMILY, _read_tagged),)
