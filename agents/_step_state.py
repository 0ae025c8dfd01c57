"""What a step carries: the call it makes, what the reply produced, and how a run stops.

Plain values the step engine's collaborators pass between them; no behaviour here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agents._errors import AgentError
from agents.models import GenerateOptions, Message, Model, ToolCallRequest
from agents.result import StopKind
from toolchain import ExecutionContext, ToolChainResult

__all__ = ["TASKS_PENDING", "AnswerCheck", "Done", "RunStop", "StepCall", "StepRecord"]

T = TypeVar("T")

TASKS_PENDING = "tasks_pending"
"""The limit that ends a run whose model keeps answering while a ``check_answer``
holds its answers back (more times in a row than ``max_consecutive_parse_errors``)."""

AnswerCheck = Callable[[ExecutionContext], "str | None"]
"""A hook's ``check_answer``: the feedback naming the work left, or None to take the answer."""


class RunStop(AgentError):
    """The run ends here: ``kind`` is its ``stopped_by``, ``detail`` the limit or error."""

    kind: StopKind

    def __init__(self, kind: StopKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class Done(Generic[T]):
    """The value of work whose events were passed on while it ran (the last item)."""

    value: T


class StepRecord:
    """What one step produced, filled in as the agent reads the reply."""

    __slots__ = (
        "answer",
        "assistant",
        "feedback",
        "has_answer",
        "held",
        "replies",
        "reply",
        "results",
        "sections",
        "tool_calls",
    )

    def __init__(self) -> None:
        self.assistant: Message | None = None
        """The model's message as the conversation keeps it; None: its text alone (made
        when the step is kept, so an agent that writes its own builds no other)."""
        self.sections: dict[str, list[str]] = {}
        self.tool_calls: tuple[ToolCallRequest, ...] = ()
        self.results: list[ToolChainResult] = []
        self.replies: list[Message] = []
        """Messages answering the reply: tool results, an observation, feedback."""
        self.feedback = ""
        self.answer: Any = None
        self.has_answer = False
        self.held = False
        """An answer was held back: work is left (see ``Replies.held``)."""
        self.reply: Callable[[], None] | None = None
        """Makes ``replies`` once the step's held calls are decided (``agents._resume``):
        set instead of making them when calls of the step wait for a person."""


@dataclass(slots=True)
class StepCall:
    """What the model is called with in one step, after the step hooks."""

    model: Model
    messages: list[Message]
    options: GenerateOptions
    tools: tuple[str, ...]
