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
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Generic, Protocol, TypeVar, cast

from dbos import DBOS, DBOSClient, Queue, SetWorkflowID, WorkflowHandleAsync

from agents._run_inputs import check_run_inputs
from agents.durable._record import (
    ReplayError,
    Start,
    decode_inputs,
    decode_result,
    decode_start,
    encode_inputs,
    encode_result,
    encode_start,
)
from agents.durable._runner import StepRunner, fork
from agents.durable._serializer import Recorded, check_client
from agents.models import Message
from agents.result import AgentResult
from toolchain import ContentPart, _step_seam
from toolchain._logs import logger

__all__ = ["DurableRun", "Runnable", "register", "retrieve", "start_run"]

AnswerT = TypeVar("AnswerT")
_log = logger("agents.durable")

Task = str | Sequence[ContentPart]
Inputs = tuple[Task, Sequence[Message], Mapping[str, object] | None]


class Runnable(Protocol):
    """What a workflow runs: a durable agent or prompt, by its registered name."""

    name: str
    max_output_bytes: int
    """The largest tool output its runs record (``MAX_OUTPUT_BYTES`` by default)."""

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


_REGISTRY: dict[str, Runnable] = {}


def register(runnable: Runnable) -> None:
    """Make ``runnable`` the one its name finds (a workflow recovered in this process).

    A second one under a name replaces the first, with a warning: a module run again
    (a notebook cell) rebuilds its agents, but two different agents under one name would
    send one's runs to the other when they are recovered.
    """
    known = _REGISTRY.get(runnable.name)
    if known is not None and known is not runnable:
        _log.warning(
            "a durable run named %r was registered already; the new one replaces it "
            "(give each durable agent or prompt its own name)",
            runnable.name,
        )
    _REGISTRY[runnable.name] = runnable


def _today() -> dt.date:
    return dt.date.today()


def _seed() -> bytes:
    return secrets.token_bytes(32)


@DBOS.workflow(name="agents.durable.run")
async def _workflow(name: str, inputs: object) -> object:
    runnable = _REGISTRY.get(name)
    if runnable is None:
        raise LookupError(
            f"no durable agent or prompt named {name!r} in this process: build it (with "
            "that name) before agents.durable.launch(), as the process that started it did"
        )
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
    runner = StepRunner(start, record=record, max_output_bytes=runnable.max_output_bytes)
    _step_seam.activate()
    token = _step_seam.RUNNER.set(runner)
    try:
        result = await runnable.execute(task, history, extension_state)
    finally:
        _step_seam.RUNNER.reset(token)
    if runner.failure is not None:
        raise runner.failure
    return Recorded(result, encode_result(name, result))


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


class DurableRun(Generic[AnswerT]):
    """A durable run started (or found again) by its workflow id.

    ``await run.result()`` waits for its ``AgentResult``, in this process or another:
    the run goes on in whichever process runs or recovers its workflow.
    """

    def __init__(self, handle: _Handle) -> None:
        self._handle = handle

    @property
    def workflow_id(self) -> str:
        """The run's workflow id: ``retrieve`` it, send it decisions, list its steps."""
        return self._handle.get_workflow_id()

    async def result(self) -> AgentResult[AnswerT]:
        """The run's result, once it has one (however many processes that takes).

        Raises the error that ended the run's workflow, if one did: a ``ReplayError``
        when the code changed in a way its record cannot replay, a ``RecordError``
        when its record cannot be read or written.
        """
        done = await self._handle.get_result()
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


async def start_run(
    runnable: Runnable,
    task: Task,
    history: Sequence[Message],
    extension_state: Mapping[str, object] | None,
    workflow_id: str | None,
    queue: Queue | None,
) -> DurableRun[Any]:
    """Start ``runnable``'s workflow (on ``queue``, when given) and return its handle.

    Arguments a run would refuse are a ``TypeError`` here, before a workflow is recorded."""
    task, history, extension_state = check_run_inputs(task, history, extension_state)
    chosen = SetWorkflowID(workflow_id) if workflow_id is not None else nullcontext()
    live: Inputs = (task, tuple(history), extension_state)
    inputs = Recorded(live, encode_inputs(task, history, extension_state))
    with chosen:
        if queue is not None:
            handle = await queue.enqueue_async(_workflow, runnable.name, inputs)
        else:
            handle = await DBOS.start_workflow_async(_workflow, runnable.name, inputs)
    return DurableRun(handle)


async def retrieve(workflow_id: str, *, client: DBOSClient | None = None) -> DurableRun[Any]:
    """The run with this workflow id, started by this process or any other; through
    ``client`` (``agents.durable.client``) from a process that runs no workflows.

    >>> callable(retrieve)
    True
    """
    handle: WorkflowHandleAsync[Any] = (
        await DBOS.retrieve_workflow_async(workflow_id)
        if client is None
        else await check_client(client).retrieve_workflow_async(workflow_id)
    )
    return DurableRun(handle)
