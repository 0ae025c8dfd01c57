"""The stages every call goes through, in order: `run_call`.

A call the reader could not make is a problem already; a call is checked (``_check``:
known, within limits, the before hooks, the guards), run (``_run``: the tool, then
the after hooks), and observed (``_observe``: serialised or its error written, then the
observation hooks). Each stage hands back what the next takes, or the error the call
ends with; every failure is contained, so an action's other calls go on. The
scheduling of an action's calls around this is ``_schedule``'s.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolchain import _approvals as approvals
from toolchain._events import BeforeToolCall
from toolchain._hooks import check_guards
from toolchain._oneline import log_line
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolCallError, ToolResult
from toolchain.chain import _step_seam
from toolchain.chain._check import before_hooks, precheck, unknown_tool
from toolchain.chain._observe import finish, observation_hooks
from toolchain.chain._run import UNVALIDATED, after_hooks, invoke
from toolchain.chain._stages import AnyTool, ChainSettings, Outcome, Signals

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["held_outcome", "observed", "run_call"]

_log = logger("toolchain")


async def run_call(
    chain: ChainSettings, ctx: ExecutionContext, index: int, item: ToolCall | str, signals: Signals
) -> Outcome:
    """One call through every stage: checked, run, observed. Contains every failure."""
    started = time.perf_counter()
    if isinstance(item, str):  # a problem the reader or the plan found
        failure = ToolCallError("parse", item)
        return finish(chain, ctx, index, ToolCall("error", {}), None, failure, started)
    call = item
    # A durable run draws the call's place in its record now, in call order, before
    # anything below can suspend (the module attribute check is all the plain path pays).
    runner = _step_seam.current() if _step_seam.active else None
    slot = runner.reserve(ctx, call) if runner is not None else None
    checked = precheck(ctx, call, chain.registry)
    if isinstance(checked, ToolCallError):
        return await _refused(chain, ctx, index, call, checked, started, slot)
    tool = checked
    raw_args = call.args
    hooks = ctx.hooks
    if hooks.before:
        before = before_hooks(ctx, call)
        call, refusal = before if isinstance(before, tuple) else await before
        if refusal is not None:
            return await _refused(chain, ctx, index, call, refusal, started, slot)
        found = chain.registry.get(call.name)
        if found is None:
            unknown = unknown_tool(call.name, chain.registry)
            return await _refused(chain, ctx, index, call, unknown, started, slot)
        tool = found
    if hooks.guarded:  # on the call as it will run, rewritten by the before hooks
        guarded = check_guards(ctx, call)
        refusal = (
            guarded if guarded is None or isinstance(guarded, ToolCallError) else (await guarded)
        )
        if refusal is not None:
            return await _refused(chain, ctx, index, call, refusal, started, slot)
    if tool.requires_approval is not False or approvals.nesting:  # may wait for a person
        return await _gated(chain, ctx, index, call, tool, raw_args, started, slot, signals)
    if ctx.events.has_subscribers(BeforeToolCall):
        ctx.events.emit(BeforeToolCall(ctx, index, call.name, call.args, call.id, raw_args))
    if runner is None:
        result, problem = await invoke(chain, ctx, tool, call, index, signals)
    else:
        ran, ran_call = tool, call
        result, problem = await runner.run_tool(
            ctx, call, tool, slot, lambda: invoke(chain, ctx, ran, ran_call, index, signals)
        )
    return await observed(chain, ctx, index, call, result, problem, started)


async def _gated(
    chain: ChainSettings,
    ctx: ExecutionContext,
    index: int,
    call: ToolCall,
    tool: AnyTool,
    raw_args: Mapping[str, object],
    started: float,
    slot: object,
    signals: Signals,
) -> Outcome:
    """`run_call`'s end for a call that may wait for a person (``toolchain._approvals``):
    its tool needs approval, decided here on the validated input (which then runs as
    it is); or its tool makes calls of its own, which may (a composite's sub-calls). A
    call nobody can decide now is held: it ends in no ``AfterToolCall`` until resumed
    (``toolchain.chain._resume``). The call's time limit stops while a person decides."""
    stop, start = (
        functools.partial(signals.stop_clock, index),
        functools.partial(signals.start_clock, index),
    )
    value: object = UNVALIDATED
    if tool.requires_approval is not False:
        try:
            checked = await approvals.check(
                ctx, tool, call, default=chain.approve, stop_clock=stop, start_clock=start
            )
        except asyncio.CancelledError as error:  # the run's cancellation, as it waited
            why = signals.why.get(index)
            if why is None and not ctx.cancelled:
                raise  # someone else cancelled the whole execution
            reason = ctx.cancel_reason or "cancelled"
            message = f"{call.name} was cancelled while it waited for approval: {reason}"
            checked = ToolCallError(why or "cancelled", message, error)
        if isinstance(checked, ToolCallError):
            return await _refused(chain, ctx, index, call, checked, started, slot)
        if isinstance(checked, approvals.Hold):
            held = approvals.CallHeld(checked.request, call=call, tool=tool, value=checked.value)
            return held_outcome(held)
        if checked is not None:
            value = checked.value
    if ctx.events.has_subscribers(BeforeToolCall):
        ctx.events.emit(BeforeToolCall(ctx, index, call.name, call.args, call.id, raw_args))
    token = approvals.enclosing.set(approvals.Enclosing(chain.approve, stop, start))
    try:
        runner = _step_seam.current() if slot is not None else None
        if runner is None:
            result, problem = await invoke(chain, ctx, tool, call, index, signals, value)
        else:
            result, problem = await runner.run_tool(
                ctx, call, tool, slot, lambda: invoke(chain, ctx, tool, call, index, signals, value)
            )
    finally:
        approvals.enclosing.reset(token)
    nested = approvals.held_in(problem)
    if nested is not None:  # a call the tool made waits for a person: so does this one
        nested.call = call
        return held_outcome(nested)
    return await observed(chain, ctx, index, call, result, problem, started)


def held_outcome(held: approvals.CallHeld) -> Outcome:
    """The outcome a held call stands under until it is decided: a ``held`` error,
    neither counted as a failure nor ended by an ``AfterToolCall``."""
    error = approvals.held_error(held)
    request = held.request
    _log.info(
        "tool call %s (%s) is held for approval",
        log_line(request.tool, 80),
        log_line(request.call_id, 80),
        extra={"tool": request.tool, "call_id": request.call_id, "error_kind": "held"},
    )
    assert held.call is not None
    return Outcome(held.call, None, error, f"Error: {error.message}")


async def observed(
    chain: ChainSettings,
    ctx: ExecutionContext,
    index: int,
    call: ToolCall,
    result: ToolResult[object] | None,
    problem: ToolCallError | None,
    started: float,
) -> Outcome:
    """What a call that ran (or replayed) comes to: the after hooks, then observed."""
    hooks = ctx.hooks
    if problem is None and result is not None and hooks.after:
        after = after_hooks(ctx, call, result)
        result, problem = after if isinstance(after, tuple) else await after
    outcome = finish(chain, ctx, index, call, result, problem, started)
    if hooks.observation and outcome.result is not None:
        observed = observation_hooks(ctx, outcome, outcome.result)
        outcome = observed if isinstance(observed, Outcome) else await observed
    return outcome


async def _refused(
    chain: ChainSettings,
    ctx: ExecutionContext,
    index: int,
    call: ToolCall,
    refusal: ToolCallError,
    started: float,
    slot: object,
) -> Outcome:
    """A call the code refuses now. In a durable run whose record shows the call ran
    before a crash, the record wins: a release since (a tool renamed, a limit or hook
    changed) must not make a finished call look as if it never ran."""
    runner = _step_seam.current() if slot is not None else None
    replayed = None if runner is None else await runner.recorded(ctx, call, slot, chain.registry)
    if replayed is None:
        return finish(chain, ctx, index, call, None, refusal, started)
    result, problem = replayed
    return await observed(chain, ctx, index, call, result, problem, started)
