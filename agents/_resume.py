"""A run paused for a person's decisions, and resumed with them.

A step whose tool calls are held for approval (``Tool.requires_approval``, nobody to
decide now) ends the run: every other call of the step has finished, the run's result
says ``stopped_by == "paused"`` and lists the held calls in ``pending`` (sealed by the
chain that held them). The run itself is kept in this process (`park`), with its
context, its conversation and the step as it stands, for as long as the paused result
lives. ``agent.resume(result, {call_id: Approval.granted(), ...})`` checks every
decision first (`checked`): the held calls must be as they were sealed, the result the
run's latest pause (a paused result resumes once), each key a held call's id, each
value an ``Approval`` made for that call. One refused decision approves nothing
(`ResumeError`, naming each and why). The run is taken (`claim`) as the resume starts:
at once for ``resume``, when its iterator is first advanced for ``resume_stream``. Then
the decided calls run, or are answered with their denial, in the same step
(`run_decided`), and the run goes on from there: no new user message, no request for
the model to make the call again. Calls left undecided keep the run paused, with no
model call.

Across processes: nothing is kept but in this one. A plain run's paused result cannot
be resumed by another process (or after this one restarts); a durable run
(``agents.durable``) can.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents._errors import AgentError
from agents._step_state import StepRecord
from agents._tool_runs import run_tools
from agents.events import ToolCallFinished, ToolCallStarted
from agents.result import AgentResult
from formats import TextFormat
from toolchain import Approval, ApprovalError, ApprovalRequest, ElicitationRequest, ExecutionContext
from toolchain.runtime import check_decisions, resume_action

if TYPE_CHECKING:
    from agents._model_call import Streaming
    from agents._run_record import RunRecord
    from agents._savings import Ledger
    from agents._step_request import StepCalls
    from agents.otel._seam import Settle

__all__ = [
    "LiveRun",
    "PausedRun",
    "ResumeError",
    "checked",
    "claim",
    "held_requests",
    "park",
    "paused_of",
    "paused_reason",
    "run_decided",
]


class ResumeError(AgentError, ApprovalError):
    """``agent.resume`` refused the decisions it was given: nothing was approved, nothing
    ran, and the paused result can still be resumed. ``refused`` maps each refused
    decision's call id (``"*"`` for the result as a whole) to why.

    >>> str(ResumeError({"call_9": "no call with this id is held (held: call_1)"}))
    'nothing was approved: call_9: no call with this id is held (held: call_1)'
    """


@dataclass(slots=True)
class LiveRun:
    """What a run carries from one step to the next (``StepEngine._steps``)."""

    ctx: ExecutionContext
    steps: StepCalls
    run: RunRecord[Any]
    deadline: float | None
    stream: Streaming[Any] | None
    ledger: Ledger | None
    settles: list[Settle] | None


@dataclass(slots=True)
class PausedRun:
    """A run paused on held calls: the run, its step as it stands, whose agent it is."""

    agent: object
    live: LiveRun
    index: int
    step: StepRecord
    remaining: float | None
    """Seconds left of the run's time limit when it paused (the wait does not count)."""
    pending: tuple[ApprovalRequest, ...]


_PAUSED: dict[str, PausedRun] = {}
"""Run id → the run paused in it, kept while its paused result lives (`park`)."""


def held_requests(step: StepRecord) -> tuple[ApprovalRequest, ...]:
    """The calls of ``step`` held for a decision, in call order."""
    return tuple(request for result in step.results for request in result.pending)


def paused_reason(pending: tuple[ApprovalRequest, ...]) -> str:
    """Why a run paused, as ``AgentResult.paused`` says it: calls waiting for approval,
    and servers' questions (``ElicitationRequest``) waiting for an answer."""
    approvals = [r for r in pending if not isinstance(r, ElicitationRequest)]
    questions = [r for r in pending if isinstance(r, ElicitationRequest)]
    said: list[str] = []
    if approvals:
        said.append("waiting for approval: " + _listed(approvals))
    if questions:
        said.append("waiting for an answer: " + _listed(questions))
    return "; ".join(said)


def _listed(pending: Sequence[ApprovalRequest]) -> str:
    return ", ".join(f"{request.tool} ({request.call_id})" for request in pending)


def park(result: AgentResult[Any], paused: PausedRun) -> None:
    """Keep ``paused`` for ``resume`` while ``result`` lives (a run nobody resumes is
    dropped with its result)."""
    run_id = paused.live.ctx.run_id
    _PAUSED[run_id] = paused
    weakref.finalize(result, _drop, run_id, paused)


def _drop(run_id: str, paused: PausedRun) -> None:
    if _PAUSED.get(run_id) is paused:
        del _PAUSED[run_id]


def paused_of(result: object) -> AgentResult[Any]:
    """``result`` if it is the result of a paused run with held calls; `ResumeError`
    otherwise."""
    if not isinstance(result, AgentResult):
        raise ResumeError(
            {"*": f"resume takes the AgentResult of a paused run, not {type(result).__name__}"}
        )
    # Its answer type is not read here; pyright keeps isinstance's AgentResult[Unknown].
    paused_result: AgentResult[Any] = result  # pyright: ignore[reportUnknownVariableType]
    if paused_result.stopped_by != "paused" or not paused_result.pending:
        raise ResumeError(
            {
                "*": "no call of this result waits for a decision "
                f"(stopped_by={paused_result.stopped_by!r})"
            }
        )
    return paused_result


def checked(
    agent: object, result: object, decisions: object
) -> tuple[PausedRun, dict[str, Approval]]:
    """The paused run of ``result`` and the decisions to apply, once every check passed;
    `ResumeError` otherwise. The run stays kept until it is `claim`-ed."""
    paused_result = paused_of(result)
    try:
        taken = check_decisions(paused_result.pending, decisions)
    except ApprovalError as error:
        raise ResumeError(error.refused) from None
    runs = {request.run_id for request in paused_result.pending}  # checked with their seals
    paused = _PAUSED.get(runs.pop()) if len(runs) == 1 else None
    if paused is None or paused.pending != paused_result.pending:
        raise ResumeError(
            {
                "*": "this paused result was resumed already, or was not paused in this "
                "process (a plain run's pause lives in the process that paused it)"
            }
        )
    if paused.agent is not agent:
        raise ResumeError({"*": "this run was paused by another agent: resume it with that one"})
    return paused, taken


def claim(paused: PausedRun) -> None:
    """Take ``paused`` for a resume that starts now: it is no longer kept (a paused run
    resumes once). `ResumeError` when another resume took it since it was `checked`."""
    if _PAUSED.get(paused.live.ctx.run_id) is not paused:
        raise ResumeError({"*": "this paused result was resumed already"})
    _drop(paused.live.ctx.run_id, paused)


async def run_decided(
    ctx: ExecutionContext,
    index: int,
    step: StepRecord,
    decisions: Mapping[str, Approval],
    text_format: TextFormat,
    deadline: float | None,
    *,
    streaming: bool,
) -> AsyncGenerator[ToolCallStarted | ToolCallFinished, None]:
    """The held calls of ``step`` that ``decisions`` decide, run or denied, each action's
    result replaced by its resumed one (calls left undecided stay held in it); their
    call events yielded as they happen when ``streaming``."""
    for position, result in enumerate(step.results):
        ids = {request.call_id for request in result.pending}
        mine = {key: value for key, value in decisions.items() if key in ids}
        if not mine:
            continue
        work = resume_action(ctx, result, mine, text_format)
        running = run_tools(ctx, work, deadline, streaming=streaming)
        async with contextlib.aclosing(running) as items:
            async for item in items:
                if isinstance(item, ToolCallStarted | ToolCallFinished):
                    yield item
                else:
                    step.results[position] = item.value


def remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (loop time), or None without one."""
    if deadline is None:
        return None
    return max(0.0, deadline - asyncio.get_running_loop().time())


def replace_last(run: RunRecord[Any], step: StepRecord) -> None:
    """The run's last step (the paused one) with the step's results and
    feedback as they are now, and the step's replies appended to the conversation."""
    last = run.steps[-1]
    run.steps[-1] = dataclasses.replace(
        last, tool_results=tuple(step.results), feedback=step.feedback
    )
    run.messages.extend(step.replies)
