"""The ``agents`` log records of a run: each step, each rejected reply, each failed model
call, and how the run ended.

Every record is one line, redacted and bounded, with structured ``extra`` fields (``run``,
``step``, ...) for handlers that keep them apart. Callers test the level before building
what a record needs where that costs anything.
"""

from __future__ import annotations

import logging
from typing import Any

from agents._step_state import StepRecord
from agents.events import ModelCallFailed
from agents.result import AgentResult, StepResult
from toolchain import ExecutionContext
from toolchain.runtime import log_line, logger, redact

__all__ = ["log", "log_end", "log_model_failed", "log_rejection", "log_step"]

log = logger("agents")

_LOGGED_CHARS = 500
"""How much of a text (a feedback, an answer) a log record quotes."""


def _clip(text: str, limit: int) -> str:
    """``text`` redacted, on one line, cut to ``limit`` characters: a log line stays one."""
    return log_line(redact(text), limit)


def log_rejection(ctx: ExecutionContext, index: int, kind: str, feedback: str) -> None:
    """The INFO record of a reply the model must redo."""
    if log.isEnabledFor(logging.INFO):
        log.info(
            "%s step %d: the reply was rejected (%s): %s",
            ctx.name,
            index,
            kind,
            _clip(feedback, _LOGGED_CHARS),
            extra={"run": ctx.name, "step": index, "rejection": kind},
        )


def log_model_failed(
    ctx: ExecutionContext,
    index: int,
    model: str,
    kind: str,
    message: str,
    status: int | None = None,
    *,
    error: BaseException | None = None,
) -> None:
    """The record of a failed model call: a WARNING, or an ERROR with the traceback for
    a model that broke its protocol (``error``). ``kind`` names the failure (the
    ``ModelError`` class, ``timeout`` for the run's time limit). Observers (traces,
    ``agents.otel``) get it too, as ``ModelCallFailed``."""
    said = _clip(message, 2 * _LOGGED_CHARS)
    if ctx.events.has_subscribers(ModelCallFailed):
        ctx.events.emit(ModelCallFailed(ctx, index, model, kind, said, status))
    log.log(
        logging.WARNING if error is None else logging.ERROR,
        "%s step %d: model call to %s failed: %s",
        ctx.name,
        index,
        model,
        # A ModelError is redacted already, a subclass's override may not be; a server's
        # body may span lines.
        said,
        exc_info=error,
        extra={
            "run": ctx.name,
            "step": index,
            "model": model,
            "error_kind": kind,
            "status_code": status,
        },
    )


def log_step(ctx: ExecutionContext, done: StepResult, step: StepRecord) -> None:
    """The DEBUG record of one step: what the model did and what it cost."""
    # Names as the model wrote them, so each one-line and bounded.
    calls = tuple(
        log_line(call.name, 80) for result in done.tool_results for call in result.raw.calls
    ) or tuple(log_line(call.name, 80) for call in done.tool_calls)
    if calls:
        did = "called " + ", ".join(calls)
    elif step.has_answer:
        did = "answered: " + _clip(str(step.answer), 200)
    elif step.feedback:
        did = "was sent feedback"
    else:
        did = "made no call and gave no answer"
    usage = done.usage
    log.debug(
        "%s step %d: the model %s (%d input, %d output tokens, %.3f s)",
        ctx.name,
        done.index,
        did,
        usage.input_tokens,
        usage.output_tokens,
        done.duration,
        extra={
            "run": ctx.name,
            "step": done.index,
            "calls": calls,
            "answered": step.has_answer,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        },
    )


def log_end(ctx: ExecutionContext, result: AgentResult[Any]) -> None:
    """How the run ended: DEBUG for an answer or a pause, INFO for a limit, an error or
    cancellation (the failure that caused it has its own record)."""
    level = logging.DEBUG if result.stopped_by in ("answer", "paused") else logging.INFO
    if not log.isEnabledFor(level):
        return
    detail = result.limit or result.error or result.paused or ""
    log.log(
        level,
        "%s ended: %s%s after %d steps",
        ctx.name,
        result.stopped_by,
        f" ({_clip(detail, _LOGGED_CHARS)})" if detail else "",
        len(result.steps),
        extra={"run": ctx.name, "stopped_by": result.stopped_by, "steps": len(result.steps)},
    )
