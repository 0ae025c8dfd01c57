"""The workflow every durable run is, the names it finds its agents by, and its handles.

One workflow function (``agents.durable.run``) is registered when this module loads,
so every process registers the same code and DBOS counts them as one application
version: a run started in one process is recovered by any other. The workflow takes
the name of what to run (``DurableAgent`` / ``DurablePrompt``, registered under that
name when the user's module builds it) and the run's inputs, records its start (the
date, a seed for ids, and what reads its record) as its first step, installs a
``StepRunner`` for the run and runs it.

Everything it records is plain data (``_record``): its inputs, its steps and its
result. In the process that starts a run, the workflow gets the live inputs and the
handle the live ``AgentResult`` (`Recorded`); a process that recovers a run reads them
from the record, and ``DurableRun.result`` loads the result back with the types of the
agent registered under the run's name (plain data where this process has none).

When a run is replayed, its start is checked first: a run started by another kind of
agent (a ``ReActAgent`` replayed by a ``ToolCallingAgent``, another chain or text
format) would read its recorded replies otherwise, so it stops with a ``ReplayError``.

A workflow id is one agent's run of one task: each run carries its agent's name and a
digest of its task and history as DBOS workflow attributes, checked when a run is
started with an id of the caller's (``start_run``). A run whose name this process has
not built yet waits for it (``register`` wakes it). ``DurableRun.result`` watches for a
cancellation DBOS does not deliver to a waiting run; ``resume`` rewinds a run that ended
in error to its failed step (DBOS's ``rewind_workflow``: same id, the steps before it
kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import hashlib
import secrets
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Generic, Protocol, TypeVar, cast

from dbos import (
    DBOS,
    DBOSClient,
    Queue,
    SetWorkflowAttributes,
    SetWorkflowID,
    WorkflowHandleAsync,
)

# DBOS exports its exceptions from this module only.
from dbos._error import (
    DBOSAwaitedWorkflowCancelledError,
    DBOSConflictingWorkflowError,
)

from agents._run_inputs import check_run_inputs
from agents.durable._errors import (
    NothingToResumeError,
    ReplayError,
    RunCancelledError,
    WorkflowIdTakenError,
)
from agents.durable._launch import require_launched, sealing_key
from agents.durable._pauses import EVENT as PAUSED
from agents.durable._pauses import TOPIC as DECISIONS
from agents.durable._pauses import shown, taken
from agents.durable._record import (
    Start,
    decode_inputs,
    decode_result,
    decode_start,
    encode_inputs,
    encode_result,
    encode_start,
)
from agents.durable._retries import ModelRetries
from agents.durable._runner import StepRunner, fork
from agents.durable._serializer import Recorded, check_client
from agents.models import Message, messages_to_json
from agents.result import AgentResult
from toolchain import Approval, ContentPart
from toolchain.runtime import logger, step_runner_installed

__all__ = [
    "DurableRun",
    "Runnable",
    "cancellation",
    "first_of",
    "register",
    "resume",
    "retrieve",
    "start_run",
]

AnswerT = TypeVar("AnswerT")
_log = logger("agents.durable")

Task = str | Sequence[ContentPart]
Inputs = tuple[Task, Sequence[Message], Mapping[str, object] | None]


class Runnable(Protocol):
    """What a workflow runs: a durable agent or prompt, by its registered name."""

    name: str
    max_output_bytes: int
    """The largest tool output its runs record (``MAX_OUTPUT_BYTES`` by default)."""
    retries: ModelRetries

    def execute(
        self,
        task: Task,
        history: Sequence[Message],
        extension_state: Mapping[str, object] | None,
    ) -> Awaitable[AgentResult[Any]]: ...

    def reader(self) -> dict[str, str]:
        """What reads a run's record: a replay by another is refused (see the module)."""
        ...

    def output_type(self, tool: str) -> object:
        """The output type of its tool ``tool`` (``Any`` for one it does not know)."""
        ...

    def answer_type(self) -> object:
        """The type of its runs' answers (``Any`` when it cannot say)."""
        ...

    def go_on(
        self, result: AgentResult[Any], decisions: Mapping[str, Approval]
    ) -> Awaitable[AgentResult[Any]] | None:
        """The paused run of ``result`` resumed with ``decisions``, in the workflow;
        None when its runs cannot be resumed (the workflow then ends paused)."""
        ...


_REGISTRY: dict[str, Runnable] = {}
_waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[Runnable]]]] = {}
"""Runs that found no agent under their name (launched before it was built), waiting."""
_registry_lock = threading.Lock()  # agents are built in the user's threads, runs wait in DBOS's


def register(runnable: Runnable) -> None:
    """Make ``runnable`` the one its name finds (a workflow recovered in this process).

    A second one under a name replaces the first, with a warning: a module run again
    (a notebook cell) rebuilds its agents, but two different agents under one name would
    send one's runs to the other when they are recovered. Runs that wait for this name
    (taken over before it was built) go on now.
    """
    with _registry_lock:
        known = _REGISTRY.get(runnable.name)
        _REGISTRY[runnable.name] = runnable
        waiting = _waiting.pop(runnable.name, [])
    if known is not None and known is not runnable:
        _log.warning(
            "a durable run named %r was registered already; the new one replaces it "
            "(give each durable agent or prompt its own name)",
            runnable.name,
        )
    for loop, future in waiting:
        with contextlib.suppress(RuntimeError):  # a loop that has closed: its run went with it
            loop.call_soon_threadsafe(_resolve, future, runnable)


def _resolve(future: asyncio.Future[Runnable], runnable: Runnable) -> None:
    if not future.done():
        future.set_result(runnable)


async def _built(name: str) -> Runnable:
    """The runnable named ``name``, once this process builds it (a warning says why the
    run waits). The run stays pending meanwhile: if this process never builds it, the
    run is taken over, when this process is gone, by one that does."""
    with _registry_lock:
        found = _REGISTRY.get(name)
        if found is not None:
            return found
        future: asyncio.Future[Runnable] = asyncio.get_running_loop().create_future()
        entry = (asyncio.get_running_loop(), future)
        _waiting.setdefault(name, []).append(entry)
    _log.warning(
        "durable run %s needs the durable agent or prompt named %r, which this process "
        "has not built: the run waits until it is built here. Build every DurableAgent "
        "and DurablePrompt before agents.durable.launch(), as the process that started "
        "the run did",
        DBOS.workflow_id,
        name,
    )
    try:
        return await future
    finally:
        with _registry_lock:
            if entry in _waiting.get(name, []):
                _waiting[name].remove(entry)


def _today() -> dt.date:
    return dt.date.today()


def _seed() -> bytes:
    return secrets.token_bytes(32)


@DBOS.workflow(name="agents.durable.run")
async def _workflow(name: str, inputs: object) -> object:
    runnable = _REGISTRY.get(name) or await _built(name)
    task, history, extension_state = (
        cast(Inputs, inputs.live) if isinstance(inputs, Recorded) else decode_inputs(inputs)
    )
    reader = runnable.reader()
    fresh = False

    def begin() -> object:  # a Recorded here; the step gives the plain record on replay
        nonlocal fresh
        fresh = True
        start = Start(_today(), _seed(), reader)
        return Recorded(start, encode_start(start))

    began = await DBOS.run_step_async({"name": "start"}, begin)
    start = cast(Start, began.live) if isinstance(began, Recorded) else decode_start(began)
    workflow_id = DBOS.workflow_id or ""
    record = None if fresh else await _recorded_steps(workflow_id)
    if record is not None and dict(start.reader) != reader:
        raise ReplayError(
            f"run {workflow_id} cannot be replayed by this code: it was started with "
            f"{_changed(start.reader, reader)}, which would read its recorded replies "
            "otherwise (a ReAct agent's <action> text is an answer to a native one); "
            "nothing was run again. " + fork(workflow_id, record)
        )
    runner = StepRunner(
        start,
        record=record,
        max_output_bytes=runnable.max_output_bytes,
        retries=runnable.retries,
    )
    with step_runner_installed(runner):
        result = await runnable.execute(task, history, extension_state)
        pause = 0
        taken: dict[str, str] = {}  # pause → the id of the message whose decisions it took
        # Paused on held calls: wait here, in the workflow, for decisions (see _pauses);
        # a process that takes the run over replays to the same wait.
        while result.stopped_by == "paused" and result.pending and runner.failure is None:
            pause += 1
            published = {
                "n": pause,
                "result": encode_result(name, shown(result, pause, sealing_key())),
                "taken": dict(taken),
            }
            await DBOS.set_event_async(PAUSED, published)
            answered = await _decisions(pause, result)
            decisions = None if answered is None else answered[0]
            if answered is not None:  # taken: the pause no longer waits
                # Whose decisions these were, for the resume that sent them (and any
                # other racing it) to tell; kept in every later pause's event too.
                taken[str(pause)] = answered[1]
                await DBOS.set_event_async(PAUSED, {"n": pause, "taken": dict(taken)})
            going_on = None if decisions is None else runnable.go_on(result, decisions)
            if going_on is None:
                break
            result = await going_on
    if runner.failure is not None:
        raise runner.failure
    return Recorded(result, encode_result(name, result))


async def _decisions(
    pause: int, result: AgentResult[Any]
) -> tuple[dict[str, Approval], str] | None:
    """The decisions for the pause ``pause`` of the run, the first message that brings
    ones that apply (others are ignored, and logged), with that message's id (``""``
    when it has none); None once the run is cancelled."""
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None

    async def status() -> str | None:
        found = await DBOS.get_workflow_status_async(workflow_id)
        return None if found is None else found.status

    while True:
        received = asyncio.ensure_future(DBOS.recv_async(DECISIONS, _WAIT_SECONDS))
        # Outside the workflow's context: a status read made in it would be recorded.
        watched = contextvars.Context().run(asyncio.ensure_future, cancellation(status))
        if not await first_of(received, watched):
            return None
        sent = received.result()
        decided = taken(sent, pause, result.pending)
        if decided is not None:
            found = cast("dict[str, object]", sent).get("id")  # a dict: `taken` checked it
            return decided, found if isinstance(found, str) else ""


def _changed(recorded: Mapping[str, str], now: Mapping[str, str]) -> str:
    """``agent ReActAgent, where this code has ToolCallingAgent`` for each part changed."""
    parts = sorted(set(recorded) | set(now))
    return "; ".join(
        f"{part} {recorded.get(part, 'none')}, where this code has {now.get(part, 'none')}"
        for part in parts
        if recorded.get(part) != now.get(part)
    )


async def _recorded_steps(workflow_id: str) -> dict[int, str]:
    """The name of each step the run recorded, by step id (names only, not outputs)."""

    def names() -> dict[int, str]:
        steps = DBOS.list_workflow_steps(workflow_id, load_output=False)
        return {step["function_id"]: step["function_name"] for step in steps}

    # Listed outside the workflow's context (an empty one, in a thread): listed from
    # inside it, the listing would itself be a step, recorded once and replayed stale.
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, contextvars.Context().run, names)


class _Handle(Protocol):
    """A DBOS workflow handle, from DBOS launched here or from a ``DBOSClient``."""

    def get_workflow_id(self) -> str: ...

    async def get_result(self) -> Any: ...

    async def get_status(self) -> Any: ...


_OWNER = "gent.agent"
"""The workflow attribute naming the durable agent or prompt a run belongs to."""
_INPUT = "gent.input"
"""The workflow attribute holding a digest of the run's task and history."""
_UNDER_WAY = ("PENDING", "ENQUEUED", "DELAYED")
_WATCH_SECONDS = 1.0
"""How often a waiting run, or a caller waiting for a result, checks for a cancellation."""
_WAIT_SECONDS = 10 * 365 * 24 * 3600.0
"""How long a paused run waits for decisions: for as long as anyone might decide."""
_PAUSE_POLL_SECONDS = 0.2
"""How often a caller waiting for a run's result looks for a new pause."""


_Events = Callable[[str, str, float], Awaitable[Any]]
"""Reads a workflow's event: DBOS's ``get_event_async``, or a ``DBOSClient``'s."""


class DurableRun(Generic[AnswerT]):
    """A durable run started (or found again) by its workflow id.

    ``await run.result()`` waits for its ``AgentResult``, in this process or another:
    the run goes on in whichever process runs or recovers its workflow.
    """

    def __init__(self, handle: _Handle, events: _Events | None = None) -> None:
        self._handle = handle
        self._events: _Events = events or DBOS.get_event_async

    async def _paused_after(self, pause: int) -> AgentResult[AnswerT]:
        """The run's first pause later than ``pause`` that waits for decisions, once
        the run publishes one (`_pauses`)."""
        while True:
            found: object = await self._events(self.workflow_id, PAUSED, 0)
            if isinstance(found, dict):
                event = cast("dict[str, object]", found)
                number = event.get("n")
                fresh = isinstance(number, int) and number > pause and "result" in event
                # A run that ended (cancelled as it waited) waits on no pause any more.
                if fresh and await self.status() in _UNDER_WAY:
                    _, result = decode_result(event["result"], _types_of)
                    return cast(AgentResult[AnswerT], result)
            await asyncio.sleep(_PAUSE_POLL_SECONDS)

    async def pause(self) -> tuple[int, bool]:
        """The run's latest pause, and whether it still waits for decisions."""
        found: object = await self._events(self.workflow_id, PAUSED, 0)
        if not isinstance(found, dict):
            return 0, False
        event = cast("dict[str, object]", found)
        number = event.get("n")
        return (number if isinstance(number, int) else 0), "result" in event

    async def taken(self, pause: int) -> str | None:
        """The id of the message whose decisions the pause ``pause`` took (``""`` for
        one sent without an id), or None while it has taken none."""
        found: object = await self._events(self.workflow_id, PAUSED, 0)
        if not isinstance(found, dict):
            return None
        taken = cast("dict[str, object]", found).get("taken")
        if not isinstance(taken, dict):
            return None
        sent = cast("dict[str, object]", taken).get(str(pause))
        return sent if isinstance(sent, str) else None

    @property
    def workflow_id(self) -> str:
        """The run's workflow id: ``retrieve`` it, send it decisions, list its steps."""
        return self._handle.get_workflow_id()

    async def result(self) -> AgentResult[AnswerT]:
        """The run's result, once it has one (however many processes that takes): its
        end, or, while it is paused on held calls, the paused result (``pending`` lists
        them; ``DurableAgent.resume`` decides them, from any process).

        Raises the error that ended the run's workflow, if one did: a ``ReplayError``
        when the code changed in a way its record cannot replay, a ``RecordError``
        when its record cannot be read or written. Raises ``RunCancelledError`` within
        a second or so of the run being cancelled (``DBOS.cancel_workflow``), even while
        it waits for a person.
        """
        return await self.after(0)

    async def after(self, pause: int) -> AgentResult[AnswerT]:
        """The run's end, or its first pause later than ``pause`` that still waits
        (see `result`)."""
        ended = asyncio.ensure_future(self._handle.get_result())
        # Read outside any workflow's context: read from inside one (a workflow of the
        # user's waiting for this run), each poll would be recorded as a step.
        paused = contextvars.Context().run(asyncio.ensure_future, self._paused_after(pause))
        watch = asyncio.ensure_future(cancellation(self.status))
        tasks = (ended, paused, watch)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if ended.cancelled():
            if paused.done() and not paused.cancelled():
                return paused.result()  # or what stopped it reading the pause
            if watch.done() and not watch.cancelled():
                raise RunCancelledError(self.workflow_id)
            # The run's task in this process was cancelled under it (DBOS shut down):
            # the run goes on wherever it is recovered; its result comes from the record.
            found: WorkflowHandleAsync[Any] = await DBOS.retrieve_workflow_async(self.workflow_id)
            return await DurableRun[AnswerT](found, self._events).after(pause)
        waiting = ended
        try:
            done = waiting.result()
        except DBOSAwaitedWorkflowCancelledError:
            raise RunCancelledError(self.workflow_id) from None
        if isinstance(done, Recorded):  # the run finished in this process
            return cast(AgentResult[AnswerT], done.live)
        _, result = decode_result(done, _types_of)
        return cast(AgentResult[AnswerT], result)

    async def status(self) -> str:
        """DBOS's status of the workflow: ``PENDING``, ``ENQUEUED``, ``SUCCESS``, ``ERROR`` …"""
        found = await self._handle.get_status()
        return str(found.status)


def _types_of(name: str) -> tuple[Callable[[str], object], object]:
    """How the runs of the runnable ``name`` type their tools' outputs and their answer
    (as plain data, where this process registered no runnable under that name)."""
    runnable = _REGISTRY.get(name)
    if runnable is None:
        return (lambda _tool: Any), Any
    return runnable.output_type, runnable.answer_type()


async def first_of(work: asyncio.Future[Any], watch: asyncio.Future[None]) -> bool:
    """Wait for ``work`` or ``watch``, whichever ends first, and cancel the other (it
    is awaited, so no task is left behind); whether ``work`` ended (maybe cancelled by
    something else than this)."""
    try:
        await asyncio.wait((work, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended = work.done()
        for task in (work, watch):
            if not task.done():
                task.cancel()
        await asyncio.gather(work, watch, return_exceptions=True)
    return ended


async def cancellation(status: Callable[[], Awaitable[str | None]]) -> None:
    """Return once ``status()`` says ``CANCELLED``: DBOS does not wake a run that waits
    (for a message, for a person) when it is cancelled, nor whoever waits for its result."""
    while True:
        await asyncio.sleep(_WATCH_SECONDS)
        try:
            found = await status()
        except Exception:  # the database is away a moment: the result may still come
            continue
        if found == "CANCELLED":
            return


async def start_run(
    runnable: Runnable,
    task: Task,
    history: Sequence[Message],
    extension_state: Mapping[str, object] | None,
    workflow_id: str | None,
    queue: Queue | None,
) -> DurableRun[Any]:
    """Start ``runnable``'s workflow (on ``queue``, when given) and return its handle.

    Arguments a run would refuse are a ``TypeError`` here, before a workflow is
    recorded. A run is marked with its agent's name and a digest of its task and history
    (DBOS workflow attributes): started again with its id, it is the same run only when
    both match; otherwise ``WorkflowIdTakenError``, and the other run is neither run nor
    shown.
    """
    task, history, extension_state = check_run_inputs(task, history, extension_state)
    require_launched("start a durable run")
    chosen = SetWorkflowID(workflow_id) if workflow_id is not None else nullcontext()
    digest = _digest(task, history)
    marks = SetWorkflowAttributes({_OWNER: runnable.name, _INPUT: digest})
    live: Inputs = (task, tuple(history), extension_state)
    inputs = Recorded(live, encode_inputs(task, history, extension_state))
    try:
        with chosen, marks:
            if queue is not None:
                handle = await queue.enqueue_async(_workflow, runnable.name, inputs)
            else:
                handle = await DBOS.start_workflow_async(_workflow, runnable.name, inputs)
    except DBOSConflictingWorkflowError:
        assert workflow_id is not None  # a fresh id conflicts with nothing
        raise WorkflowIdTakenError(
            workflow_id, "it names a workflow that is not a durable run"
        ) from None
    if workflow_id is not None:  # an id of the caller's: it may name a run that was there
        found = (await handle.get_status()).attributes or {}
        if found.get(_OWNER) != runnable.name:
            owner = found.get(_OWNER)
            whose = f"durable {owner!r}" if owner else "no durable agent or prompt"
            raise WorkflowIdTakenError(workflow_id, f"it names a run of {whose}")
        if found.get(_INPUT) != digest:
            raise WorkflowIdTakenError(
                workflow_id, f"{runnable.name!r} ran it with another task or history"
            )
    return DurableRun(handle)


async def retrieve(workflow_id: str, *, client: DBOSClient | None = None) -> DurableRun[Any]:
    """The run with this workflow id, started by this process or any other; through
    ``client`` (``agents.durable.client``) from a process that runs no workflows.

    >>> callable(retrieve)
    True
    """
    if client is None:
        require_launched("retrieve a durable run")
    if client is None:
        mine: WorkflowHandleAsync[Any] = await DBOS.retrieve_workflow_async(workflow_id)
        return DurableRun(mine)
    checked = check_client(client)
    found: WorkflowHandleAsync[Any] = await checked.retrieve_workflow_async(workflow_id)
    return DurableRun(found, checked.get_event_async)


async def resume(workflow_id: str) -> DurableRun[Any]:
    """Continue a durable run that ended in error, or was cancelled, from where it stopped.

    A run whose model call failed for good (the provider down for longer than its
    ``ModelRetries``) ends with ``stopped_by == "error"``; started again with its id it
    returns that same result. ``resume`` makes that failed call again and goes on: the
    steps before it are replayed from the record (no finished tool call runs again).
    The same for a run that ended in DBOS's ``ERROR`` (its agent raised): it goes on
    from the first step not recorded. A cancelled run goes on where it was. A run under
    way is left as it is. The workflow id stays the same; ``await .result()`` on the
    handle returned waits for the new ending. Raises ``NothingToResumeError`` for a run
    that ended without a failure.

    >>> callable(resume)
    True
    """
    require_launched("resume a durable run")
    handle: WorkflowHandleAsync[Any] = await DBOS.retrieve_workflow_async(workflow_id)
    status = (await handle.get_status()).status
    if status in _UNDER_WAY:
        return DurableRun(handle)
    if status in ("CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
        return DurableRun(await DBOS.resume_workflow_async(workflow_id))
    steps = await DBOS.list_workflow_steps_async(workflow_id, load_output=False)
    last = steps[-1] if steps else None
    if last is not None:
        loaded = await DBOS.list_workflow_steps_async(workflow_id, offset=len(steps) - 1, limit=1)
        if loaded and loaded[0]["error"] is not None:  # a call failed for good: again
            return DurableRun(
                await DBOS.rewind_workflow_async(workflow_id, start_step=last["function_id"])
            )
    if status != "ERROR":
        raise NothingToResumeError(workflow_id, "its last step did not fail")
    after = last["function_id"] + 1 if last is not None else 1
    return DurableRun(await DBOS.rewind_workflow_async(workflow_id, start_step=after))


def _digest(task: Task, history: Sequence[Message]) -> str:
    """A digest of what a run was asked: its task and the history it continues."""
    asked = Message.text("user", task) if isinstance(task, str) else Message("user", tuple(task))
    try:
        text = messages_to_json((*history, asked))
    except Exception:  # not messages: the run itself will say what is wrong with them
        text = repr((task, history))
    return hashlib.sha256(text.encode()).hexdigest()
