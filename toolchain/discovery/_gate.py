"""The gate on every call: a tool not found yet is refused until a search finds it.

``Gate`` is a guard (``ToolHook.guard_tool_call``), so it holds however deep a call is
made in the run it belongs to: a composite's sub-call too. A call to a deferred tool
that no search found is answered "not active — search for it", with a query that finds
it. A tool a search named among its other matches is callable as it is, as any model
expects of a name it was shown: its first call makes it active, and runs if its
arguments validate; if they do not, the call is answered with them and the tool's
parameters, which the model has not seen yet (a schema compacted as searches show it).
After a search, what its answer made callable is made so again from the answer
(``take_up``): a durable run replays a recorded search without running it, but runs
the hooks.

Approvals are not the gate's: the tools that ``requires_confirmation`` are gated by
name in the core (``toolchain._approvals.gate_by_name``, from ``ToolSearch.install``),
held and resumed as any tool that ``requires_approval`` is.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from toolchain._context import ExecutionContext
from toolchain._hooks import ToolCallRefused, ToolHook
from toolchain._input import ArgumentsError
from toolchain._result import ToolCall, ToolResult
from toolchain.discovery._activation import Discovery, discovery
from toolchain.discovery._found import take_up
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._quoting import quoted
from toolchain.discovery._search_tool import SearchTool

__all__ = ["Gate", "Gatekeeper"]


class Gatekeeper(Protocol):
    """What the gate reads from its ``ToolSearch``, as it is at each call."""

    @property
    def index(self) -> ToolIndex: ...

    @property
    def defers(self) -> bool: ...

    @property
    def deferred(self) -> frozenset[str]: ...

    async def suggestion(self, name: str) -> str: ...


class Gate(ToolHook):
    """Holds back calls to tools not found yet in its own run (``home``); notes the
    index tools that ran (``ToolSearch.used``) and the tools each search's answer made
    callable. A child run (a sub-agent's) has tools of its own: the gate leaves its
    calls alone."""

    def __init__(self, owner: Gatekeeper, home: ExecutionContext) -> None:
        self.owner = owner
        # The run's state bag, not the context (no cycle through ctx.hooks), nor its id
        # (drawn from the OS when first read: a run that never reads it draws none).
        self.home = home.state

    def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
        owner = self.owner
        # The tool first: most calls are of tools never deferred, and the set answers
        # before the run is compared.
        if call.name not in owner.deferred or not owner.defers or ctx.state is not self.home:
            return None
        state = discovery(ctx)
        if call.name in state.active:
            return None
        if call.name in state.named:
            self._take_named(state, call)  # refused here if its arguments do not validate
            return None
        return self._refuse(call)

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        owner = self.owner
        if call.name in owner.index.tools:
            discovery(ctx).used[call.name] = None
        elif call.name == SearchTool.name and owner.defers and ctx.state is self.home:
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
            schema = self.owner.index.prompt_schema(tool)
            if state.protocol == "text":  # its parameters are in the conversation now
                state.described[call.name] = None
            parameters = msgspec.json.encode(schema).decode()
            raise ToolCallRefused(
                f"{error}. Its parameters: {parameters}", kind="invalid_arguments"
            ) from error
        except Exception:  # not the arguments: the chain validates again as the call runs,
            return  # and reports what went wrong as it does for any tool

    async def _refuse(self, call: ToolCall) -> None:
        query = await self.owner.suggestion(call.name)
        raise ToolCallRefused(
            f"{call.name} is not active: search for it first, e.g. "
            f"tool_search(query={quoted(query)})",
            kind="unknown_tool",
        )
