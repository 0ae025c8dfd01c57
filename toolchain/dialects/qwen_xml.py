"""``<function=NAME>`` calls: Qwen3-Coder's ``<parameter=KEY>value</parameter>`` and
the JSON body llama.cpp accepts from Functionary v3.1 and drifting Hermes models.

Parameter values are raw text (the template writes strings as they are and other values
as JSON), so their types come from the tool's schema: a string parameter stays text,
an integer or object one is converted. With no schema a value stays text, quotes and
all, as vLLM and Ollama read it. One newline after the opening tag and one before the
closing tag belong to the markup, not to the value.
"""

from __future__ import annotations

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_call
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import FinalAnswer, arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS", "function_calls"]

FAMILY = "qwen3_coder"
_OPENS = ("<function=", "<function name=")
_ENDS = ("</function>", "<function=", "<function name=", "</tool_call>", "<tool_call>")
_PARAM = "<parameter="
_PARAM_CLOSE = "</parameter>"


def function_calls(body: str, catalog: Catalog) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    """Every ``<function=…>`` call in a delimited body (a ``<tool_call>`` block's)."""
    found: list[ToolCall | FinalAnswer] = []
    problems: list[str] = []
    at = _next_open(body, 0)
    while at >= 0:
        head = _head(body, at)
        if head is None:
            problems.append("a <function=…> tag is not closed by '>' on its line")
            at = _next_open(body, at + 1)
            continue
        name, inner = head
        following = _next_open(body, inner)
        limit = following if following >= 0 else len(body)
        close = body.find("</function>", inner, limit)
        stop = close if close >= 0 else limit
        calls, trouble = _one_call(name, body[inner:stop], catalog)
        found.extend(calls)
        problems.extend(trouble)
        at = following
    return found, problems


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    head_end = scan.find(">", at)
    if head_end < 0 or scan.find("\n", at, head_end) >= 0:
        return Skip(at + 1)
    head = _head(text, at)
    if head is None:
        return Skip(at + 1)
    name, inner = head
    stop, which = scan.find_any(_ENDS, inner)
    if which == "</function>":
        end = stop + len(which)
    elif stop >= 0:
        end = stop
    else:
        stop = end = len(text)
    body = text[inner:stop]
    if _PARAM in body:
        if stop == len(text) and which == "":
            return Skip(inner)  # cut off mid-call: more parameters may have followed
        calls, problems = _one_call(name, body, scan.catalog)
        return calls_block(at, end, FAMILY, calls, problems)
    if body.strip(WS) == "" and which == "</function>":
        return calls_block(at, end, FAMILY, [ToolCall(scan.catalog.resolve(name))])
    start = scan.skip_ws(inner)
    if scan.char(start) != "{":
        return Skip(inner)
    if which == "</function>":
        calls, problems = _one_call(name, body, scan.catalog)
        return calls_block(at, end, FAMILY, calls, problems)
    found = json_call(scan, at, start, FAMILY, name)
    return found if found is not None else Skip(inner)


def _one_call(
    name: str, body: str, catalog: Catalog
) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    name = catalog.resolve(name)
    if _PARAM not in body:
        if not body.strip(WS):
            return [ToolCall(name)], []
        try:
            value = decode_exact(body)
        except ValueError as error:
            return [], [f"{name}: the arguments are not JSON ({error})"]
        return [ToolCall(name, arguments_of(name, value, catalog))], []
    args: dict[str, object] = {}
    at = body.find(_PARAM)
    while at >= 0:
        key_end = body.find(">", at)
        newline = body.find("\n", at)
        if key_end < 0 or (0 <= newline < key_end):
            return [], [f"{name}: a <parameter=…> tag is not closed by '>' on its line"]
        key = body[at + len(_PARAM) : key_end]
        value_start = key_end + 1
        following = body.find(_PARAM, value_start)
        limit = following if following >= 0 else len(body)
        close = body.find(_PARAM_CLOSE, value_start, limit)
        value_end = close if close >= 0 else limit
        args[key] = catalog.typed(name, key, _trim_newlines(body[value_start:value_end]))
        at = following
    return [ToolCall(name, args)], []


def _head(text: str, at: int) -> tuple[str, int] | None:
    """The function name and where its body starts, from ``<function=N>`` or
    ``<function name="N">``; ``None`` when the tag does not close on its line."""
    close = text.find(">", at)
    newline = text.find("\n", at)
    if close < 0 or (0 <= newline < close):
        return None
    if text.startswith("<function name=", at):
        name = text[at + len("<function name=") : close].strip().strip("\"'")
    else:
        name = text[at + len("<function=") : close]
    return name, close + 1


def _next_open(text: str, start: int) -> int:
    found = [x for x in (text.find(o, start) for o in _OPENS) if x >= 0]
    return min(found) if found else -1


def _trim_newlines(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


OPENERS = tuple(Opener(marker, FAMILY, _read) for marker in _OPENS)
