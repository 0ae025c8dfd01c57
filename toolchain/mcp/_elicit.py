"""A server's question during a tool call (elicitation), put to the run's approver.

An MCP server may ask the client for input while its tool runs: on a 2026-07-28
connection, the call's answer is an "input required" result (the questions and an
opaque ``request_state``; the client retries the call with the answers), and on an
older one, an ``elicitation/create`` request the server waits on mid-call. Either way
each question becomes an ``ElicitationRequest`` (the server's message and schema, the
tool call it came during, the sub-agents that call was made in) put to the run's
approver, as a call that needs approval is: its answer (``Elicitation.accepted(data)``,
checked against the schema; ``declined()``; ``cancelled()``) is sent, or, with none
(``None``), the call is held and the run pauses with the question in ``pending``.

Resuming a held question: on a 2026-07-28 connection nothing waits, the retry carries
the answer and the ``request_state`` (`Asking` keeps them with the held call). On an
older connection the server waits on its request: the connection stays open and the
request waits in this process for at most `HOLD_TIMEOUT` seconds, after which the
server is told ``cancel`` and the call ends with what the server makes of that.

What lives here: `Asking` (one tool call in flight, for the questions asked during
it), `reply` (a decision as the protocol's answer, the data checked against the
schema) and `answer_legacy` (the ``elicitation/create`` callback of a connection).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from toolchain import _approvals as approvals
from toolchain._context import ExecutionContext
from toolchain._elicitation import Elicitation, ElicitationRequest
from toolchain._errors import ToolError
from toolchain._input import ArgumentsError
from toolchain._redact import logger
from toolchain._result import Approval, ToolCallError
from toolchain.mcp._schema import SchemaCodec

if TYPE_CHECKING:
    import mcp_types

__all__ = ["HOLD_TIMEOUT", "Asking", "Held", "answer_legacy", "reply", "settled"]

_log = logger("toolchain.mcp")

HOLD_TIMEOUT = 600.0
"""Seconds an ``elicitation/create`` request (a pre-2026 connection) waits for its
answer while the run is paused; then the server is told ``cancel``."""


Held = tuple[ElicitationRequest, "asyncio.Future[mcp_types.ElicitResult]"]
"""A question held for a person, and the answer the server waits for (pre-2026)."""


@dataclass(eq=False)
class Asking:
    """One tool call in flight, for the questions its server asks during it: the run
    it is made in, the tool and its arguments, and the chain call around it (its
    approver and clock)."""

    ctx: ExecutionContext | None
    tool: str
    arguments: Mapping[str, object]
    around: approvals.Enclosing | None = field(default_factory=approvals.enclosing.get)
    failed: str = ""
    """Why the call fails whatever the server answers (an answer that did not fit)."""
    held: asyncio.Queue[Held] = field(default_factory=lambda: asyncio.Queue[Held]())
    """Questions of a pre-2026 connection held for a person, each with its answer to come."""
    _group: str = ""
    _keys: itertools.count[int] = field(default_factory=itertools.count)

    def request(self, key: str, params: mcp_types.ElicitRequestFormParams) -> ElicitationRequest:
        """The question ``params`` (the server's ``key`` for it, or one of ours) as an
        `ElicitationRequest` of this call."""
        ctx = self.ctx
        if not self._group:
            self._group = ctx.new_call_id() if ctx is not None else "elicitation"
        requested: object = cast(object, params.requested_schema)
        dump = getattr(requested, "model_dump", None)  # a model in some SDK versions
        if dump is not None:
            requested = dump(by_alias=True, mode="json", exclude_none=True)
        schema = (
            dict(cast("Mapping[str, object]", requested)) if isinstance(requested, Mapping) else {}
        )
        args = dict(self.arguments)
        return ElicitationRequest(
            f"{self._group}/{key or next(self._keys)}",
            self.tool,
            args,
            via=approvals.via_of(ctx) if ctx is not None else (),
            digest=approvals.args_digest(args),
            run_id=ctx.run_id if ctx is not None else "",
            message=params.message,
            schema=schema,
        )

    async def decide(self, request: ElicitationRequest) -> Approval | ToolCallError | None:
        """The run's approver's answer to ``request`` (``None``: nobody can answer now)."""
        ctx, around = self.ctx, self.around
        if ctx is None:  # a direct call, outside any run: nobody to ask, nothing to pause
            return Elicitation.declined("no run to ask")
        return await approvals.decide(
            ctx,
            request,
            default=around.approve if around is not None else None,
            stop_clock=around.stop_clock if around is not None else None,
            start_clock=around.start_clock if around is not None else None,
        )


def reply(decision: Approval, request: ElicitationRequest) -> mcp_types.ElicitResult:
    """``decision`` as the protocol's answer to ``request``; ``ToolError`` when its data
    does not fit the server's schema (saying which field and why)."""
    import mcp_types

    if isinstance(decision, Elicitation) and decision.action == "cancel":
        return mcp_types.ElicitResult(action="cancel")
    if not decision.approved:  # declined, or an Approval denied
        return mcp_types.ElicitResult(action="decline")
    data = decision.data if isinstance(decision, Elicitation) else None
    try:
        content = SchemaCodec(request.schema, request.tool).validate(data or {})
    except ArgumentsError as error:
        raise ToolError(
            f"the answer to the MCP server's question for {request.tool} "
            f"({request.message[:200]!r}) does not fit the schema it asked for: {error}; "
            "the question was cancelled"
        ) from None
    return mcp_types.ElicitResult.model_validate({"action": "accept", "content": content})


async def answer_legacy(
    calls: list[Asking], params: mcp_types.ElicitRequestFormParams
) -> mcp_types.ElicitResult:
    """The answer to an ``elicitation/create`` request of a pre-2026 connection, asked
    during the call in flight (the latest, when several are: the protocol does not say
    which one asked). Held (nobody to answer now): the call's `Asking.held` gets it,
    and it waits for the decision at most `HOLD_TIMEOUT` seconds."""
    import mcp_types

    if not calls:
        _log.warning("an MCP server asked for input outside any tool call; it is declined")
        return mcp_types.ElicitResult(action="decline")
    asking = calls[-1]
    request = asking.request("", params)
    decided = await asking.decide(request)
    if decided is None:
        answer: asyncio.Future[mcp_types.ElicitResult] = asyncio.get_running_loop().create_future()
        asking.held.put_nowait((request, answer))
        try:
            return await asyncio.wait_for(asyncio.shield(answer), HOLD_TIMEOUT)
        except TimeoutError:
            _log.warning(
                "the question of %s waited %g s for an answer; the MCP server is told cancel",
                request.tool,
                HOLD_TIMEOUT,
            )
            return mcp_types.ElicitResult(action="cancel")
    return settled(asking, decided, request)


def settled(
    asking: Asking, decided: Approval | ToolCallError, request: ElicitationRequest
) -> mcp_types.ElicitResult:
    """The answer sent for ``decided``; a failure (the approver failed, the data did
    not fit) cancels the question and fails the call with it (`Asking.failed`)."""
    import mcp_types

    if isinstance(decided, ToolCallError):
        asking.failed = decided.message
        return mcp_types.ElicitResult(action="cancel")
    try:
        return reply(decided, request)
    except ToolError as error:
        asking.failed = str(error)
        return mcp_types.ElicitResult(action="cancel")
