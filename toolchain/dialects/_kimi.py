"""Kimi-K2: ``<|tool_call_begin|>functions.NAME:INDEX<|tool_call_argument_begin|>{json}
<|tool_call_end|>``, inside ``<|tool_calls_section_begin|>…_end|>`` (removed as tokens).

The id (``functions.NAME:INDEX``) is the call's id; the name sits between the optional
``functions.`` prefix and the colon. An id without ``:INDEX`` is malformed and that
call is skipped (vLLM's rule), its siblings kept.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, problem_block
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "kimi_k2"
_BEGIN = "<|tool_call_begin|>"
_ARGS = "<|tool_call_argument_begin|>"
_END = "<|tool_call_end|>"
_ID = re.compile(r"(?:functions\.)?(.+):\d+")


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    stop = scan.find(_END, at + len(marker))
    if stop < 0:
        return Skip(at + len(marker), retire=True)
    end = stop + len(_END)
    body = text[at + len(marker) : stop]
    call_id, found, args = body.partition(_ARGS)
    call_id = call_id.strip(WS)
    if not found:
        return problem_block(at, end, FAMILY, f"the Kimi call {call_id!r} has no arguments")
    named = _ID.fullmatch(call_id)
    if named is None:
        return problem_block(at, end, FAMILY, f"{call_id!r} is not a Kimi call id (NAME:INDEX)")
    name = scan.catalog.resolve(named.group(1))
    try:
        value = decode_exact(args)
    except ValueError as error:
        return problem_block(at, end, FAMILY, f"the arguments of {name} are not JSON ({error})")
    call = ToolCall(name, arguments_of(name, value, scan.catalog), call_id)
    return calls_block(at, end, FAMILY, [call])


OPENERS = (Opener(_BEGIN, FAMILY, _read),)
