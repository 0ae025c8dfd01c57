"""JSON calls after a special token: Granite ``<|tool_call|>[…]``, InternLM2
``<|action_start|><|plugin|>{…}<|action_end|>``, Command-R7B / Command A
``<|START_ACTION|>[…]<|END_ACTION|>`` (ids from ``tool_call_id``), GigaChat 3
``function call<|role_sep|>{…}`` and 3.1 ``<|function_call|>{…}``, FireFunction v2
``functools[…]`` and Llama 3.1 ``<|python_tag|>`` (JSON, or its built-in
``tool.call(key=value)`` syntax).

A token followed by something that is not a call is removed and the text after it
stays content; GigaChat's markers, which only ever open a call, are reported instead.
A Command action list is read item by item: a comma left out between two calls is put
back (they are plainly two calls, and the list is read whole), an item that is not JSON
is reported and dropped alone, and a list holding anything but objects is reported.
"""

from __future__ import annotations

from collections.abc import Callable

from toolchain._result import ToolCall
from toolchain.dialects import _pythonic as pythonic
from toolchain.dialects._build import calls_block, json_body, problem_block
from toolchain.dialects._json import FinalAnswer, JSONFail, calls_in, decode_exact, json_at
from toolchain.dialects._literals import closing_quote
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip, rejected_call
from toolchain.dialects._values import as_mapping

__all__ = ["OPENERS"]

_PLUGIN = "<|plugin|>"
_ACTION = "<|START_ACTION|>"
_ACTION_END = "<|END_ACTION|>"
GIGACHAT = "gigachat"
COMMAND = "command_r7b"


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


def _read_action(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``<|START_ACTION|>[…]<|END_ACTION|>``; left open, read when its JSON is complete."""
    text = scan.text
    start = scan.skip_ws(at + len(marker))
    stop, _ = scan.find_any((_ACTION_END, _ACTION), start)
    if stop < 0 or not scan.has(_ACTION_END, stop):
        found = _json_run(scan, at, start, COMMAND)
        if found is not None:
            return found
        end = len(text) if stop < 0 else stop
        return problem_block(at, end, COMMAND, "an action list is not closed by <|END_ACTION|>")
    end = stop + len(_ACTION_END)
    body = text[start:stop].strip(WS)
    if not body:
        return problem_block(at, end, COMMAND, "an action holds no call")
    items = _list_items(body) if body.startswith("[") else None
    if items is None:
        read, trouble = json_body(body, scan.catalog, "action list")
        return calls_block(at, end, COMMAND, read, trouble)
    calls: list[ToolCall | FinalAnswer] = []
    problems: list[str] = []
    for index, item in enumerate(items, 1):
        try:
            value = decode_exact(item)
        except ValueError as error:
            problems.append(f"action {index} is not JSON ({error})")
            continue
        read, trouble = calls_in(value, scan.catalog, bare=False)
        calls.extend(read)
        problems.extend(f"action {index}: {problem}" for problem in trouble)
    return calls_block(at, end, COMMAND, calls, problems)


def _list_items(body: str) -> list[str] | None:
    """The objects of a JSON list, each as written, in one left-to-right pass that skips
    strings and counts nesting. Commas between them may be missing (put back: they are
    plainly two calls); ``None`` when the list holds anything but objects."""
    items: list[str] = []
    index, n = 1, len(body)
    while True:
        while index < n and body[index] in WS + ",":
            index += 1
        if index >= n:
            return None  # the list is not closed
        if body[index] == "]":
            return items if not body[index + 1 :].strip(WS) else None
        if body[index] != "{":
            return None
        end = _object_end(body, index)
        if end < 0:
            return None
        items.append(body[index:end])
        index = end


def _object_end(body: str, start: int) -> int:
    """Where the object opened at ``start`` ends (after its ``}``), or -1."""
    depth = 0
    index = start
    while index < len(body):
        char = body[index]
        if char == '"':
            close = closing_quote(body, index)
            if close < 0:
                return -1
            index = close + 1
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1


def _read_gigachat(scan: Scan, at: int, marker: str) -> Block | Skip:
    """GigaChat's call marker, then one JSON object ``{"name", "arguments": {…}}``."""
    start = scan.skip_ws(at + len(marker))
    try:
        value, end = json_at(scan, start)
    except JSONFail:
        if not scan.final:
            scan.need()  # the attempt runs to the end of the turn
        return problem_block(at, len(scan.text), GIGACHAT, "the call after the marker is not JSON")
    call = as_mapping(value)
    name = call.get("name") if call is not None else None
    if call is None or not isinstance(name, str) or not name.strip():
        return problem_block(at, end, GIGACHAT, 'a call must be {"name": …, "arguments": {…}}')
    name = scan.catalog.resolve(name.strip())
    args = as_mapping(call.get("arguments"))
    if args is None:
        why = f"the arguments of {name} must be a JSON object"
        return calls_block(at, end, GIGACHAT, [rejected_call(name, why)])
    return calls_block(at, end, GIGACHAT, [ToolCall(name, args)])


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
    Opener(_ACTION, COMMAND, _read_action, repeats=True),
    Opener("function call<|role_sep|>", GIGACHAT, _read_gigachat, repeats=True),
    Opener("<|function_call|>", GIGACHAT, _read_gigachat, repeats=True),
    Opener("functools[", "firefunction", _read_functools),
    Opener("<|python_tag|>", "llama3", _read_python_tag),
)
