"""`StepRunner`: one durable run's steps on DBOS, behind the step seam of `toolchain.runtime`.

Each model call is a step; each tool call is two: a mark that it started, then its
outcome. A replay returns recorded outcomes without calling anything; a call whose mark
is recorded but whose outcome is not was cut off by a crash: it runs again only when
its tool is ``idempotent``, otherwise its outcome is an error telling the model so.

Step places (DBOS step ids) are drawn in an order every replay repeats: a call's two
places when it enters the chain, in the action's call order (``reserve``); an action
with a sub-agent or a composite tool in it runs one call at a time (``sequential``),
since their calls' steps are drawn as they go: a sub-agent's calls and a composite's
sub-calls are steps of their own, the sub-agent's or composite's call itself plain code.

A call held for a person (``toolchain.runtime.CallHeld``: an MCP server's question, a
composite's gated sub-call) is recorded as held, not as its outcome: it had no effect
(what ran before the hold are steps of their own), so a replay makes it again, to be
held again and settled by the decision the workflow recorded; the call that settles it
is a step of its own (``toolchain.chain._resume``).

A finished step replays as recorded whatever the code says now. A replay knows the
name each step was recorded under (``record``, read once when the run is recovered):
a step of the same kind under another name (the model string changed, a tool was
renamed) replays its record, with a warning; a call the code now refuses (its tool
unknown, a hook refusing it) replays its recorded outcome (``recorded``). A step of
another kind than recorded means the code no longer takes the path the record took:
the run stops with a `ReplayError` (nothing is called from then on) naming the change
and the ways to continue. Everything recorded is plain data (``_record``).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from dbos import DBOS, StepReservation

from agents._errors import AgentTypeError
from agents.durable._errors import DurableError, RecordError, ReplayError
from agents.durable._record import (
    Start,
    decode_outcome,
    decode_response,
    encode_outcome,
    encode_response,
)
from agents.durable._retries import ModelRetries
from agents.durable._serializer import Recorded
from agents.models import ModelResponse
from agents.prompt import AgentTool
from toolchain import ExecutionContext, Tool, ToolCall, ToolCallError, ToolResult
from toolchain.composite import CompositeTool
from toolchain.runtime import describe_exception, held_in, logger

__all__ = ["INTERRUPTED", "MAX_OUTPUT_BYTES", "StepRunner", "fork", "in_workflow"]

T = TypeVar("T")
_log = logger("agents.durable")

_MAKES_CALLS = (AgentTool, CompositeTool)
"""Tools whose calls make calls of their own, each a step: their own call is plain code."""

_HELD = ToolCallError("held", "held for a person's decision when recorded")
"""What a held call is recorded as (see the module text)."""

_CALL: ContextVar[str] = ContextVar("agents.durable.call", default="")
"""The call whose stages run in this task: stored values it makes are named after it."""
Invoked = tuple[ToolResult[object] | None, ToolCallError | None]

INTERRUPTED = (
    "{tool} was interrupted: the process running it stopped before it finished, so it "
    "may or may not have taken effect. It was not run again (the tool is not marked "
    "idempotent). Check its effect before calling it again."
)

MAX_OUTPUT_BYTES = 16 * 1024 * 1024
"""The largest tool output a durable run records by default: 16 MiB of JSON (about four
million tokens, more than any model reads at once). A larger one fails its call alone
with an ``output_error``; ``DurableAgent(..., max_output_bytes=)`` sets another limit,
up to ``MAX_RECORD_BYTES``."""

FORK = (
    "To finish it as it started, fork it in a process running the code that started "
    "it: DBOS.fork_workflow({run!r}, {next}) keeps its {kept} recorded steps and "
    "replays them (the fork is a new run: agents.durable.retrieve(its workflow_id)). "
    "Forked from an earlier step, the steps from there on are made again by the code "
    "that runs the fork, tool calls included (DBOS.list_workflow_steps({run!r}) lists "
    "them)."
)
"""How to continue a run its record cannot replay: DBOS 3.4 resumes no run that ended
in error, and forks any (`fork` fills it in)."""


def fork(run: str, record: Mapping[int, str]) -> str:
    """`FORK` for the run ``run`` whose recorded steps are ``record``."""
    last = max(record, default=0)
    return FORK.format(run=run, next=last + 1, kept=len(record))


def in_workflow() -> bool:
    """Whether this code runs in a DBOS workflow and not inside one of its steps."""
    return DBOS.workflow_id is not None and DBOS.step_id is None


def _kind(step_name: str) -> str:
    return step_name.partition(":")[0]


class StepRunner:
    """The steps of one execution of one durable run's workflow.

    ``record``: the name each step was recorded under, by step id, when this execution
    replays a run (``None`` for a run starting now: nothing to compare, nothing read).
    """

    def __init__(
        self,
        start: Start,
        *,
        record: Mapping[int, str] | None = None,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        retries: ModelRetries | None = None,
    ) -> None:
        self._today = start.today
        self._seed = start.seed
        self._record = record
        self._max_output = max_output_bytes
        self._retries = retries or ModelRetries()
        self._ids: Counter[str] = Counter()
        self.failure: DurableError | None = None
        """Why the run cannot go on (a `ReplayError`, a record that cannot be read): the
        workflow raises it once the agent's loop has stopped."""
        self.approvals = asyncio.Lock()
        """Approvals wait one at a time, in the order calls ask: their messages take
        the same places in the record on every replay."""

    def today(self) -> dt.date:
        return self._today

    def has_step(self, name: str) -> bool:
        """Whether the record this execution replays has a step named ``name``."""
        return self._record is not None and name in self._record.values()

    # -- model calls -------------------------------------------------------------------

    def step(self, name: str, make: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        if not in_workflow():
            return make()
        return self._model_step(name, make)

    async def _model_step(self, name: str, make: Callable[[], Awaitable[T]]) -> T:
        self._check()
        reservation = DBOS.reserve_step()
        recorded_as = self._name_at(reservation.step_id, name)

        async def body() -> Recorded:
            response = await make()
            if not isinstance(response, ModelResponse):  # the seam's callers make these
                raise AgentTypeError(
                    f"a durable run's step records a ModelResponse, not {response!r}"
                )
            return Recorded(response, encode_response(response))

        done = await self._run(reservation, recorded_as, body)
        if isinstance(done, Recorded):
            return cast(T, done.live)
        return cast(T, self._read(lambda: decode_response(done)))

    # -- tool calls --------------------------------------------------------------------

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
        if not isinstance(slot, _Slot) or isinstance(tool, _MAKES_CALLS) or not in_workflow():
            return await run()  # a sub-agent's or composite's calls are steps of their own
        try:
            return await self._tool_steps(tool, slot, run)
        except DurableError as stopped:  # the run stops at its next model call
            return None, ToolCallError("tool_error", str(stopped))

    async def _tool_steps(
        self, tool: Tool[Any, Any], slot: _Slot, run: Callable[[], Awaitable[Invoked]]
    ) -> Invoked:
        self._check()
        mark_as = self._name_at(slot.mark.step_id, f"tool-started:{tool.name}")
        started_here = False

        async def started() -> bool:
            nonlocal started_here
            started_here = True
            return True

        await self._run(slot.mark, mark_as, started)
        outcome_as = self._name_at(slot.outcome.step_id, f"tool:{tool.name}")
        recorded_tool = outcome_as.partition(":")[2]
        # The mark names the tool that started: another than this one (a hook rewrites
        # the call differently now) is not this tool's to run again.
        again = tool.idempotent and mark_as == f"tool-started:{tool.name}"

        async def body() -> Recorded:
            if not started_here and not again:
                # The mark was recorded by a process that died before the outcome was.
                return self._interrupted(recorded_tool)
            result, error = await run()
            if held_in(error) is not None:  # recorded as held: made again on replay
                return Recorded((result, error), encode_outcome(None, _HELD))
            return self._outcome(tool.name, result, error)

        done = await self._run(slot.outcome, outcome_as, body)
        if isinstance(done, Recorded):
            return cast(Invoked, done.live)
        output_type = tool.output_type if recorded_tool == tool.name else Any
        replayed = self._read(lambda: decode_outcome(done, output_type, recorded_tool))
        if replayed[1] is not None and replayed[1].kind == "held":
            # It was held, with no effect: made again, it is held again (how its
            # decision settles it is live code, not data a record could hold).
            made = await run()
            if held_in(made[1]) is None:
                _log.warning(
                    "%s was held when its run was recorded, and made again in a replay it "
                    "was not: its outcome now is not recorded",
                    tool.name,
                )
            return made
        return replayed

    async def recorded(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        slot: object,
        tools: Mapping[str, Tool[Any, Any]],
    ) -> Invoked | None:
        if not isinstance(slot, _Slot) or self._record is None or not in_workflow():
            return None
        mark = self._record.get(slot.mark.step_id, "")
        outcome = self._record.get(slot.outcome.step_id, "")
        if _kind(outcome) != "tool" and (outcome or _kind(mark) != "tool-started"):
            return None  # the call did not reach its steps before either
        name = (outcome or mark).partition(":")[2]
        _log.warning(
            "call %s of run %s: the code now refuses it, but it %s before the process "
            "running the run stopped: its recorded outcome is replayed, it is not run again",
            call.id or name,
            DBOS.workflow_id,
            "finished" if outcome else "started",
        )

        async def cut_off() -> Recorded:  # a mark and no outcome: never run it again
            return self._interrupted(name)

        try:
            done = await self._run(slot.outcome, f"tool:{name}", cut_off)
        except DurableError as stopped:
            return None, ToolCallError("tool_error", str(stopped))
        if isinstance(done, Recorded):
            return cast(Invoked, done.live)
        found = tools.get(name)
        output_type = Any if found is None else found.output_type
        try:
            return self._read(lambda: decode_outcome(done, output_type, name))
        except DurableError as stopped:
            return None, ToolCallError("tool_error", str(stopped))

    def _outcome(
        self, tool: str, result: ToolResult[object] | None, error: ToolCallError | None
    ) -> Recorded:
        """The call's outcome as it is recorded and returned; an output that cannot be
        recorded (not plain data, over the limit) fails the call alone, as it will
        read on replay."""
        try:
            record = encode_outcome(result, error)
        except TypeError as failed:  # OutputError: says what is wrong, not the value
            why = f"{tool} returned a result that cannot be recorded for a durable run"
            return self._failed(
                ToolCallError("output_error", f"{why}: {describe_exception(failed)}")
            )
        if len(record) > self._max_output:
            return self._failed(
                ToolCallError(
                    "output_error",
                    f"{tool} returned {len(record):,} bytes of output; a durable run records "
                    f"at most {self._max_output:,} bytes of one call's output, so the output "
                    "was dropped. Ask for less of it (a narrower query, a page at a time).",
                )
            )
        return Recorded((result, error), record)

    def _interrupted(self, tool: str) -> Recorded:
        return self._failed(ToolCallError("tool_error", INTERRUPTED.format(tool=tool)))

    @staticmethod
    def _failed(error: ToolCallError) -> Recorded:
        return Recorded((None, error), encode_outcome(None, error))

    # -- the record --------------------------------------------------------------------

    def _check(self) -> None:
        """Nothing is called once the run cannot go on."""
        if self.failure is not None:
            raise self.failure

    def _name_at(self, step_id: int, name: str) -> str:
        """The name to run step ``step_id`` under: ``name``, or the name the record has
        for it if that is a step of the same kind (a changed model or tool name)."""
        if self._record is None:
            return name
        recorded = self._record.get(step_id)
        if recorded is None or recorded == name:
            return name
        run = DBOS.workflow_id
        if _kind(recorded) == _kind(name):
            _log.warning(
                "run %s, step %d: recorded as %r, where the code now makes %r; the "
                "recorded %s is replayed",
                run,
                step_id,
                recorded,
                name,
                "response" if _kind(name) in ("model", "summary") else "step",
            )
            return recorded
        self.failure = ReplayError(
            f"run {run} cannot be replayed by this code: its step {step_id} was recorded "
            f"as {recorded!r}, where this code now makes {name!r}. The code changed since "
            "the run started (its tools, hooks, extensions or limits) so that it no "
            "longer takes the path its record took; nothing was run again. "
            + fork(run or "", self._record)
        )
        raise self.failure

    async def _run(
        self, reservation: StepReservation, name: str, body: Callable[[], Awaitable[Any]]
    ) -> object:
        try:
            return await reservation.run_async({"name": name}, body)
        except RecordError as unreadable:  # DBOS read a record that is not ours
            self.failure = unreadable
            raise

    def _read(self, decode: Callable[[], T]) -> T:
        try:
            return decode()
        except RecordError as unreadable:
            self.failure = unreadable
            raise

    # -- the rest of the seam ----------------------------------------------------------

    def retry_delay(self, error: Exception, attempt: int) -> float | None:
        return self._retries.delay(error, attempt)

    def sequential(self, tools: Sequence[Tool[Any, Any] | None]) -> bool:
        return any(isinstance(tool, _MAKES_CALLS) for tool in tools) and in_workflow()

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
