"""`Replies`: how an agent judges what its model wrote in a step.

An answer is parsed by the termination and taken, unless a ``check_answer`` holds it
back while work is left; a reply the model must redo is counted (parse-error streak,
an ``OutputRejected`` event, a log record) and answered with feedback saying why.
Both agents' readers use it, so the counting is the same for text and native calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agents._step_log import log, log_rejection
from agents._step_state import AnswerCheck, StepRecord
from agents.events import OutputRejected
from agents.models import Message
from agents.terminations import AnswerRejected, Termination
from toolchain import ExecutionContext, Stats

__all__ = ["Replies"]


class Replies:
    """Takes or rejects one agent's replies (see the module text).

    ``feedback`` makes the message that tells the model what was wrong, in the
    agent's own protocol (an observation in text mode, a user message in native mode).
    """

    __slots__ = ("checks", "feedback", "termination")

    def __init__(
        self,
        termination: Termination[Any],
        checks: Sequence[AnswerCheck],
        feedback: Callable[[str], Message],
    ) -> None:
        self.termination = termination
        self.checks = tuple(checks)
        self.feedback = feedback

    def take_answer(
        self, ctx: ExecutionContext, index: int, step: StepRecord, content: str
    ) -> None:
        """The termination's answer from ``content``, or feedback when it is rejected."""
        try:
            answer = self.termination.parse_section(content)
            if self.held(ctx, index, step):
                return
            self.accept(ctx, step, answer)
        except AnswerRejected as rejected:
            self.reject(ctx, index, step, "answer", f"answer rejected: {rejected}")
        except Exception as error:  # a termination that raises is a rejection, not a crash
            log.warning("the termination raised on an answer", exc_info=error)
            feedback = f"answer rejected: it could not be checked ({type(error).__name__})"
            self.reject(ctx, index, step, "answer", feedback)

    @staticmethod
    def accept(ctx: ExecutionContext, step: StepRecord, answer: object) -> None:
        """``answer`` is the step's answer: the streak of rejected replies ends."""
        step.answer = answer
        step.has_answer = True
        ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)

    def held(
        self, ctx: ExecutionContext, index: int, step: StepRecord, *, reply: bool = True
    ) -> bool:
        """Whether an answer must wait because work is left (a task list's pending
        tasks): then the feedback naming that work is counted and, with ``reply``,
        queued, as for a rejected answer."""
        if not self.checks:
            return False
        for check in self.checks:
            try:
                left = check(ctx)
            except Exception:  # a broken check must not trap the run in feedback
                log.exception("an answer check raised; the answer is taken")
                continue
            if left:
                step.held = True
                if reply:
                    self.reject(ctx, index, step, "unfinished", left)
                else:
                    self.count_rejection(ctx, index, step, "unfinished", left)
                return True
        return False

    @staticmethod
    def held_too_often(ctx: ExecutionContext) -> bool:
        """Whether held answers (counted as rejected replies) have gone past the
        limit of rejected replies in a row: the run then ends as ``tasks_pending``,
        named for what kept it from ending, not as a parse-error limit."""
        bound = ctx.limits.max_consecutive_parse_errors
        return bound is not None and ctx.stats.get(Stats.CONSECUTIVE_PARSE_ERRORS) > bound

    def reject(
        self, ctx: ExecutionContext, index: int, step: StepRecord, kind: str, feedback: str
    ) -> None:
        """Count a reply the model must redo and queue the feedback that says why."""
        self.count_rejection(ctx, index, step, kind, feedback)
        step.replies.append(self.feedback(feedback))

    @staticmethod
    def count_rejection(
        ctx: ExecutionContext, index: int, step: StepRecord, kind: str, feedback: str
    ) -> None:
        """``reject`` without the feedback message: for feedback sent some other way
        (a native call's own tool message)."""
        ctx.stats.increment(Stats.PARSE_ERRORS)
        ctx.stats.increment(Stats.CONSECUTIVE_PARSE_ERRORS)
        log_rejection(ctx, index, kind, feedback)
        ctx.events.emit(OutputRejected(ctx, index, kind, feedback))
        step.feedback = feedback
