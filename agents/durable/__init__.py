# agents.durable: runs of both agents and run_prompt as DBOS workflows (extra [durable]).
#
# What lives here, one job a module (each imports only those listed before it):
#   _errors     the errors of agents.durable, one tree (DurableError at its root)
#   _retries    ModelRetries: how a model call is made again after a passing failure
#   _record     the record format: what a run writes, as plain JSON data
#   _serializer DBOS's serializer: JSON documents, the size limit, no pickles; client()
#   _runner     StepRunner: one run's model and tool calls as DBOS steps, through
#               the step seam of `toolchain.runtime`; recorded date and ids; interrupted calls; a
#               finished step replayed as recorded whatever the code says now
#   _executors  the leases that say which processes are alive (gent_executors)
#   _keys       the key sealing paused runs' held calls, one per database (gent_keys)
#   _launch     launch and shutdown of DBOS in this process; taking over the runs of
#               processes that are gone (recover)
#   _pauses     a paused run's result handed out sealed; decisions checked, then taken
#   _workflow   the one registered workflow, the registry of runs by name, DurableRun,
#               whose run a workflow id is, resume
#   _runs       DurableAgent and DurablePrompt, what users build
#   _approvals  wait_for_person (an Approver), pending, decide: approvals over DBOS
#               events and messages
#
# Importing `agents` never imports this package (nor DBOS): the engine and the chain
# only hold the step seam (`toolchain.runtime`), empty until a durable run starts.
"""Durable runs: an agent's run survives a crash, and waits for a person across restarts.

Runs of ``ReActAgent``, ``ToolCallingAgent`` and ``run_prompt`` become DBOS workflows
(extra ``[durable]``): each model call and each tool call is a step whose result is
recorded in a database (SQLite by default, Postgres for many workers). A process that
is gone leaves its runs to the live ones: finished calls are replayed from the record,
not made again; a live process's runs are never taken from it.

API (all names here)::

    from agents import ReActAgent
    from agents.durable import DurableAgent, launch

    durable = DurableAgent(ReActAgent(model, tools=[...]), name="support")  # at import
    launch("sqlite:///runs.sqlite")           # or postgresql://…; takes over gone runs
    result = await durable.run("task", workflow_id="ticket-42")   # -> AgentResult
    handle = await durable.start("task")      # DurableRun: .workflow_id, await .result()
    handle = await retrieve("ticket-42")      # the same run, from any process
    handle = await resume("ticket-42")        # a run that ended in error goes on
    await recover(["gent-host-4242-a1b2c3"])  # a gone process's runs, taken over now
    web = client("postgresql://…")            # a DBOSClient for a process without runs
    shutdown()

- ``DurableAgent(agent, name=...)`` / ``DurablePrompt(build, model=..., name=...,
  **run_prompt options)``: build them when your module loads, with names unique in the
  application: a recovering process finds them by name, so it must build them before
  ``launch`` (a run taken over before its agent is built waits for it, with a
  warning). ``run`` / ``start`` take ``history=`` and ``extension_state=`` as the
  agents do, ``workflow_id=`` (a run started again with its id is not run twice; an id
  is this agent's run of one task and history: any other start under it raises
  ``WorkflowIdTakenError``), and ``start`` a DBOS ``Queue`` (``queue=``) for worker
  processes listening to it. Before ``launch`` every call raises ``NotLaunchedError``.
- Processes: each launches under an executor id of its own and holds it by a lease in
  the database (``gent_executors``), renewed every ``lease_seconds / 4`` (20 s by
  default). A run is taken over only from a process that is gone: shut down, or on this
  machine and no longer running (its pid), or on another machine and not heard from
  for ``lease_seconds``. Live processes take such runs over by themselves;
  ``recover(executor_ids)`` does it at once and refuses a live one
  (``ExecutorInUseError``), as ``launch`` refuses an executor id a live process holds.
- Model calls: a failure that may pass (``ModelCallError.transient``: 408, 409, 429,
  5xx, no connection, a timeout) is tried again, ``retries=ModelRetries(...)`` on the
  agent (by default 6 tries, 1 to 16 s apart: about half a minute, beyond the adapter's
  own retries). A run that ended in error (``stopped_by == "error"``, or DBOS's
  ``ERROR``), or was cancelled, goes on with ``resume(workflow_id)``: the failed call is
  made again, the steps before it replayed.
- Tools: a call cut off by a crash (its start recorded, its outcome not) runs again
  only if its tool sets ``idempotent = True`` (``@tool(idempotent=True)``); otherwise
  the model gets the error ``"<tool> was interrupted: … Check its effect before
  calling it again."`` and decides.
- Approvals: a call whose tool ``requires_approval``, with no approver, pauses the run:
  ``run`` returns the paused result (``pending``) while the run waits in its workflow;
  ``durable.resume(result, decisions)`` from any process launched on the same database
  runs the approved calls (each once, as a step of the run) and goes on. Held calls are
  sealed with a key kept in the database (``gent_keys``). With
  ``approve=wait_for_person`` (the agent's, or ``ToolSearch``'s) a call waits inside
  the run instead (``pending(workflow_id)`` lists it, from any process, or with
  ``client=client(database_url)`` from one that runs no workflows);
  ``decide(workflow_id, request, Approval.granted())`` resumes it, even after the
  process that started the run exited (killed, or by ``shutdown``, which refuses
  nothing): the process that takes the run over waits where it waited, for a decision
  sent before or after the takeover. A decision applies to the call whose tool and
  arguments it names, and only a real boolean approves. Calls of one action ask one at
  a time. A run cancelled while it waits (``DBOS.cancel_workflow``) stops waiting, and
  ``result()`` raises ``RunCancelledError``, within a second or so.
- Deterministic on replay: the date the prompt shows (recorded at the start), stored
  values' ids (``internal://…``, derived from a recorded seed and the call), call ids
  (numbered), each call's place in the record (drawn in call order as the call enters
  the chain). An action with a sub-agent (``def_agent``) runs its calls one at a time.

The record is plain JSON, never a pickle: the run's inputs (task, history,
``extension_state``), its start (date, seed), each model response, each tool call's
outcome and the ``AgentResult``. A tool's output is recorded as the plain data its
observation is written from, and loaded back into the tool's ``output_type`` (a class
defined in the script that started the run loads in any process that has the tool); a
tool's exception as its kind and message. A row written as a pickle (by something else
than this library) is refused with a ``RecordError``, never loaded: loading a pickle
runs code. An output that is not plain data, or over ``max_output_bytes`` of JSON
(``MAX_OUTPUT_BYTES``, 16 MiB, by default), fails its call alone with an
``output_error`` naming the size and the limit; no value over ``MAX_RECORD_BYTES`` (512
MiB, the run's result included) is written. Nothing logs a recorded value.

A release between a crash and the recovery: a finished step replays as recorded
whatever the code says now. A model string changed since replays the recorded
responses; a tool renamed since (or a limit or a hook that now refuses the call)
replays the call's recorded outcome, and a call cut off by the crash is reported
interrupted, not run under either name; each with a warning. What the record cannot
replay (another agent class, chain or text format; a step of another kind where the
record has one, as when an extension or hook added or removed a step) ends the run in
error with a ``ReplayError`` naming the change, and nothing is called: DBOS 3.4 resumes
no run that ended in error, so fork it (``DBOS.fork_workflow(workflow_id, start_step)``,
start_step as the error says, in a process running the code that started it), and read
the fork's result with ``retrieve(fork.workflow_id)``.

Limits of the design, stated: ``Limits.timeout`` counts from when a process starts (or
recovers) the run, not from the run's first start; a replayed step emits no stream
events (``on_chunk`` sees only the calls made live), and a model call made again after a
passing failure streams again from its start; a composite tool's call is one step (its
sub-calls run inside it); the calls of one action that wait for approval ask one at a
time. A process on another machine that stalls for longer than its lease is taken for
gone while it may be inside a tool call (DBOS stops it at its next record; the call is
reported as interrupted, or run again if idempotent): choose the lease longer than any
stall you expect. Every process on the database must launch through ``launch``: a
process that starts DBOS itself holds no lease, and its runs are taken for a gone
process's.
"""

from toolchain.runtime import requires_extra

# Without the extra, the first of these imports fails on dbos: say which extra brings it.
with requires_extra("durable", "agents.durable", "dbos"):
    from agents.durable._approvals import decide, pending, wait_for_person
    from agents.durable._errors import (
        DurableError,
        ExecutorInUseError,
        NothingToResumeError,
        NotLaunchedError,
        RecordError,
        ReplayError,
        RunCancelledError,
        WorkflowIdTakenError,
    )
    from agents.durable._launch import DEFAULT_DATABASE, launch, recover, shutdown
    from agents.durable._retries import ModelRetries
    from agents.durable._runner import INTERRUPTED, MAX_OUTPUT_BYTES
    from agents.durable._runs import DurableAgent, DurablePrompt
    from agents.durable._serializer import MAX_RECORD_BYTES, client
    from agents.durable._workflow import DurableRun, resume, retrieve

__all__ = [
    "DEFAULT_DATABASE",
    "INTERRUPTED",
    "MAX_OUTPUT_BYTES",
    "MAX_RECORD_BYTES",
    "DurableAgent",
    "DurableError",
    "DurablePrompt",
    "DurableRun",
    "ExecutorInUseError",
    "ModelRetries",
    "NotLaunchedError",
    "NothingToResumeError",
    "RecordError",
    "ReplayError",
    "RunCancelledError",
    "WorkflowIdTakenError",
    "client",
    "decide",
    "launch",
    "pending",
    "recover",
    "resume",
    "retrieve",
    "shutdown",
    "wait_for_person",
]
