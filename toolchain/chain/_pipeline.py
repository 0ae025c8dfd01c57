"""The stages every call goes through, once each, in order: `run_call`.

A `Planned` item becomes `Checked` or `Refused` (``_check``: offered, within limits, the
before hooks, the guards), a `Checked` call becomes `Ran` (``_run``: the tool, then the
after hooks), and a `Ran` becomes the `Outcome` the model reads (``_observe``: serialised
or its error written, then the observation hooks). Every stage reads the action's frozen
``ChainConfig``; every failure is contained, so an action's other calls go on. The
scheduling of an action's calls around this is ``_schedule``'s.

A call whose tool needs approval (``toolchain._approvals``) is decided between checking
and running, on its validated input, which then runs as it is (`_gated`); a call nobody
decides now is held (`held_outcome`) and resumed by ``toolchain.chain._resume``.

A stage's hooks come back as the stage's own result while every hook is plain (the hook
runner makes no coroutine then); only what is not yet that result is awaited here.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolchain import _approvals as approvals
from toolchain._events import ToolCallStarted
from toolchain._hooks import check_guards
from toolchain._oneline import log_line
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolCallError
from toolchain.chain import _step_seam
from toolchain.chain._check import before_hooks, precheck
from toolchain.chain._config import ChainConfig
from toolchain.chain._observe import finish, observation_hooks
from toolchain.chain._run import UNVALIDATED, after_hooks, invoke
from toolchain.chain._stages import Checked, Outcome, Planned, Problem, Ran, Refused, Signals

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["NOT_A_CALL", "held_outcome", "observe", "observed", "run_call"]

_log = logger("toolchain")

NOT_A_CALL = ToolCall("error", {})
"""The call a `Problem` is reported under."""


async def run_call(
    config: ChainConfig, ctx: ExecutionContext, index: int, item: Planned, signals: Signals
) -> Outcome:
    """One item through every stage: checked, run, observed. Contains every failure."""
    started = time.perf_counter()
    if isinstance(item, Problem):  # a problem the reader or the plan found
        failure = ToolCallError("parse", item.message)
        return finish(config, ctx, index, Ran(NOT_A_CALL, None, failure), started)
    # A durable run draws the call's place in its record now, in call order, before
    # anything below can suspend (the module attribute check is all the plain path pays).
    runner = _step_seam.current() if _step_seam.active else None
    slot = runner.reserve(ctx, item) if runner is not None else None
    checked = precheck(config, ctx, item)
    hooks = ctx.hooks
    if hooks.before and isinstance(checked, Checked):
        before = before_hooks(config, ctx, checked)
        checked = before if isinstance(before, Checked | Refused) else await before
    guards = hooks.guard_chain()  # this run's and its parents': read once, here
    if guards and isinstance(checked, Checked):  # the call as it will run
        refusal = check_guards(ctx, checked.call, guards)
        if refusal is not None and not isinstance(refusal, ToolCallError):
            refusal = await refusal
        if refusal is not None:
            checked = Refused(checked.call, refusal)
    if isinstance(checked, Refused):
        return await _refused(config, ctx, index, checked, started, slot)
    # may wait: its tool needs approval (its own word, or an extension's), or tools
    # make calls of their own (a composite's sub-calls may need it)
    tool = checked.tool
    if (
        tool.requires_approval is not False
        or approvals.nesting
        or (approvals.gating and approvals.waits(ctx, tool))
    ):
        return await _gated(config, ctx, index, checked, started, slot, signals)
    call = checked.call
    if ctx.events.has_subscribers(ToolCallStarted):
        ctx.events.emit(ToolCallStarted(ctx, index, call.name, call.args, call.id, checked.written))
    if runner is None:
        result, problem = await invoke(config, ctx, checked, index, signals)
    else:
        ran_now = checked
        result, problem = await runner.run_tool(
            ctx, call, checked.tool, slot, lambda: invoke(config, ctx, ran_now, index, signals)
        )
    if not (hooks.after or hooks.observation):
        return finish(config, ctx, index, Ran(call, result, problem), started)
    # Plain hooks (the variables' and the relay's, whose stores answer at once) give the
    # outcome as it is: no coroutine for it.
    done = observe(config, ctx, index, Ran(call, result, problem), started)
    return done if isinstance(done, Outcome) else await done


async def _gated(
    config: ChainConfig,
    ctx: ExecutionContext,
    index: int,
    checked: Checked,
    started: float,
    slot: object,
    signals: Signals,
) -> Outcome:
    """`run_call`'s end for a call that may wait for a person (``toolchain._approvals``):
    its tool needs approval, decided here on the validated input (which then runs as
    it is); or its tool makes calls of its own, which may (a composite's sub-calls). A
    call nobody can decide now is held: it ends in no ``ToolCallFinished`` until resumed
    (``toolchain.chain._resume``). The call's time limit stops while a person decides."""
    call, tool = checked.call, checked.tool
    stop, start = (
        functools.partial(signals.stop_clock, index),
        functools.partial(signals.start_clock, index),
    )
    value: object = UNVALIDATED
    if approvals.waits(ctx, tool):
        try:
            decided = await approvals.check(
                ctx, tool, call, default=config.approve, stop_clock=stop, start_clock=start
            )
        except asyncio.CancelledError as error:  # the run's cancellation, as it waited
            why = signals.why.get(index)
            if why is None and not ctx.cancelled:
                raise  # someone else cancelled the whole execution
            reason = ctx.cancel_reason or "cancelled"
            message = f"{call.name} was cancelled while it waited for approval: {reason}"
            decided = ToolCallError(why or "cancelled", message, error)
        if isinstance(decided, ToolCallError):
            return await _refused(config, ctx, index, Refused(call, decided), started, slot)
        if isinstance(decided, approvals.Hold):
            held = approvals.CallHeld(decided.request, call=call, tool=tool, value=decided.value)
            return held_outcome(held)
        if decided is not None:
            value = decided.value
    if ctx.events.has_subscribers(ToolCallStarted):
        ctx.events.emit(ToolCallStarted(ctx, index, call.name, call.args, call.id, checked.written))
    token = approvals.enclosing.set(approvals.Enclosing(config.approve, stop, start))
    try:
        runner = _step_seam.current() if slot is not None else None
        if runner is None:
            result, problem = await invoke(config, ctx, checked, index, signals, value)
        else:
            result, problem = await runner.run_tool(
                ctx, call, tool, slot, lambda: invoke(config, ctx, checked, index, signals, value)
            )
    finally:
        approvals.enclosing.reset(token)
    nested = approvals.held_in(problem)
    if nested is not None:  # a call the tool made waits for a person: so does this one
        nested.call = call
        return held_outcome(nested)
    return await observed(config, ctx, index, Ran(call, result, problem), started)


def held_outcome(held: approvals.CallHeld) -> Outcome:
    """The outcome a held call stands under until it is decided: a ``held`` error,
    neither counted as a failure nor ended by a ``ToolCallFinished``."""
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
    config: ChainConfig, ctx: ExecutionContext, index: int, ran: Ran, started: float
) -> Outcome:
    """What a call that ran (or replayed) comes to: the after hooks, then observed."""
    done = observe(config, ctx, index, ran, started)
    return done if isinstance(done, Outcome) else await done


def observe(
    config: ChainConfig, ctx: ExecutionContext, index: int, ran: Ran, started: float
) -> Outcome | Awaitable[Outcome]:
    """`observed`, as it is while every hook is plain; an awaitable of it only once a
    hook is ``async`` (see ``run_stage``): the after hooks, then ended (``finish``) and
    shown as the observation hooks say. (One function, not one per stage: every call
    of a run with hooks passes here, and each layer was a Python call per call.)"""
    hooks = ctx.hooks
    if hooks.after and ran.error is None and ran.result is not None:
        after = after_hooks(ctx, ran)
        if not isinstance(after, Ran):
            return _observed_after(config, ctx, index, after, started)
        ran = after
    outcome = finish(config, ctx, index, ran, started)
    if hooks.observation and outcome.result is not None:
        return observation_hooks(ctx, outcome)
    return outcome


async def _observed_after(
    config: ChainConfig, ctx: ExecutionContext, index: int, after: Awaitable[Ran], started: float
) -> Outcome:
    """`observe`'s rest once an after hook is ``async``."""
    outcome = finish(config, ctx, index, await after, started)
    if ctx.hooks.observation and outcome.result is not None:
        shown = observation_hooks(ctx, outcome)
        return shown if isinstance(shown, Outcome) else await shown
    return outcome


async def _refused(
    config: ChainConfig,
    ctx: ExecutionContext,
    index: int,
    refused: Refused,
    started: float,
    slot: object,
) -> Outcome:
    """A call the code refuses now. In a durable run whose record shows the call ran
    before a crash, the record wins: a release since (a tool renamed, a limit or hook
    changed) must not make a finished call look as if it never ran."""
    call = refused.call
    runner = _step_seam.current() if slot is not None else None
    replayed = None if runner is None else await runner.recorded(ctx, call, slot, config.tools)
    if replayed is None:
        return finish(config, ctx, index, Ran(call, None, refused.error), started)
    result, problem = replayed
    return await observed(config, ctx, index, Ran(call, result, problem), started)
