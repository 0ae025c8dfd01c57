"""``toolchain.mcp`` against real MCP servers the tests start: the SDK-built server of
``tests/toolchain/mcp/mcp_server.py`` over stdio and over streamable HTTP on loopback, and
the reference ``@modelcontextprotocol/server-everything`` from npm (installed into a
cache directory; skipped, with the reason, where node or npm is missing or the install
fails). Both agents run on scripted models.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

from agents import AgentResult, ToolCallingAgent
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from formats import XMLFormat
from tests.support.agent_kinds import KINDS, Kind, agent, answer
from tests.toolchain.mcp.mcp_server import BIG_TEXT_LINES, PNG, report_rows, report_table
from tests.toolchain.mcp.servers import SERVER, HTTPServer
from toolchain import (
    ExecutionContext,
    ImageContent,
    JSONToolChain,
    TextContent,
    ToolCallStarted,
    ToolChainResult,
    ToolError,
    YAMLToolChain,
)
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.mcp import MCPConnectionError, MCPServer, MCPTool
from toolchain.relay import ContextRelay
from toolchain.testing import fixed_clock

BASE_TOOLS = [
    "weather",
    "logo",
    "forecast",
    "fail",
    "sleep",
    "big_text",
    "read_text",
    "report",
    "names",
    "files",
    "add_tool",
    "remove_tool",
    "pid",
    "crash",
    "lookup",
]
EVERYTHING_VERSION = "2026.8.31"

Transport = Literal["stdio", "http"]
TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


# -- servers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_http() -> Iterator[HTTPServer]:
    """A server for tests that do not change its tool list."""
    server = HTTPServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def crowded_http() -> Iterator[HTTPServer]:
    """A server with 200 generated tools besides its own."""
    server = HTTPServer("--many", "200")
    yield server
    server.stop()


@pytest.fixture
def http_servers() -> Iterator[Callable[..., HTTPServer]]:
    """Start servers of this test's own (changed or killed by it)."""
    started: list[HTTPServer] = []

    def start(*options: str) -> HTTPServer:
        started.append(HTTPServer(*options))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def stdio(*options: str, **settings: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [str(SERVER), "stdio", *options], **settings)


def connect(
    transport: Transport, http: Callable[..., HTTPServer], *options: str, **settings: Any
) -> MCPServer:
    """An unconnected client of a fresh server over ``transport``."""
    if transport == "stdio":
        return stdio(*options, **settings)
    return MCPServer.http(http(*options).url, **settings)


async def run(
    chain: JSONToolChain, ctx: ExecutionContext, *calls: tuple[str, dict[str, object]]
) -> ToolChainResult:
    action = json.dumps([{"tool": name, "args": args} for name, args in calls])
    return await chain.execute(ctx, action, XMLFormat())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- connecting and listing ----------------------------------------------------------


@TRANSPORTS
async def test_connects_and_lists_every_page(
    transport: Transport, http_servers: Callable[..., HTTPServer]
) -> None:
    server = connect(transport, http_servers, "--many", "25", "--page-size", "7", prefix="t_")
    async with server:
        assert server.connected and server.name == "test-server"
        assert server.server_info is not None and server.server_info.version == "1.0"
        assert server.instructions() == "Tools for testing the MCP client."
        tools = server.tools()
        assert len(tools) == len(BASE_TOOLS) + 25  # 6 pages of 7
        assert [tool.name for tool in tools[: len(BASE_TOOLS)]] == [f"t_{n}" for n in BASE_TOOLS]
        weather = server.tool("t_weather")
        assert weather.remote_name == "weather" and weather.offered
        assert weather.description == "Today's weather in a city."
        given = weather.definition.input_schema
        assert weather.input_schema() == given and weather.prompt_schema() == given
        assert weather.input_schema()["properties"]["days"] == {  # type: ignore[index]
            "type": "integer",
            "minimum": 1,
            "maximum": 7,
            "default": 1,
        }
        with pytest.raises(KeyError, match="has no tool 'weather'"):
            server.tool("weather")
    assert not server.connected


async def test_connect_failures_say_why(http_servers: Callable[..., HTTPServer]) -> None:
    missing = MCPServer.stdio("/nonexistent/mcp-server", ["--stdio"])
    with pytest.raises(MCPConnectionError, match=r"started as '/nonexistent/mcp-server --stdio'"):
        await missing.connect()
    crash = "import sys; sys.stderr.write('boom: no config file\\n'); sys.exit(3)"
    with pytest.raises(MCPConnectionError, match="its stderr ends with: boom: no config file"):
        await MCPServer.stdio(sys.executable, ["-c", crash]).connect()
    silent = MCPServer.stdio(
        sys.executable, ["-c", "import sys; sys.stdin.read()"], connect_timeout=0.5
    )
    with pytest.raises(MCPConnectionError, match=r"it did not answer within 0\.5 s"):
        await silent.connect()
    gone = http_servers()
    gone.stop()
    with pytest.raises(MCPConnectionError, match=r"at http://127\.0\.0\.1:\d+/mcp"):
        await MCPServer.http(gone.url, connect_timeout=5).connect()
    assert not missing.connected and missing.tools() == ()


@pytest.mark.parametrize(
    ("transport", "mode"),
    [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")],
)
async def test_a_malformed_tool_is_left_out_with_a_warning_and_the_rest_kept(
    transport: Transport,
    mode: str,
    http_servers: Callable[..., HTTPServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolchain.mcp")
    options = ["--malformed", "--unreadable"] if transport == "stdio" else ["--malformed"]
    server = connect(transport, http_servers, *options, mode=mode, connect_timeout=10)
    async with server:  # used to fail: the SDK checks the listing as a whole
        assert [tool.name for tool in server.tools()] == BASE_TOOLS
        result = await run(server.attach(JSONToolChain()), ExecutionContext(), ("pid", {}))
        assert result.raw.ok
    warned = [r.getMessage() for r in caplog.records if "cannot offer" in r.getMessage()]
    said = "the MCP server test-server lists a tool it cannot offer"
    kept = "; that tool is left out, the others are kept"
    expected = [
        f"{said}, 'bad_required': its inputSchema's required is not a list of names{kept}",
        f"{said}, 'bad_schema': its inputSchema is not an object{kept}",
        f"{said}, 'null_schema': its inputSchema is not an object{kept}",
        f"{said}, the tool at position 5: its name is not a string{kept}",
        f"{said}, 'too_deep': its inputSchema nests more than 64 levels{kept}",
    ]
    if transport == "stdio":  # past the SDK's parser: read here, not a 30-second timeout
        expected.append(f"{said}, 'unreadable': its inputSchema nests more than 64 levels{kept}")
    assert warned == expected


async def test_a_listing_http_cannot_parse_fails_at_once(
    http_servers: Callable[..., HTTPServer],
) -> None:
    """Over HTTP the SDK keeps no text of an answer it cannot parse: no tool can be saved,
    but connecting fails at once, not at the timeout."""
    server = MCPServer.http(http_servers("--unreadable").url, connect_timeout=30)
    with pytest.raises(MCPConnectionError, match="could not connect to the MCP server") as raised:
        await server.connect()
    assert "did not answer within" not in str(raised.value)  # an answer, not the timeout


# -- calls through a chain -----------------------------------------------------------


@TRANSPORTS
async def test_typed_call_and_argument_errors(
    transport: Transport, shared_http: HTTPServer
) -> None:
    server = stdio() if transport == "stdio" else MCPServer.http(shared_http.url)
    async with server:
        chain = server.attach(JSONToolChain())
        ctx = ExecutionContext()
        result = await run(
            chain,
            ctx,
            ("weather", {"city": "Paris", "days": 2, "unit": "F"}),
            ("weather", {"days": "two", "unit": "K"}),
            ("weather", {"city": "Oslo", "days": 9}),
        )
        assert result.raw.output(0, str) == "Paris: 21 °F for 2 day(s)"
        missing, too_many = result.raw.errors[1], result.raw.errors[2]
        assert missing is not None and missing.kind == "invalid_arguments"
        assert missing.message == (
            "invalid arguments for weather: city: required field is missing; "
            "days: 'two' is not of type 'integer'; unit: 'K' is not one of ['C', 'F']"
        )
        assert too_many is not None and too_many.message.endswith(
            "days: 9 is greater than the maximum of 7"
        )
        yaml = server.attach(YAMLToolChain())  # YAML reads "2" as the schema's integer
        action = "- tool: weather\n  args:\n    city: Rome\n    days: 2"
        answered = await yaml.execute(ctx, action, XMLFormat())
        assert answered.raw.output(0, str) == "Rome: 21 °C for 2 day(s)"


async def test_numbers_json_cannot_carry_never_reach_the_server(shared_http: HTTPServer) -> None:
    # JSON Schema's "number" takes a float NaN or infinity (YAML's .nan, .inf): the
    # server would be sent a value no JSON holds (here, asked to sleep forever).
    async with MCPServer.http(shared_http.url) as server:
        chain = server.attach(YAMLToolChain(timeout=5))
        action = "- tool: sleep\n  args: {seconds: .inf}\n- tool: sleep\n  args: {seconds: .nan}"
        result = await chain.execute(ExecutionContext(), action, XMLFormat())
        for error, shown in zip(result.raw.errors, ("inf", "nan"), strict=True):
            assert error is not None and error.kind == "invalid_arguments"
            assert error.message == (
                "invalid arguments for sleep: seconds: must be a finite number written in "
                f"ASCII digits (got {shown})"
            )


async def test_schema_patterns_run_in_linear_time(
    shared_http: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """``^(a+)+$`` against ``"a" * 28 + "!"`` backtracked for seconds on the event loop in
    Python's ``re``; RE2 answers at once, however long the argument."""
    caplog.set_level(logging.WARNING, logger="toolchain.mcp")
    async with MCPServer.http(shared_http.url) as server:
        chain = server.attach(JSONToolChain())
        long = "a" * 5_000 + "!"
        result = await run(
            chain,
            ExecutionContext(),
            ("lookup", {"code": long}),
            ("lookup", {"code": "aaa", "tags": {"b" * 5_000 + "!": 1}}),
            ("lookup", {"code": "aaa", "tags": {"bbb": 1}, "ref": "xx"}),
            ("lookup", {"code": "aaa", "ref": "not checked here"}),
        )
    pattern, key, fine, unchecked = result.raw.errors
    assert pattern is not None and pattern.kind == "invalid_arguments"
    assert pattern.message.startswith("invalid arguments for lookup: code: 'aaaaaaaa")
    assert pattern.message.endswith("... does not match the pattern '^(a+)+$'")
    assert key is not None and key.message.startswith(
        "invalid arguments for lookup: tags: unexpected properties: 'bbbbbbbb"
    )
    assert fine is None and result.raw.output(2, str) == "found 3 characters, ref xx"
    assert unchecked is None  # RE2 cannot run a lookahead: the server checks it
    assert result.raw.output(3, str) == "found 3 characters, ref not checked here"
    [warned] = [r.getMessage() for r in caplog.records if "RE2 cannot run" in r.getMessage()]
    assert warned.startswith("the input schema of lookup has the pattern '^(?=x)x+$', which")
    assert warned.endswith("; it is not checked here, the server checks it")


async def test_results_become_text_media_and_structured_output(shared_http: HTTPServer) -> None:
    async with MCPServer.http(shared_http.url) as server:
        chain = server.attach(JSONToolChain())
        result = await run(
            chain,
            ExecutionContext(),
            ("logo", {}),
            ("forecast", {"city": "Oslo"}),
            ("files", {}),
            ("fail", {"why": "no data for Oslo"}),
        )
    logo = result.raw.results[0]
    assert logo is not None and logo.output == "the logo"
    assert logo.result.media == (ImageContent(data=PNG, media_type="image/png"),)
    forecast = result.raw.output(1, dict[str, object])
    assert forecast == {"city": "Oslo", "temps": [21.5, 23.0, 19.0]}  # the JSON text dropped
    files = result.raw.results[2]
    assert files is not None and files.output == [
        {"type": "resource", "uri": "file:///reports/q3.md", "mimeType": "text/markdown"}
        | {"text": "# Q3\nAll good."},
        {"type": "resource", "uri": "file:///reports/q3.png", "mimeType": "image/png"}
        | {"attached": f"{len(PNG)} bytes, as an attachment"},
        {"type": "resource_link", "uri": "file:///reports/q2.md", "name": "q2.md"}
        | {"description": "Last quarter's report", "mimeType": "text/markdown"},
    ]
    assert files.result.media == (ImageContent(data=PNG, media_type="image/png"),)
    failed = result.raw.errors[3]
    assert failed is not None and failed.kind == "tool_error"
    assert failed.message == "failed: no data for Oslo"
    assert isinstance(failed.exception, ToolError)
    assert result.media == (logo.result.media[0], files.result.media[0])  # numbered in order
    assert "[1] image (image/png, 70 bytes)" in result.text
    assert "[2] image (image/png, 70 bytes)" in result.text


async def test_a_call_past_its_time_limit_fails_alone(shared_http: HTTPServer) -> None:
    async with MCPServer.http(shared_http.url, timeout=0.3) as server:
        assert server.tool("sleep").timeout == 0.3
        chain = server.attach(JSONToolChain())
        ctx = ExecutionContext()
        result = await run(chain, ctx, ("sleep", {"seconds": 30}), ("weather", {"city": "Rome"}))
        slow = result.raw.errors[0]
        assert slow is not None and slow.kind == "timeout"
        assert slow.message == "sleep did not finish within 0.3 s"
        assert result.raw.output(1, str) == "Rome: 21 °C for 1 day(s)"
        again = await run(chain, ctx, ("sleep", {"seconds": 0.01}))  # the session is fine
        assert again.raw.output(0, str) == "slept 0.01 s"


async def test_calls_outside_a_connection_fail_clearly(shared_http: HTTPServer) -> None:
    server = MCPServer.http(shared_http.url)
    async with server:
        weather = server.tool("weather")
    with pytest.raises(ToolError, match="the MCP server 'test-server' is not connected"):
        await weather.call(ExecutionContext(), {"city": "Paris"})
    async with server:  # connects again: the same tool objects work again
        assert server.tool("weather") is weather
        result = await weather.call(ExecutionContext(), {"city": "Paris"})
        assert result.text == "Paris: 21 °C for 1 day(s)"


# -- list changes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("transport", "mode"), [("stdio", "auto"), ("http", "auto"), ("http", "legacy")]
)
async def test_list_changes_refresh_the_tools(
    transport: Transport, mode: str, http_servers: Callable[..., HTTPServer]
) -> None:
    changes: asyncio.Queue[tuple[MCPTool, ...]] = asyncio.Queue()
    server = connect(transport, http_servers, mode=mode, on_tools_changed=changes.put_nowait)
    async with server:
        assert server.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        chain = server.attach(JSONToolChain())
        ctx = ExecutionContext()
        weather = server.tool("weather")
        await run(chain, ctx, ("add_tool", {"name": "shout"}))
        tools = await asyncio.wait_for(changes.get(), 10)
        assert [tool.name for tool in tools] == [*BASE_TOOLS, "shout"]
        assert "shout" in chain.tools and server.tool("shout") is tools[-1]
        shouted = await run(chain, ctx, ("shout", {"message": "hi"}))
        assert shouted.raw.output(0, str) == "shout: hi"
        await run(chain, ctx, ("remove_tool", {"name": "weather"}))
        tools = await asyncio.wait_for(changes.get(), 10)
        assert "weather" not in [tool.name for tool in tools] and not weather.offered
        gone = await run(chain, ctx, ("weather", {"city": "Paris"}))
        error = gone.raw.errors[0]
        assert error is not None and error.message == (
            "weather is no longer offered by the MCP server 'test-server' (its tool list "
            "changed); use one of the tools it offers now"
        )


# -- agents --------------------------------------------------------------------------


def call(kind: Kind, *calls: tuple[str, dict[str, object]]) -> str | ScriptedReply:
    if kind == "react":
        action = [{"tool": name, "args": args} for name, args in calls]
        return f"<action>{json.dumps(action)}</action>"
    requests = tuple(ToolCallRequest("", name, json.dumps(args)) for name, args in calls)
    return ScriptedReply("", requests)


def shown_tools(kind: Kind, model: ScriptedModel, step: int) -> str:
    """What request ``step`` tells the model about tools: specs, or the system prompt."""
    request = model.requests[step]
    if kind == "native":
        return json.dumps([[s.name, s.description, s.parameters] for s in request.options.tools])
    return request.messages[0].text_content()


@KINDS
async def test_agents_call_mcp_tools(kind: Kind, shared_http: HTTPServer) -> None:
    model = ScriptedModel(
        [
            call(kind, ("weather", {"city": "Lisbon"}), ("logo", {})),
            answer(kind, "21 °C, and here is the logo"),
        ]
    )
    async with MCPServer.http(shared_http.url) as server:
        result: AgentResult[str] = await agent(kind, model, server.attach(JSONToolChain())).run(
            "Weather in Lisbon, and our logo?"
        )
    assert result.ok and result.answer == "21 °C, and here is the logo"
    observed = result.steps[0].tool_results[0]
    assert observed.raw.output(0, str) == "Lisbon: 21 °C for 1 day(s)"
    assert observed.media == (ImageContent(data=PNG, media_type="image/png"),)
    images = [p for m in result.messages for p in m.content if isinstance(p, ImageContent)]
    assert images == [ImageContent(data=PNG, media_type="image/png")]  # sent to the model
    shown = shown_tools(kind, model, 0)
    schema = server.tool("weather").definition.input_schema
    if kind == "native":
        spec = next(s for s in model.requests[0].options.tools if s.name == "weather")
        assert spec.parameters == schema and not spec.strict
        assert spec.description == "Today's weather in a city."
    else:
        assert json.dumps(schema["properties"]["days"], separators=(",", ":")) in shown
    assert "Tools for testing the MCP client." in model.requests[0].messages[0].text_content()


@KINDS
async def test_tools_the_server_adds_mid_run_are_offered_next_step(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, ("add_tool", {"name": "shout"})),
            call(kind, ("shout", {"message": "hello"}), ("remove_tool", {"name": "logo"})),
            answer(kind, "shouted"),
        ]
    )
    async with stdio() as server:
        result: AgentResult[str] = await agent(kind, model, server.attach(JSONToolChain())).run(
            "Add a shout tool and use it"
        )
    assert result.ok and result.answer == "shouted"
    assert result.steps[1].tool_results[0].raw.output(0, str) == "shout: hello"
    first, second, third = (shown_tools(kind, model, step) for step in range(3))
    assert "shout" not in first and "Echoes a message (shout)." in second
    assert '"logo"' in second or "- logo:" in second
    assert '"logo"' not in third and "- logo:" not in third


@KINDS
async def test_tool_search_finds_one_of_hundreds(kind: Kind, crowded_http: HTTPServer) -> None:
    model = ScriptedModel(
        [
            call(kind, ("tool_search", {"query": "archive an invoice record"})),
            call(kind, ("crm_archive_invoice_33", {"id": "inv-7"})),
            answer(kind, "archived"),
        ]
    )
    async with MCPServer.http(crowded_http.url) as server:
        assert len(server.tools()) == len(BASE_TOOLS) + 200
        search = ToolSearch(ToolIndex(server.tools()), limit=3)
        assert search.defers  # 210 definitions are far over the prompt budget
        chain = JSONToolChain(extensions=[search])
        result: AgentResult[str] = await agent(kind, model, chain).run("Archive invoice inv-7")
    assert result.ok and result.answer == "archived"
    found = result.steps[0].tool_results[0].raw.output(0, dict[str, Any])
    names = [entry["name"] for entry in found["found"]]
    assert names[0] == "crm_archive_invoice_33", names
    done = result.steps[1].tool_results[0].raw.output(0, str)
    assert done == "crm_archive_invoice_33 done for inv-7"
    if kind == "native":
        assert [s.name for s in model.requests[0].options.tools] == ["tool_search"]
    else:
        assert "crm_archive_invoice_33" not in model.requests[0].messages[0].text_content()
        assert found["found"][0]["parameters"] == (
            server.tool("crm_archive_invoice_33").definition.input_schema
        )


async def test_large_results_go_through_the_relay(shared_http: HTTPServer) -> None:
    relay = ContextRelay(threshold=2_000)
    async with MCPServer.http(shared_http.url) as server:
        chain = server.attach(JSONToolChain(extensions=[relay]))
        ctx = ExecutionContext()
        boxed = await run(chain, ctx, ("big_text", {}))
        reference = boxed.observations[0].text
        assert reference.startswith("internal://") and len(reference) < 100
        text = boxed.raw.output(0, str)  # the program keeps the whole text
        assert text.count("\n") == BIG_TEXT_LINES - 1
        grep = await run(
            chain,
            ctx,
            ("internal_resource_grep", {"opaque_reference": reference, "pattern": "line 1234:"}),
        )
    assert "line 1234: lorem ipsum" in grep.observations[0].text


def tool_messages_text(kind: Kind, messages: Sequence[Message]) -> str:
    """The text of what answered the last step's tool calls: its tool messages (native)
    or the observation message (text mode), attachments included."""
    if kind == "react":
        return messages[-1].text_content()
    answers = list(itertools.takewhile(lambda m: m.role == "tool", reversed(messages)))
    return "\n".join(m.text_content() for m in reversed(answers))


@TRANSPORTS
@KINDS
async def test_text_parts_count_toward_the_relay_and_are_boxed(
    kind: Kind, transport: Transport, shared_http: HTTPServer
) -> None:
    """A FastMCP-style str result (structured ``{"result": text}`` plus the same text), a
    report whose 36,000-character Markdown table comes beside its rows, and a list sent
    item by item: the model gets references, never the text, and nothing twice."""
    found: list[str] = []

    def script(messages: Sequence[Message]) -> str | ScriptedReply:
        step = sum(1 for m in messages if m.role == "assistant")
        if step == 0:
            return call(kind, ("read_text", {}), ("report", {}), ("names", {}))
        if step == 1:
            found.append(tool_messages_text(kind, messages))
            table = re.findall(r"internal://[\w-]+", found[0])[-1]  # the report's text part
            grep: dict[str, object] = {"opaque_reference": table, "pattern": r"region 999 \|"}
            return call(kind, ("internal_resource_grep", grep))
        found.append(tool_messages_text(kind, messages))
        return answer(kind, "region 999 sold 6993 units")

    model = ScriptedModel(script)
    server = stdio() if transport == "stdio" else MCPServer.http(shared_http.url)
    async with server:
        chain = server.attach(JSONToolChain(extensions=[ContextRelay(threshold=2_000)]))
        result: AgentResult[str] = await agent(kind, model, chain).run("Sales of region 999?")
    assert result.ok and result.answer == "region 999 sold 6993 units"
    shown = found[0]
    assert len(shown) < 1_000, len(shown)  # was 72 KB (native) or 36 KB (text mode)
    assert "| region 001 |" not in shown
    assert "[1] text (" in shown and "characters)" in shown  # the label says what it is
    assert shown.count("Edsger") == 1  # names: the items repeat the structured list
    assert "| region 999 | 6993 | 91408.50 |" in found[1]  # the boxed table can be read
    raw = result.steps[0].tool_results[0].raw  # the program keeps everything
    assert len(raw.output(0, dict[str, str])["result"]) == len(report_table())
    assert raw.output(1, dict[str, list[dict[str, object]]])["rows"][999]["units"] == 6993
    report = raw.results[1]
    assert report is not None and report.result.media == (TextContent(report_table()),)
    assert raw.output(2, dict[str, list[str]]) == {"result": ["Ada", "Grace", "Edsger"]}


async def test_a_text_part_is_sent_once_with_a_label_without_the_relay(
    shared_http: HTTPServer,
) -> None:
    model = ScriptedModel([call("native", ("report", {})), answer("native", "done")])
    async with MCPServer.http(shared_http.url) as server:
        result: AgentResult[str] = await agent("native", model, server.attach(JSONToolChain())).run(
            "The report?"
        )
    assert result.ok
    [message] = [m for m in result.messages if m.role == "tool"]
    text = message.text_content()  # the rows as JSON, then the table once (was twice)
    assert text.count("| region 999 |") == 1 and text.count('"region":"region 999"') == 1
    assert len(text) < len(json.dumps(report_rows())) + len(report_table()) + 200
    assert f"[1] text ({len(report_table())} characters)" in text


# -- a server that dies mid-call -----------------------------------------------------


@pytest.mark.parametrize(("transport", "mode"), [("stdio", "auto"), ("http", "legacy")])
async def test_a_server_killed_mid_call_fails_that_call_and_the_run_goes_on(
    transport: Transport, mode: str, http_servers: Callable[..., HTTPServer]
) -> None:
    model = ScriptedModel(
        [
            call("native", ("weather", {"city": "Paris"}), ("sleep", {"seconds": 30})),
            call("native", ("weather", {"city": "Rome"})),
            answer("native", "the server is gone"),
        ]
    )
    server = connect(transport, http_servers, mode=mode)
    async with server:
        pid = int(str((await server.tool("pid").call(ExecutionContext(), {})).text))
        ctx = ExecutionContext()
        loop = asyncio.get_running_loop()

        def kill_during_sleep(event: ToolCallStarted) -> None:
            if event.name == "sleep":
                loop.call_later(0.3, os.kill, pid, signal.SIGKILL)

        ctx.events.subscribe(ToolCallStarted, kill_during_sleep)
        result: AgentResult[str] = await ToolCallingAgent(
            model, tool_chain=server.attach(JSONToolChain()), clock=fixed_clock
        ).run("Weather in Paris, slowly", ctx=ctx)
        assert result.ok and result.answer == "the server is gone"
        first = result.steps[0].tool_results[0]
        assert first.raw.output(0, str) == "Paris: 21 °C for 1 day(s)"  # finished before: kept
        killed = first.raw.errors[1]
        assert killed is not None and killed.kind == "tool_error"
        assert killed.message == (
            "the connection to the MCP server 'test-server' closed during the call of sleep "
            "(the server exited or dropped the connection)"
        )
        after = result.steps[1].tool_results[0].raw.errors[0]
        assert after is not None and after.message == (
            "the MCP server 'test-server' is disconnected: its connection closed during the "
            "call of sleep"
        )
        if transport == "stdio":  # connecting again starts the server again
            await server.connect()
            again = await server.tool("pid").call(ExecutionContext(), {})
            assert int(str(again.text)) != pid and alive(int(str(again.text)))
    if transport == "stdio":  # (the HTTP server is this process's child: a zombie until reaped)
        assert not alive(pid)


# -- credentials -----------------------------------------------------------------------

SECRETS = ("pw-4711", "abc123", "sk-proj-abcdefghijklmnopqrstuvwx", "plain-secret-42")


def shows_a_secret(text: str) -> bool:
    return any(secret in text for secret in SECRETS)


async def test_connect_errors_never_show_credentials(
    http_servers: Callable[..., HTTPServer], caplog: pytest.LogCaptureFixture
) -> None:
    gone = http_servers()
    gone.stop()
    url = gone.url.replace("http://", "http://admin:pw-4711@") + "?token=abc123&page=2"
    server = MCPServer.http(url, headers={"Authorization": "Bearer abc123"}, connect_timeout=5)
    assert not shows_a_secret(repr(server))
    with pytest.raises(MCPConnectionError) as raised:
        await server.connect()
    shown = "".join(traceback.format_exception(raised.value))  # the cause chain too
    assert "http://[REDACTED]@127.0.0.1:" in shown and "?token=[REDACTED]&page=2" in shown
    assert not shows_a_secret(shown)
    dies = (
        "import os, sys; sys.stderr.write('using ' + os.environ['SERVICE_TOKEN'] + '\\n'"
        " + 'OPENAI_API_KEY=' + os.environ['OPENAI_API_KEY'] + '\\n'); sys.exit(2)"
    )
    env = {"SERVICE_TOKEN": "plain-secret-42", "OPENAI_API_KEY": SECRETS[2]}
    with pytest.raises(MCPConnectionError) as died:
        await MCPServer.stdio(sys.executable, ["-c", dies], env=env).connect()
    assert "its stderr ends with: using [REDACTED] | OPENAI_API_KEY=[REDACTED]" in str(died.value)
    assert not shows_a_secret("".join(traceback.format_exception(died.value)))
    assert not any(shows_a_secret(record.getMessage()) for record in caplog.records)


@KINDS
async def test_a_dying_servers_stderr_reaches_the_model_without_credentials(
    kind: Kind, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolchain")
    model = ScriptedModel([call(kind, ("crash", {})), answer(kind, "it crashed")])
    env = {"SERVICE_TOKEN": "plain-secret-42", "OPENAI_API_KEY": SECRETS[2]}
    async with stdio(env=env) as server:
        result: AgentResult[str] = await agent(kind, model, server.attach(JSONToolChain())).run(
            "Crash"
        )
    assert result.ok and result.answer == "it crashed"
    error = result.steps[0].tool_results[0].raw.errors[0]
    assert error is not None and "its stderr ends with: fatal: OPENAI_API_KEY=[REDACTED]" in (
        error.message
    )
    assert "the service refused token [REDACTED]" in error.message
    sent = json.dumps([m.text_content() for m in model.requests[1].messages])
    assert "refused token [REDACTED]" in sent and not shows_a_secret(sent)
    assert not any(shows_a_secret(record.getMessage()) for record in caplog.records)


# -- closing cleanly -----------------------------------------------------------------


CLEAN_CLOSE = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys
    from toolchain.mcp import MCPServer

    async def main(script, url):
        async with MCPServer.stdio(sys.executable, [script, "stdio"]) as server:
            pid = int((await server.tool("pid").call(None, {})).text)
            await server.tool("add_tool").call(None, {"name": "shout"})
            await server.tool("sleep").call(None, {"seconds": 0.01})
        assert server.tools()[-1].name == "shout", server.tools()
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the stdio server outlived its client")
        async with MCPServer.http(url) as server:
            await server.tool("weather").call(None, {"city": "Paris"})
        others = asyncio.all_tasks() - {asyncio.current_task()}
        assert not others, others

    web = subprocess.Popen([sys.executable, sys.argv[1], "http"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(web.stdout.readline().split()[-1])
        asyncio.run(main(sys.argv[1], f"http://127.0.0.1:{port}/mcp"))
    finally:
        web.terminate()
        web.wait()
        web.stdout.close()
    print("closed cleanly")
    """
)


def test_closing_leaves_no_process_task_or_warning(tmp_path: Path) -> None:
    script = tmp_path / "close.py"
    script.write_text(CLEAN_CLOSE)
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(script), str(SERVER)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "closed cleanly\n"
    assert completed.stderr == ""


def test_importing_toolchain_does_not_import_the_sdk() -> None:
    code = (
        "import sys, toolchain, toolchain.mcp, toolchain.discovery; "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'jsonschema') if m in sys.modules))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert completed.stdout == "[]\n"


# -- the reference server from npm ---------------------------------------------------


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gent-py" / f"server-everything-{EVERYTHING_VERSION}"


@pytest.fixture(scope="module")
def everything(request: pytest.FixtureRequest) -> Path:
    """The entry script of ``@modelcontextprotocol/server-everything``, installed once
    into a cache directory with npm; the tests skip, saying why, where that fails."""

    def skip(reason: str) -> None:
        plugins = request.config.pluginmanager
        reporter, capture = (
            plugins.get_plugin("terminalreporter"),
            plugins.get_plugin("capturemanager"),
        )
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():  # printed, not captured
                reporter.ensure_newline()
                reporter.write_line(f"server-everything tests skipped: {reason}", yellow=True)
        pytest.skip(reason)

    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        skip("node and npm are needed to run @modelcontextprotocol/server-everything")
    prefix = _cache_dir()
    package = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything"
    entry = package / "dist" / "index.js"
    if not entry.is_file():
        assert npm is not None
        spec = f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"
        try:
            installed = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", spec],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            skip(f"npm install {spec} failed: {error}")
        else:
            if installed.returncode != 0 or not entry.is_file():
                tail = (installed.stderr or installed.stdout).strip().splitlines()[:3]
                skip(f"npm install {spec} failed: {' | '.join(tail)}")
    return entry


@pytest.fixture
async def reference(everything: Path) -> AsyncIterator[MCPServer]:
    node = shutil.which("node")
    assert node is not None
    async with MCPServer.stdio(node, [str(everything), "stdio"], connect_timeout=60) as server:
        yield server


async def test_reference_server_tools_and_results(reference: MCPServer) -> None:
    names = [tool.name for tool in reference.tools()]
    for expected in ("echo", "get-sum", "get-tiny-image", "get-structured-content"):
        assert expected in names
    assert reference.name == "mcp-servers_everything"
    chain = reference.attach(JSONToolChain())
    result = await run(
        chain,
        ExecutionContext(),
        ("echo", {"message": "hi"}),
        ("get-sum", {"a": 2, "b": 40}),
        ("get-sum", {"a": "two", "b": 40}),
        ("get-tiny-image", {}),
        ("get-structured-content", {"location": "Chicago"}),
        ("get-resource-links", {"count": 2}),
    )
    assert result.raw.output(0, str) == "Echo: hi"
    assert "42" in result.raw.output(1, str)
    bad = result.raw.errors[2]
    assert bad is not None and bad.kind == "invalid_arguments"
    assert bad.message == "invalid arguments for get-sum: a: 'two' is not of type 'number'"
    image = result.raw.results[3]
    assert image is not None and len(image.result.media) == 1
    assert isinstance(image.result.media[0], ImageContent)
    assert image.result.media[0].media_type == "image/png"
    weather = result.raw.output(4, dict[str, object])
    assert "temperature" in weather
    links = result.raw.output(5, list[Any])
    assert [entry["type"] for entry in links if isinstance(entry, dict)] == ["resource_link"] * 2


async def test_reference_server_in_an_agent_run(reference: MCPServer) -> None:
    model = ScriptedModel([ScriptedModel.call("get-sum", {"a": 19, "b": 23}), "It is 42."])
    chain = reference.attach(JSONToolChain())
    result: AgentResult[str] = await ToolCallingAgent(
        model, tool_chain=chain, clock=fixed_clock
    ).run("What is 19 + 23?")
    assert result.ok and result.answer == "It is 42."
    assert "42" in result.steps[0].tool_results[0].raw.output(0, str)
    spec = next(s for s in model.requests[0].options.tools if s.name == "get-sum")
    assert spec.parameters == reference.tool("get-sum").definition.input_schema
