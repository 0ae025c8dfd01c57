"""Many workers: a DBOS queue spreads durable runs over worker processes within its limit,
and the runs of a worker killed mid-run are taken over by another.

The workers are real subprocesses (`tests.support.durable_worker`), each running both
agents as `agents.durable.DurableAgent`s; every run is one model call asking for the
idempotent tool ``gate``, the tool, and a model call that answers, and the test holds a
run at either point until it releases it. The journal the workers append to says how
many times each tool ran and each model call was made, in which worker, in what order.
On Postgres (`tests.support.postgres`, skipped with the reason where it cannot start)
and on a SQLite file the workers share.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="agents.durable needs the [durable] extra")

from tests.support.workers import Event, Workers, count, most_at_once

RUNS = {f"run{index}": ("react", "native")[index % 2] for index in range(6)}
LIMIT = 2
POLL_SECONDS = 0.05  # the workers' queue polling interval (tests.support.durable_worker)


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def workers(database_url: str, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(database_url, tmp_path / "workers", limit=LIMIT)
    try:
        yield started
    finally:
        started.close()


def at_the_tool(events: list[Event]) -> list[str]:
    """The runs that have come to their tool call, in the order they came."""
    return list(dict.fromkeys(event.run for event in events if event.what == "tool"))


def test_a_queue_spreads_runs_over_workers_and_holds_its_limit(workers: Workers) -> None:
    workers.start("w1", "w2", "w3")
    for run, kind in RUNS.items():
        workers.tell("w1", f"start {kind} {run}")
    workers.wait_for(lambda events: len(at_the_tool(events)) == LIMIT, "runs at their tool")
    # Three idle-capable workers poll the queue while the two runs are held; a limit that
    # did not hold would let a third run start in these polls (the journal would show it).
    time.sleep(20 * POLL_SECONDS)
    released: list[str] = []
    while len(released) < len(RUNS):
        events = workers.wait_for(
            lambda events: len(at_the_tool(events)) > len(released), "the next run at its tool"
        )
        for run in at_the_tool(events)[len(released) :]:
            workers.release(run)
            released.append(run)
    results = {run: workers.outcome(run) for run in RUNS}
    events = workers.events()

    assert {run: result.answer for run, result in results.items()} == {
        run: f"{run} passed the gate" for run in RUNS
    }
    assert count(events, "tool") == dict.fromkeys(RUNS, 1)
    assert count(events, "model") == dict.fromkeys(RUNS, 2)
    assert most_at_once(events) == LIMIT
    ran_in = {event.executor for event in events if event.what == "tool"}
    assert len(ran_in) >= 2, f"every run went to {ran_in}"


def test_the_runs_of_a_killed_worker_are_finished_by_another(workers: Workers) -> None:
    # Two runs, one per worker (a worker takes one run at a time): "cut" is killed inside
    # its tool call, "asked" inside its second model call, after its tool call finished.
    workers.start("w1", "w2", "w3")
    workers.tell("w1", "start react cut")
    workers.tell("w1", "start native asked")
    events = workers.wait_for(lambda events: len(at_the_tool(events)) == 2, "both at their tool")
    workers.release("asked", "tool")
    events = workers.wait_for(
        lambda events: Event("model", "asked", "2", where(events, "asked")) in events,
        "asked to make its second model call",
    )
    doomed = {where(events, "cut"), where(events, "asked")}
    (survivor,) = {"w1", "w2", "w3"} - doomed
    for executor in sorted(doomed):
        workers.kill(executor)
    workers.tell(survivor, "recover " + " ".join(sorted(doomed)))
    workers.wait_for(
        lambda events: Event("recovered", "asked", "cut", survivor) in events, "the recovery"
    )
    workers.release("cut")
    workers.release("asked")
    results = {run: workers.outcome(run) for run in ("cut", "asked")}
    events = workers.events()

    assert {run: result.answer for run, result in results.items()} == {
        "cut": "cut passed the gate",
        "asked": "asked passed the gate",
    }
    # The idempotent tool cut off by the kill ran again; the finished one did not.
    assert count(events, "tool") == {"cut": 2, "asked": 1}
    assert count(events, "tool-done") == {"cut": 1, "asked": 1}
    # No finished model call was made again; the one cut off by the kill was.
    calls = [(event.run, event.detail) for event in events if event.what == "model"]
    assert sorted(calls) == sorted(
        [("cut", "1"), ("cut", "2"), ("asked", "1"), ("asked", "2"), ("asked", "2")]
    )
    finished_in = {event.executor for event in events if event.what == "answered"}
    assert finished_in == {survivor}
    assert {workers.client.retrieve_workflow(run).get_status().executor_id for run in results} == {
        survivor
    }


def where(events: list[Event], run: str) -> str:
    """The worker that took ``run`` to its tool last."""
    return [event.executor for event in events if event.what == "tool" and event.run == run][-1]
