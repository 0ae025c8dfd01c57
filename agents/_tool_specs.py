"""Tools as native tool-calling specs: name, description and JSON Schema, and the
specs a native agent sends each step (`NativeSpecs`).

A spec is marked ``strict`` when its schema can be held to exactly as written: every
object closed (``additionalProperties: false``) with all its properties required, and
only keywords strict modes accept. A schema with optional fields stays non-strict
rather than being bent (a strict schema would force the model to send every field).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, cast

from agents.models import GenerateOptions, ToolSpec
from agents.terminations import TypedTermination
from toolchain import Tool, ToolChain, ToolDefinitionError
from toolchain.chain import ToolChainBase

__all__ = ["NativeSpecs", "chain_names", "chain_tools", "strict_parameters", "tool_spec"]

ANSWER_DESCRIPTION = (
    "Give your final answer. Call this alone, once you have everything the "
    "answer needs; it ends the conversation."
)

# What OpenAI's and Anthropic's strict modes accept (anything else: not strict).
_STRICT_KEYWORDS = frozenset(
    {
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "const",
        "description",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "items",
        "maxItems",
        "maximum",
        "minItems",
        "minimum",
        "multipleOf",
        "pattern",
        "properties",
        "required",
        "title",
        "type",
    }
)


def tool_spec(tool: Tool[Any, Any]) -> ToolSpec:
    """The spec of ``tool``: its input's JSON Schema, strict when it qualifies.

    >>> from toolchain import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> spec = tool_spec(add)
    >>> spec.name, spec.strict, spec.parameters["required"]
    ('add', True, ['a', 'b'])
    """
    schema = tool.input_schema()
    description = tool.description.strip()
    if tool.policy.strip():
        description += f"\n\nPolicy: {tool.policy.strip()}"
    strict = strict_parameters(schema)
    if strict is not None:
        return ToolSpec(tool.name, description, strict, strict=True)
    return ToolSpec(tool.name, description, schema)


class NativeSpecs:
    """The tools a native agent offers in a step, as specs: the chain's active tools
    (each spec built once per tool object) and, with a typed answer, the final-answer
    tool whose parameters are the answer's schema."""

    __slots__ = ("_built", "_made", "answer_tool", "chain", "typed")

    def __init__(
        self, chain: ToolChain, answer_tool: str, typed: TypedTermination[Any] | None
    ) -> None:
        self.chain = chain
        self.answer_tool = answer_tool
        self.typed = typed
        self._built: dict[str, tuple[Tool[Any, Any], ToolSpec]] = {}
        self._made: list[_Made] = []
        """The options made lately, most recent first (at most `_KEEP`): a run asks for
        the chain's tools once, as it starts, then for the tools its steps show (fewer,
        with discovery), and every run of the agent asks for the same ones again."""
        self.check_answer_tool()

    def options(self, options: GenerateOptions, tools: tuple[str, ...]) -> GenerateOptions:
        """``options`` with the specs of ``tools`` (and the answer tool) to send."""
        registered = chain_tools(self.chain)
        typed = self.typed
        made_lately = self._made
        if typed is None:
            # The same options, tools and chain config as a call before: the same specs
            # (a config's tools are frozen, and each tool's spec is made once), so the
            # same options, without a spec looked up per tool (a search's index puts
            # hundreds on the chain, and every run asks for all of them).
            for at, known in enumerate(made_lately):
                if (
                    known.options is options
                    and known.registered is registered
                    and (known.tools is tools or known.tools == tools)
                ):
                    if at:
                        made_lately.insert(0, made_lately.pop(at))
                    return known.made
        specs = [self._spec(name, registered[name]) for name in tools if name in registered]
        choice = options.tool_choice
        if typed is not None:
            self.check_answer_tool()
            specs.append(self._answer_spec(typed))
            if choice == "auto":
                choice = "required"  # the answer is a call too: never a bare text reply
        sent = tuple(specs)
        for known in made_lately:  # another key, the same specs: the options made then
            if known.options is options and known.sent == sent and known.choice == choice:
                made = known.made
                break
        else:
            made = dataclasses.replace(options, tools=sent, tool_choice=choice)
        made_lately.insert(0, _Made(options, registered, tools, sent, choice, made))
        del made_lately[_KEEP:]
        return made

    def check_answer_tool(self) -> None:
        """Refuse a chain with a tool of the final-answer tool's name."""
        if self.typed is not None and self.answer_tool in self.chain.tools:
            raise ToolDefinitionError(
                f"the chain has a tool named {self.answer_tool!r}, the name of the "
                "final-answer tool; rename the tool or pass answer_tool=..."
            )

    def _spec(self, name: str, tool: Tool[Any, Any]) -> ToolSpec:
        known = self._built.get(name)
        if known is None or known[0] is not tool:
            known = (tool, tool_spec(tool))
            self._built[name] = known
        return known[1]

    def _answer_spec(self, typed: TypedTermination[Any]) -> ToolSpec:
        schema = typed.model.model_json_schema()
        strict = strict_parameters(schema)
        if strict is not None:
            return ToolSpec(self.answer_tool, ANSWER_DESCRIPTION, strict, strict=True)
        return ToolSpec(self.answer_tool, ANSWER_DESCRIPTION, schema)


_KEEP = 4
"""The options `NativeSpecs` keeps: a run's two (all tools, the tools shown), and a few
more while discovery adds found tools to those shown."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Made:
    """Options `NativeSpecs` made, and from what."""

    options: GenerateOptions
    registered: Mapping[str, Tool[Any, Any]]
    tools: tuple[str, ...]
    sent: tuple[ToolSpec, ...]
    choice: str
    made: GenerateOptions


def chain_tools(chain: ToolChain) -> Mapping[str, Tool[Any, Any]]:
    """The chain's tools for one read: its registry itself where it has one (every chain
    of ours: not copied, and the same mapping while it holds the same tools), else the
    copy ``tools`` gives. A search's index puts thousands of tools on a chain, and the
    engine reads them every step."""
    return chain.registry if isinstance(chain, ToolChainBase) else chain.tools


def chain_names(chain: ToolChain) -> tuple[str, ...]:
    """The names of the tools the chain offers, in its order: the tuple its config keeps
    where its tools are its config's (not copied, and the same tuple while it offers the
    same tools), else those of the mapping ``tools`` gives. A run reads them as
    it starts, and a search's index puts hundreds of tools on a chain."""
    if isinstance(chain, ToolChainBase) and type(chain).tools is ToolChainBase.tools:
        return chain.config.names
    # A chain that offers other tools than its config's (a PythonToolChain offers
    # `run_python`, its config the tools a program calls): what it says it offers.
    return tuple(chain.tools)


def strict_parameters(schema: Mapping[str, object]) -> dict[str, object] | None:
    """``schema`` closed for strict mode, or None when it cannot be made strict as is.

    >>> strict_parameters({"type": "object", "properties": {"a": {"type": "integer"}},
    ...                    "required": ["a"]})["additionalProperties"]
    False
    >>> strict_parameters({"type": "object", "properties": {"a": {"type": "integer"}}}) is None
    True
    """
    if schema.get("type") != "object":
        return None
    closed = _close(schema)
    return cast("dict[str, object]", closed) if isinstance(closed, dict) else None


def _close(node: object) -> object | None:
    """``node`` with every object closed; None when some part cannot be strict."""
    if isinstance(node, list):
        items = [_close(item) for item in cast("list[object]", node)]
        return None if any(item is None for item in items) else items
    if not isinstance(node, Mapping):
        return node
    mapping = cast("Mapping[str, object]", node)
    if any(key not in _STRICT_KEYWORDS for key in mapping):
        return None
    out: dict[str, object] = {}
    for key, value in mapping.items():
        if key in ("properties", "$defs"):
            if not isinstance(value, Mapping):
                return None
            fields: dict[str, object] = {}
            for name, sub in cast("Mapping[str, object]", value).items():
                closed = _close(sub)
                if closed is None:
                    return None
                fields[name] = closed
            out[key] = fields
        elif key in ("items", "anyOf"):
            closed = _close(value)
            if closed is None:
                return None
            out[key] = closed
        else:
            out[key] = value
    if mapping.get("type") == "object" or "properties" in mapping:
        properties = mapping.get("properties", {})
        required = mapping.get("required", [])
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            return None
        names = set(cast("Mapping[str, object]", properties))
        if names != set(cast("list[object]", required)):
            return None
        if mapping.get("additionalProperties", False) is not False:
            return None
        out["additionalProperties"] = False
        out.setdefault("required", [])
    return out
