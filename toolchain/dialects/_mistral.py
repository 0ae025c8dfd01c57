"""Mistral ``[TOOL_CALLS]``: a JSON list (before tokenizer v11), ``NAME{json}`` per
call (v11), ``NAME[ARGS]{json}`` and ``NAME[CALL_ID]id[ARGS]{json}`` (Magistral,
Devstral); ``[ARGS]`` alone when a server has already cut the marker off.

A v11 name with no arguments after it is dropped and reported. Text after the marker
that is not a call stays content, the marker removed. Before v11 a message holds one
``[TOOL_CALLS]`` list; two are ambiguous (vLLM refuses them) and none is read.
"""

from __future__ import annotations

import re

from toolchain.dialects._build import calls_block, json_call, problem_block
from toolchain.dialects._json import JSONFail, calls_in, json_at
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "mistral"
_MARK = "[TOOL_CALLS]"
_ARGS = "[ARGS]"
_CALL_ID = "[CALL_ID]"
_NAME = re.compile(r"[^\W\d][\w.\-]{0,127}")
_LIST = "a [TOOL_CALLS] list"


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    start = scan.skip_ws(at + len(marker))
    char = scan.char(start)
    if char in ("[", "{"):
        found = _json_calls(scan, at, start)
        if found is not None:
            return found
    elif char:
        named = _NAME.match(text, start)
        if named is not None:
            if named.end() == len(text) and not scan.final:
                scan.need()
            found = _named_call(scan, at, start, named.group(), named.end())
            if found is not None:
                return found
    # Junk between the marker and a list (vLLM's fallback): read the first list on the line.
    newline = scan.find("\n", start)
    bracket = scan.find("[{", start) if newline < 0 else scan.find("[{", start, newline)
    if bracket >= 0:
        found = _json_calls(scan, at, bracket)
        if found is not None:
            return found
    return Block(at, at + len(marker), FAMILY, kind="token")


def _json_calls(scan: Scan, at: int, start: int) -> Block | None:
    try:
        value, end = json_at(scan, start)
    except JSONFail:
        return None
    found, problems = calls_in(value, scan.catalog, bare=False)
    if not found:
        return None
    return calls_block(at, end, FAMILY, found, problems, exclusive=_LIST)


def _named_call(scan: Scan, at: int, start: int, name: str, cursor: int) -> Block | None:
    """``NAME{…}``, ``NAME[ARGS]{…}`` or ``NAME[CALL_ID]id[ARGS]{…}`` at ``start``."""
    text = scan.text
    call_id = ""
    if scan.has(_CALL_ID, cursor):
        args_at = scan.find(_ARGS, cursor)
        if args_at < 0:
            return None
        call_id = text[cursor + len(_CALL_ID) : args_at].strip(WS)
        cursor = args_at
    if scan.has(_ARGS, cursor):
        cursor += len(_ARGS)
    brace = scan.skip_ws(cursor)
    if scan.char(brace) != "{":
        rest = scan.char(cursor)
        if rest == "" or scan.has(_MARK, cursor):
            return problem_block(at, cursor, FAMILY, f"{name} was called with no arguments")
        return None
    found = json_call(scan, at, brace, FAMILY, name, call_id)
    if found is None:
        return problem_block(at, brace, FAMILY, f"the arguments of {name} are not JSON")
    return found


def _read_args(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``NAME[ARGS]{…}`` with no ``[TOOL_CALLS]``: the name is just before the marker."""
    text = scan.text
    line = scan.line_start(at)
    start = at
    while start > line and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    name = text[start:at]
    if not _NAME.fullmatch(name):
        return Skip(at + 1)
    found = _named_call(scan, start, start, name, at)
    return found if found is not None else Skip(at + 1)


OPENERS = (Opener(_MARK, FAMILY, _read), Opener(_ARGS, FAMILY, _read_args))
