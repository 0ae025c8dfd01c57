# agents.durable: runs of both agents and run_prompt as DBOS workflows (extra [durable]).
#
# What lives here, one job a module (each imports only those listed before it):
#   _record     the record format: what a run writes, as plain JSON data, and the
#               errors (DurableError, RecordError, ReplayError)
#   _serializer DBOS's serializer: JSON documents, the size limit, no pickles; client()
#   _runner     StepRunner: one run's model and tool calls as DBOS steps, through
#               toolchain._step_seam; recorded date and ids; interrupted calls; a
#               finished step replayed as recorded whatever the code says now
#   _workflow   the one registered workflow, the registry of runs by name, DurableRun
#   _runs       DurableAgent and DurablePrompt, what users build
#   _approvals  wait_for_person (an Approver), pending, decide: approvals over DBOS
#               events and messages
#   _launch     launch and shutdown of DBOS in this process
#
# Importing `agents` never imports this package (nor DBOS): the engine and the chain
# only hold the seam (`toolchain._step_seam`), which is empty until a durable run starts.
"""Durable runs: an agent's run survives a crash, and waits for a person across restarts.

Runs of ``ReActAgent``, ``ToolCallingAgent`` and ``run_prompt`` become DBOS workflows
(extra ``[durable]``): each model call and each tool call is a step whose result is
recorded in a database (SQLite by default, Postgres for many workers). A process that
launches DBOS on that database recovers the runs a dead process left: finished calls
are replayed from the record, not made again.

API (all names here)::

    from agents import ReActAgent
    from agents.durable import DurableAgent, launch

    durable = DurableAgent(ReActAgent(model, tools=[...]), name="support")  # at import
    launch("sqlite:///runs.sqlite")           # or postgresql://…; recovers pending runs
    result = await durable.run("task", workflow_id="ticket-42")   # -> AgentResult
    handle = await durable.start("task")      # DurableRun: .workflow_id, await .result()
    handle = await retrieve("ticket-42")      # the same run, from any process
    await recover(["worker-2"])               # a dead worker's runs, taken over
    web = client("postgresql://…")            # a DBOSClient for a process without runs
    shutdown()

- ``DurableAgent(agent, name=...)`` / ``DurablePrompt(build, model=..., name=...,
  **run_prompt options)``: build them when your module loads, with names unique in the
  application: a recovering process finds them by name, so it must build them before
  ``launch``. ``run`` / ``start`` take ``history=`` and ``extension_state=`` as the
  agents do, ``workflow_id=`` (a run started again with its id is not run twice), and
  ``start`` a DBOS ``Queue`` (``queue=``) for worker processes listening to it.
- Tools: a call cut off by a crash (its start recorded, its outcome not) runs again
  only if its tool sets ``idempotent = True`` (``@tool(idempotent=True)``); otherwise
  the model gets the error ``"<tool> was interrupted: … Check its effect before
  calling it again."`` and decides.
- Approvals: ``ToolSearch(..., approve=wait_for_person)``. In a durable run a call that
  needs approval waits in the workflow (``pending(workflow_id)`` lists it, from any
  process, or with ``client=client(database_url)`` from one that runs no workflows);
  ``decide(workflow_id, request, Approval.granted())`` resumes it, even after the
  process that started the run exited. Calls of one action ask one at a time.
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
events (``on_chunk`` sees only the calls made live); a composite tool's call is one
step (its sub-calls run inside it); the calls of one action that wait for approval ask
one at a time.
"""

from toolchain._extras import requires_extra

# Without the extra, the first of these imports fails on dbos: say which extra brings it.
with requires_extra("durable", "agents.durable", "dbos"):
    from agents.durable._approvals import decide, pending, wait_for_person
    from agents.durable._launch import DEFAULT_DATABASE, launch, recover, shutdown
    from agents.durable._record import DurableError, RecordError, ReplayError
    from agents.durable._runner import INTERRUPTED, MAX_OUTPUT_BYTES
    from agents.durable._runs import DurableAgent, DurablePrompt
    from agents.durable._serializer import MAX_RECORD_BYTES, client
    from agents.durable._workflow import DurableRun, retrieve

__all__ = [
    "DEFAULT_DATABASE",
    "INTERRUPTED",
    "MAX_OUTPUT_BYTES",
    "MAX_RECORD_BYTES",
    "DurableAgent",
    "DurableError",
    "DurablePrompt",
    "DurableRun",
    "RecordError",
    "ReplayError",
    "client",
    "decide",
    "launch",
    "pending",
    "recover",
    "retrieve",
    "shutdown",
    "wait_for_person",
]
