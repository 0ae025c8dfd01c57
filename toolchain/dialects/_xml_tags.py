"""Calls as XML elements: ``<invoke name="N"><parameter name="K">V</parameter></invoke>``
(Claude style, MiniMax-M2, DeepSeek V3.2's DSML: see ``_invoke``), the generic
``<tool><name>N</name><arguments><K>V</K></arguments></tool>``, and LangChain's XML agent
``<tool>N</tool><tool_input>…</tool_input>`` / ``<final_answer>…</final_answer>``.

XML entities are resolved. A parameter's type comes from the tool's schema; with none,
a value that spells a number or ``true``/``false``/``null`` is read as one (these
formats have no other way to write them). A ``<tool>`` holding JSON is left to the JSON
reader, its tags then removed as a wrapper.
"""

from __future__ import annotations

import html
import re

from toolchain._result import ToolCall
from toolchain.dialects import _invoke
from toolchain.dialects._build import calls_block, problem_block
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["OPENERS"]

_TAG = re.compile(r"<([^\W\d][\w\-.:]*)>")


def _read_tool(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    inner = at + len(marker)
    close = scan.find("</tool>", inner)
    if close < 0:
        return Skip(inner, retire=True)
    body = text[inner:close]
    end = close + len("</tool>")
    stripped = body.strip(WS)
    if stripped[:1] in ("{", "["):
        return Skip(inner)  # JSON inside: the JSON reader takes it
    if "<name>" in stripped:
        return _generic(at, end, stripped, scan.catalog)
    return _langchain(scan, at, end, html.unescape(stripped))


def _generic(at: int, end: int, body: str, catalog: Catalog) -> Block:
    name_at = body.find("<name>")
    name_end = body.find("</name>", name_at)
    if name_end < 0:
        return problem_block(at, end, "generic_xml", "a <tool> has an unclosed <name>")
    name = catalog.resolve(html.unescape(body[name_at + len("<name>") : name_end].strip(WS)))
    args_at = body.find("<arguments>", name_end)
    args_end = body.rfind("</arguments>")
    if args_at < 0:
        return calls_block(at, end, "generic_xml", [ToolCall(name)])
    if args_end < args_at:
        return problem_block(at, end, "generic_xml", f"the <arguments> of {name} are not closed")
    inner = body[args_at + len("<arguments>") : args_end].strip(WS)
    args = _children(inner, name, catalog)
    if args is None:
        try:
            args = arguments_of(name, decode_exact(inner), catalog) if inner else {}
        except ValueError:
            return problem_block(
                at, end, "generic_xml", f"the arguments of {name} are not readable"
            )
    return calls_block(at, end, "generic_xml", [ToolCall(name, args)])


def _children(inner: str, name: str, catalog: Catalog) -> dict[str, object] | None:
    """``<key>value</key>`` elements, or ``None`` when ``inner`` is not only those."""
    args: dict[str, object] = {}
    cursor = 0
    while True:
        while cursor < len(inner) and inner[cursor] in WS:
            cursor += 1
        if cursor == len(inner):
            return args if args else None
        tag = _TAG.match(inner, cursor)
        if tag is None:
            return None
        closing = f"</{tag.group(1)}>"
        stop = inner.find(closing, tag.end())
        if stop < 0:
            return None
        key = tag.group(1)
        args[key] = catalog.typed(name, key, html.unescape(inner[tag.end() : stop]), "infer")
        cursor = stop + len(closing)


def _langchain(scan: Scan, at: int, end: int, name: str) -> Block:
    cursor = scan.skip_ws(end)
    if scan.has("<tool>", cursor):
        # LangChain refuses several <tool> blocks: which one the input belongs to is a guess.
        last = end
        while scan.has("<tool>", cursor):
            close = scan.find("</tool>", cursor)
            if close < 0:
                break
            last = close + len("</tool>")
            cursor = scan.skip_ws(last)
        if scan.has("<tool_input>", cursor):
            close = scan.find("</tool_input>", cursor)
            last = close + len("</tool_input>") if close >= 0 else len(scan.text)
        return problem_block(at, last, "langchain_xml", "several <tool> blocks: write one per step")
    if not scan.has("<tool_input>", cursor):
        return problem_block(at, end, "langchain_xml", f"<tool>{name}</tool> has no <tool_input>")
    close = scan.find("</tool_input>", cursor)
    stop = close if close >= 0 else len(scan.text)
    raw = html.unescape(scan.text[cursor + len("<tool_input>") : stop])
    block_end = stop + len("</tool_input>") if close >= 0 else stop
    name = scan.catalog.resolve(name)
    return calls_block(
        at, block_end, "langchain_xml", [ToolCall(name, arguments_of(name, raw, scan.catalog))]
    )


def _read_input(scan: Scan, at: int, marker: str) -> Block | Skip:
    close = scan.find("</tool_input>", at)
    end = len(scan.text) if close < 0 else close + len("</tool_input>")
    return problem_block(at, end, "langchain_xml", "a <tool_input> has no <tool> before it")


def _read_answer(scan: Scan, at: int, marker: str) -> Block | Skip:
    inner = at + len(marker)
    close = scan.find("</final_answer>", inner)
    stop = len(scan.text) if close < 0 else close
    end = stop if close < 0 else close + len("</final_answer>")
    answer = html.unescape(scan.text[inner:stop]).strip(WS)
    return Block(at, end, "langchain_xml", content=answer, answer=answer)


OPENERS = (
    *_invoke.OPENERS,
    Opener("<tool>", "generic_xml", _read_tool),
    Opener("<tool_input>", "langchain_xml", _read_input),
    Opener("<final_answer>", "langchain_xml", _read_answer),
)
