"""OpenAI harmony (gpt-oss): messages ``<|start|>ROLE<|channel|>CHANNEL<|message|>BODY``
ended by ``<|end|>``, ``<|call|>`` or ``<|return|>``.

A header naming a recipient (``to=functions.NAME``, before or after the channel) makes
the body that tool's JSON arguments, whatever the channel; otherwise ``analysis`` is
reasoning and ``final`` / ``commentary`` are content. An output may start inside a
header (the template wrote ``<|start|>assistant``), so a ``to=…`` just before the first
``<|channel|>`` on its line belongs to it.
"""

from __future__ import annotations

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, problem_block
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "harmony"
_START = "<|start|>"
_CHANNEL = "<|channel|>"
_MESSAGE = "<|message|>"
_ENDS = ("<|end|>", "<|call|>", "<|return|>", _START)
_RECIPIENT = "to="
_FUNCTIONS = "functions."
_CODE_TOOL = "python"


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    start = at
    if marker == _CHANNEL:
        line = scan.line_start(at)
        fragment = text[line:at]
        if _RECIPIENT in fragment and "<" not in fragment:
            start = line
    message = scan.find(_MESSAGE, at)
    if message < 0:
        return Skip(at + len(marker))
    header = text[start:message]
    body_at = message + len(_MESSAGE)
    stop, which = scan.find_any(_ENDS, body_at)
    if stop < 0:
        stop = end = len(text)
    else:
        end = stop if which == _START else stop + len(which)
    body = text[body_at:stop]
    recipient = _word_after(header, _RECIPIENT)
    if recipient:
        return _call(start, end, recipient, body, scan)
    if _word_after(header, _CHANNEL) == "analysis":
        return Block(start, end, FAMILY, kind="reasoning", reasoning=body)
    return Block(start, end, FAMILY, content=body)


def _call(start: int, end: int, recipient: str, body: str, scan: Scan) -> Block:
    name = scan.catalog.resolve(recipient.removeprefix(_FUNCTIONS))
    try:
        value = decode_exact(body)
    except ValueError as error:
        if name == _CODE_TOOL:
            return calls_block(start, end, FAMILY, [ToolCall(name, {"code": body})])
        return problem_block(start, end, FAMILY, f"the arguments of {name} are not JSON ({error})")
    return calls_block(
        start, end, FAMILY, [ToolCall(name, arguments_of(name, value, scan.catalog))]
    )


def _word_after(header: str, key: str) -> str:
    found = header.find(key)
    if found < 0:
        return ""
    at = found + len(key)
    while at < len(header) and header[at] in WS:
        at += 1
    stop = at
    while stop < len(header) and header[stop] not in WS + "<":
        stop += 1
    return header[at:stop]


OPENERS = (Opener(_START, FAMILY, _read), Opener(_CHANNEL, FAMILY, _read))
