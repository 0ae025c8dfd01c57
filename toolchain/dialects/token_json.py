"""JSON calls after a special token: Granite ``<|tool_call|>[…]``, InternLM2
``<|action_start|><|plugin|>{…}<|action_end|>``, Command-R7B
``<|START_ACTION|>[…]<|END_ACTION|>`` (ids from ``tool_call_id``), FireFunction v2
``functools[…]`` and Llama 3.1 ``<|python_tag|>`` (JSON, or its built-in
``tool.call(key=value)`` syntax).

A token followed by something that is not a call is removed and the text after it
stays content.
"""

from __future__ import annotations

from collections.abc import Callable

from toolchain._result import ToolCall
from toolchain.dialects import pythonic
from toolchain.dialects._build import calls_block
from toolchain.dialects._json import FinalAnswer, JSONFail, calls_in, json_at
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["OPENERS"]

_PLUGIN = "<|plugin|>"


def _after(family: str) -> Callable[[Scan, int, str], Block | Skip]:
    def read(scan: Scan, at: int, marker: str) -> Block | Skip:
        cursor = at + len(marker)
        if marker == "<|action_start|>":
            cursor = scan.skip_ws(cursor)
            if not scan.has(_PLUGIN, cursor):
                return Block(at, cursor, family, kind="token")
            cursor += len(_PLUGIN)
        found = _json_run(scan, at, scan.skip_ws(cursor), family)
        return found if found is not None else Block(at, cursor, family, kind="token")

    return read


def _json_run(scan: Scan, at: int, start: int, family: str) -> Block | None:
    """One JSON value (an object or a list of calls), or several joined by ``;``."""
    found: list[ToolCall | FinalAnswer] = []
    problems: list[str] = []
    cursor = end = start
    while scan.char(cursor) in ("{", "["):
        try:
            value, end = json_at(scan, cursor)
        except JSONFail:
            break
        calls, trouble = calls_in(value, scan.catalog, bare=False)
        found.extend(calls)
        problems.extend(trouble)
        cursor = scan.skip_ws(end)
        if scan.char(cursor) != ";":
            break
        cursor = scan.skip_ws(cursor + 1)
    if not found and not problems:
        return None
    return calls_block(at, end, family, found, problems)


def _read_functools(scan: Scan, at: int, marker: str) -> Block | Skip:
    if at > scan.floor and scan.text[at - 1] not in WS:
        return Skip(at + 1)  # part of a longer word
    found = _json_run(scan, at, at + len(marker) - 1, "firefunction")
    return found if found is not None else Skip(at + 1)


def _read_python_tag(scan: Scan, at: int, marker: str) -> Block | Skip:
    start = scan.skip_ws(at + len(marker))
    if scan.char(start) not in ("{", "[", ""):
        try:
            call, end = pythonic.call_at(scan, start)
        except pythonic.CallSyntaxError:  # not the built-in call syntax: code or text
            return Block(at, start, "llama3", kind="token")
        return calls_block(at, end, "llama3", [call])
    found = _json_run(scan, at, start, "llama3")
    return found if found is not None else Block(at, start, "llama3", kind="token")


OPENERS = (
    Opener("<|tool_call|>", "granite", _after("granite")),
    Opener("<|action_start|>", "internlm2", _after("internlm2")),
    Opener("<|START_ACTION|>", "command_r7b", _after("command_r7b")),
    Opener("functools[", "firefunction", _read_functools),
    Opener("<|python_tag|>", "llama3", _read_python_tag),
)
