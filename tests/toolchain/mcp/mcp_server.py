"""An MCP server for the tests of ``toolchain.mcp``, on the SDK's low-level server API.

Run as a process by the tests, over stdio or streamable HTTP on a loopback port::

    python tests/toolchain/mcp/mcp_server.py stdio [--many N] [--page-size N] [--malformed]
    python tests/toolchain/mcp/mcp_server.py http [--many N] [--page-size N] [--unreadable]

Over HTTP it binds 127.0.0.1 on a port the system picks and prints
``listening on <port>`` on stdout once it accepts connections.

Its tools: a typed one (``weather``), one returning an image (``logo``), one with
structured content and an output schema (``forecast``), one that fails (``fail``,
``isError``), one that sleeps (``sleep``), one with a large text (``big_text``),
three sending structured content beside text as FastMCP does (``read_text``: a str as
``{"result": text}`` and the text; ``names``: a list, one text block per item) or with
a text of its own (``report``: rows, and a 36,000-character Markdown table of them),
one returning an embedded resource and resource links (``files``), one that adds or
removes a tool at run time and says so (``add_tool`` / ``remove_tool``, which send
``notifications/tools/list_changed``), ``pid`` (the process id, so a test can kill
it), ``crash`` (dies mid-call, printing the credentials it was given to stderr),
``lookup`` (an input schema whose patterns backtrack in Python's ``re``)
and ``--many`` generated CRM tools for discovery tests. ``tools/list`` pages
``--page-size`` tools at a time; ``--malformed`` (and ``--unreadable``) put tools no
client can offer into its first page.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
BIG_TEXT_LINES = 2_000
REPORT_ROWS = 1_100
"""Rows of the ``report`` tool's table: about 36,000 characters as text."""

Context = ServerRequestContext[Any]
Handler = Callable[[Context, dict[str, Any]], Awaitable[types.CallToolResult]]


@dataclass
class Entry:
    tool: types.Tool
    run: Handler


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def nested(levels: int) -> dict[str, Any]:
    """An input schema of ``levels`` objects inside each other (twice as many JSON levels)."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


MALFORMED: list[dict[str, Any]] = [
    {"name": "bad_required", "inputSchema": {"type": "object", "required": "a"}},
    {"name": "bad_schema", "inputSchema": "not a schema"},
    {"name": "null_schema", "inputSchema": None},
    {"name": None, "inputSchema": {"type": "object"}},
    {"name": "too_deep", "inputSchema": nested(40)},
]
"""Tools no client can offer: ``--malformed`` lists them among the good ones."""
UNREADABLE: dict[str, Any] = {"name": "unreadable", "inputSchema": nested(100)}
"""A tool nested past what the SDK's JSON parser reads (about 200 levels): ``--unreadable``."""


def allow_malformed_listings() -> None:
    """Send ``tools/list`` answers unchecked: the SDK's server refuses to send a malformed
    tool, and the tests need a server that does (this process is only the test server)."""
    from mcp_types import methods

    check = methods.serialize_server_result

    def unchecked(method: str, version: str, data: Any, **options: Any) -> dict[str, Any]:
        return dict(data) if method == "tools/list" else check(method, version, data, **options)

    methods.serialize_server_result = unchecked  # a test double for the server's check


class TestServer:
    def __init__(
        self, many: int, page_size: int, extra: list[dict[str, Any]] | None = None
    ) -> None:
        self.bus = InMemorySubscriptionBus()
        self.extra = extra or []
        self.page_size = page_size
        self.tools: dict[str, Entry] = {}
        self.server: Server[Any] = Server(
            "test-server",
            version="1.0",
            instructions="Tools for testing the MCP client.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.add(
            "weather",
            "Today's weather in a city.",
            obj(
                {
                    "city": {"type": "string", "description": "The city's name."},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1},
                    "unit": {"type": "string", "enum": ["C", "F"]},
                },
                ["city"],
            ),
            self.weather,
        )
        self.add("logo", "The company logo as a PNG image.", obj({}), self.logo)
        self.add(
            "forecast",
            "A forecast for a city, as structured data.",
            obj({"city": {"type": "string"}}, ["city"]),
            self.forecast,
            output=obj(
                {
                    "city": {"type": "string"},
                    "temps": {"type": "array", "items": {"type": "number"}},
                },
                ["city", "temps"],
            ),
        )
        self.add("fail", "Always fails.", obj({"why": {"type": "string"}}), self.fail)
        self.add(
            "sleep",
            "Sleeps for some seconds, then says so.",
            obj({"seconds": {"type": "number"}}, ["seconds"]),
            self.sleep,
        )
        self.add(
            "big_text",
            f"A text of {BIG_TEXT_LINES} numbered lines.",
            obj({}),
            self.big_text,
        )
        self.add(
            "read_text",
            "A long text, as a FastMCP tool returning str sends it.",
            obj({}),
            self.read_text,
            output=obj({"result": {"type": "string"}}, ["result"]),
        )
        self.add(
            "report",
            "A sales report: its rows as structured data and as a Markdown table.",
            obj({}),
            self.report,
            output=obj({"rows": {"type": "array"}}, ["rows"]),
        )
        self.add(
            "names",
            "Some names, as a FastMCP tool returning list[str] sends them.",
            obj({}),
            self.names,
            output=obj({"result": {"type": "array", "items": {"type": "string"}}}, ["result"]),
        )
        self.add(
            "files", "A report as an embedded resource, and links to others.", obj({}), self.files
        )
        self.add(
            "add_tool",
            "Adds a tool named `name` that echoes its input.",
            obj({"name": {"type": "string"}}, ["name"]),
            self.add_tool,
        )
        self.add(
            "remove_tool",
            "Removes the tool named `name`.",
            obj({"name": {"type": "string"}}, ["name"]),
            self.remove_tool,
        )
        self.add("pid", "This server's process id.", obj({}), self.pid)
        self.add("crash", "Dies mid-call, printing its credentials to stderr.", obj({}), self.crash)
        self.add(
            "lookup",
            "Looks a code up (its schema has patterns that backtrack in Python's re).",
            obj(
                {
                    "code": {"type": "string", "pattern": "^(a+)+$"},
                    "tags": {
                        "type": "object",
                        "patternProperties": {"^(b+)+$": {"type": "integer"}},
                        "additionalProperties": False,
                    },
                    "ref": {"type": "string", "pattern": "^(?=x)x+$"},
                },
                ["code"],
            ),
            self.lookup,
        )
        for index in range(many):
            self.generated(index)

    def add(
        self,
        name: str,
        description: str,
        schema: dict[str, Any],
        run: Handler,
        *,
        output: dict[str, Any] | None = None,
    ) -> None:
        tool = types.Tool(
            name=name, description=description, input_schema=schema, output_schema=output
        )
        self.tools[name] = Entry(tool, run)

    # -- the protocol --------------------------------------------------------------------

    async def list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        entries = list(self.tools.values())
        page = entries[start : start + self.page_size]
        following = start + self.page_size
        cursor = str(following) if following < len(entries) else None
        result = types.ListToolsResult(tools=[entry.tool for entry in page], next_cursor=cursor)
        if not self.extra or start:
            return result
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped["tools"][1:1] = self.extra  # malformed tools among the good ones
        return dumped  # type: ignore[return-value]  # the handler may return a dict

    async def call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry = self.tools.get(params.name)
        if entry is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"no tool {params.name!r}")],
                is_error=True,
            )
        return await entry.run(ctx, dict(params.arguments or {}))

    async def changed(self, ctx: Context) -> None:
        """Tell the client its tool list changed, in whichever era it speaks."""
        await self.bus.publish(ToolsListChanged())
        await ctx.session.send_tool_list_changed()

    # -- the tools ----------------------------------------------------------------------

    async def weather(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        unit = args.get("unit", "C")
        return text(f"{args['city']}: 21 °{unit} for {args.get('days', 1)} day(s)")

    async def logo(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        image = types.ImageContent(
            type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="the logo"), image]
        )

    async def forecast(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        data = {"city": args["city"], "temps": [21.5, 23.0, 19.0]}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data))],
            structured_content=data,
        )

    async def fail(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        why = args.get("why", "it always does")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"failed: {why}")], is_error=True
        )

    async def sleep(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        await anyio.sleep(float(args["seconds"]))
        return text(f"slept {args['seconds']} s")

    async def big_text(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return text(
            "\n".join(f"line {n}: lorem ipsum dolor sit amet" for n in range(BIG_TEXT_LINES))
        )

    async def read_text(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        body = report_table()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=body)],
            structured_content={"result": body},
        )

    async def report(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=report_table())],
            structured_content={"rows": report_rows()},
        )

    async def names(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        names = ["Ada", "Grace", "Edsger"]
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=name) for name in names],
            structured_content={"result": names},
        )

    async def files(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        report = types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri="file:///reports/q3.md", mime_type="text/markdown", text="# Q3\nAll good."
            ),
        )
        chart = types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///reports/q3.png",
                mime_type="image/png",
                blob=base64.b64encode(PNG).decode(),
            ),
        )
        link = types.ResourceLink(
            type="resource_link",
            uri="file:///reports/q2.md",
            name="q2.md",
            description="Last quarter's report",
            mime_type="text/markdown",
        )
        return types.CallToolResult(content=[report, chart, link])

    async def add_tool(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        name = str(args["name"])

        async def echo(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
            return text(f"{name}: {args.get('message', '')}")

        self.add(name, f"Echoes a message ({name}).", obj({"message": {"type": "string"}}), echo)
        await self.changed(ctx)
        return text(f"added {name}")

    async def remove_tool(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        self.tools.pop(str(args["name"]), None)
        await self.changed(ctx)
        return text(f"removed {args['name']}")

    async def pid(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return text(str(os.getpid()))

    async def crash(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        key, token = os.environ.get("OPENAI_API_KEY", ""), os.environ.get("SERVICE_TOKEN", "")
        sys.stderr.write(f"fatal: OPENAI_API_KEY={key}\nthe service refused token {token}\n")
        sys.stderr.flush()
        os._exit(3)

    async def lookup(self, ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return text(f"found {len(args['code'])} characters, ref {args.get('ref', '-')}")

    def generated(self, index: int) -> None:
        things = ["contact", "invoice", "ticket", "meeting", "deal", "campaign", "product", "order"]
        verbs = ["create", "update", "delete", "list", "archive"]
        thing = things[index % len(things)]
        verb = verbs[(index // len(things)) % len(verbs)]
        name = f"crm_{verb}_{thing}_{index}"

        async def run(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
            return text(f"{name} done for {args.get('id', '?')}")

        self.add(
            name,
            f"{verb.capitalize()} a {thing} record in the CRM (variant {index}).",
            obj({"id": {"type": "string", "description": f"The {thing}'s id."}}),
            run,
        )

    # -- serving ------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        options = self.server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read, write):
            await self.server.run(read, write, options)

    async def serve_http(self) -> None:
        import uvicorn

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        app = self.server.streamable_http_app()

        class Announcing(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets)
                print(f"listening on {port}", flush=True)

        await Announcing(uvicorn.Config(app, log_level="warning")).serve(sockets=[listener])


def report_rows() -> list[dict[str, Any]]:
    return [
        {"region": f"region {n:03d}", "units": n * 7, "revenue": n * 91.5}
        for n in range(REPORT_ROWS)
    ]


def report_table() -> str:
    """The report's rows as a Markdown table (a text that does not repeat the data)."""
    lines = ["| region | units | revenue |", "|---|---|---|"]
    lines += [f"| {r['region']} | {r['units']} | {r['revenue']:.2f} |" for r in report_rows()]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--malformed", action="store_true")
    parser.add_argument("--unreadable", action="store_true")
    options = parser.parse_args(argv)
    extra = (MALFORMED if options.malformed else []) + ([UNREADABLE] if options.unreadable else [])
    if extra:
        allow_malformed_listings()
    server = TestServer(options.many, options.page_size, extra)
    anyio.run(server.serve_stdio if options.transport == "stdio" else server.serve_http)


if __name__ == "__main__":
    main(sys.argv[1:])
