"""``JSONToolChain``: the chain whose calls are JSON and whose outputs are compact JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Unpack

import msgspec

from toolchain._calls import call_from_mapping, decode_json_calls
from toolchain._chain import ChainOptions, ToolChainBase
from toolchain._outcome import AnyTool
from toolchain._output import to_json
from toolchain._plan import too_many
from toolchain._result import ToolCall

__all__ = ["JSONSyntax", "JSONToolChain"]


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
