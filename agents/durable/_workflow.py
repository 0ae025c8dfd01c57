"""The workflow every durable run is, the names it finds its agents by, and its handles.

One workflow function (``agents.durable.run``) is registered when this module loads,
so every process registers the same code and DBOS counts them as one application
version: a run started in one process is recovered by any other. The workflow takes
the name of what to run (``DurableAgent`` / ``DurablePrompt``, registered under that
name when the user's module builds it) and the run's inputs, records the date and a
seed for ids as its first steps, installs a ``StepRunner`` for the run and runs it.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Generic, Protocol, TypeVar

from dbos import DBOS, Queue, SetWorkflowID, WorkflowHandleAsync

from agents.durable._errors import NothingToResumeError
from agents.durable._launch import require_launched
from agents.durable._retries import ModelRetries
from agents.durable._runner import StepRunner
from agents.models import Message
from agents.result import AgentResult
from toolchain import ContentPart, _step_seam

__all__ = ["DurableRun", "Runnable", "register", "resume", "retrieve", "start_run"]

AnswerT = TypeVar("AnswerT")
_log = logging.getLogger("agents.durable")

Task = str | Sequence[ContentPart]


class Runnable(Protocol):
    """What a workflow runs: a durable agent or prompt, by its registered name."""

    name: str
    retries: ModelRetries

    def execute(
        self,
        task: Task,
        history: Sequence[Message],
        extension_state: Mapping[str, object] | None,
    ) -> Awaitable[AgentResult[Any]]: ...


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
async def _workflow(
    name: str,
    task: Task,
    history: Sequence[Message],
    extension_state: Mapping[str, object] | None,
) -> AgentResult[Any]:
    runnable = _REGISTRY.get(name)
    if runnable is None:
        raise LookupError(
            f"no durable agent or prompt named {name!r} in this process: build it (with "
            "that name) before agents.durable.launch(), as the process that started it did"
        )
    today = await DBOS.run_step_async({"name": "today"}, _today)
    seed = await DBOS.run_step_async({"name": "seed"}, _seed)
    _step_seam.activate()
    token = _step_seam.RUNNER.set(StepRunner(today, seed, retries=runnable.retries))
    try:
        return await runnable.execute(task, history, extension_state)
    finally:
        _step_seam.RUNNER.reset(token)


_UNDER_WAY = ("PENDING", "ENQUEUED", "DELAYED")


class DurableRun(Generic[AnswerT]):
    """A durable run started (or found again) by its workflow id.

    ``await run.result()`` waits for its ``AgentResult``, in this process or another:
    the run goes on in whichever process runs or recovers its workflow.
    """

    def __init__(self, handle: WorkflowHandleAsync[AgentResult[AnswerT]]) -> None:
        self._handle = handle

    @property
    def workflow_id(self) -> str:
        """The run's workflow id: ``retrieve`` it, send it decisions, list its steps."""
        return self._handle.get_workflow_id()

    async def result(self) -> AgentResult[AnswerT]:
        """The run's result, once it has one (however many processes that takes)."""
        return await self._handle.get_result()

    async def status(self) -> str:
        """DBOS's status of the workflow: ``PENDING``, ``ENQUEUED``, ``SUCCESS``, ``ERROR`` …"""
        found = await self._handle.get_status()
        return found.status


async def start_run(
    runnable: Runnable,
    task: Task,
    history: Sequence[Message],
    extension_state: Mapping[str, object] | None,
    workflow_id: str | None,
    queue: Queue | None,
) -> DurableRun[Any]:
    """Start ``runnable``'s workflow (on ``queue``, when given) and return its handle."""
    chosen = SetWorkflowID(workflow_id) if workflow_id is not None else nullcontext()
    args = (runnable.name, task, tuple(history), _plain(extension_state))
    with chosen:
        if queue is not None:
            handle = await queue.enqueue_async(_workflow, *args)
        else:
            handle = await DBOS.start_workflow_async(_workflow, *args)
    return DurableRun(handle)


async def retrieve(workflow_id: str) -> DurableRun[Any]:
    """The run with this workflow id, started by this process or any other.

    >>> callable(retrieve)
    True
    """
    return DurableRun(await DBOS.retrieve_workflow_async(workflow_id))


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


def _plain(state: Mapping[str, object] | None) -> dict[str, object] | None:
    return None if state is None else dict(state)
