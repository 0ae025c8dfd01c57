"""`StepRunner`: one durable run's steps on DBOS, behind the seam of `toolchain._step_seam`.

Each model call is a step; each tool call is two: a mark that it started, then its
outcome. A replay returns recorded outcomes without calling anything; a call whose mark
is recorded but whose outcome is not was cut off by a crash: it runs again only when
its tool is ``idempotent``, otherwise its outcome is an error telling the model so.

Step places (DBOS step ids) are drawn in an order every replay repeats: a call's two
places when it enters the chain, in the action's call order (``reserve``); an action
with a sub-agent in it runs one call at a time (``sequential``), since a sub-agent's
own steps are drawn as it goes. A call nested in another call's step (a composite's
sub-calls) runs inside that step, as plain code.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
import pickle
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from dbos import DBOS, StepReservation

from agents.durable._retries import ModelRetries
from agents.prompt import AgentTool
from toolchain import (
    ExecutionContext,
    Tool,
    ToolCall,
    ToolCallError,
    ToolResult,
    describe_exception,
)

__all__ = ["INTERRUPTED", "StepRunner", "in_workflow"]

T = TypeVar("T")

_CALL: ContextVar[str] = ContextVar("agents.durable.call", default="")
"""The call whose stages run in this task: stored values it makes are named after it."""
Invoked = tuple[ToolResult[object] | None, ToolCallError | None]

INTERRUPTED = (
    "{tool} was interrupted: the process running it stopped before it finished, so it "
    "may or may not have taken effect. It was not run again (the tool is not marked "
    "idempotent). Check its effect before calling it again."
)


def in_workflow() -> bool:
    """Whether this code runs in a DBOS workflow and not inside one of its steps."""
    return DBOS.workflow_id is not None and DBOS.step_id is None


class StepRunner:
    """The steps of one execution of one durable run's workflow."""

    def __init__(self, today: dt.date, seed: bytes, *, retries: ModelRetries | None = None) -> None:
        self._today = today
        self._seed = seed
        self._retries = retries or ModelRetries()
        self._ids: Counter[str] = Counter()
        self.approvals = asyncio.Lock()
        """Approvals wait one at a time, in the order calls ask: their messages take
        the same places in the record on every replay."""

    def today(self) -> dt.date:
        return self._today

    def step(self, name: str, make: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        if not in_workflow():
            return make()

        async def body() -> T:
            return await make()

        return DBOS.run_step_async({"name": name}, body)

    def reserve(self, ctx: ExecutionContext, call: ToolCall) -> object:
        if not in_workflow():
            return None
        _CALL.set(f"{ctx.name}/{call.id}")
        return _Slot(DBOS.reserve_step(), DBOS.reserve_step())

    async def run_tool(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        tool: Tool[Any, Any],
        slot: object,
        run: Callable[[], Awaitable[Invoked]],
    ) -> Invoked:
        if not isinstance(slot, _Slot) or isinstance(tool, AgentTool) or not in_workflow():
            return await run()  # a sub-agent's steps are its own; nested calls are plain
        mark, outcome = slot.mark, slot.outcome
        started_here = False

        async def started() -> bool:
            nonlocal started_here
            started_here = True
            return True

        await mark.run_async({"name": f"tool-started:{tool.name}"}, started)

        async def body() -> _Outcome:
            if not started_here and not tool.idempotent:
                # The mark was recorded by a process that died before the outcome was.
                return _Outcome(None, "tool_error", INTERRUPTED.format(tool=tool.name))
            result, error = await run()
            if error is not None:
                return _Outcome(None, error.kind, error.message)
            try:  # DBOS records by pickling: fail this call alone, as the record will say
                pickle.dumps(result)
            except Exception as failed:
                why = f"{tool.name} returned a result that cannot be recorded for a durable run"
                return _Outcome(None, "output_error", f"{why}: {describe_exception(failed)}")
            return _Outcome(result, None, "")

        recorded = await outcome.run_async({"name": f"tool:{tool.name}"}, body)
        if recorded.kind is None:
            return recorded.result, None
        return None, ToolCallError(recorded.kind, recorded.message)

    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        return self._retries.delay(error, attempt)

    def sequential(self, tools: Sequence[Tool[Any, Any] | None]) -> bool:
        return any(isinstance(tool, AgentTool) for tool in tools) and in_workflow()

    def new_id(self) -> str | None:
        """An id derived from the run's recorded seed and the call that stores the value:
        unguessable, and the same on replay whatever order concurrent calls finish in."""
        if DBOS.workflow_id is None:
            return None
        key = _CALL.get()
        self._ids[key] += 1
        named = f"{key}#{self._ids[key]}".encode()
        digest = hmac.new(self._seed, named, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class _Slot:
    """A call's two places in the record: the mark that it started, and its outcome."""

    mark: StepReservation
    outcome: StepReservation


@dataclass(frozen=True, slots=True)
class _Outcome:
    """A tool call's recorded outcome: its result, or its error's kind and message (the
    exception behind an error stays in the process that ran it: it may not pickle)."""

    result: ToolResult[object] | None
    kind: Any  # ToolCallError's kind, or None for a result
    message: str
