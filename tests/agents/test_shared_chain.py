"""Agents that share one chain: each offers its own extensions' tools, never another's.

An agent whose extensions bring tools runs on a view of the chain it is given
(``with_tools``); the chain itself is never changed. Two agents built on one chain,
one with an admin extension and one with an audit extension, run over a real
OpenAI-compatible loopback server: each request lists only that agent's tools (in
the system prompt in text mode, as the request's ``tools`` natively), a call to the
other agent's tool is the unknown-tool error, and the chain's own listing and tools
are what they were. A tool registered on the chain afterwards reaches both.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import pytest

from agents import AgentResult, ReActAgent, StepRequest, ToolCallingAgent
from agents.models import OpenAIChatModel, ScriptedModel
from tests.support.agent_kinds import KINDS, Kind
from tests.support.chat_script import Calls, calls, chat_script
from tests.support.loopback import LoopbackServer, RecordedRequest
from toolchain import (
    DuplicateToolError,
    ExecutionContext,
    Extension,
    JSONToolChain,
    Tool,
    ToolChainResult,
    tool,
)
from toolchain.testing import fixed_clock

ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city now."""
    ran.append("get_weather")
    return f"Sunny in {city}"


@tool
def drop_table(table: str) -> str:
    """Drop a database table for good."""
    ran.append("drop_table")
    return f"dropped {table}"


@tool
def read_audit_log(day: str) -> str:
    """Read the audit log of one day."""
    ran.append("read_audit_log")
    return f"nothing happened on {day}"


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    ran.append("get_time")
    return f"noon in {city}"


class Admin(Extension):
    name = "admin"

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return (drop_table,)


class Audit(Extension):
    name = "audit"

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return (read_audit_log,)


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def _agent(kind: Kind, server: LoopbackServer, chain: JSONToolChain, extension: Extension) -> Any:
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=server.openai_base_url)
    agent_class = ReActAgent if kind == "react" else ToolCallingAgent
    return agent_class(model, tool_chain=chain, extensions=[extension], clock=fixed_clock)


def _call(kind: Kind, name: str, **args: object) -> str | Calls:
    if kind == "native":
        return calls((name, args))
    return f"<action>{json.dumps({'tool': name, 'args': args})}</action>"


def _answer(kind: Kind, text: str) -> str:
    return text if kind == "native" else f"<answer>{text}</answer>"


def _offered(kind: Kind, request: RecordedRequest) -> set[str]:
    """The tools a request shows the model: listed in the system prompt (text mode), or
    sent as the request's ``tools`` (native)."""
    body = request.json()
    if kind == "native":
        return {spec["function"]["name"] for spec in body.get("tools", [])}
    system = body["messages"][0]["content"]
    names = ("get_weather", "drop_table", "read_audit_log", "get_time")
    return {name for name in names if f"- {name}:" in system}


def _run(agent: Any, server: LoopbackServer, turns: Sequence[str | Calls]) -> AgentResult[str]:
    server.respond_with(chat_script(turns))
    result: AgentResult[str] = agent.run_sync("Do your job.")
    assert result.ok, result.error
    return result


def _errors(result: AgentResult[str]) -> list[tuple[str, str]]:
    return [
        (error.kind, error.message)
        for step in result.steps
        for chain_result in step.tool_results
        for error in chain_result.raw.errors
        if error is not None
    ]


@KINDS
def test_agents_on_one_chain_offer_and_run_only_their_own_extension_tools(
    kind: Kind, server: LoopbackServer
) -> None:
    chain = JSONToolChain().register_tool(get_weather)
    listing, tools = chain.available_tools_prompt(), dict(chain.tools)
    admin = _agent(kind, server, chain, Admin())
    auditor = _agent(kind, server, chain, Audit())
    assert chain.available_tools_prompt() == listing and dict(chain.tools) == tools

    turns = [_call(kind, "drop_table", table="users"), _call(kind, "read_audit_log", day="monday")]
    admin_run = _run(admin, server, [*turns, _answer(kind, "done")])
    admin_requests = list(server.requests)
    audit_run = _run(auditor, server, [*reversed(turns), _answer(kind, "done")])
    audit_requests = server.requests[len(admin_requests) :]

    assert {frozenset(_offered(kind, r)) for r in admin_requests} == {
        frozenset({"get_weather", "drop_table"})
    }
    assert {frozenset(_offered(kind, r)) for r in audit_requests} == {
        frozenset({"get_weather", "read_audit_log"})
    }
    # Each ran its own tool; the other's was unknown to it, listed as such.
    assert ran == ["drop_table", "read_audit_log"]
    assert _errors(admin_run) == [
        (
            "unknown_tool",
            "unknown tool 'read_audit_log'. Available tools: get_weather, drop_table",
        )
    ]
    assert _errors(audit_run) == [
        (
            "unknown_tool",
            "unknown tool 'drop_table'. Available tools: get_weather, read_audit_log",
        )
    ]
    # The chain is what it was before either agent was built.
    assert chain.available_tools_prompt() == listing and dict(chain.tools) == tools
    assert "drop_table" not in chain.available_tools_prompt()


@KINDS
def test_a_tool_registered_on_the_chain_later_reaches_every_agent_on_it(
    kind: Kind, server: LoopbackServer
) -> None:
    chain = JSONToolChain().register_tool(get_weather)
    admin = _agent(kind, server, chain, Admin())
    auditor = _agent(kind, server, chain, Audit())
    chain.register_tool(get_time)  # after both agents were built

    _run(admin, server, [_call(kind, "get_time", city="Oslo"), _answer(kind, "noon")])
    before = len(server.requests)
    _run(auditor, server, [_call(kind, "get_time", city="Rome"), _answer(kind, "noon")])
    assert ran == ["get_time", "get_time"]
    assert _offered(kind, server.requests[0]) == {"get_weather", "get_time", "drop_table"}
    assert _offered(kind, server.requests[before]) == {"get_weather", "get_time", "read_audit_log"}


def test_a_tool_registered_through_an_agent_is_registered_on_its_chain() -> None:
    """``agent.tool_chain.register_tool`` does what it does on an agent without
    extensions: the tool joins the chain, and every agent on it."""
    chain = JSONToolChain().register_tool(get_weather)
    admin = ReActAgent(ScriptedModel([]), tool_chain=chain, extensions=[Admin()])
    plain = ReActAgent(ScriptedModel([]), tool_chain=chain)
    admin.tool_chain.register_tool(get_time)
    assert list(chain.tools) == ["get_weather", "get_time"]
    assert "- get_time:" in plain.system_prompt()
    assert "- drop_table:" in admin.system_prompt()
    assert "- drop_table:" not in plain.system_prompt()


class Delegating:
    """A chain written against the ``ToolChain`` protocol alone (not a library chain)."""

    def __init__(self) -> None:
        self.inner = JSONToolChain()
        self.name, self.guidance = self.inner.name, self.inner.guidance

    @property
    def tools(self) -> Any:
        return self.inner.tools

    def parse_section(self, content: str) -> object:
        return self.inner.parse_section(content)

    def register_tool(self, tool: Tool[Any, Any]) -> Delegating:
        self.inner.register_tool(tool)
        return self

    def available_tools_prompt(self, names: Any = None) -> str:
        return self.inner.available_tools_prompt(names)

    def parse_calls(self, content: str, text_format: Any = None) -> Any:
        return self.inner.parse_calls(content, text_format)

    async def execute(self, ctx: ExecutionContext, content: str, fmt: Any) -> ToolChainResult:
        return await self.inner.execute(ctx, content, fmt)

    async def execute_calls(self, ctx: ExecutionContext, calls: Any, fmt: Any) -> ToolChainResult:
        return await self.inner.execute_calls(ctx, calls, fmt)

    def execute_sync(self, ctx: ExecutionContext, content: str, fmt: Any) -> ToolChainResult:
        return self.inner.execute_sync(ctx, content, fmt)


def test_a_chain_that_cannot_offer_extension_tools_unchanged_is_refused_not_changed() -> None:
    chain = Delegating().register_tool(get_weather)
    with pytest.raises(TypeError) as raised:
        ReActAgent(ScriptedModel([]), tool_chain=chain, extensions=[Admin()])
    assert str(raised.value) == (
        "ReActAgent(): the extensions bring tools (drop_table) that Delegating cannot "
        "offer without being changed: register them on the chain yourself, or build it "
        "on JSONToolChain, YAMLToolChain or DialectToolChain"
    )
    assert list(chain.tools) == ["get_weather"]
    chain.register_tool(drop_table)  # as the message says: then the agent takes it as it is
    agent = ReActAgent(ScriptedModel([]), tool_chain=chain, extensions=[Admin()])
    assert agent.tool_chain is chain


def test_an_extension_tool_named_like_a_chain_tool_is_refused_at_build() -> None:
    @tool(name="get_weather")
    def other_weather(city: str) -> str:
        """Another weather service."""
        return city

    class Clash(Extension):
        name = "clash"

        def tools(self) -> Sequence[Tool[Any, Any]]:
            return (other_weather,)

    chain = JSONToolChain().register_tool(get_weather)
    with pytest.raises(DuplicateToolError, match="a tool named 'get_weather' is already"):
        ReActAgent(ScriptedModel([]), tool_chain=chain, extensions=[Clash()])
    assert chain.tools == {"get_weather": get_weather}


@KINDS
def test_a_chain_of_ones_own_is_narrowed_by_a_wrapper_and_reads_each_action_once(
    kind: Kind,
) -> None:
    # A chain that cannot narrow itself is wrapped for the step: the same words, the
    # chain read once per action, and the chain itself left as it was.
    chain = Delegating().register_tool(get_weather).register_tool(drop_table)
    reads: list[str] = []
    parse = chain.inner.parse_calls

    def counted(content: str, text_format: Any = None) -> Any:
        reads.append(content)
        return parse(content, text_format)

    chain.inner.parse_calls = counted  # type: ignore[method-assign]  # a spy on the reads

    def weather_only(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("get_weather",))

    if kind == "react":
        action = '<action>{"tool": "drop_table", "args": {"table": "users"}}</action>'
        model = ScriptedModel([action, "<answer>no</answer>"])
        agent: Any = ReActAgent(model, tool_chain=chain, step_hooks=[weather_only])
    else:
        model = ScriptedModel([ScriptedModel.call("drop_table", {"table": "users"}), "no"])
        agent = ToolCallingAgent(model, tool_chain=chain, step_hooks=[weather_only])
    ran.clear()
    result = agent.run_sync("Drop the users table.")
    assert result.ok, result.error
    [error] = result.steps[0].tool_results[0].raw.errors
    assert error is not None and error.kind == "unknown_tool"
    assert error.message == (
        "the tool 'drop_table' is not available now. Available tools: get_weather"
    )
    assert ran == []
    assert len(reads) == (1 if kind == "react" else 0)
    assert list(chain.tools) == ["get_weather", "drop_table"]
