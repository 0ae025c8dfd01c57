"""``<function=NAME>`` calls: Qwen3-Coder's ``<parameter=KEY>value</parameter>``, the
same calls inside Seed-OSS's ``<seed:tool_call>`` blocks, and the JSON body llama.cpp
accepts from Functionary v3.1 and drifting Hermes models. ``<function=NAME/>`` is a
call with no arguments (the ``/`` is never part of the name).

Parameter values are raw text (the template writes strings as they are and other values
as JSON), so their types come from the tool's schema: a string parameter stays text,
an integer or object one is converted. With no schema a value stays text, quotes and
all, as vLLM and Ollama read it. One newline after the opening tag and one before the
closing tag belong to the markup, not to the value.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_call
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import FinalAnswer, arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS", "function_calls"]

FAMILY = "qwen3_coder"
SEED = "seed_oss"
_OPENS = ("<function=", "<function name=")
# Both openers in one search: looking for each apart scans to the end for the one that
# is not there, once per call (a block of a thousand calls cost a million steps).
_OPEN = re.compile("<function(?:=| name=)")
_SEED_OPEN = "<seed:tool_call>"
_SEED_CLOSE = "</seed:tool_call>"
_ENDS = (
    "</function>",
    "<function=",
    "<function name=",
    "</tool_call>",
    "<tool_call>",
    _SEED_CLOSE,
    _SEED_OPEN,
)
_PARAM = "<parameter="
# Models drift on the closing tag (`</parameter1>`, `</parameter` cut short): its start
# ends the value.
_PARAM_CLOSE = "</parameter"


def function_calls(
    body: str, catalog: Catalog, *, whole: bool = False
) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    """Every ``<function=…>`` call in a delimited body (a ``<tool_call>`` block's).
    ``whole``: each call must end with ``</function>`` (a block cut off at the end of the
    output may have lost parameters); one that does not is reported, not read."""
    found: list[ToolCall | FinalAnswer] = []
    problems: list[str] = []
    # A final Scan remembers where the next '>' and newline are, so a thousand unclosed
    # tags do not each search to the end of the body.
    scan = Scan(body, True, catalog)
    at = _next_open(body, 0)
    while at >= 0:
        close, newline = scan.find(">", at), scan.find("\n", at)
        if close < 0 or 0 <= newline < close:
            problems.append("a <function=…> tag is not closed by '>' on its line")
            at = _next_open(body, at + 1)
            continue
        name, inner = _head(body, at, close)
        if body.startswith("/>", inner - 2):  # <function=NAME/>
            found.append(ToolCall(catalog.resolve(name)))
            at = _next_open(body, inner)
            continue
        following = _next_open(body, inner)
        limit = following if following >= 0 else len(body)
        close = body.find("</function>", inner, limit)
        stop = close if close >= 0 else limit
        if whole and close < 0:
            problems.append(f"the call to {name} was cut off before </function>")
            at = following
            continue
        calls, trouble = _one_call(name, body[inner:stop], catalog)
        found.extend(calls)
        problems.extend(trouble)
        at = following
    return found, problems


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    head_end = scan.find(">", at)
    if head_end < 0:
        return Skip(at + 1, retire=True)  # no `>` in the rest: no later tag closes either
    if scan.find("\n", at, head_end) >= 0:
        return Skip(at + 1)
    name, inner = _head(text, at, head_end)
    if text.startswith("/>", inner - 2):
        return calls_block(at, inner, FAMILY, [ToolCall(scan.catalog.resolve(name))])
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
        if key_end < 0 or body.find("\n", at, key_end) >= 0:  # bounded: not to the end
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


def _head(text: str, at: int, close: int) -> tuple[str, int]:
    """The function name and where its body starts, from ``<function=N>`` or
    ``<function name="N">`` whose ``>`` (on its line) is at ``close``."""
    if text.startswith("<function name=", at):
        name = text[at + len("<function name=") : close]
    else:
        name = text[at + len("<function=") : close]
    name = name.removesuffix("/")
    if text.startswith("<function name=", at):
        name = name.strip().strip("\"'")
    return name, close + 1


def _next_open(text: str, start: int) -> int:
    found = _OPEN.search(text, start)
    return found.start() if found is not None else -1


def _trim_newlines(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def _read_seed(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``<seed:tool_call>`` holding one ``<function=…>`` call (or more). Left open at the
    end of the output, it is read when its calls ended with ``</function>``."""
    body_start = at + len(marker)
    stop, which = scan.find_any((_SEED_CLOSE, _SEED_OPEN), body_start)
    closed = which == _SEED_CLOSE
    body_end = stop if stop >= 0 else len(scan.text)
    end = stop + len(_SEED_CLOSE) if closed else body_end
    body = scan.text[body_start:body_end]
    found, problems = function_calls(body, scan.catalog, whole=not closed)
    if not found and not problems:
        problems = ["a <seed:tool_call> block holds no <function=…> call"]
    return calls_block(at, end, SEED, found, problems)


OPENERS = (
    *(Opener(marker, FAMILY, _read) for marker in _OPENS),
    Opener(_SEED_OPEN, SEED, _read_seed, repeats=True),
)
