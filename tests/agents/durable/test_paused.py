"""A durable run paused on a held call (no approver), resumed from another process.

The tool ``wipe`` requires approval and the agent has no approver: the run pauses, and
``DurableAgent.run`` returns the paused result (``stopped_by == "paused"``,
``pending``) while the run waits in its workflow. Another process launched on the same
database reads the paused result back (``retrieve(...).result()``) and resumes it with a
decision: the approved call runs once, with the arguments shown, and the run goes on with
no request for the model to repeat the call. Real processes
(`tests.agents.durable.worker`), on SQLite and Postgres, both agents.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.agents.durable.processes import (
    finished,
    kill_when_blocked,
    model_calls,
    runs,
    wait_for,
    worker,
)
from tests.support.agent_kinds import KINDS, Kind

pytest.importorskip("dbos")

SCENARIO = "held"
WIPED = {"answer": "wiped", "stopped_by": "answer"}
PAUSED = {"stopped_by": "paused", "pending": ["wipe"]}


@KINDS
def test_a_paused_run_is_resumed_from_another_process_while_its_own_runs_it(
    kind: Kind, tmp_path: Path, database_url: str
) -> None:
    first = worker(tmp_path, kind, SCENARIO, "start-paused-and-stay", database=database_url)
    try:
        wait_for(first, (tmp_path / "paused").exists, "pause")
        assert runs(tmp_path, "wipe") == 0

        result = finished(worker(tmp_path, kind, SCENARIO, "resume-granted", database=database_url))

        assert result == WIPED
        assert runs(tmp_path, "wipe") == 1
        assert len(model_calls(tmp_path)) == 2  # no request to make the call again
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()


def test_a_paused_run_is_resumed_after_the_process_that_paused_it_exited(
    tmp_path: Path, database_url: str
) -> None:
    kind: Kind = "native"
    assert finished(worker(tmp_path, kind, SCENARIO, "start-paused", database=database_url)) == (
        PAUSED
    )

    result = finished(worker(tmp_path, kind, SCENARIO, "resume-granted", database=database_url))

    assert result == WIPED
    assert runs(tmp_path, "wipe") == 1
    assert len(model_calls(tmp_path)) == 2


@KINDS
def test_a_crash_after_the_approved_call_ran_does_not_run_it_again(
    kind: Kind, tmp_path: Path
) -> None:
    assert finished(worker(tmp_path, kind, SCENARIO, "start-paused")) == PAUSED
    # The resuming process runs the approved call, then is killed in the model call
    # that follows it: the call's outcome is recorded, the next step is not.
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, kind, SCENARIO, "resume-granted"))
    assert runs(tmp_path, "wipe") == 1

    result = finished(worker(tmp_path, kind, SCENARIO, "recover"))

    assert result == WIPED
    assert runs(tmp_path, "wipe") == 1  # replayed from the record, not run again


# -- a durable run_prompt, paused through its sub-agent ----------------------------------------

HELD_SUB_AGENT = "held_sub_agent"


def test_a_durable_prompt_paused_in_its_sub_agent_resumes_from_another_process(
    tmp_path: Path, database_url: str
) -> None:
    """``DurablePrompt.resume``: the sub-agent's held call (listed with ``via``) runs in
    the sub-agent, which answers; the parent goes on; no model repeats a call."""
    kind: Kind = "native"
    started = finished(
        worker(tmp_path, kind, HELD_SUB_AGENT, "start-paused", database=database_url)
    )
    assert started == PAUSED

    result = finished(
        worker(tmp_path, kind, HELD_SUB_AGENT, "resume-granted", database=database_url)
    )

    assert result == {"answer": "parent saw: wiper saw: sdb erased", "stopped_by": "answer"}
    assert runs(tmp_path, "wipe") == 1
    # parent: the call, the answer; the wiper: the call, the answer
    assert len(model_calls(tmp_path)) == 4


def test_a_crash_in_the_sub_agent_after_its_approved_call_does_not_run_it_again(
    tmp_path: Path,
) -> None:
    kind: Kind = "native"
    assert finished(worker(tmp_path, kind, HELD_SUB_AGENT, "start-paused")) == PAUSED
    # The resuming process runs the approved wipe in the sub-agent, then is killed in
    # the sub-agent's model call after it.
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, kind, HELD_SUB_AGENT, "resume-granted"))
    assert runs(tmp_path, "wipe") == 1

    result = finished(worker(tmp_path, kind, HELD_SUB_AGENT, "recover"))

    assert result == {"answer": "parent saw: wiper saw: sdb erased", "stopped_by": "answer"}
    assert runs(tmp_path, "wipe") == 1


# -- a composite's held sub-call ------------------------------------------------------------


@KINDS
def test_a_crash_after_a_composites_approved_sub_call_does_not_run_it_again(
    kind: Kind, tmp_path: Path
) -> None:
    scenario = "held_in_composite"
    assert finished(worker(tmp_path, kind, scenario, "start-paused")) == PAUSED
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, kind, scenario, "resume-granted"))
    assert runs(tmp_path, "wipe") == 1

    result = finished(worker(tmp_path, kind, scenario, "recover"))

    assert result == WIPED
    assert runs(tmp_path, "wipe") == 1  # replayed from the record, not run again
    assert runs(tmp_path, "record") == 1  # the sub-call before it: a step of its own


@KINDS
def test_a_composites_held_sub_call_is_resumed_from_another_process(
    kind: Kind, tmp_path: Path
) -> None:
    scenario = "held_in_composite"
    assert finished(worker(tmp_path, kind, scenario, "start-paused")) == PAUSED

    result = finished(worker(tmp_path, kind, scenario, "resume-granted"))

    assert result == WIPED
    assert runs(tmp_path, "wipe") == 1
    assert runs(tmp_path, "record") == 1  # made again in the replay, from its record
    assert len(model_calls(tmp_path)) == 2


# -- a program's gated call (code mode) -----------------------------------------------------


@KINDS
def test_a_programs_held_call_is_resumed_from_another_process(kind: Kind, tmp_path: Path) -> None:
    """The program ran ``record``, then its ``wipe`` waits: the process exits; another
    takes the run over and resumes it. The program is run again up to the held call
    (``record`` replayed from its step, not run again), then goes on with the approval."""
    scenario = "held_program"
    assert finished(worker(tmp_path, kind, scenario, "start-paused")) == PAUSED
    assert runs(tmp_path, "record") == 1

    result = finished(worker(tmp_path, kind, scenario, "resume-granted"))

    assert result == WIPED
    assert (runs(tmp_path, "record"), runs(tmp_path, "wipe")) == (1, 1)
    assert len(model_calls(tmp_path)) == 2
