"""The two agents a test runs on, and what a scripted model writes for each.

`ReActAgent` reads its calls from an ``<action>`` section and its answer from
``<answer>``; `ToolCallingAgent` takes native calls, and plain text as its answer. A test
parametrized by `KINDS` writes each step once: ``call(kind, "add", a=2, b=3)``, then
``answer(kind, "5")``. The text protocol is ``"react"`` for the agent and ``"text"`` for
``run_prompt``; either works here.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from agents import ReActAgent, ToolCallingAgent
from agents.models import Model, ScriptedModel, ScriptedReply
from toolchain import JSONToolChain, ToolChain, YAMLToolChain, tool
from toolchain.testing import fixed_clock

__all__ = [
    "KINDS",
    "Agent",
    "Kind",
    "Mode",
    "Output",
    "add",
    "agent",
    "answer",
    "call",
    "chain_for",
    "yaml_call",
]

Kind = Literal["react", "native"]
"""Which agent a test runs on."""
Mode = Literal["react", "text", "native"]
"""How a model writes its calls: ``"native"``, or as text (``"react"`` or ``"text"``)."""
KINDS = pytest.mark.parametrize("kind", ["react", "native"])
Agent = ReActAgent[str] | ToolCallingAgent[str]
Output = str | ScriptedReply
"""One output of a `ScriptedModel`."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def call(mode: Mode, name: str, **args: object) -> Output:
    """A call of ``name``: an ``<action>`` holding it as JSON, or a native call."""
    if mode == "native":
        return ScriptedModel.call(name, args)
    return f"<action>{json.dumps({'tool': name, 'args': args})}</action>"


def yaml_call(mode: Mode, name: str, **args: object) -> Output:
    """A call of ``name``: an ``<action>`` holding it as YAML (the arguments in flow
    style, ``{a: 2, b: 3}``), or a native call."""
    if mode == "native":
        return ScriptedModel.call(name, args)
    flow = ", ".join(f"{key}: {value}" for key, value in args.items())
    return f"<action>\n- tool: {name}\n  args: {{{flow}}}\n</action>"


def answer(mode: Mode, text: str = "done") -> str:
    """The final answer: in an ``<answer>`` section, or as the native reply's text."""
    return text if mode == "native" else f"<answer>{text}</answer>"


def chain_for(kind: Kind, *tools: Any) -> ToolChain:
    """The chain each agent reads `yaml_call` with: YAML for ReAct, JSON for native."""
    chain: ToolChain = YAMLToolChain() if kind == "react" else JSONToolChain()
    for each in tools:
        chain.register_tool(each)
    return chain


def agent(kind: Kind, model: Model, chain: ToolChain, **options: Any) -> Agent:
    """The agent of ``kind`` on ``model`` and ``chain``, its clock fixed."""
    if kind == "react":
        return ReActAgent(model, tool_chain=chain, clock=fixed_clock, **options)
    return ToolCallingAgent(model, tool_chain=chain, clock=fixed_clock, **options)
