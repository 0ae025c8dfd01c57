"""Python-style calls: ``[get_weather(city='Paris'), ping()]`` (Llama 3.2/4 and the
models vLLM's pythonic parser serves), optionally inside Llama 4's
``<|python_start|>…<|python_end|>`` or LFM2's ``<|tool_call_start|>…<|tool_call_end|>``,
Llama 3.1's built-in ``<|python_tag|>tool.call(…)``, and the calls Olmo 3 writes one per
line, without a list, inside ``<function_calls>`` (read by ``xml_tags``).

Arguments are keyword-only Python literals (JSON's ``true``/``null`` too). A call whose
value cannot be JSON (``b'bytes'``, ``1e999``) is rejected on its own; a syntax error
keeps the calls before it (vLLM's salvage) and, when there are none, leaves unmarked
text as content and reports a marked block. LFM2's template writes strings in single
quotes without escaping them, so inside its block a quote that cannot end a value is
part of the string; a list it echoes after the block, closed by a second
``<|tool_call_end|>``, is the same calls again, not new ones.
"""

from __future__ import annotations

import re

from toolchain._errors import ToolchainError
from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import FinalAnswer
from toolchain.dialects._literals import LiteralError, LiteralReader, Syntax
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, NeedMore, Scan, Skip, rejected_call

__all__ = ["FAMILY", "OPENERS", "CallSyntaxError", "call_at", "read_list"]

FAMILY = "pythonic"
LFM2 = "lfm2"
NAME = r"[^\W\d][\w\-]*(?:\.[^\W\d][\w\-]*)*"
_NAME = re.compile(NAME)
_PLAIN = Syntax()
_LOOSE = Syntax(loose_quotes=True)
_LFM2_START = "<|tool_call_start|>"
_LFM2_END = "<|tool_call_end|>"


class CallSyntaxError(ToolchainError):
    """Not a Python-style call; ``position`` is where it stopped being one."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def read_list(
    scan: Scan, at: int, *, marked: bool, family: str = FAMILY, syntax: Syntax = _PLAIN
) -> Block | Skip:
    """The list of calls whose ``[`` is at ``at``."""
    text = scan.text
    found: list[ToolCall] = []
    cursor = at + 1
    try:
        while True:
            call, cursor = call_at(scan, _ws(scan, cursor), syntax)
            found.append(call)
            cursor = _ws(scan, cursor)
            char = scan.char(cursor)
            if char == ",":
                cursor = _ws(scan, cursor + 1)
                if scan.char(cursor) == "]":
                    return calls_block(at, cursor + 1, family, found, marked=marked)
                continue
            if char == "]":
                return calls_block(at, cursor + 1, family, found, marked=marked)
            raise CallSyntaxError(cursor)
    except CallSyntaxError as broken:
        if not found:
            return Skip(max(broken.position, at + 1))
        newline = scan.find("\n", broken.position)
        end = len(text) if newline < 0 else newline
        problem = "a call after the ones read is not valid Python call syntax"
        return calls_block(at, end, family, found, [problem], marked=marked)


def call_lines(body: str, catalog: Catalog) -> tuple[list[ToolCall], list[str]]:
    """Calls one after another in a delimited body (Olmo 3: one per line, no list). A
    line that is not a call is reported and skipped; the calls around it are kept."""
    scan = Scan(body, True, catalog)
    found: list[ToolCall] = []
    problems: list[str] = []
    cursor = _ws(scan, 0)
    while cursor < len(body):
        try:
            call, cursor = call_at(scan, cursor)
        except CallSyntaxError as broken:
            line_end = body.find("\n", broken.position)
            line = body[body.rfind("\n", 0, cursor) + 1 : line_end if line_end >= 0 else None]
            problems.append(f"{line.strip()[:80]!r} is not a call")
            cursor = len(body) if line_end < 0 else line_end + 1
        else:
            found.append(call)
        while cursor < len(body) and body[cursor] in WS + ",;":
            cursor += 1
    return found, problems


def call_at(scan: Scan, at: int, syntax: Syntax = _PLAIN) -> tuple[ToolCall, int]:
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
    reader = LiteralReader(text, syntax)
    args: dict[str, object] = {}
    cursor = _ws(scan, cursor + 1)
    while scan.char(cursor) != ")":
        key = _NAME.match(text, cursor)
        if key is None or "." in key.group():
            raise CallSyntaxError(cursor)
        cursor = _ws(scan, key.end())
        if scan.char(cursor) != "=":
            raise CallSyntaxError(cursor)
        known = len(reader.problems)
        try:
            value, cursor = reader.value(cursor + 1)
        except LiteralError as error:
            if error.at_end and not scan.final:
                raise NeedMore from None
            raise CallSyntaxError(error.position) from None
        args[key.group()] = value
        reader.within(key.group(), known)
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


def _read_lfm2(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``<|tool_call_start|>[…]<|tool_call_end|>``; left open, read when the list closes
    before the next ``<|tool_call_start|>`` (or the end of the output)."""
    text = scan.text
    body_start = at + len(marker)
    stop, which = scan.find_any((_LFM2_END, _LFM2_START), body_start)
    closed = which == _LFM2_END
    body_end = stop if stop >= 0 else len(text)
    start = _ws(scan, body_start)
    if start >= body_end:
        if closed:  # nothing was called
            return Block(at, stop + len(_LFM2_END), LFM2, kind="token")
        return problem_block(at, body_end, LFM2, f"{_LFM2_START} was opened but holds no call")
    if closed:
        end = stop + len(_LFM2_END)
        found, problems = _lfm2_body(text[start:body_end], scan.catalog)
        return calls_block(at, _past_echo(scan, end), LFM2, found, problems)
    if text[start] == "[":
        # Read within the body, never past the next opener: a loose quote would otherwise
        # look for its end through the rest of the output (once per opener: quadratic) and
        # take the next block's markup into a string, where a stream, seeing less of the
        # output, would end it sooner. The body's end is already certain here.
        listed = read_list(
            Scan(text[start:body_end], True, scan.catalog),
            0,
            marked=True,
            family=LFM2,
            syntax=_LOOSE,
        )
        if isinstance(listed, Block):
            end = start + listed.end
            return Block(at, end, LFM2, calls=listed.calls, problems=listed.problems)
    return problem_block(at, body_end, LFM2, "a <|tool_call_start|> block is not closed")


def _lfm2_body(body: str, catalog: Catalog) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    body = body.strip(WS)
    if body.startswith(("{", "[{")):
        return json_body(body, catalog, "<|tool_call_start|> body")
    if not body.startswith("["):
        calls, problems = call_lines(body, catalog)
        return list(calls), problems
    scan = Scan(body, True, catalog)
    listed = read_list(scan, 0, marked=True, family=LFM2, syntax=_LOOSE)
    if isinstance(listed, Skip):
        if body[1:].strip(WS) == "]":
            return [], []  # `[]`: no call
        return [], ["the calls in a <|tool_call_start|> block are not Python call syntax"]
    problems = list(listed.problems)
    if body[listed.end :].strip(WS):
        problems.append("text follows the call list in a <|tool_call_start|> block")
    return list(listed.calls), problems


def _past_echo(scan: Scan, end: int) -> int:
    """After a block: a call list closed by a second ``<|tool_call_end|>`` is the model
    echoing its calls; it ends the block, read no further. The list is read only up to
    that ``<|tool_call_end|>`` (see ``_read_lfm2``: never past the next marker)."""
    start = scan.skip_ws(end)
    if scan.char(start) != "[":
        return end
    stop, which = scan.find_any((_LFM2_END, _LFM2_START), start)
    if which != _LFM2_END:
        return end
    echo = read_list(Scan(scan.text[start:stop], True, scan.catalog), 0, marked=True, syntax=_LOOSE)
    if isinstance(echo, Skip) or scan.text[start + echo.end : stop].strip(WS):
        return end
    return stop + len(_LFM2_END)


OPENERS = (
    Opener("<|python_start|>", FAMILY, _read_tagged),
    Opener(_LFM2_START, LFM2, _read_lfm2, repeats=True),
)
