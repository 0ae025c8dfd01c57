"""A run as the chat protocols see it: one stream of plain UI events, within bounds.

Both apps (AG-UI, the AI SDK's UI message stream) are a translation of the same
events, made here: what the model says (`Said`, text or reasoning), each step
(`StepBegan`, `StepEnded`), each tool call (`CallBegan`, `CallEnded`), the calls held
for a person (in `Ended`), and a run that could not be served (`Failed`).

`Runner` owns an app's runs. It starts one per request (``agent.stream``), or resumes a
paused one with the decisions the request carried (``agent.resume_stream``): either way
the run streams as it happens. It keeps its bounds: how many runs at once
(`Runner.admit`), how long one may take (``run_timeout``), and how many paused runs
wait for a decision (the oldest is dropped past ``max_paused``). The agent runs in a
task of its own that feeds a queue, so a deadline or a client that went away ends the
run wherever it is: its context is cancelled (a tool sees ``ctx.cancelled``), its task
cancelled and awaited, nothing left behind.

Paused runs live in this process (as every plain run's pause does): the sealed state
names one by its run id, and a resume looks it up here.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio
import msgspec

from agents._resume import ResumeError
from agents.events import (
    ModelTextDelta,
    RunEvent,
    RunFinished,
    StepFinished,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from agents.react import ReActAgent
from agents.result import AgentResult
from agents.tool_calling import ToolCallingAgent
from agents.ui._state import Conversation
from toolchain import Approval, ApprovalRequest, ElicitationRequest, ExecutionContext, ToolResult
from toolchain.runtime import CallHeld, describe_exception, logger, redact

__all__ = [
    "Bounds",
    "CallBegan",
    "CallEnded",
    "Ended",
    "Failed",
    "Runner",
    "Said",
    "StepBegan",
    "StepEnded",
    "UIAgent",
    "UIEvent",
]

_log = logger("agents.ui")


UIAgent = ReActAgent[Any] | ToolCallingAgent[Any]
"""The agents the apps serve."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one app allows: a request's body in bytes, runs at once, a run's seconds
    (``None``: the agent's own limits only), paused runs kept for a decision."""

    max_body: int = 1_000_000
    max_runs: int = 8
    run_timeout: float | None = 300.0
    max_paused: int = 256


# -- what a run says, protocol-neutral ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Said:
    """Text the model wrote: ``text`` for the person, ``reasoning`` its thinking."""

    kind: Literal["text", "reasoning"]
    text: str


@dataclass(frozen=True, slots=True)
class StepBegan:
    step: int


@dataclass(frozen=True, slots=True)
class StepEnded:
    step: int


@dataclass(frozen=True, slots=True)
class CallBegan:
    id: str
    name: str
    args: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class CallEnded:
    """A call's end: ``output``, its raw output as plain JSON data (`output_data`), or
    ``error`` (the message the model read)."""

    id: str
    name: str
    output: object
    error: str | None

    @property
    def output_text(self) -> str:
        """``output`` as text: a string as it is, anything else as compact JSON."""
        if isinstance(self.output, str):
            return self.output
        return msgspec.json.encode(self.output).decode()


@dataclass(frozen=True, slots=True)
class Ended:
    """The run ended (answered, paused, stopped by a limit, cancelled or failed):
    ``conversation`` is what the next request continues."""

    result: AgentResult[Any]
    conversation: Conversation
    held: tuple[ApprovalRequest, ...]
    model: str
    calls: Mapping[str, str] = field(default_factory=lambda: {})
    """Each held request's id → the id of the tool call it waits in (an MCP server's
    question, an `ElicitationRequest`, is not a call of its own)."""


@dataclass(frozen=True, slots=True)
class Failed:
    """The request could not be served (``code``: ``run_timeout``, ``resume_refused``,
    ``nothing_to_resume``, ``run_failed``); ``conversation`` is the one the request
    carried, unchanged, for the client to keep."""

    code: str
    message: str


UIEvent = Said | StepBegan | StepEnded | CallBegan | CallEnded | Ended | Failed


def output_data(result: ToolResult[object] | None) -> object:
    """A tool's raw output (its ``text``) as plain JSON data: a string stays one, a
    model or a dataclass becomes what JSON would hold."""
    if result is None:
        return None
    value = result.text
    if isinstance(value, str):
        return value
    try:
        return msgspec.to_builtins(value, enc_hook=_plain)
    except (TypeError, ValueError, msgspec.EncodeError):
        return str(value)


def _plain(item: object) -> object:
    dump = getattr(item, "model_dump", None)  # a pydantic model
    if callable(dump):
        return dump(mode="json")
    return str(item)


# -- the runs of one app ---------------------------------------------------------------------


@dataclass(slots=True)
class _Paused:
    result: AgentResult[Any]
    ctx: ExecutionContext


class _Finished:
    """The producer task's last item."""

    __slots__ = ("error", "result")

    def __init__(self, result: AgentResult[Any] | None, error: BaseException | None) -> None:
        self.result = result
        self.error = error


class Runner:
    """The runs of one app over one agent, within ``bounds``."""

    def __init__(self, agent: UIAgent, bounds: Bounds) -> None:
        self.agent = agent
        self.bounds = bounds
        self.running = 0
        self._paused: OrderedDict[str, _Paused] = OrderedDict()

    def admit(self) -> bool:
        """Take a run slot; False when ``bounds.max_runs`` runs are going already."""
        if self.running >= self.bounds.max_runs:
            return False
        self.running += 1
        return True

    def release(self) -> None:
        self.running -= 1

    def held(self, run_id: str) -> tuple[ApprovalRequest, ...]:
        """The calls the paused run ``run_id`` holds (none when it is not kept)."""
        found = self._paused.get(run_id)
        return () if found is None else found.result.pending

    async def start(self, task: str, conversation: Conversation) -> AsyncIterator[UIEvent]:
        """Run ``task`` after ``conversation``, as UI events."""
        agent = self.agent
        ctx = ExecutionContext(limits=agent.limits, name=agent.name)

        def events() -> AsyncIterator[RunEvent[Any]]:
            return agent.stream(
                task,
                ctx=ctx,
                history=conversation.messages,
                extension_state=conversation.extension_state,
            )

        async for event in self._drive(ctx, events):
            yield event

    async def resume(
        self, conversation: Conversation, decisions: Mapping[str, Approval]
    ) -> AsyncIterator[UIEvent]:
        """Go on with the paused run ``conversation`` names, with ``decisions``: streamed
        as a new run is (``agent.resume_stream``)."""
        paused = None if conversation.paused is None else self._paused.get(conversation.paused)
        if paused is None:
            yield Failed(
                "nothing_to_resume",
                "no paused run of this conversation is kept here (it was resumed already, "
                "dropped as the oldest of too many, or this server restarted): send a new "
                "message instead",
            )
            return
        agent, held = self.agent, paused.result

        def events() -> AsyncIterator[RunEvent[Any]]:
            return agent.resume_stream(held, decisions)  # ResumeError: resume_refused

        async for event in self._drive(paused.ctx, events):
            yield event

    async def _drive(
        self, ctx: ExecutionContext, events: Callable[[], AsyncIterator[RunEvent[Any]]]
    ) -> AsyncIterator[UIEvent]:
        """The run ``events`` makes, in a task of its own feeding a queue, as UI events."""
        loop = asyncio.get_running_loop()
        timeout = self.bounds.run_timeout
        deadline = None if timeout is None else loop.time() + timeout
        queue: asyncio.Queue[object] = asyncio.Queue()
        put = _putter(queue)

        async def produce() -> None:
            result: AgentResult[Any] | None = None
            try:
                # The agent's stream is an async generator (typed as the iterator it is):
                # closed with this task, so a cancelled run releases its model call and
                # tools.
                stream = cast(AsyncGenerator[RunEvent[Any], None], events())
                async with contextlib.aclosing(stream) as running:
                    async for event in running:
                        if isinstance(event, RunFinished):
                            finished: RunFinished[Any] = event
                            result = finished.result
                        else:
                            put(event)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                queue.put_nowait(_Finished(None, error))
            else:
                assert result is not None  # a stream always ends with RunFinished
                queue.put_nowait(_Finished(result, None))

        # Steps are told on the bus only; the stream has the rest (tool calls included).
        unsubscribe = [
            ctx.events.subscribe(StepStarted, put),
            ctx.events.subscribe(StepFinished, put),
        ]
        task = asyncio.create_task(produce(), name=f"agents.ui run {ctx.run_id}")
        started: set[str] = set()
        why = "the client went away"
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                try:
                    item = await asyncio.wait_for(queue.get(), left)
                except TimeoutError:
                    why = f"the run took longer than this server allows ({timeout:g} s)"
                    yield Failed(
                        "run_timeout",
                        f"the run took longer than this server allows ({timeout:g} s) and "
                        "was stopped",
                    )
                    return
                if isinstance(item, _Finished):
                    if item.error is not None:
                        yield _failure(item.error)
                        return
                    assert item.result is not None
                    yield self._ended(ctx, item.result)
                    return
                for event in _translate(item, self.agent.protocol, started):
                    yield event
        finally:
            for drop in unsubscribe:
                drop()
            if not task.done():
                # The client went away, or the deadline passed: the run ends here, and
                # its tools see it (ctx.cancelled, and the task's cancellation).
                ctx.cancel(why)
                task.cancel()
            # Shielded: under Starlette (anyio) a cancelled scope cancels every await in
            # it again, and the run must be seen to its end, not left running.
            with anyio.CancelScope(shield=True):
                await asyncio.wait([task])

    def _ended(self, ctx: ExecutionContext, result: AgentResult[Any]) -> Ended:
        paused_id: str | None = None
        self._paused.pop(ctx.run_id, None)
        if result.stopped_by == "paused" and result.pending:
            paused_id = ctx.run_id
            self._paused[paused_id] = _Paused(result, ctx)
            while len(self._paused) > self.bounds.max_paused:
                self._paused.popitem(last=False)
        # The system prompt is left out: the agent writes its own on every run.
        messages = tuple(message for message in result.messages if message.role != "system")
        conversation = Conversation(messages, dict(result.extension_state), paused_id)
        model = self.agent.model.name
        held = result.pending if paused_id else ()
        return Ended(result, conversation, held, model, _held_in(result) if held else {})


def _held_in(result: AgentResult[Any]) -> dict[str, str]:
    """Each held request's id → the id of the paused step's call it waits in."""
    calls: dict[str, str] = {}
    for tool_result in result.steps[-1].tool_results if result.steps else ():
        raw = tool_result.raw
        for call, error in zip(raw.calls, raw.errors, strict=True):
            if error is not None and isinstance(error.exception, CallHeld):
                calls.update((request.call_id, call.id) for request in error.exception.requests)
    return calls


def _putter(queue: asyncio.Queue[object]) -> Any:
    """A bus handler that puts events in ``queue`` from the loop's thread or any other
    (a plain tool runs in a worker thread)."""
    loop = asyncio.get_running_loop()
    owner = threading.get_ident()

    def put(event: object) -> None:
        if threading.get_ident() == owner:
            queue.put_nowait(event)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    return put


def _translate(
    item: object, protocol: Literal["text", "native"], started: set[str]
) -> list[UIEvent]:
    if isinstance(item, ModelTextDelta):
        if protocol == "native":
            return [Said("text", item.text)] if item.section is None else []
        if item.section == "thinking":
            return [Said("reasoning", item.text)]
        if item.section == "answer":
            return [Said("text", item.text)]
        return []  # the action section: its calls are told as they run
    if isinstance(item, StepStarted):
        return [StepBegan(item.step)]
    if isinstance(item, StepFinished):
        events: list[UIEvent] = []
        # The calls the step holds for a person are its calls too: told inside it (a
        # server's question is no call: it is asked in the call it came during).
        for request in (r for result in item.step.tool_results for r in result.pending):
            if request.call_id not in started and not isinstance(request, ElicitationRequest):
                started.add(request.call_id)
                events.append(CallBegan(request.call_id, request.tool, dict(request.args)))
        return [*events, StepEnded(item.step.index)]
    if isinstance(item, ToolCallStarted):
        started.add(item.id)
        return [CallBegan(item.id, item.name, dict(item.args))]
    if isinstance(item, ToolCallFinished):
        error = None if item.error is None else item.error.message
        ended = CallEnded(item.id, item.name, output_data(item.result), error)
        if item.id in started:
            return [ended]
        # A call answered without running (a denied one, on resume): begun here, so a
        # client sees each result after its call.
        started.add(item.id)
        return [CallBegan(item.id, item.name, dict(item.args)), ended]
    return []


def _failure(error: BaseException) -> Failed:
    if isinstance(error, ResumeError):
        return Failed("resume_refused", str(error))
    _log.error("an agents.ui run failed", exc_info=error)
    return Failed("run_failed", redact(f"the run failed: {describe_exception(error)}"))
