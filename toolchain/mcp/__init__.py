# toolchain.mcp: an extension package; the tools of an MCP server as this library's Tools.
#
# What lives here, one job a module (each imports only those listed before it):
#   _names       tool and section names made from a server's own
#   _failures    MCPConnectionError; a connection's credentials blanked in messages and causes
#   _schema      SchemaCodec: arguments checked against a server's JSON Schema (patterns on RE2)
#   _results     a CallToolResult as a ToolResult (structured output, text, media)
#   _listing     the transport guard that leaves a malformed listed tool out, not the server
#   _transport   where a server is (stdio command, HTTP URL) and its stderr file
#   _events      MCPToolCalled: what a call tells observers (ctx.events)
#   _tool        MCPTool, and what it asks of its server (ToolHost)
#   _tool_list   the tool list: every page listed, registered on chains, re-listed on change
#   _elicit      a server's question during a call, put to the run's approver (or held)
#   _connection  one connection, in a task of its own: opened, kept, ended, closed
#   _calling     one tool call and every failure of it, as the call's ToolError
#   _server      MCPServer: the options, the extension, and the rest delegated
#
# May import: the toolchain core through its own modules (toolchain._tool, _result,
# _errors, _context, _extension, _redact, _input, _content, _syntax, _approvals,
# _elicitation; chain and _events for types only); the MCP SDK (mcp, mcp_types,
# httpx2, jsonschema) only inside the functions that connect, or under TYPE_CHECKING:
# importing toolchain.mcp must not import it. Never agents, never another extension.
"""The tools of an MCP server as this library's ``Tool`` s (extra ``[mcp]``).

``MCPServer`` connects to a Model Context Protocol server, over stdio (a command it
starts) or streamable HTTP (a URL), with the official ``mcp`` SDK, and offers each of
the server's tools as an ``MCPTool``: registered on any chain, called by either agent,
indexed by ``ToolSearch``, boxed by ``ContextRelay`` like any other tool. Importing
this module does not import the SDK; connecting does.

A whole agent run inside one connection::

    import asyncio

    from agents import ToolCallingAgent
    from toolchain import JSONToolChain
    from toolchain.mcp import MCPServer

    async def main() -> None:
        server = MCPServer.stdio("npx", ["-y", "@modelcontextprotocol/server-everything"])
        async with server:  # starts it, handshakes, lists every page of tools
            chain = server.attach(JSONToolChain())  # its tools, kept up to date
            agent = ToolCallingAgent("openai:gpt-4.1-mini", tool_chain=chain)
            result = await agent.run("What is 2 + 40? Use get-sum.")
            print(result.answer)
        # closed: the session ended and the process is gone

    asyncio.run(main())

``MCPServer.http("http://127.0.0.1:8000/mcp", headers={...})`` reaches a running server
the same way. ``ToolSearch(ToolIndex(server.tools()))`` lets a model find the few it
needs among hundreds (it indexes the tools listed when it is built). ``attach`` makes
the server one of the chain's extensions; ``extensions=[server]`` on an agent works
too, without the tools the server adds later.

What the model sees and what a call gives:

- the tool's description and its input schema exactly as the server gave them, in the
  text-mode listing and in native specs. Arguments are validated against that schema
  (``jsonschema``, its patterns on RE2: linear time) before anything is sent: a bad
  call is answered at once, field by field
  (``invalid arguments for weather: city: required field is missing``).
- the result: ``structuredContent`` is the typed output (``ToolResult.text``) when the
  server sends it, and text repeating it is dropped (other text is a ``TextContent``
  part beside it); otherwise the text, or a list of text and resource entries
  (``{"type": "resource_link", "uri": ...}``) when it sent resources. Images, audio and
  binary resources are media (``ImageContent`` …), sent beside the observation.
- a tool the server lists that no client could offer (a null name, a malformed input
  schema) is left out with a warning; the others are kept. Messages and logs never
  show the connection's credentials.
- an ``isError`` result is that call's ``ToolError``, with the server's message. So are
  a connection that closes or a transport that fails during the call (the message
  says so, quoting the end of a stdio server's stderr), and a tool the server no
  longer offers; the chain's time limit stops a call like any other (the server is
  told to cancel it). Other calls, finished or still running, keep their results, and
  the run goes on.
- a question the server asks during a call (elicitation) reaches the run's
  ``approve=`` callback as an ``ElicitationRequest`` and is answered there, or pauses
  the run until ``resume`` sends the answer (``toolchain.mcp._elicit``).
- when the server announces that its tool list changed, the list is fetched again;
  attached chains get the new tools, and at the next step an agent offers the tools
  the server offers then.

Tools must be called on the event loop that connected the server (``await agent.run``,
not ``run_sync``, inside ``async with``).
"""

from __future__ import annotations

from toolchain.mcp._events import MCPToolCalled
from toolchain.mcp._failures import MCPConnectionError
from toolchain.mcp._schema import SchemaCodec
from toolchain.mcp._server import MCPServer, ServerOptions
from toolchain.mcp._tool import MCPTool

__all__ = [
    "MCPConnectionError",
    "MCPServer",
    "MCPTool",
    "MCPToolCalled",
    "SchemaCodec",
    "ServerOptions",
]
