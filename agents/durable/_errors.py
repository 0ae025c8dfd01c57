"""The errors of ``agents.durable``, each saying what to do; DBOS's own never reach users.

``DurableError`` is an ``agents.AgentError`` (so a ``GentError``); the builtin bases
beside it (``RuntimeError``, ``ValueError``) stay for callers that catch those::

    DurableError                 base of them all; an error a run's record holds that is
    │                            none of ours comes back as this, ``kind`` naming its class
    ├── RecordError              a record that cannot be written or read (too big, not
    │                            plain data, a pickle)
    ├── ReplayError              code changed so that a run's record cannot be replayed
    ├── NotLaunchedError         a durable call before launch() (or after shutdown())
    ├── ExecutorInUseError       an executor id a live process holds
    ├── WorkflowIdTakenError     a workflow id another agent, or another task, started
    ├── RunCancelledError        the result of a run that was cancelled
    └── NothingToResumeError     resume() of a run that ended well
"""

from __future__ import annotations

from agents._errors import AgentError

__all__ = [
    "DurableError",
    "ExecutorInUseError",
    "NotLaunchedError",
    "NothingToResumeError",
    "RecordError",
    "ReplayError",
    "RunCancelledError",
    "WorkflowIdTakenError",
]


class DurableError(AgentError):
    """Base of the errors ``agents.durable`` raises. An error a run's record holds that
    is none of ours (nor a model adapter's) comes back as this, ``kind`` naming the class
    it was raised as.

    >>> issubclass(NotLaunchedError, DurableError)
    True
    >>> str(DurableError("no agent named 'x'", kind="LookupError"))
    "LookupError: no agent named 'x'"
    """

    def __init__(self, message: str, *, kind: str = "") -> None:
        self.kind = kind or type(self).__name__
        self.message = message
        super().__init__(f"{kind}: {message}" if kind else message)


class RecordError(DurableError):
    """A record that cannot be written (over the size limit, not plain data) or read
    (not written by ``agents.durable``, e.g. a pickle). Its message never quotes the
    record's content.

    >>> isinstance(RecordError("too big"), DurableError)
    True
    """


class ReplayError(DurableError):
    """The code changed since the run started in a way its record cannot replay; the
    message names the change and the ways to continue (``DBOS.fork_workflow``).

    >>> isinstance(ReplayError("changed"), DurableError)
    True
    """


class NotLaunchedError(DurableError, RuntimeError):
    """A durable run, lookup or decision in a process where DBOS is not launched.

    >>> str(NotLaunchedError("start a run")).startswith("cannot start a run")
    True
    """

    def __init__(self, what: str) -> None:
        super().__init__(
            f"cannot {what}: agents.durable.launch() has not been called in this process "
            "(or shutdown() was). Build every DurableAgent and DurablePrompt, then call "
            "launch(database_url) once, before any durable run."
        )


class ExecutorInUseError(DurableError, RuntimeError):
    """An executor id that a live process holds: two processes under one id would each
    take the other's runs for their own (``launch``), or a live process's runs would be
    run a second time (``recover``).

    >>> ExecutorInUseError("w1", "pid 12 on this machine").executor_id
    'w1'
    """

    def __init__(self, executor_id: str, holder: str) -> None:
        super().__init__(
            f"executor id {executor_id!r} is held by a live process ({holder}): its runs "
            "are under way there. Give each process its own executor id (leave "
            "executor_id unset and launch() makes one), or stop that process first."
        )
        self.executor_id = executor_id


class WorkflowIdTakenError(DurableError, ValueError):
    """A workflow id that names a run of another durable agent (or prompt), or a run of
    this one with another task or history: starting it again would hand back that run.

    >>> WorkflowIdTakenError("ticket-1", "it belongs to another durable agent").workflow_id
    'ticket-1'
    """

    def __init__(self, workflow_id: str, why: str) -> None:
        super().__init__(
            f"workflow id {workflow_id!r} is taken: {why}. A run started again with its "
            "id must be the same agent's, with the same task and history; give this run "
            "an id of its own."
        )
        self.workflow_id = workflow_id


class RunCancelledError(DurableError):
    """The run was cancelled (``DBOS.cancel_workflow``) before it had a result.

    >>> str(RunCancelledError("r1")).startswith("durable run 'r1' was cancelled")
    True
    """

    def __init__(self, workflow_id: str) -> None:
        super().__init__(
            f"durable run {workflow_id!r} was cancelled before it ended, so it has no "
            "result; agents.durable.resume(workflow_id) continues it from where it stopped"
        )
        self.workflow_id = workflow_id


class NothingToResumeError(DurableError, ValueError):
    """``resume`` of a run that ended without a failure: there is nothing to do again.

    >>> NothingToResumeError("r1", "it answered").workflow_id
    'r1'
    """

    def __init__(self, workflow_id: str, why: str) -> None:
        super().__init__(
            f"durable run {workflow_id!r} has nothing to resume: {why}. To go on from "
            "it, start a new run with history=result.messages"
        )
        self.workflow_id = workflow_id
