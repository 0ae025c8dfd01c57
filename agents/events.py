"""What an agent run reports: observer events on the context, and streamed run events.

Observer events go through ``ctx.events`` (subscribe for logging, tracing, metrics);
run events are what ``ReActAgent.stream`` yields to the caller, in order. One fact is
one event, built once where it happens: a fact both channels tell is delivered to both
as the same object. A call starting and ending (`ToolCallStarted`, `ToolCallFinished`:
the chain builds them, ``toolchain``'s events) and a run ending (`RunFinished`, built
when the run's result is) go to ``ctx.events`` and into the stream alike.

Each fact and its event (bus: ``ctx.events``; stream: ``stream()``):

- a step starts: `StepStarted` (bus); its request is ready: `StepReady` (bus);
- a model call starts, ends or fails: `BeforeModelCall`, `AfterModelCall`,
  `ModelCallFailed` (bus); the model writes: `ModelTextDelta`, `ModelToolCallDelta`
  (stream);
- a tool call starts and ends: `ToolCallStarted`, `ToolCallFinished` (bus and stream,
  the same object);
- a reply is rejected: `OutputRejected` (bus); what the model reads next:
  `ObservationReady` (stream); an answer is taken: `AnswerReady` (stream); a limit
  ends the run: `LimitReached` (stream);
- a step ends: `StepFinished` (bus); the run ends: `RunFinished` (bus and stream, the
  same object).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from typing_extensions import deprecated

from agents._renamed import renamed_names
from agents.models import Message, ModelResponse
from agents.result import AgentResult, StepResult
from agents.steps import StepRequest
from toolchain import ExecutionContext, ToolCallFinished, ToolCallStarted, ToolChainResult

__all__ = [
    "AfterModelCall",
    "AnswerReady",
    "BeforeModelCall",
    "LimitReached",
    "ModelCallFailed",
    "ModelTextDelta",
    "ModelToolCallDelta",
    "ObservationReady",
    "OutputRejected",
    "RunEvent",
    "RunFinished",
    "StepFinished",
    "StepReady",
    "StepStarted",
    "ToolCallFinished",
    "ToolCallStarted",
]

AnswerT = TypeVar("AnswerT")


class _OfAStep:
    """An event of one step of a run: ``step`` is its number, from 1."""

    __slots__ = ()

    step: int

    @property
    @deprecated("the event's `iteration` is its `step` now; the old name goes in the next release")
    def iteration(self) -> int:
        """``step``, under its old name (for one release)."""
        return self.step


# -- observer events (ctx.events) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepStarted(_OfAStep):
    """A step begins: its limits were checked, its model call is next
    (``IterationStarted`` until this release)."""

    ctx: ExecutionContext
    step: int


@dataclass(frozen=True, slots=True)
class StepFinished:
    """A step ended, its record made: what the model said and what came of it
    (``IterationFinished`` until this release)."""

    ctx: ExecutionContext
    step: StepResult

    @property
    @deprecated(
        "StepFinished.iteration is StepFinished.step now; the old name goes in the next release"
    )
    def iteration(self) -> StepResult:
        """``step``, under its old name (for one release)."""
        return self.step


@dataclass(frozen=True, slots=True)
class StepReady:
    """A step's request after the step hooks: exactly what the model is called with."""

    ctx: ExecutionContext
    request: StepRequest
    changed: bool
    """Whether a step hook changed anything."""


@dataclass(frozen=True, slots=True)
class BeforeModelCall(_OfAStep):
    """A model call begins. ``base_url`` is where the model sends it, when it says so (a
    ``base_url`` property, as the OpenAI and Anthropic adapters have; ``""`` for a
    `ScriptedModel`); its credentials are the adapter's to keep: read it with care."""

    ctx: ExecutionContext
    step: int
    model: str
    messages: Sequence[Message]
    base_url: str = ""


@dataclass(frozen=True, slots=True)
class AfterModelCall(_OfAStep):
    ctx: ExecutionContext
    step: int
    model: str
    response: ModelResponse
    duration: float


@dataclass(frozen=True, slots=True)
class ModelCallFailed(_OfAStep):
    """A model call ended without a reply; the run ends with ``stopped_by`` ``error``
    (or ``limit`` when its time ran out). ``kind`` names the failure: the
    ``ModelError`` class, ``timeout``, or the class a broken model raised;
    ``message`` is redacted."""

    ctx: ExecutionContext
    step: int
    model: str
    kind: str
    message: str
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class OutputRejected(_OfAStep):
    """The model's output could not be used as written; ``feedback`` was sent back."""

    ctx: ExecutionContext
    step: int
    kind: str  # "format", "tool_calls", "answer", "no_action", "empty"
    feedback: str


# -- run events (ReActAgent.stream) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelTextDelta(_OfAStep):
    """Text the model is writing; ``section`` is the open section (None between)."""

    step: int
    section: str | None
    text: str


@dataclass(frozen=True, slots=True)
class ModelToolCallDelta(_OfAStep):
    """A piece of a native tool call the model is writing (``ToolCallingAgent``).

    ``index`` is the call's position in the reply; ``id`` and ``name`` come with its
    first piece, then pieces of the argument JSON.
    """

    step: int
    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ObservationReady(_OfAStep):
    """What the model will read next: tool results or corrective feedback."""

    step: int
    text: str
    tool_results: tuple[ToolChainResult, ...]


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class AnswerReady(_OfAStep, Generic[AnswerT]):
    step: int
    answer: AnswerT


@dataclass(frozen=True, slots=True)
class LimitReached(_OfAStep):
    step: int
    limit: str


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class RunFinished(Generic[AnswerT]):
    """A run ended, answered or not: the last event on ``ctx.events`` and the last item
    of the stream, one object for both. ``result`` is what ``run`` returns
    (``stopped_by``, the answer, the limit or error that ended it); an observer may
    watch runs of any answer type. ``RunEnded`` until this release, when the bus had
    its own event for the fact."""

    ctx: ExecutionContext
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


if TYPE_CHECKING:  # the old names, for one release: typed as what they are; they warn
    IterationFinished = StepFinished
    IterationStarted = StepStarted
    RunEnded = RunFinished

__getattr__ = renamed_names(
    __name__,
    {
        "IterationFinished": "StepFinished",
        "IterationStarted": "StepStarted",
        "RunEnded": "RunFinished",
    },
)
