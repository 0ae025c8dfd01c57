"""The seam a durable runner (``agents.durable``) drives a run's tool calls through.

A durable run records each tool call as a step of its workflow, so a process that
recovers the run replays finished calls from the record instead of running them again.
The runner is installed for one run in a context variable (``RUNNER``); every task the
run starts copies it. While no runner was ever installed (``active`` is False), the
stages pay one module-attribute check and nothing else: the plain path stays as fast.

This module imports nothing of a durable engine: the runner brings it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext
    from toolchain._result import ToolCall, ToolCallError, ToolResult
    from toolchain._tool import Tool

__all__ = ["RUNNER", "StepRunner", "activate", "active", "current", "installed", "stepped"]

T = TypeVar("T")

Invoked = tuple["ToolResult[object] | None", "ToolCallError | None"]


class StepRunner(Protocol):
    """What a durable engine does at the points where a run reads the outside world."""

    def reserve(self, ctx: ExecutionContext, call: ToolCall) -> object:
        """Called as a call enters the chain, in the action's call order, before anything
        in the call can suspend: the place the call's step takes in the record."""
        ...

    def run_tool(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        tool: Tool[Any, Any],
        slot: object,
        run: Callable[[], Awaitable[Invoked]],
    ) -> Awaitable[Invoked]:
        """Run ``run`` (the tool, validated and called) as the call's step at ``slot``."""
        ...

    def recorded(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        slot: object,
        tools: Mapping[str, Tool[Any, Any]],
    ) -> Awaitable[Invoked | None]:
        """The outcome the record holds for the call at ``slot``, asked when the code now
        would not run it (its tool unknown, a limit or a hook refusing it): a call that
        finished before a crash replays as recorded, whatever the code says since;
        ``None`` when the record has nothing for it. ``tools``: the chain's, by name."""
        ...

    def step(self, name: str, make: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Run ``make()`` (a model call, say) as a step named ``name``; its result is
        recorded, and a replay returns the record without calling ``make``."""
        ...

    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before making again a model call whose ``attempt``-th try
        (from 1) raised ``error``; ``None``: give up and let ``error`` end the call."""
        ...

    def sequential(self, tools: Sequence[Tool[Any, Any] | None]) -> bool:
        """Whether an action of these tools must run one call at a time (a call that
        makes steps of its own, such as a sub-agent, would interleave them)."""
        ...

    def today(self) -> dt.date:
        """The date the run started on, recorded: its prompts say the same on replay."""
        ...

    def new_id(self) -> str | None:
        """A stored value's id, the same when the run is replayed; ``None``: a random one."""
        ...


RUNNER: ContextVar[StepRunner | None] = ContextVar("toolchain.step_runner", default=None)

active = False
"""True once a runner was installed in this process: only then is ``RUNNER`` read."""


def activate() -> None:
    """Note that runners exist in this process (the engine calls it once)."""
    global active
    active = True


def current() -> StepRunner | None:
    """The runner of the run this code runs in, if any (cheap while none exists)."""
    return RUNNER.get() if active else None


@contextmanager
def installed(runner: StepRunner) -> Generator[None]:
    """Drive the tool calls of the code inside (and of every task it starts) through ``runner``."""
    activate()
    token = RUNNER.set(runner)
    try:
        yield
    finally:
        RUNNER.reset(token)


async def stepped(
    ctx: ExecutionContext,
    call: ToolCall,
    tool: Tool[Any, Any],
    run: Callable[[], Awaitable[Invoked]],
) -> Invoked:
    """``run`` (the tool, validated and called) as ``call``'s step in a durable run, its
    place drawn now; plainly otherwise. For a call made where nothing can suspend
    between its place and its run (a decided call, a composite's sub-call): a chain's
    own call draws its place as it enters the chain (``reserve``), runs it later."""
    runner = current()
    slot = runner.reserve(ctx, call) if runner is not None else None
    if runner is None or slot is None:
        return await run()
    return await runner.run_tool(ctx, call, tool, slot, run)
