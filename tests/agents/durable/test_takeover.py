"""A durable run that waits for a person, taken over by another process, as the README
promises: the process that started it may exit while a call waits (killed, or shut down),
and the run resumes in whichever process takes it over, with the decision sent from any
process, before or after the takeover. The approved call runs once.

Real processes (`tests.agents.durable.worker`) on one SQLite file. The model finds the
tool with ``tool_search`` first (it is deferred), so the process that takes the run over
replays that search from the record: what it found stays callable. ``asked.log`` says
which processes asked a person (the one that took the run over asks again, from the
record, and waits for the decision where the first process waited).
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.agents.durable.processes import (
    RUN,
    finished,
    finished_with_log,
    kill_when_blocked,
    model_calls,
    runs,
    wait_for,
    worker,
)
from tests.support.agent_kinds import KINDS, Kind

pytest.importorskip("dbos")

SCENARIO = "search_approval"
PUBLISHED = {"answer": "published", "stopped_by": "answer"}


def asked(directory: Path) -> list[int]:
    """The pids of the processes in which the run asked a person, in order."""
    path = directory / "asked.log"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def recorded(directory: Path) -> list[str]:
    """The names of the steps the run recorded, in step order."""
    with contextlib.closing(sqlite3.connect(directory / "runs.sqlite")) as database:
        rows = database.execute(
            "SELECT function_name FROM operation_outputs WHERE workflow_uuid = ? "
            "ORDER BY function_id",
            (RUN,),
        ).fetchall()
    return [name for (name,) in rows]


def killed_while_waiting(directory: Path, kind: Kind) -> int:
    """Start the run in a worker and SIGKILL it while the call waits; the worker's pid."""
    (directory / "block").write_text("")
    first = worker(directory, kind, SCENARIO, "start-and-wait")
    kill_when_blocked(directory, first)
    assert asked(directory) == [first.pid]
    return first.pid


def wait_until_asked(directory: Path, process: subprocess.Popen[str]) -> None:
    """Wait until the run asks a person in ``process`` (it took the run over)."""
    wait_for(process, lambda: process.pid in asked(directory), "ask a person")


def assert_published_once(directory: Path, result: dict[str, object]) -> None:
    assert result == PUBLISHED
    assert runs(directory, "publish") == 1
    # search, publish (before the process went), the answer (after the takeover)
    assert len(model_calls(directory)) == 3


@KINDS  # text and native runs keep what a search found differently
def test_a_killed_run_takes_the_decision_sent_before_the_takeover(
    kind: Kind, tmp_path: Path
) -> None:
    first = killed_while_waiting(tmp_path, kind)
    # A process that runs no workflow decides while no process runs the run.
    assert finished(worker(tmp_path, kind, SCENARIO, "decide-as-client")) == {
        "decided": ["publish"]
    }
    assert runs(tmp_path, "publish") == 0

    taking = worker(tmp_path, kind, SCENARIO, "recover")
    result = finished(taking)

    assert_published_once(tmp_path, result)
    assert asked(tmp_path) == [first, taking.pid]  # replayed to the same wait


def test_a_killed_run_takes_the_decision_sent_after_the_takeover(tmp_path: Path) -> None:
    kind: Kind = "native"
    first = killed_while_waiting(tmp_path, kind)
    taking = worker(tmp_path, kind, SCENARIO, "recover")
    wait_until_asked(tmp_path, taking)  # it took the run over and waits for a person

    assert finished(worker(tmp_path, kind, SCENARIO, "decide-as-client")) == {
        "decided": ["publish"]
    }
    result = finished(taking)

    assert_published_once(tmp_path, result)
    assert asked(tmp_path) == [first, taking.pid]


def test_a_run_shut_down_while_it_waits_stays_pending_and_goes_on_elsewhere(
    tmp_path: Path,
) -> None:
    kind: Kind = "native"
    # shutdown() while the call waits cancels the run's task in this process: the run
    # stays pending as it was. The cancellation is not an approval that failed: no
    # refusal for the model, nothing recorded after the wait.
    first = worker(tmp_path, kind, SCENARIO, "start-and-leave")
    left, log = finished_with_log(first)
    assert left == {"pending": ["publish"]}
    assert "approval callback failed" not in log
    assert "await wasn't used with future" not in log
    steps = recorded(tmp_path)
    assert steps[-2:] == ["DBOS.setEvent", "DBOS.sleep"]  # the wait, and nothing after it
    assert "tool:publish" not in steps
    assert len(model_calls(tmp_path)) == 2

    # Another process takes it over and decides itself, once the run asks it.
    taking = worker(tmp_path, kind, SCENARIO, "decide-when-asked")
    result = finished(taking)

    assert_published_once(tmp_path, result)
    assert asked(tmp_path) == [first.pid, taking.pid]
