"""The gate on every call: a tool not found yet is refused, one that needs approval waits.

``Gate`` is a guard (``ToolHook.guard_tool_call``), so it holds however deep a call is
made: a composite's sub-call, a sub-agent's call (its context is a child of this
run's), a composite inside a sub-agent. A call to a deferred tool that no search
found is answered "not active — search for it", with a query that finds it. A tool a
search named among its other matches is callable as it is, as any model expects of a
name it was shown: its first call makes it active, and runs if its arguments validate;
if they do not, the call is answered with them and the tool's parameters, which the
model has not seen yet (a schema compacted as searches show it). A call to
a tool that ``requires_confirmation`` goes to the approver; with no decision it is held
(sealed, in the outermost run's state) and pauses every run from the one that made it
up to the outermost, for the person that run answers to. After a search, what its answer
made callable is made so again from the answer (``take_up``): a durable run replays a
recorded search without running it, but runs the hooks.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol

import msgspec

from toolchain._approvals import via_of
from toolchain._context import ExecutionContext
from toolchain._hooks import ToolCallRefused, ToolHook
from toolchain._input import ArgumentsError
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolResult
from toolchain.discovery._activation import Discovery, discovery
from toolchain.discovery._approval import ApprovalRequest, Approver
from toolchain.discovery._events import ApprovalChecked, DecidedBy, Outcome
from toolchain.discovery._found import Schemas, take_up
from toolchain.discovery._held import Seal, approvals, held_id, take_decision
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._quoting import quoted
from toolchain.discovery._search_tool import SearchTool

__all__ = ["Gate", "Gatekeeper"]

_log = logger("toolchain")


class Gatekeeper(Protocol):
    """What the gate reads from its ``ToolSearch``, as it is at each call."""

    @property
    def index(self) -> ToolIndex: ...

    @property
    def defers(self) -> bool: ...

    @property
    def deferred(self) -> frozenset[str]: ...

    @property
    def approve(self) -> Approver | None: ...

    @property
    def schemas(self) -> Schemas: ...

    def needs_approval(self, name: str) -> bool: ...

    async def suggestion(self, name: str) -> str: ...


class Gate(ToolHook):
    """Holds back calls to tools not found yet, and calls that wait for approval; notes
    the index tools that ran (``ToolSearch.used``) and the tools each search's answer
    made callable.

    A guard, so it sees every call: in its own run (``home``) it checks both; in a
    child run (a sub-agent's, whose tools are its own) only approvals. Of several
    gates that could approve one call (the same ToolSearch installed in a run and its
    sub-agent), the outermost decides.
    """

    def __init__(self, owner: Gatekeeper, home: ExecutionContext, seal: Seal) -> None:
        self.owner = owner
        self.home = home.run_id  # the id, not the context: no cycle through ctx.hooks
        self.seal = seal

    def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
        owner = self.owner
        if call.name not in owner.index.tools:
            return None
        inactive = owner.defers and ctx.run_id == self.home and call.name in owner.deferred
        if inactive:
            state = discovery(ctx)
            if call.name in state.active:
                inactive = False
            elif call.name in state.named:
                self._take_named(state, call)  # refused here if its arguments do not validate
                inactive = False
        approving = owner.needs_approval(call.name) and self._decides(ctx, call.name)
        if not inactive and not approving:
            return None
        return self._check(ctx, call, inactive)

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        owner = self.owner
        if call.name in owner.index.tools:
            discovery(ctx).used[call.name] = None
        elif call.name == SearchTool.name and owner.defers and ctx.run_id == self.home:
            # A search's answer, live or replayed by a durable run (which skips the
            # search itself): what it made callable stays callable (`take_up`).
            take_up(discovery(ctx), result.text, owner.index, owner.deferred)

    def _take_named(self, state: Discovery, call: ToolCall) -> None:
        """A first call to a tool a search named: the tool is active from now on, and
        the call goes on if its arguments validate; else it is refused with the tool's
        parameters (the model was shown the name only)."""
        tool = self.owner.index.tools[call.name]
        state.active[call.name] = None
        try:
            tool.codec.validate(call.args)
        except ArgumentsError as error:
            schema = self.owner.schemas.of(tool)
            if state.protocol == "text":  # its parameters are in the conversation now
                state.described[call.name] = None
            parameters = msgspec.json.encode(schema).decode()
            raise ToolCallRefused(
                f"{error}. Its parameters: {parameters}", kind="invalid_arguments"
            ) from error
        except Exception:  # not the arguments: the chain validates again as the call runs,
            return  # and reports what went wrong as it does for any tool

    def _decides(self, ctx: ExecutionContext, name: str) -> bool:
        """Whether this gate is the outermost one that approves calls of ``name``."""
        outermost: Gate | None = None
        for guard in ctx.hooks.guard_chain():
            gate = getattr(guard, "__self__", None)
            if isinstance(gate, Gate) and gate.owner.needs_approval(name):
                outermost = gate  # the chain runs from this run outwards
        return outermost is self

    async def _check(self, ctx: ExecutionContext, call: ToolCall, inactive: bool) -> None:
        owner = self.owner
        if inactive:
            query = await owner.suggestion(call.name)
            raise ToolCallRefused(
                f"{call.name} is not active: search for it first, e.g. "
                f"tool_search(query={quoted(query)})",
                kind="unknown_tool",
            )
        info = owner.index.info_of(call.name)
        held = approvals(ctx)
        via = via_of(ctx)
        request = ApprovalRequest(
            held_id(held, call.id), call.name, dict(call.args), info.risk, via
        )
        decision = take_decision(held, request)
        decided_by: DecidedBy = "person"
        if decision is None and owner.approve is not None:
            decided_by = "approver"
            try:
                answer = owner.approve(ctx, request)
                decision = await answer if inspect.isawaitable(answer) else answer
            except Exception as error:
                _log.warning("the approval callback failed on %s", call.name, exc_info=error)
                raise ToolCallRefused(
                    f"{call.name} needs approval, and asking for it failed "
                    f"({type(error).__name__}); do not retry it now"
                ) from error
        if decision is None:
            held.pending[request.call_id] = self.seal.hold(request)
            where = f" in {' > '.join(via)}" if via else ""
            reason = f"{call.name} (call {request.call_id}{where}) is waiting for approval"
            _pause_outwards(ctx, reason)
            if ctx.events.has_subscribers(ApprovalChecked):
                ctx.events.emit(ApprovalChecked(ctx, call.id, request, "held"))
            raise ToolCallRefused(
                f"{call.name} needs a person's approval; it is held and the run pauses "
                "until they decide. You will be told the decision."
            )
        if ctx.events.has_subscribers(ApprovalChecked):
            outcome: Outcome = "approved" if decision.approved else "denied"
            checked = ApprovalChecked(ctx, call.id, request, outcome, decided_by, decision.reason)
            ctx.events.emit(checked)
        if not decision.approved:
            why = f": {decision.reason}" if decision.reason else ""
            raise ToolCallRefused(f"{call.name} was not approved{why}. Do not call it again")


def _pause_outwards(ctx: ExecutionContext, reason: str) -> None:
    """Pause the run of ``ctx`` and every run it is nested in: a sub-agent's held call
    stops its parent too, for the person the outermost run answers to."""
    current: ExecutionContext | None = ctx
    while current is not None:
        current.pause(reason)
        current = current.parent
