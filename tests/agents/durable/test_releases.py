"""A release between a crash and the recovery: the recorded steps replay as recorded.

Each test starts the run ``release`` in a worker process on the code ``v1`` (the tool
``refund``, the model ``counting``), kills it with SIGKILL once the refund's outcome is
recorded (before the second model call), and recovers it in a second process that runs
other code: the tool renamed, the model string changed, another agent class. The refund
tool writes a line each time it runs, in either process: that count is what a customer
would see on their card.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.durable import INTERRUPTED
from tests.agents.durable.processes import (
    finished,
    finished_with_log,
    kill_when_blocked,
    model_calls,
    runs,
    start_and_kill,
    worker,
)
from tests.support.agent_kinds import KINDS, Kind

pytest.importorskip("dbos")


@KINDS
def test_a_finished_call_of_a_tool_renamed_since_replays_and_is_not_made_again(
    kind: Kind, tmp_path: Path
) -> None:
    start_and_kill(tmp_path, kind, "release")

    result, log = finished_with_log(worker(tmp_path, kind, "release", "recover", "renamed"))

    assert result == {"answer": "refunded once", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
    calls = model_calls(tmp_path)
    assert len(calls) == 2  # step 1 before the kill, step 2 after: no call of the new name
    assert "refunded A17" in calls[1]
    assert "unknown tool" not in calls[1]
    assert "its recorded outcome is replayed, it is not run again" in log


@KINDS
def test_a_call_cut_off_then_renamed_is_not_run_again_under_either_name(
    kind: Kind, tmp_path: Path
) -> None:
    start_and_kill(tmp_path, kind, "release_mid")  # killed inside the refund

    result = finished(worker(tmp_path, kind, "release_mid", "recover", "renamed"))

    assert result == {"answer": "not refunded again: it was interrupted", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
    calls = model_calls(tmp_path)
    assert len(calls) == 2
    assert INTERRUPTED.format(tool="refund") in calls[1]


@KINDS
def test_a_model_string_changed_since_replays_the_recorded_responses(
    kind: Kind, tmp_path: Path
) -> None:
    start_and_kill(tmp_path, kind, "release")

    result, log = finished_with_log(worker(tmp_path, kind, "release", "recover", "model"))

    assert result == {"answer": "refunded once", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
    assert len(model_calls(tmp_path)) == 2
    assert "recorded as 'model:counting', where the code now makes 'model:counting-2'" in log


@pytest.mark.parametrize(("started", "recovered"), [("react", "native"), ("native", "react")])
def test_another_agent_class_ends_the_run_with_an_error_and_a_fork_on_the_old_code_ends_it(
    started: Kind, recovered: Kind, tmp_path: Path
) -> None:
    names = {"react": "ReActAgent", "native": "ToolCallingAgent"}
    start_and_kill(tmp_path, started, "release")

    failed = finished(worker(tmp_path, recovered, "release", "recover"))

    assert failed["error"] == "ReplayError"
    assert failed["status"] == "ERROR"
    message = failed["message"]
    assert f"agent {names[started]}, where this code has {names[recovered]}" in message
    assert "nothing was run again" in message
    assert "in a process running the code that started it: DBOS.fork_workflow('run-1', 5)" in (
        message
    )
    assert runs(tmp_path, "refund") == 1
    assert len(model_calls(tmp_path)) == 1  # nothing was called in the second process

    # The way back the error names first: a fork on the code that started the run.
    forked = finished(worker(tmp_path, started, "release", "fork"))

    assert forked == {"answer": "refunded once", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
    assert len(model_calls(tmp_path)) == 2


def test_a_step_the_code_no_longer_makes_ends_the_run_with_an_error_and_calls_nothing(
    tmp_path: Path,
) -> None:
    # The run waited for a person to approve `publish` (DBOS steps of their own), was
    # approved from a second process, published and was killed; the release that
    # recovers it asks no approval, so it would make its next model call where the
    # record has the approval's steps.
    assert finished(worker(tmp_path, "native", "approval_release", "start-and-leave")) == {
        "pending": ["publish"]
    }
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, "native", "approval_release", "decide"))

    failed = finished(worker(tmp_path, "native", "approval_release", "recover", "unapproved"))

    assert failed["error"] == "ReplayError"
    assert failed["status"] == "ERROR"
    assert (
        "its step 5 was recorded as 'DBOS.setEvent', where this code now makes "
        in (failed["message"])
    )
    assert "nothing was run again" in failed["message"]
    assert runs(tmp_path, "publish") == 1
    assert len(model_calls(tmp_path)) == 1
