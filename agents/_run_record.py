"""A run's record and bounds: its context made ready, the limits checked before each
step, the conversation and steps kept as it goes, and the ``AgentResult`` it
ends with (told by its ``RunFinished``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

from agents._savings import Ledger, run_savings
from agents._step_log import log, log_end, log_step
from agents._step_state import RunStop, StepRecord
from agents.events import RunFinished
from agents.models import Message, ModelResponse, Usage
from agents.result import AgentResult, StepResult
from toolchain import ApprovalRequest, ExecutionContext, Extension, Limits
from toolchain.runtime import install_extensions, restore_state, saved_state

__all__ = ["RunRecord", "check_limits", "run_context", "stopped_during_step"]

AnswerT = TypeVar("AnswerT")


def run_context(
    ctx: ExecutionContext | None,
    limits: Limits,
    name: str,
    extensions: Sequence[Extension],
    extension_state: Mapping[str, object] | None,
) -> ExecutionContext:
    """The run's context, new or given, with the agent's limits, the outcome of an
    earlier run cleared and the extensions installed (and their state restored)."""
    if ctx is None:
        ctx = ExecutionContext(limits=limits, name=name)
    elif not ctx.limits_given:
        ctx.limits = limits  # a ctx passed only to cancel or observe keeps our limits
    # A context used by an earlier run must not end this one before it starts.
    ctx.pause_reason, ctx.finish_text = "", None
    install_extensions(ctx, extensions)
    if extension_state:
        restore_state(ctx, extensions, extension_state)
    return ctx


def check_limits(ctx: ExecutionContext, deadline: float | None, now: float) -> None:
    """Raise ``RunStop`` when the run may not take another step."""
    if ctx.cancelled:
        raise RunStop("cancelled", ctx.cancel_reason)
    if deadline is not None and now >= deadline:
        raise RunStop("limit", "timeout")
    limit = ctx.limits.exceeded(ctx.stats, starting_step=True)
    if limit is not None:
        raise RunStop("limit", limit)


def stopped_during_step(ctx: ExecutionContext) -> RunStop | None:
    """How the run ends when its step cancelled or paused it (a tool did); else None."""
    if ctx.cancelled:
        return RunStop("cancelled", ctx.cancel_reason)
    if ctx.pause_reason:
        return RunStop("paused", ctx.pause_reason)
    return None


class RunRecord(Generic[AnswerT]):
    """What a run has done so far: the conversation, each step and the usage."""

    __slots__ = ("answer", "messages", "steps")

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.steps: list[StepResult] = []
        self.answer: AnswerT | None = None

    @property
    def usage(self) -> Usage:
        """The tokens of every step so far: each model reply is kept in a step, so the
        sum is taken once, at the end, not a ``Usage`` built per step."""
        input_tokens = output_tokens = cached = 0
        for step in self.steps:
            usage = step.usage
            input_tokens += usage.input_tokens
            output_tokens += usage.output_tokens
            cached += usage.cached_input_tokens
        return Usage(input_tokens, output_tokens, cached)

    def add(
        self,
        ctx: ExecutionContext,
        response: ModelResponse,
        step: StepRecord,
        started: float,
    ) -> StepResult:
        """Keep step ``step``: the model's message, its replies and its record."""
        assistant = step.assistant
        if assistant is None:
            assistant = Message.text("assistant", response.text)
        self.messages.append(assistant)
        self.messages.extend(step.replies)  # calls already made keep their answers
        done = StepResult(
            index=len(self.steps) + 1,
            output=response.text,
            sections=step.sections,
            tool_results=tuple(step.results),
            feedback=step.feedback,
            usage=response.usage,
            duration=time.perf_counter() - started,
            tool_calls=step.tool_calls,
        )
        self.steps.append(done)
        if log.isEnabledFor(logging.DEBUG):
            log_step(ctx, done, step)
        return done

    def finished(
        self,
        ctx: ExecutionContext,
        stop: RunStop,
        extensions: Sequence[Extension],
        ledger: Ledger | None = None,
        pending: tuple[ApprovalRequest, ...] = (),
    ) -> RunFinished[AnswerT]:
        """The run's end: its result, logged, and the one `RunFinished` that tells it,
        emitted on ``ctx.events`` here and yielded last by the stream. ``ledger``
        counted what its extensions saved; ``pending``: the calls a paused run holds."""
        result = AgentResult(
            answer=self.answer,
            stopped_by=stop.kind,
            steps=tuple(self.steps),
            messages=tuple(self.messages),
            stats=ctx.stats.snapshot(),
            usage=self.usage,
            limit=stop.detail if stop.kind == "limit" else None,
            error=stop.detail if stop.kind == "error" else None,
            paused=stop.detail if stop.kind == "paused" else None,
            extension_state=saved_state(ctx, extensions),
            savings=run_savings(ctx, ledger),
            pending=pending,
        )
        log_end(ctx, result)
        finished = RunFinished(ctx, result)
        if ctx.events.has_subscribers(RunFinished):
            ctx.events.emit(finished)
        return finished
