"""``YAMLToolChain``: the chain whose calls are schema-aware YAML, and outputs YAML."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from toolchain._chain import ChainOptions, ToolChainBase
from toolchain._outcome import AnyTool
from toolchain._output import to_yaml
from toolchain._plan import too_many
from toolchain._result import ToolCall
from toolchain._yaml_calls import load_yaml_calls

__all__ = ["YAMLSyntax", "YAMLToolChain"]


class YAMLSyntax:
    """Calls as a YAML list of ``tool:`` / ``args:`` items, each argument typed by its
    tool's schema (a ``string`` stays the text written); outputs as YAML."""

    label = "YAML"

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        def schema_for(name: str) -> Mapping[str, Any] | None:
            tool = tools.get(name)
            return tool.input_schema() if tool is not None else None

        return load_yaml_calls(
            content, schema_for, limit=limit, too_many=lambda extra: too_many(extra, limit)
        )

    def write(self, output: object) -> str:
        return to_yaml(output)

    def schema_text(self, schema: Mapping[str, object]) -> str:
        return to_yaml(dict(schema))

    def guidance(self) -> str:
        return (
            "Call tools with YAML, as a list of calls:\n"
            "- tool: tool_name\n"
            "  args:\n"
            "    param: value\n"
            "Add items to the list for several independent calls; they run in parallel "
            "and their results come back in order."
        )


class YAMLToolChain(ToolChainBase):
    """Tool calls written as YAML (schema-aware: strings stay strings); outputs as YAML,
    or as ``observations="json" | "toon" | "auto"`` says (see ``ToolChainBase``).

    >>> from formats import MarkdownFormat
    >>> from toolchain import tool, ExecutionContext
    >>> @tool
    ... def echo(code: str) -> dict[str, str]:
    ...     '''Echo a code.'''
    ...     return {"code": code}
    >>> chain = YAMLToolChain().register_tool(echo)
    >>> call = "- tool: echo\\n  args:\\n    code: 0123"
    >>> print(chain.execute_sync(ExecutionContext(), call, MarkdownFormat()).text)
    # observation
    <BLANKLINE>
    ## echo
    code: '0123'
    """

    def __init__(self, **options: Unpack[ChainOptions]) -> None:
        options.setdefault("observations", "yaml")
        super().__init__(YAMLSyntax(), **options)
