"""What an agent run reports: observer events on the context, and streamed run events.

Observer events go through ``ctx.events`` (subscribe for logging, tracing, metrics);
run events are what ``ReActAgent.stream`` yields to the caller, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agents.models import Message, ModelResponse
from agents.result import AgentResult, Iteration
from agents.steps import StepRequest
from toolchain import ExecutionContext, ToolCallError, ToolChainResult

__all__ = [
    "AfterModelCall",
    "AnswerReady",
    "BeforeModelCall",
    "IterationFinished",
    "IterationStarted",
    "LimitReached",
    "ModelCallFailed",
    "ModelTextDelta",
    "ModelToolCallDelta",
    "ObservationReady",
    "OutputRejected",
    "RunEnded",
    "RunEvent",
    "RunFinished",
    "StepReady",
    "ToolCallFinished",
    "ToolCallStarted",
]

AnswerT = TypeVar("AnswerT")


# -- observer events (ctx.events) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IterationStarted:
    ctx: ExecutionContext
    iteration: int


@dataclass(frozen=True, slots=True)
class IterationFinished:
    ctx: ExecutionContext
    iteration: Iteration


@dataclass(frozen=True, slots=True)
class StepReady:
    """A step's request after the step hooks: exactly what the model is called with."""

    ctx: ExecutionContext
    request: StepRequest
    changed: bool
    """Whether a step hook changed anything."""


@dataclass(frozen=True, slots=True)
class BeforeModelCall:
    """A model call begins. ``base_url`` is where the model sends it, when it says so (a
    ``base_url`` property, as the OpenAI and Anthropic adapters have; ``""`` for a
    `ScriptedModel`); its credentials are the adapter's to keep: read it with care."""

    ctx: ExecutionContext
    iteration: int
    model: str
    messages: Sequence[Message]
    base_url: str = ""


@dataclass(frozen=True, slots=True)
class AfterModelCall:
    ctx: ExecutionContext
    iteration: int
    model: str
    response: ModelResponse
    duration: float


@dataclass(frozen=True, slots=True)
class ModelCallFailed:
    """A model call ended without a reply; the run ends with ``stopped_by`` ``error``
    (or ``limit`` when its time ran out). ``kind`` names the failure: the
    ``ModelError`` class, ``timeout``, or the class a broken model raised;
    ``message`` is redacted."""

    ctx: ExecutionContext
    iteration: int
    model: str
    kind: str
    message: str
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class OutputRejected:
    """The model's output could not be used as written; ``feedback`` was sent back."""

    ctx: ExecutionContext
    iteration: int
    kind: str  # "format", "tool_calls", "answer", "no_action", "empty"
    feedback: str


@dataclass(frozen=True, slots=True)
class RunEnded:
    """A run ended, answered or not: the last event it emits. ``result`` is what
    ``run`` returns (``stopped_by``, the answer, the limit or error that ended it)."""

    ctx: ExecutionContext
    result: AgentResult[Any]  # an observer may watch runs of any answer type


# -- run events (ReActAgent.stream) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelTextDelta:
    """Text the model is writing; ``section`` is the open section (None between)."""

    iteration: int
    section: str | None
    text: str


@dataclass(frozen=True, slots=True)
class ModelToolCallDelta:
    """A piece of a native tool call the model is writing (``ToolCallingAgent``).

    ``index`` is the call's position in the reply; ``id`` and ``name`` come with its
    first piece, then pieces of the argument JSON.
    """

    iteration: int
    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    iteration: int
    index: int
    name: str
    args: dict[str, object]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    iteration: int
    index: int
    name: str
    error: ToolCallError | None
    duration: float


@dataclass(frozen=True, slots=True)
class ObservationReady:
    """What the model will read next: tool results or corrective feedback."""

    iteration: int
    text: str
    tool_results: tuple[ToolChainResult, ...]


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class AnswerReady(Generic[AnswerT]):
    iteration: int
    answer: AnswerT


@dataclass(frozen=True, slots=True)
class LimitReached:
    iteration: int
    limit: str


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class RunFinished(Generic[AnswerT]):
    result: AgentResult[AnswerT]


RunEvent = (
    ModelTextDelta
    | ModelToolCallDelta
    | ToolCallStarted
    | ToolCallFinished
    | ObservationReady
    | AnswerReady[AnswerT]
    | LimitReached
    | RunFinished[AnswerT]
)
