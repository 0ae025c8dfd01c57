"""Gemma: Gemma 4 ``<|tool_call>call:NAME{key:value,…}<tool_call|>`` (bare keys, raw
strings between ``<|"|>``), FunctionGemma ``<start_function_call>call:NAME{…}
<end_function_call>`` (raw strings between ``<escape>``), a bare ``call:NAME{…}``, and
Gemma 3's text convention ``[TOOL_REQUEST]NAME {json}[TOOL_REQUEST_END]`` (also closed
by ``[END_TOOL_REQUEST]``, as models echo it).

Strings written raw keep their backslashes; values written bare are typed by their
syntax (``10`` a number, ``true`` a boolean). A value written as a string stays one,
unless the tool's schema takes no string there: then it is read as the type declared
(``<escape>10<escape>`` for an integer is 10). A call block that does not hold a readable
call is reported, never stripped quietly. A block left open at the end is read when its
call is complete; Gemma 4 sometimes closes with ``<turn|>`` or writes ``:call:``, and
both are read.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._literals import LiteralError, LiteralReader, Syntax
from toolchain.dialects._opener import Opener, Reader
from toolchain.dialects._scan import WS, Block, NeedMore, Scan, Skip, rejected_call

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "gemma"
_CALL = "call:"
_REQUEST = "[TOOL_REQUEST]"
_REQUEST_ENDS = ("[TOOL_REQUEST_END]", "[END_TOOL_REQUEST]")
_NAME = re.compile(r"[^\W\d][\w.\-]{0,127}")
# Call blocks: their opener, what closes them (first the proper close), and the
# openers of the other blocks that end an unclosed one.
_GEMMA4 = ("<|tool_call>", ("<tool_call|>", "<turn|>"))
_FUNCTION_GEMMA = ("<start_function_call>", ("<end_function_call>",))
BLOCKS = (_GEMMA4[0], _FUNCTION_GEMMA[0])
_SYNTAX = Syntax(
    bare_keys=True, raw_quotes=('<|"|>', "<escape>"), optional_commas=True, stops=BLOCKS
)


def _call_at(scan: Scan, at: int) -> tuple[ToolCall, int]:
    """``NAME{…}`` at ``at`` (after ``call:``); raises ``LiteralError`` when it is not one."""
    text = scan.text
    scan.char(at)  # the name may be still to come
    named = _NAME.match(text, at)
    if named is None or scan.char(named.end()) != "{":
        raise LiteralError("a call must be written call:NAME{…}", at)
    reader = LiteralReader(text, _SYNTAX)
    value, end = reader.value(named.end())
    name = scan.catalog.resolve(named.group())
    if reader.problems:
        return rejected_call(name, f"{name}: " + "; ".join(reader.problems)), end
    args = scan.catalog.retyped(name, arguments_of(name, value, scan.catalog))
    return ToolCall(name, args), end


def _read_call(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    if at > scan.floor and text[at - 1] not in WS + ">":
        return Skip(at + 1)  # `recall:` or `a call:` inside prose
    try:
        call, end = _call_at(scan, at + len(marker))
    except LiteralError as error:
        if error.at_end and not scan.final:
            raise NeedMore from None
        return Skip(at + 1)
    return calls_block(at, end, FAMILY, [call])


def _block_reader(opener: str, closes: tuple[str, ...]) -> Reader:
    def read(scan: Scan, at: int, marker: str) -> Block | Skip:
        start = scan.skip_ws(at + len(marker))
        if scan.has(":" + _CALL, start):  # Gemma 4's `<|tool_call>:call:` drift
            start += 1
        if scan.has(_CALL, start):
            try:
                call, end = _call_at(scan, start + len(_CALL))
            except LiteralError as error:
                if error.at_end and not scan.final:
                    raise NeedMore from None
            else:
                after = scan.skip_ws(end)
                close = next((c for c in closes if scan.has(c, after)), "")
                return calls_block(at, after + len(close) if close else end, FAMILY, [call])
        # Not a call: the block up to its close (or the next block, or the end) is reported.
        stop, which = scan.find_any((*closes, *BLOCKS), start)
        body_end = len(scan.text) if stop < 0 else stop
        end = body_end if which in BLOCKS or stop < 0 else stop + len(which)
        shown = scan.text[start : min(body_end, start + 60)]
        return problem_block(at, end, FAMILY, f"a {opener} block holds no readable call: {shown!r}")

    return read


def _read_request(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    inner = at + len(marker)
    stop, which = scan.find_any(_REQUEST_ENDS, inner)
    end = len(text) if stop < 0 else stop + len(which)
    body = text[inner : len(text) if stop < 0 else stop].strip(WS)
    if body.startswith("{"):
        found, problems = json_body(body, scan.catalog, "[TOOL_REQUEST] body")
        return calls_block(at, end, FAMILY, found, problems)
    named = _NAME.match(body)
    if named is None:
        return problem_block(at, end, FAMILY, "a [TOOL_REQUEST] names no tool")
    name = scan.catalog.resolve(named.group())
    rest = body[named.end() :]
    try:
        value = decode_exact(rest) if rest.strip(WS) else None
    except ValueError as error:
        return problem_block(at, end, FAMILY, f"the arguments of {name} are not JSON ({error})")
    return calls_block(at, end, FAMILY, [ToolCall(name, arguments_of(name, value, scan.catalog))])


OPENERS = (
    Opener(_CALL, FAMILY, _read_call),
    Opener(_REQUEST, FAMILY, _read_request),
    *(
        Opener(opener, FAMILY, _block_reader(opener, closes), repeats=True)
        for opener, closes in (_GEMMA4, _FUNCTION_GEMMA)
    ),
)
