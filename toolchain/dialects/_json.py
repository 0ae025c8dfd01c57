"""JSON at a position of a growing text, and the object shapes that are tool calls."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolchain._errors import ToolchainError, ToolchainValueError
from toolchain._result import ToolCall
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._literals import closing_quote
from toolchain.dialects._scan import NeedMore, Scan
from toolchain.dialects._values import as_list, as_mapping, no_constants

__all__ = [
    "FinalAnswer",
    "JSONFail",
    "arguments_of",
    "call_of",
    "calls_in",
    "decode_exact",
    "json_at",
]


# strict=False: models write raw newlines and tabs inside strings.
_DECODER = json.JSONDecoder(strict=False, parse_constant=no_constants)
# How far from the end a syntax error may be caused by a token still arriving
# (`tru`, `-`, `\u12`).
_TAIL = 8
_WINDOW = 512
_MAX_DEPTH = 256
_STRUCTURE = re.compile(r'[\[\]{}"]')  # one character class: linear
_NAME_KEYS = ("name", "tool", "tool_name", "function_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_ID_KEYS = ("id", "tool_call_id", "call_id")
# What a tool name in unmarked JSON may look like: one token, no prose.
_BARE_NAME = re.compile(r"[\w.\-:/]{1,128}")
FINAL_ANSWER = "Final Answer"


class JSONFail(ToolchainError):
    """Not JSON; ``position`` is where it went wrong (scanning resumes there)."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """A JSON action that ends the run (LangChain's ``{"action": "Final Answer"}``)."""

    text: str


def json_at(scan: Scan, at: int) -> tuple[object, int]:
    """The JSON object or list starting exactly at ``at`` and the index after it.

    The decoder reads a window of the text that grows fourfold while it is too short:
    its errors count lines from the start of what they were given, which over the
    whole text would cost every failed attempt the length of the text before it.
    A value nested deeper than ``_MAX_DEPTH`` is not decoded but skipped whole: the
    decoder would recurse as deep as the interpreter lets it (a limit that depends on
    the caller, so the same text could read differently), and every retry inside it
    would cost its depth again.
    """
    text = scan.text
    size = _WINDOW
    while True:
        stop = min(len(text), at + size)
        deep_end = _past_deep_value(text, at, stop, _MAX_DEPTH)
        if deep_end is not None:
            if deep_end == len(text) and not scan.final:
                raise NeedMore
            raise JSONFail(max(deep_end, at + 1))
        window = text[at:stop]
        try:
            value, end = _DECODER.raw_decode(window)
        except json.JSONDecodeError as error:
            cut = error.pos >= len(window) - _TAIL or error.msg.startswith("Unterminated string")
            if cut and stop < len(text):
                size *= 4
                continue
            if cut and not scan.final:
                raise NeedMore from None
            raise JSONFail(at + max(error.pos, 1)) from None
        except RecursionError:  # an interpreter limit set below _MAX_DEPTH: skip it all
            end = _past_deep_value(text, at, len(text), 0) or len(text)
            if end == len(text) and not scan.final:
                raise NeedMore from None
            raise JSONFail(max(end, at + 1)) from None
        except ValueError:  # a number past int's digit limit, NaN
            raise JSONFail(at + 1) from None
        return value, at + end


def _past_deep_value(text: str, at: int, stop: int, limit: int) -> int | None:
    """Where the value at ``at`` ends (the end of the text if it never does) when it
    nests deeper than ``limit`` within ``text[at:stop]``; ``None`` when it does not."""
    if text.count("{", at, stop) + text.count("[", at, stop) <= limit:
        return None  # the common case, at C speed
    depth = deepest = 0
    cursor = at
    while True:
        found = _STRUCTURE.search(text, cursor)
        if found is None:
            return len(text) if deepest > limit else None
        index = found.start()
        if deepest <= limit and index >= stop:
            return None
        char = text[index]
        if char == '"':
            close = closing_quote(text, index)
            if close < 0:
                return len(text) if deepest > limit else None
            cursor = close + 1
            continue
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
        cursor = index + 1
        if depth <= 0:
            return cursor if deepest > limit else None


def decode_exact(text: str) -> object:
    """``text`` (stripped) as one JSON value; raises ``ValueError`` otherwise."""
    stripped = text.strip()
    try:
        value, end = _DECODER.raw_decode(stripped)
    except RecursionError as error:
        raise ToolchainValueError("nested too deeply") from error
    if end != len(stripped):
        raise ToolchainValueError("text after the JSON value")
    return value


def arguments_of(name: str, raw: object, catalog: Catalog) -> dict[str, object]:
    """A call's arguments from whatever was written for them.

    An object is used as is; a string holding a JSON object is decoded once (Granite
    and others serialise arguments twice); any other value is the tool's single input.
    """
    args = as_mapping(raw)
    if args is not None:
        return args
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            decoded = decode_exact(raw) if raw.lstrip().startswith("{") else None
        except ValueError:
            decoded = None
        args = as_mapping(decoded)
        if args is not None:
            return args
    return catalog.bind(name, raw)


def call_of(value: object, catalog: Catalog, *, bare: bool) -> ToolCall | FinalAnswer | None:
    """The call a JSON object spells, or ``None`` when it is not one.

    Shapes: ``{"name", "arguments"|"parameters"}`` (Hermes, Llama 3, Mistral),
    ``{"tool", "args"}`` (gent), ``{"tool_name", "parameters"}`` (Command R),
    ``{"function": {…}}`` (OpenAI), ``{"action", "action_input"}`` (LangChain).
    ``bare``: the object stands in prose with no markup around it, so it must name its
    arguments key and its name must be one token (``{"name": "Ada"}`` is data).
    """
    item = as_mapping(value)
    if item is None:
        return None
    call_id = _id_of(item)
    function = as_mapping(item.get("function"))
    if function is not None and not any(key in item for key in _NAME_KEYS):
        item = function
    if "action" in item and "action_input" in item:
        name, raw, has_args = item["action"], item["action_input"], True
        if name == FINAL_ANSWER:
            return FinalAnswer(raw if isinstance(raw, str) else json.dumps(raw))
    else:
        name = next((item[key] for key in _NAME_KEYS if key in item), None)
        arg_key = next((key for key in _ARG_KEYS if key in item), None)
        has_args = arg_key is not None
        raw = item[arg_key] if arg_key is not None else None
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    if bare and (not has_args or not _BARE_NAME.fullmatch(name)):
        return None
    name = catalog.resolve(name)
    return ToolCall(name, arguments_of(name, raw, catalog), call_id)


def calls_in(
    value: object, catalog: Catalog, *, bare: bool
) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    """Calls in an object or a list of them; problems name items that are not calls.

    A bare list with an item that is not a call is data: no calls, no problems.
    """
    wrapper = as_mapping(value)
    if wrapper is not None and set(wrapper) == {"tool_calls"}:
        value = wrapper["tool_calls"]
    items: Sequence[object] = as_list(value) or [value]
    found: list[ToolCall | FinalAnswer] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        call = call_of(item, catalog, bare=bare)
        if call is None:
            if bare:
                return [], []
            problems.append(f"item {index + 1} is not a call with a name and arguments")
        else:
            found.append(call)
    return found, problems


def _id_of(item: Mapping[str, object]) -> str:
    for key in _ID_KEYS:
        found = item.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool):
            return str(found)
    return ""
