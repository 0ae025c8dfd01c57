"""Gemma: FunctionGemma / Gemma 4 ``call:NAME{key:value,…}`` (bare keys, strings quoted
with the ``<|"|>`` token; the ``<start_function_call>`` and ``<|tool_call>`` wrappers are
removed as tokens) and Gemma 3's text convention ``[TOOL_REQUEST]NAME {json}
[TOOL_REQUEST_END]`` (also closed by ``[END_TOOL_REQUEST]``, as models echo it).
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._literals import LiteralError, LiteralReader, Syntax
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, NeedMore, Scan, Skip, rejected_call

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "gemma"
_CALL = "call:"
_REQUEST = "[TOOL_REQUEST]"
_REQUEST_ENDS = ("[TOOL_REQUEST_END]", "[END_TOOL_REQUEST]")
_NAME = re.compile(r"[^\W\d][\w.\-]{0,127}")
_SYNTAX = Syntax(bare_keys=True)


def _read_call(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    if at > scan.floor and text[at - 1] not in WS + ">":
        return Skip(at + 1)  # `recall:` or `a call:` inside prose
    scan.char(at + len(marker))  # the name may be still to come
    named = _NAME.match(text, at + len(marker))
    if named is None or scan.char(named.end()) != "{":
        return Skip(at + 1)
    reader = LiteralReader(text, _SYNTAX)
    try:
        value, end = reader.value(named.end())
    except LiteralError as error:
        if error.at_end and not scan.final:
            raise NeedMore from None
        return Skip(at + 1)
    name = scan.catalog.resolve(named.group())
    if reader.problems:
        return calls_block(at, end, FAMILY, [rejected_call(name, "; ".join(reader.problems))])
    return calls_block(at, end, FAMILY, [ToolCall(name, arguments_of(name, value, scan.catalog))])


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


OPENERS = (Opener(_CALL, FAMILY, _read_call), Opener(_REQUEST, FAMILY, _read_request))
