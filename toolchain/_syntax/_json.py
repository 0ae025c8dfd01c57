"""The JSON call syntax: reading tool calls out of action content, and ``JSONToolChain``,
the chain whose calls are JSON and whose outputs are compact JSON.

The readers (fences, the accepted call shapes, bounded JSON decoding) are shared with the
dialects, which find JSON inside other envelopes.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import TypeAlias, Unpack

import msgspec

from toolchain._errors import ToolCallParseError
from toolchain._observations import to_json
from toolchain._result import ToolCall
from toolchain._syntax._nesting import MAX_DEPTH, json_nesting_exceeds
from toolchain.chain._base import ChainOptions, ToolChainBase
from toolchain.chain._check import too_many
from toolchain.chain._stages import AnyTool

# Reading tool calls out of action content: fences, call shapes, JSON decoding.
#
# Accepted call shapes, alone or in a list:
#
# * gent's ``{"tool": NAME, "args": {...}}``;
# * ``{"name": NAME, "arguments": {...}}`` / ``"parameters"`` (OpenAI- and Hermes-style),
#   with ``arguments`` possibly a JSON string;
# * ``{"type": "function", "function": {"name": NAME, "arguments": "..."}}``.
#
# A call wrapped in a ```json / ```yaml fence is unwrapped first.

__all__ = [
    "ARGS_KEYS",
    "MAX_CONTENT_CHARS",
    "NAME_KEYS",
    "JSONSyntax",
    "JSONToolChain",
    "call_from_mapping",
    "check_text",
    "decode_json_calls",
    "load_json",
    "unfence",
]

NAME_KEYS = ("tool", "name", "tool_name")
ARGS_KEYS = ("args", "arguments", "parameters", "input")
MAX_CONTENT_CHARS = 1_000_000

JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
"""What untyped JSON decoding (msgspec, ``json``) yields."""

_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})")
# A str holds code points, so a well-formed astral character is never a surrogate:
# any U+D800..U+DFFF is a lone half that no UTF-8 encoder (msgspec, libyaml) accepts.
_SURROGATE = re.compile("[\ud800-\udfff]")


def unfence(content: str) -> str:
    """The inside of fenced code blocks, joined, or ``content`` when there is none.

    One pass over the lines: a fence closes on a line of the same character, at least
    as long, with nothing after it; an unclosed fence is not a block.

    >>> unfence('Calling:\\n```json\\n{"tool": "x"}\\n```')
    '{"tool": "x"}\\n'
    """
    if "```" not in content and "~~~" not in content:
        return content
    blocks: list[str] = []
    fence = ""
    body: list[str] = []
    for line in content.splitlines(keepends=True):
        if not fence:
            opened = _FENCE_OPEN.match(line)
            if opened:
                fence, body = opened.group(1), []
            continue
        stripped = line.strip()
        if (
            stripped
            and stripped[0] == fence[0]
            and len(stripped) >= len(fence)
            and (stripped == stripped[0] * len(stripped))
        ):
            blocks.append("".join(body))
            fence = ""
        else:
            body.append(line)
    return "".join(blocks) if blocks else content


def check_size(content: str) -> None:
    if len(content) > MAX_CONTENT_CHARS:
        raise ToolCallParseError(
            f"tool call content is too large ({len(content)} characters, limit "
            f"{MAX_CONTENT_CHARS}); pass large data by reference instead"
        )


def check_text(content: str) -> None:
    """Refuse content too large to parse, or holding lone surrogates (not valid Unicode).

    Both checks are single linear scans, run before any decoder sees the text.
    """
    check_size(content)
    # ASCII text holds no surrogate, and isascii() reads a flag the str keeps: no scan.
    found = None if content.isascii() else _SURROGATE.search(content)
    if found is not None:
        raise ToolCallParseError(
            f"the text holds an unpaired surrogate (U+{ord(found.group()):04X}) at character "
            f"{found.start()}, which is not valid Unicode; write the call again without it"
        )


def call_from_mapping(index: int, item: JSONValue) -> ToolCall | str:
    """A ``ToolCall``, or a message saying why ``item`` is not one."""
    if type(item) is dict:  # gent's own shape, by far the most common: no key search
        name, args = item.get("tool"), item.get("args")
        if type(name) is str and name.strip() and type(args) is dict:
            return ToolCall(name.strip(), args)
    if not isinstance(item, Mapping):
        return f"call {index + 1} is not an object with a tool name (got {_kind(item)})"
    function = item.get("function")
    if isinstance(function, Mapping) and not any(k in item for k in NAME_KEYS):
        item = function
    name = next((item[k] for k in NAME_KEYS if k in item), None)
    if not isinstance(name, str) or not name.strip():
        keys = ", ".join(map(str, item)) or "none"
        return f'call {index + 1} has no "tool" name (keys: {keys})'
    raw_args: JSONValue = next((item[k] for k in ARGS_KEYS if k in item), None)
    if isinstance(raw_args, str):
        if json_nesting_exceeds(raw_args, MAX_DEPTH):
            return (
                f'call {index + 1} ({name}): "arguments" is nested more than {MAX_DEPTH} '
                "levels deep; write flatter values"
            )
        try:
            raw_args = msgspec.json.decode(raw_args)
        except (msgspec.DecodeError, RecursionError, ValueError) as error:
            return (
                f'call {index + 1} ({name}): "arguments" is a string that is not JSON '
                f"({_json_problem(error)}); write the arguments as a JSON object"
            )
    if raw_args is None:
        raw_args = {}
    if not isinstance(raw_args, Mapping):
        return f'call {index + 1} ({name}): "args" must be an object (got {_kind(raw_args)})'
    return ToolCall(name.strip(), {str(k): v for k, v in raw_args.items()})


def decode_json_calls(content: str) -> list[JSONValue]:
    """Decode JSON call content into a list of candidate call objects.

    Accepts one value (object or array) or several values one after another (JSON
    lines). Raises ``ToolCallParseError`` with the decoder's position on bad JSON.
    """
    check_text(content)
    text = unfence(content).strip()
    if not text:
        return []
    if json_nesting_exceeds(text, MAX_DEPTH):
        raise ToolCallParseError(
            f"tool calls are nested more than {MAX_DEPTH} levels deep; write flatter values"
        )
    try:
        value: JSONValue = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError, ValueError) as first_error:
        values = _decode_sequence(text)
        if values is None:
            raise ToolCallParseError(
                f"tool calls are not valid JSON: {_json_problem(first_error)}. Write "
                '{"tool": "name", "args": {...}} or a JSON array of such objects'
            ) from first_error
        return values
    return list(value) if isinstance(value, list) else [value]


def load_json(text: str) -> JSONValue:
    """One JSON value, bounded like tool calls (at most ``MAX_DEPTH`` levels deep).

    Raises ``ToolCallParseError``, with our own words, on text that is not one JSON
    value, that nests too deeply, or that holds a number Python cannot hold.

    >>> load_json('{"qty": 2}')
    {'qty': 2}
    >>> try:
    ...     load_json("[" * 65)
    ... except ToolCallParseError as error:
    ...     print(error)
    it is nested more than 64 levels deep; write flatter values
    """
    if json_nesting_exceeds(text, MAX_DEPTH):
        raise ToolCallParseError(
            f"it is nested more than {MAX_DEPTH} levels deep; write flatter values"
        )
    try:
        value: JSONValue = msgspec.json.decode(text)
    except UnicodeError:  # a lone surrogate: the caller says where (see check_text)
        raise
    except (msgspec.DecodeError, RecursionError, ValueError) as error:
        raise ToolCallParseError(_json_problem(error)) from error
    return value


def _decode_sequence(text: str) -> list[JSONValue] | None:
    decoder = json.JSONDecoder()
    values: list[JSONValue] = []
    value: JSONValue
    pos = 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):  # JSONDecodeError, too-deep or too-long numbers
            return None
        values.extend(value if isinstance(value, list) else [value])
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
    return values if len(values) > 1 else None


def _json_problem(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "it is nested too deeply to read; write flatter values"
    if isinstance(error, msgspec.ValidationError):  # untyped decoding: only number ranges
        return (
            f"{error} (an integer past Python's {sys.get_int_max_str_digits()}-digit limit, "
            "or a number past a double's range); write numbers this large as strings"
        )
    return str(error)


_KIND_NAMES: dict[type[object], str] = {
    dict: "an object",
    list: "a list",
    str: "a string",
    type(None): "null",
}


def _kind(value: object) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)


# ``JSONToolChain``: the chain whose calls are JSON and whose outputs are compact JSON.


class JSONSyntax:
    """Calls as ``{"tool": NAME, "args": {...}}`` or a list of them; outputs as JSON."""

    label = "JSON"

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        values = decode_json_calls(content)
        items = [call_from_mapping(i, item) for i, item in enumerate(values[:limit])]
        if len(values) > limit:  # build no calls that will not run
            items.append(too_many(len(values) - limit, limit))
        return items

    def write(self, output: object) -> str:
        return to_json(output)

    def schema_text(self, schema: Mapping[str, object]) -> str:
        # One line: indentation would cost more tokens than the schema itself.
        return msgspec.json.encode(schema).decode("utf-8")

    def guidance(self) -> str:
        return (
            "Call tools with JSON:\n"
            '{"tool": "tool_name", "args": {"param": "value"}}\n'
            "For several independent calls, write a JSON array:\n"
            '[{"tool": "tool_a", "args": {...}}, {"tool": "tool_b", "args": {...}}]\n'
            "Calls in one action run in parallel; their results come back in order."
        )


class JSONToolChain(ToolChainBase):
    """Tool calls written as JSON; outputs shown as compact JSON, or as
    ``observations="yaml" | "toon" | "auto"`` says (see ``ToolChainBase``).

    >>> from formats import XMLFormat
    >>> from toolchain import tool, ExecutionContext
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> chain = JSONToolChain().register_tool(add)
    >>> call = '{"tool": "add", "args": {"a": 2, "b": 3}}'
    >>> result = chain.execute_sync(ExecutionContext(), call, XMLFormat())
    >>> print(result.text)
    <observation>
    <add>
    5
    </add>
    </observation>
    """

    def __init__(self, **options: Unpack[ChainOptions]) -> None:
        options.setdefault("observations", "json")
        super().__init__(JSONSyntax(), **options)
