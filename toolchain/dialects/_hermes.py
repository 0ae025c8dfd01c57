"""``<tool_call>…</tool_call>``: Hermes 2/3, Qwen 2.5/3, xLAM and Granite 3.1 (JSON),
Qwen3-Coder (``<function=…>`` inside), GLM-4.5 (``name`` + ``<arg_key>`` pairs) and its
drift ``NAME`` then a JSON object of arguments (Poolside Laguna).

The body decides the dialect. A block left open at the end of the output (the server
cut the stop token) is still read when its body is complete on its own: a JSON value
is; a GLM key/value list is not (more pairs may have been coming), so that call is
reported as cut off. A closed block whose body is not a call is removed from the content
and reported, and so is a block opened with nothing after it; an open one followed by
prose stays text. ``<tool_call>`` written several times in a row opens one block.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects import _glm as glm
from toolchain.dialects import _qwen_xml as qwen_xml
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._json import JSONFail, calls_in, json_at
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip, rejected_call
from toolchain.dialects._values import as_mapping

__all__ = ["OPENERS"]

FAMILY = "hermes"
_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
# `NAME` then a JSON object: the name runs to the first space, `{` or `<`.
_NAMED_JSON = re.compile(r"[ \t\r\n]*([^\s{}<>\[\]\"]{1,128})[ \t\r\n]*(?=\{)")


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
    named = _NAMED_JSON.match(body)
    if named is not None:
        brace = body_start + named.end()
        return _named_json(scan, at, brace, named.group(1), (end, body_end), closed=closed)
    call = glm.body_call(body, scan.catalog)
    if call is not None and (closed or stop >= 0):  # closed, or ended by the next block
        return calls_block(at, end, glm.FAMILY, [call])
    if call is not None or "<arg_key>" in body:  # the output ended inside the call
        return problem_block(at, end, glm.FAMILY, "a call was cut off before </tool_call>")
    if closed:
        return problem_block(at, end, FAMILY, "a <tool_call> block holds no call")
    if not body.strip(WS):
        return problem_block(at, end, FAMILY, "a <tool_call> was opened but holds no call")
    return Skip(body_start)


def _read_open_json(scan: Scan, at: int, body_start: int) -> Block | Skip:
    start = scan.skip_ws(body_start)
    try:
        value, end = json_at(scan, start)
    except JSONFail:
        return Skip(body_start)
    found, problems = calls_in(value, scan.catalog, bare=False)
    return calls_block(at, end, FAMILY, found, problems)


def _named_json(
    scan: Scan, at: int, brace: int, name: str, ends: tuple[int, int], *, closed: bool
) -> Block:
    """``<tool_call>NAME {…}``: the object is the arguments, and must be one. Left open,
    the object is read as far as it goes, within the block (the next one, or the end of
    the output, ends it); text after it stays content."""
    name = scan.catalog.resolve(name)
    end, body_end = ends
    inside = Scan(scan.text[brace:body_end], True, scan.catalog)
    try:
        value, value_end = json_at(inside, 0)
    except JSONFail:
        why = "are not a JSON object" if closed else "were cut off"
        call = rejected_call(name, f"the arguments of {name} {why}")
        return calls_block(at, end, glm.FAMILY, [call])
    args = as_mapping(value)
    if args is None or (closed and inside.text[value_end:].strip(WS)):
        message = f"the arguments of {name} are not a JSON object"
        return calls_block(at, end, glm.FAMILY, [rejected_call(name, message)])
    return calls_block(at, end if closed else brace + value_end, glm.FAMILY, [ToolCall(name, args)])


OPENERS = (Opener(_OPEN, FAMILY, _read, repeats=True),)
