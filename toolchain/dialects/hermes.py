"""``<tool_call>…</tool_call>``: Hermes 2/3, Qwen 2.5/3, xLAM and Granite 3.1 (JSON),
Qwen3-Coder (``<function=…>`` inside) and GLM-4.5 (``name`` + ``<arg_key>`` pairs).

The body decides the dialect. A block left open at the end of the output (the server
cut the stop token) is still read when its body is complete on its own: a JSON value
is, a GLM key/value list is not (more pairs may have been coming), so that one stays text.
A closed block whose body is not a call is removed from the content and reported.
"""

from __future__ import annotations

from toolchain.dialects import glm, qwen_xml
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._json import JSONFail, calls_in, json_at
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["OPENERS"]

FAMILY = "hermes"
_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    body_start = at + len(marker)
    stop, which = scan.find_any((_CLOSE, _OPEN), body_start)
    closed = which == _CLOSE
    body_end = stop if stop >= 0 else len(text)
    end = stop + len(_CLOSE) if closed else body_end
    body = text[body_start:body_end]
    head = body.lstrip(WS)[:1]
    if "<function=" in body or "<function name=" in body:
        found, problems = qwen_xml.function_calls(body, scan.catalog)
        if found or problems:
            return calls_block(at, end, qwen_xml.FAMILY, found, problems)
    if head in ("{", "["):
        if closed:
            found, problems = json_body(body, scan.catalog, "<tool_call> body")
            return calls_block(at, end, FAMILY, found, problems)
        return _read_open_json(scan, at, body_start)
    call = glm.body_call(body, scan.catalog)
    if call is not None:
        if closed:
            return calls_block(at, end, glm.FAMILY, [call])
        return Skip(end)  # an open key/value list may have been cut short
    if closed:
        return problem_block(at, end, FAMILY, "a <tool_call> block holds no call")
    return Skip(body_start)


def _read_open_json(scan: Scan, at: int, body_start: int) -> Block | Skip:
    start = scan.skip_ws(body_start)
    try:
        value, end = json_at(scan, start)
    except JSONFail:
        return Skip(body_start)
    found, problems = calls_in(value, scan.catalog, bare=False)
    return calls_block(at, end, FAMILY, found, problems)


OPENERS = (Opener(_OPEN, FAMILY, _read),)
