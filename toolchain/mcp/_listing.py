"""A guard on an MCP connection: one malformed tool in ``tools/list`` is left out, not the
server.

The SDK checks a ``tools/list`` answer as a whole, so one tool with a null name, an
input schema that is not an object, or ``"required": "a"`` made the whole listing fail
(and ``connect()`` with it). Over stdio, an answer nested deeper than the SDK's JSON
parser takes (about 200 levels) was dropped as unreadable, and the listing waited until
the connection timed out. The guard sits between the transport and the session: it
notes the ids of the ``tools/list`` requests going out and checks each tool of their
answers coming in, before the SDK sees them. A tool is left out, with a warning naming
it and saying why, when:

- it is not an object, or its name is not a non-empty string;
- its ``inputSchema`` is not an object of ``"type": "object"``, its ``properties`` is
  not an object of schemas, or its ``required`` is not a list of names (what the
  2025-11-25 protocol requires; later versions are looser, but a model's API rejects
  such a schema, and with it every request that offers the tool);
- its ``inputSchema`` nests more than ``MAX_SCHEMA_DEPTH`` levels;
- the SDK's own model of a tool for the protocol version in use rejects it.

An answer over stdio that the SDK cannot parse (too deep) is parsed here instead, its
deep tools left out; one that cannot be read at all fails the listing at once, saying
so. Over HTTP the SDK keeps no text of an answer it cannot parse: the listing fails at
once with its message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Callable
from types import TracebackType
from typing import Any, Final, cast

import mcp_types
import pydantic
from mcp.shared.message import SessionMessage
from mcp_types import methods

from toolchain._redact import logger
from toolchain._syntax._nesting import MAX_DEPTH

__all__ = ["MAX_SCHEMA_DEPTH", "ListingGuard"]

_log = logger("toolchain.mcp")

MAX_SCHEMA_DEPTH: Final = MAX_DEPTH
"""Levels an input schema may nest (objects and arrays): as deep as arguments may go."""

_LISTING = "tools/list"


class ListingGuard:
    """Checks the ``tools/list`` answers of one connection (see the module text).

    ``server`` names the server in warnings (read when one is written: the name may
    come with the handshake). Set ``version`` to the protocol version once agreed.
    """

    def __init__(self, server: Callable[[], str]) -> None:
        self._server = server
        self.version: str | None = None
        self._pending: set[object] = set()

    @contextlib.asynccontextmanager
    async def guard(
        self, transport: contextlib.AbstractAsyncContextManager[Any]
    ) -> AsyncGenerator[Any, None]:
        """``transport`` with its streams watched."""
        async with transport as (read, write):
            yield _Read(read, self), _Write(write, self)

    def sent(self, item: object) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == _LISTING:
            self._pending.add(message.id)

    def received(self, item: object) -> object:
        """``item`` as the session should see it."""
        if not self._pending:  # nearly every message: no listing under way
            return item
        if isinstance(item, SessionMessage):
            message = item.message
            if isinstance(message, mcp_types.JSONRPCResponse) and message.id in self._pending:
                self._pending.discard(message.id)
                self._screen(message.result)
            elif isinstance(message, mcp_types.JSONRPCError) and message.id in self._pending:
                self._pending.discard(message.id)
            return item
        if isinstance(item, pydantic.ValidationError):
            return self._salvaged(item) or item
        return item

    def _screen(self, result: object) -> None:
        """Leave the malformed tools out of a listing's ``result`` (in place: it is the
        dict just parsed from this message)."""
        if not isinstance(result, dict):
            return
        answer = cast("dict[str, object]", result)
        tools = answer.get("tools")
        if not isinstance(tools, list):
            return
        kept: list[object] = []
        envelope = {key: value for key, value in answer.items() if key != "tools"}
        for number, tool in enumerate(cast("list[object]", tools), 1):
            problem = self._problem(tool, envelope)
            if problem is None:
                kept.append(tool)
                continue
            _log.warning(
                "the MCP server %s lists a tool it cannot offer, %s: %s; that tool is left "
                "out, the others are kept",
                self._server(),
                _label(tool, number),
                problem,
            )
        answer["tools"] = kept

    def _problem(self, tool: object, envelope: dict[str, object]) -> str | None:
        if not isinstance(tool, dict):
            return "it is not an object"
        fields = cast("dict[str, object]", tool)
        name = fields.get("name")
        if not isinstance(name, str) or not name:
            return "its name is not a string"
        schema = fields.get("inputSchema")
        if not isinstance(schema, dict):
            return "its inputSchema is not an object"
        input_schema = cast("dict[str, object]", schema)
        if input_schema.get("type") != "object":
            return 'its inputSchema does not have "type": "object"'
        properties = input_schema.get("properties")
        if properties is not None and not (
            isinstance(properties, dict)
            and all(
                isinstance(v, dict | bool) for v in cast("dict[str, object]", properties).values()
            )
        ):
            return "its inputSchema's properties is not an object of schemas"
        required = input_schema.get("required")
        if required is not None and not (
            isinstance(required, list)
            and all(isinstance(item, str) for item in cast("list[object]", required))
        ):
            return "its inputSchema's required is not a list of names"
        if _nests_deeper(input_schema, MAX_SCHEMA_DEPTH):
            return f"its inputSchema nests more than {MAX_SCHEMA_DEPTH} levels"
        try:
            if self.version is not None:
                alone: dict[str, object] = {**envelope, "tools": [tool]}  # as if listed alone
                methods.validate_server_result(_LISTING, self.version, alone)
            else:
                mcp_types.Tool.model_validate(tool, by_name=False)
        except pydantic.ValidationError as error:
            first = error.errors(include_input=False, include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"][2:]) or "(the tool)"
            return f"{where}: {first['msg']}"
        except (KeyError, ValueError):  # a version the SDK has no model of: theirs to check
            return None
        except RecursionError:
            return "it nests too deeply"
        return None

    def _salvaged(self, error: pydantic.ValidationError) -> SessionMessage | None:
        """A listing the SDK could not parse (over stdio its text comes with the error),
        parsed here with its malformed tools left out; or, when it cannot be read, an
        error answer for the listing waiting for it."""
        raw = _unparsed_text(error)
        if raw is None:
            return None
        try:
            parsed: object = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        message = cast("dict[str, object]", parsed) if isinstance(parsed, dict) else {}
        id = message.get("id")
        if id not in self._pending:
            if len(self._pending) != 1 or message:  # not a listing's answer
                return None
            id = next(iter(self._pending))
        self._pending.discard(id)
        if "result" in message:
            self._screen(message["result"])
            try:
                parsed_message = mcp_types.jsonrpc_message_adapter.validate_python(
                    message, by_name=False
                )
            except (pydantic.ValidationError, RecursionError):
                pass
            else:
                return SessionMessage(parsed_message)
        why = "the answer to tools/list could not be read (it nests too deeply or is not JSON)"
        _log.warning("the MCP server %s: %s", self._server(), why)
        failure = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=why)
        return SessionMessage(
            mcp_types.JSONRPCError(jsonrpc="2.0", id=cast(Any, id), error=failure)
        )


class _Read:
    """The transport's read stream, each item passed through the guard."""

    def __init__(self, inner: Any, guard: ListingGuard) -> None:
        self._inner = inner
        self._guard = guard

    @property
    def last_context(self) -> object:
        """The sender's context of the last item, where the transport keeps one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> object:
        return self._guard.received(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> object:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Read:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()


class _Write:
    """The transport's write stream, each request noted by the guard."""

    def __init__(self, inner: Any, guard: ListingGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def send(self, item: object, /) -> None:
        self._guard.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Write:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()


def _unparsed_text(error: pydantic.ValidationError) -> str | None:
    """The text a JSON parse failed on, as pydantic keeps it in the error."""
    problems = error.errors(include_url=False)
    if len(problems) != 1 or problems[0]["type"] != "json_invalid":
        return None
    text = problems[0].get("input")
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text if isinstance(text, str) else None


def _nests_deeper(value: object, limit: int) -> bool:
    """Whether ``value`` holds objects or arrays more than ``limit`` levels deep (one walk,
    no recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(cast("dict[str, object]", node).values())
        elif isinstance(node, list):
            children = cast("list[object]", node)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _label(tool: object, number: int) -> str:
    name = cast("dict[str, object]", tool).get("name") if isinstance(tool, dict) else None
    if isinstance(name, str) and name:
        return repr(name[:100])
    return f"the tool at position {number}"
