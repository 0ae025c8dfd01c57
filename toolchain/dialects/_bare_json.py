"""Calls written as bare JSON in the text: an object (Llama 3.x, Ollama's JSON
templates, smolagents, LangChain's ``{"action", "action_input"}``), a list of them
(xLAM), several in a row (``;`` or newlines between), or inside a code fence or an
ad-hoc tag (``<json>``, ``<response>`` …: the assembler strips the wrapper).

Unmarked JSON is only a call when it says so: a tool name of one token and an
arguments key. Anything else that parses is data and stays content. A ``[`` that opens
``name(`` is a Python-style list (``pythonic``).
"""

from __future__ import annotations

import re

from toolchain.dialects import _pythonic as pythonic
from toolchain.dialects._build import calls_block
from toolchain.dialects._json import JSONFail, calls_in, json_at
from toolchain.dialects._opener import Opener, Reader
from toolchain.dialects._scan import Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "json"
BRACKET = "["
_BRACE_RUN = re.compile(r"[{ \t\r\n]*")  # one character class: linear
_WS = "[ \\t\\r\\n]*"
# Gates (see ``Opener``): what, right after the marker, makes its reader skip to a place
# with no opener before it. `[` then neither a name, `{` nor `[`; or a name, `(`, and
# something that starts no keyword (hostile `[f([f([f(…` is passed over at regex speed).
BRACKET_GATE = f"{_WS}(?:[^\\w\\s{{\\[]|\\d|{pythonic.NAME}{_WS}\\({_WS}(?:[^\\w\\s)]|\\d))"
_BRACE_GATE = f'{_WS}[^"}}{{ \\t\\r\\n]'  # `{` then what opens no object


def bracket_reader(*, json: bool, python: bool) -> Reader:
    """The reader of ``[``: a JSON list of calls, a Python-style list, or either."""

    def read(scan: Scan, at: int, marker: str) -> Block | Skip:
        first = scan.skip_ws(at + 1)
        char = scan.text[first] if first < len(scan.text) else ""
        if python and (char.isalpha() or char == "_"):
            return pythonic.read_list(scan, at, marked=False)
        if json and char in ("{", "["):
            return _read_value(scan, at)
        return Skip(at + 1)

    return read


def _read_object(scan: Scan, at: int, marker: str) -> Block | Skip:
    first = scan.skip_ws(at + 1)
    char = scan.text[first] if first < len(scan.text) else ""
    if char == "{":  # `{{…{`: only the last brace of the run can open an object
        run = _BRACE_RUN.match(scan.text, at)
        run_end = run.end() if run is not None else at + 1
        return Skip(max(scan.text.rfind("{", at, run_end), at + 1))
    if char not in ('"', "}"):  # `{h`, `{ fmt.Println`, the end … fail here, at no cost
        return Skip(at + 1)
    return _read_value(scan, at)


def _read_value(scan: Scan, at: int) -> Block | Skip:
    try:
        value, end = json_at(scan, at)
    except JSONFail as failure:
        return Skip(failure.position)
    found, _ = calls_in(value, scan.catalog, bare=True)
    if not found:
        return Block(at, end, FAMILY, kind="data", marked=False)
    if isinstance(value, list):
        while scan.char(end) == "]":  # a stray closing bracket (Ollama's test) goes too
            end += 1
    return calls_block(at, end, FAMILY, found, marked=False)


OPENERS = (Opener("{", FAMILY, _read_object, gate=_BRACE_GATE),)
