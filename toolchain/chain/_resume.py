"""An action whose calls wait for a person: held with its outcomes, resumed by decision.

When calls of an action are held (``toolchain._approvals``), the chain keeps the
action as it ended (`hold`): every outcome in order, the held ones standing as ``held``
errors, in the run's ``ctx.state`` under a fresh nonce; the result lists the held calls
in ``pending``, each sealed with that nonce. `resume` takes the decisions: it checks
them all first (`toolchain._approvals.verify`, `refusals`) and approves nothing when one
is refused; then runs each approved call with the input that was reviewed (a
composite's sub-call: that sub-call only), answers each denied one with its reason,
and hands back the whole action's result, every call in its place: the calls that
ran before the pause as they ran, and, in ``pending``, the calls still undecided, under
a new nonce. An action resumes once: its nonce is used up.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from formats import TextFormat
from toolchain import _approvals as approvals
from toolchain._approvals import Approval, ApprovalError, CallHeld, Seal
from toolchain._context import StateKey
from toolchain._events import ToolCallStarted
from toolchain._result import ToolCall, ToolCallError, ToolChainResult, ToolResult
from toolchain.chain import _step_seam
from toolchain.chain._config import ChainConfig
from toolchain.chain._observe import assemble, finish
from toolchain.chain._pipeline import held_outcome, observed
from toolchain.chain._run import invoke
from toolchain.chain._schedule import run_action, run_alone
from toolchain.chain._stages import AnyTool, Checked, Outcome, Planned, Ran, Signals

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["SEAL", "hold", "resume"]

SEAL = Seal(approvals.PROCESS_KEY)
"""Seals held calls: a held call is valid in the process that held it."""


@dataclass(slots=True)
class _HeldAction:
    """An action with held calls: the config it ran with, every call's outcome in order,
    and the section names its observation may not use (see ``ToolChainBase``)."""

    config: ChainConfig
    outcomes: list[Outcome]
    reserved: frozenset[str]


_HELD = StateKey[dict[str, _HeldAction]]("toolchain.approvals.held_actions")
"""nonce → an action of the run whose held calls wait for decisions."""


def hold(
    config: ChainConfig,
    ctx: ExecutionContext,
    outcomes: list[Outcome],
    result: ToolChainResult,
    reserved: frozenset[str],
) -> ToolChainResult:
    """``result`` as it is, or, when calls of it are held, with them in ``pending``
    (sealed) and the action kept in ``ctx``'s run to resume."""
    held = [
        found for outcome in outcomes if (found := approvals.held_in(outcome.error)) is not None
    ]
    if not held:
        return result
    nonce = secrets.token_hex(16)
    ctx.state.setdefault(_HELD, dict)[nonce] = _HeldAction(config, outcomes, reserved)
    pending = tuple(SEAL.hold(request, nonce) for each in held for request in each.requests)
    return dataclasses.replace(result, pending=pending)


async def resume(
    ctx: ExecutionContext, result: ToolChainResult, decisions: object, text_format: TextFormat
) -> ToolChainResult:
    """The action of ``result`` with its held calls decided (see the module text).

    Raises `ApprovalError`, approving nothing, when a decision is refused: its call id
    holds no call, it is not an `Approval`, or it was bound to another call, run or
    arguments; or when ``result``'s held calls are not as they were held (edited,
    forged), or were decided already.
    """
    nonces, held = approvals.verify(SEAL, result.pending)
    if len(nonces) != 1:  # one action's held calls share its nonce
        raise ApprovalError({"*": "the held calls come from different actions"})
    taken, refused = approvals.refusals(held, decisions)
    if refused:
        raise ApprovalError(refused)
    actions = ctx.state.get(_HELD)
    action = actions.pop(nonces.pop(), None) if actions is not None else None
    if action is None:
        raise ApprovalError(
            {"*": "these held calls were decided already, or held in another run's context"}
        )
    config = action.config
    # Each held outcome with the decisions of the calls it waits on (a sub-agent's
    # outcome may wait on several; deciding some of them settles it with those).
    chosen: list[tuple[int, CallHeld, dict[str, Approval]]] = []
    for position, outcome in enumerate(action.outcomes):
        found = approvals.held_in(outcome.error)
        if found is None:
            continue
        mine = {r.call_id: taken[r.call_id] for r in found.requests if r.call_id in taken}
        if mine:
            chosen.append((position, found, mine))

    async def settle(
        config: ChainConfig,
        ctx: ExecutionContext,
        index: int,
        item: Planned,
        signals: Signals,
    ) -> Outcome:
        position, found, decision = chosen[index]
        return await _settle(config, ctx, position, found, decision, index, signals)

    items: list[Planned] = [found.call or ToolCall("error") for _, found, _ in chosen]
    if len(items) == 1:
        ran = [await run_alone(config, ctx, items[0], 0, settle)]
    else:
        ran = await run_action(config, ctx, items, settle)
    outcomes = list(action.outcomes)
    for (position, _, _), outcome in zip(chosen, ran, strict=True):
        outcomes[position] = outcome
    assembled = assemble(config, outcomes, text_format, action.reserved)
    return hold(config, ctx, outcomes, assembled, action.reserved)


async def _settle(
    config: ChainConfig,
    ctx: ExecutionContext,
    position: int,
    held: CallHeld,
    decisions: dict[str, Approval],
    index: int,
    signals: Signals,
) -> Outcome:
    """A held call decided: run as it was reviewed, or answered with the denial; for a
    call held for ones it made (a composite's sub-call, a sub-agent's calls), the tool's
    own ``settle``, whose call may stay held (calls it waits on are still undecided)."""
    started = time.perf_counter()
    call = held.call or ToolCall(held.request.tool, held.request.args, held.request.call_id)
    decision = decisions[held.request.call_id] if held.settle is None else None
    if held.settle is not None:
        result, problem = await _settled(config, ctx, call, held, decisions)
        still = approvals.held_in(problem)
        if still is not None:  # it waits again: held in its place, under the new nonce
            still.call = call
            return held_outcome(still)
    elif decision is not None and not decision.approved:
        approvals.told(ctx, call.id, held.request, decision, "person")
        problem = approvals.denial(call.name, decision)
        return finish(config, ctx, position, Ran(call, None, problem), started)
    else:
        tool: AnyTool | None = held.tool
        assert tool is not None  # a call held itself keeps its tool
        if decision is not None:
            approvals.told(ctx, call.id, held.request, decision, "person")
        if ctx.events.has_subscribers(ToolCallStarted):
            ctx.events.emit(ToolCallStarted(ctx, position, call.name, call.args, call.id))
        checked = Checked(call, tool, call.args)
        # A durable run records the approved call as a step of its own (drawn now, in
        # call order, as `run_call` draws a call's): a crash after it ran replays its
        # outcome, it does not run again.
        result, problem = await _step_seam.stepped(
            ctx, call, tool, lambda: invoke(config, ctx, checked, index, signals, held.value)
        )
    return await observed(config, ctx, position, Ran(call, result, problem), started)


async def _settled(
    config: ChainConfig,
    ctx: ExecutionContext,
    call: ToolCall,
    held: CallHeld,
    decisions: dict[str, Approval],
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    """A tool's own ``settle`` run with ``decisions``; in a durable run as a step of its
    own (an MCP tool's call made again with the person's answer), so a replay does not
    make it again. A durable runner runs it plainly for a tool whose calls are steps
    themselves (a sub-agent's, a composite's)."""
    settle = held.settle
    assert settle is not None  # only called for a tool's own held calls
    tool = config.tools.get(call.name)
    if tool is None:
        return await settle(decisions)
    return await _step_seam.stepped(ctx, call, tool, lambda: settle(decisions))
