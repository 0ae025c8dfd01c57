"""Durable runs killed with SIGKILL in real worker processes, then recovered by another.

Each test starts ``tests/agents/durable/worker.py`` on a SQLite database in a temporary
directory, waits until the run reaches its blocking point (``DIR/blocked``), kills the
process, and starts a second worker on the same database, which recovers the run. The
workers write every model call and every tool run to files, so the counts below are
what really happened in both processes together.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.durable import INTERRUPTED
from tests.agents.durable.processes import crash_and_recover, finished, model_calls, runs, worker
from tests.support.agent_kinds import KINDS, Kind

pytest.importorskip("dbos")


@KINDS
def test_a_run_killed_between_steps_finishes_without_repeating_a_call(
    kind: Kind, tmp_path: Path
) -> None:
    result = crash_and_recover(tmp_path, kind, "between")

    assert result == {"answer": "recorded once", "stopped_by": "answer"}
    assert runs(tmp_path, "record") == 1
    assert len(model_calls(tmp_path)) == 2  # step 1 before the kill, step 2 after


@KINDS
def test_a_call_cut_off_by_the_kill_is_not_run_again_and_the_model_is_told(
    kind: Kind, tmp_path: Path
) -> None:
    result = crash_and_recover(tmp_path, kind, "mid_tool")

    assert result == {"answer": "not charged again: it was interrupted", "stopped_by": "answer"}
    assert runs(tmp_path, "charge") == 1
    calls = model_calls(tmp_path)
    assert len(calls) == 2
    assert INTERRUPTED.format(tool="charge") in calls[1]


@KINDS
def test_an_idempotent_call_cut_off_by_the_kill_runs_again(kind: Kind, tmp_path: Path) -> None:
    result = crash_and_recover(tmp_path, kind, "mid_tool_idempotent")

    assert result == {"answer": "done: found 7", "stopped_by": "answer"}
    assert runs(tmp_path, "lookup") == 2
    assert len(model_calls(tmp_path)) == 2


@KINDS
def test_concurrent_calls_of_one_action_replay_in_their_own_places(
    kind: Kind, tmp_path: Path
) -> None:
    # record finished and lookup_later was running when the process died: record's
    # outcome is replayed, lookup_later (idempotent) runs again, each in its own step.
    result = crash_and_recover(tmp_path, kind, "concurrent")

    assert result == {"answer": "both", "stopped_by": "answer"}
    assert (runs(tmp_path, "record"), runs(tmp_path, "lookup_later")) == (1, 2)
    assert len(model_calls(tmp_path)) == 2


@KINDS
def test_a_program_recovered_replays_its_finished_calls_and_goes_on_from_the_cut_one(
    kind: Kind, tmp_path: Path
) -> None:
    # Code mode: the program ran record, then lookup_later was running when the process
    # died. The recovering process runs the program again: record's outcome is replayed
    # (not run again), lookup_later (idempotent) runs again, and the program ends.
    result = crash_and_recover(tmp_path, kind, "program")

    assert result == {"answer": "both", "stopped_by": "answer"}
    assert (runs(tmp_path, "record"), runs(tmp_path, "lookup_later")) == (1, 2)
    assert len(model_calls(tmp_path)) == 2


@KINDS
def test_a_relay_reference_made_before_the_kill_still_resolves_after_it(
    kind: Kind, tmp_path: Path
) -> None:
    # The report was boxed as internal://<id> in the first process and the model wrote
    # that id; the recovering process boxes the replayed report under the same id.
    result = crash_and_recover(tmp_path, kind, "relay")

    assert result == {"answer": "measured 40 lines", "stopped_by": "answer"}
    assert (runs(tmp_path, "report"), runs(tmp_path, "measure")) == (1, 2)
    assert len(model_calls(tmp_path)) == 3


def test_a_sub_agent_killed_mid_run_resumes_inside_its_parent(tmp_path: Path) -> None:
    result = crash_and_recover(tmp_path, "native", "sub_agent")

    assert result == {"answer": "parent saw: sub recorded 5", "stopped_by": "answer"}
    assert runs(tmp_path, "record") == 1
    calls = model_calls(tmp_path)
    # parent 1, sub-agent 1, sub-agent 2 (killed in it), sub-agent 2 again, parent 2
    assert len(calls) == 5
    assert calls[2] == calls[3]


@KINDS
def test_an_approval_decided_from_a_second_process_resumes_the_run(
    kind: Kind, tmp_path: Path
) -> None:
    left = finished(worker(tmp_path, kind, "approval", "start-and-leave"))
    assert left == {"pending": ["publish"]}
    assert runs(tmp_path, "publish") == 0

    result = finished(worker(tmp_path, kind, "approval", "decide"))

    assert result == {"answer": "published", "stopped_by": "answer"}
    assert runs(tmp_path, "publish") == 1
    assert len(model_calls(tmp_path)) == 2


@KINDS
def test_a_conversation_continues_with_its_history_and_variables(
    kind: Kind, tmp_path: Path
) -> None:
    result = finished(worker(tmp_path, kind, "chat", "chat"))

    assert result == {"answer": "you are Ada; shouted", "stopped_by": "answer"}
    assert (tmp_path / "tool_shout.log").read_text() == "recorded 4\n"


def test_a_decision_sent_by_a_client_that_runs_no_workflow_resumes_the_run(
    tmp_path: Path,
) -> None:
    # Three processes: the first starts the run and exits while it waits; the second
    # only sends the decision (a DBOSClient, no DBOS launched); the third recovers the
    # run, which finds the decision waiting for it.
    assert finished(worker(tmp_path, "native", "approval", "start-and-leave")) == {
        "pending": ["publish"]
    }
    assert finished(worker(tmp_path, "native", "approval", "decide-as-client")) == {
        "decided": ["publish"]
    }
    assert runs(tmp_path, "publish") == 0

    result = finished(worker(tmp_path, "native", "approval", "recover"))

    assert result == {"answer": "published", "stopped_by": "answer"}
    assert runs(tmp_path, "publish") == 1
    assert len(model_calls(tmp_path)) == 2
