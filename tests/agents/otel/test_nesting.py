"""Spans inside spans: a sub-agent's run under the call that started it (``run_prompt``
with ``def_agent``, even two at once), a composite's sub-calls under the composite's
call, and an MCP tool's request to its server (over stdio and over HTTP) under the
tool's call.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from opentelemetry.trace import SpanKind
from pydantic import BaseModel

from agents import Prompt, ReActAgent, ScriptedModel, ToolCallingAgent, run_prompt
from agents.models import ScriptedReply, ToolCallRequest
from tests.agents.otel.tracing import Traced, failed
from tests.toolchain.mcp.servers import SERVER, HTTPServer
from toolchain import JSONToolChain, ToolError, tool
from toolchain.composite import CompositeTool
from toolchain.mcp import MCPServer


class City(BaseModel):
    city: str


class Topic(BaseModel):
    topic: str


def get_weather(args: City) -> str:
    return f"Weather in {args.city}: sunny"


def research(args: Topic, prompt: Prompt) -> None:
    prompt.user(f"Research: {args.topic}")


def parallel(*calls: tuple[str, dict[str, object]]) -> ScriptedReply:
    requests = tuple(
        ToolCallRequest(f"call_{n}", name, json.dumps(args))
        for n, (name, args) in enumerate(calls, start=1)
    )
    return ScriptedReply(tool_calls=requests)


async def test_a_sub_agents_run_is_a_child_of_the_call_that_started_it(spans: Traced) -> None:
    sub = ScriptedModel(["NYC summers are warm and humid."])
    parent = ScriptedModel(
        [
            parallel(("get_weather", {"city": "NYC"}), ("researcher", {"topic": "NYC summers"})),
            "Sunny; summers there are warm and humid.",
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_tool("get_weather", "Get weather for a city", City, get_weather)
        prompt.def_agent("researcher", "Research topics in depth", Topic, research, model=sub)
        prompt.user("Weather in NYC, and what are its summers like?")

    result = await run_prompt(build, model=parent, name="assistant").result()
    assert result.ok
    assert spans.tree() == (
        "invoke_agent assistant\n"
        "  chat scripted\n"
        "  execute_tool get_weather\n"
        "  execute_tool researcher\n"
        "    invoke_agent researcher\n"
        "      chat scripted\n"
        "  chat scripted"
    )
    outer, inner = spans.one("invoke_agent assistant"), spans.one("invoke_agent researcher")
    assert inner.kind is SpanKind.INTERNAL and failed(inner) is None
    assert outer.context is not None and inner.context is not None
    assert inner.context.trace_id == outer.context.trace_id
    assert dict(inner.attributes or {})["gen_ai.agent.name"] == "researcher"


async def test_two_sub_agent_calls_at_once_each_get_their_own_run(
    spans_with_content: Traced,
) -> None:
    spans = spans_with_content
    sub = ScriptedModel(["Oslo: cold.", "Rome: warm."])
    parent = ScriptedModel(
        [
            parallel(("researcher", {"topic": "Oslo"}), ("researcher", {"topic": "Rome"})),
            "Oslo is cold, Rome is warm.",
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_agent("researcher", "Research a topic", Topic, research, model=sub)
        prompt.user("Compare Oslo and Rome.")

    assert (await run_prompt(build, model=parent).result()).ok
    calls = spans.named("execute_tool researcher")
    runs = spans.named("invoke_agent researcher")
    assert len(calls) == 2 and len(runs) == 2
    for run in runs:
        assert run.parent is not None
        call = next(
            c for c in calls if c.context is not None and c.context.span_id == run.parent.span_id
        )
        topic = json.loads(str(dict(call.attributes or {})["gen_ai.tool.call.arguments"]))["topic"]
        chat = next(
            s
            for s in spans.spans
            if s.parent is not None
            and run.context is not None
            and s.parent.span_id == run.context.span_id
        )
        asked = str(dict(chat.attributes or {})["gen_ai.input.messages"])
        assert f"Research: {topic}" in asked
    assert {run.parent.span_id for run in runs if run.parent} == {
        c.context.span_id for c in calls if c.context
    }


files: dict[str, str] = {}


@tool
def write(path: str, content: str) -> str:
    """Write a file."""
    files[path] = content
    return "ok"


@tool
def read(path: str) -> str:
    """Read a file."""
    if path not in files:
        raise ToolError(f"no file {path!r}")
    return files[path]


async def test_a_composites_sub_calls_are_children_of_its_call(spans: Traced) -> None:
    composite = CompositeTool("file", "File operations.", [write, read])
    subcalls: dict[str, object] = {
        "calls": [
            {"name": "write", "args": {"path": "a.txt", "content": "Hi"}},
            {"name": "read", "args": {"path": "a.txt"}},
        ]
    }
    other: dict[str, object] = {"calls": [{"name": "read", "args": {"path": "missing.txt"}}]}
    model = ScriptedModel(
        [
            parallel(("file", subcalls), ("file", other)),
            "a.txt says Hi.",
        ]
    )
    agent = ToolCallingAgent(model, tools=[composite], name="clerk")
    assert (await agent.run("Write Hi to a.txt and read it back.")).ok
    assert spans.tree("gen_ai.tool.call.id", "error.type") == (
        "invoke_agent clerk\n"
        "  chat scripted\n"
        "  execute_tool file gen_ai.tool.call.id=call_1\n"
        "    execute_tool file.write gen_ai.tool.call.id=call_1/0\n"
        "    execute_tool file.read gen_ai.tool.call.id=call_1/1\n"
        "  execute_tool file gen_ai.tool.call.id=call_2\n"
        "    execute_tool file.read gen_ai.tool.call.id=call_2/0 error.type=tool_error\n"
        "  chat scripted"
    )


# -- MCP -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server() -> Iterator[HTTPServer]:
    server = HTTPServer()
    yield server
    server.stop()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_mcp_call_is_a_client_span_under_its_tool_call(
    spans: Traced, transport: str, http_server: HTTPServer
) -> None:
    server = (
        MCPServer.stdio(sys.executable, [str(SERVER), "stdio"])
        if transport == "stdio"
        else MCPServer.http(http_server.url)
    )
    model = ScriptedModel(
        [
            '<action>[{"tool": "weather", "args": {"city": "Oslo"}}, '
            '{"tool": "fail", "args": {"why": "on purpose"}}]</action>',
            "<answer>21 °C in Oslo.</answer>",
        ]
    )
    async with server:
        agent = ReActAgent(model, tool_chain=server.attach(JSONToolChain()), name="mcp-user")
        assert (await agent.run("Weather in Oslo?")).answer == "21 °C in Oslo."
    assert spans.tree("error.type") == (
        "invoke_agent mcp-user\n"
        "  chat scripted\n"
        "  execute_tool weather\n"
        "    tools/call weather\n"
        "  execute_tool fail error.type=tool_error\n"
        "    tools/call fail error.type=tool_error\n"
        "  chat scripted"
    )
    request = spans.one("tools/call weather")
    assert request.kind is SpanKind.CLIENT
    found = dict(request.attributes or {})
    assert found["mcp.method.name"] == "tools/call"
    assert found["gen_ai.operation.name"] == "execute_tool"
    assert found["gen_ai.tool.name"] == "weather"
    assert found["gent.mcp.server"] == "test-server"
    assert str(found["mcp.protocol.version"]).startswith("20")
    if transport == "stdio":
        assert found["network.transport"] == "pipe"
        assert "server.address" not in found
    else:
        assert found["network.transport"] == "tcp"
        assert found["server.address"] == "127.0.0.1"
        assert found["server.port"] == int(http_server.url.split(":")[2].split("/")[0])
    call = spans.one("execute_tool weather")
    assert call.start_time is not None and request.start_time is not None
    assert call.end_time is not None and request.end_time is not None
    assert call.start_time <= request.start_time <= request.end_time <= call.end_time
    failing = spans.one("tools/call fail")
    # Without content, what the server said (it quotes the arguments) is left out.
    assert failing.status.description == "fail failed: tool_error"
