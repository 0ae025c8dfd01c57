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
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="agents.durable needs the [durable] extra")

from tests.support.workers import Event, Workers, count, most_at_once

RUNS = {f"run{index}": ("react", "native")[index % 2] for index in range(6)}
LIMIT = 2
POLL_SECONDS = 0.05  # the workers' queue polling interval (tests.support.durable_worker)


@pytest.fixture
def workers(database_url: str, tmp_path: Path) -> Iterator[Callable[[int], Workers]]:
    """Start `Workers` on the test's database with a limit; all closed after the test."""
    made: list[Workers] = []

    def make(limit: int) -> Workers:
        made.append(Workers(database_url, tmp_path / f"workers{len(made)}", limit=limit))
        return made[-1]

    try:
        yield make
    finally:
        for each in made:
            each.close()


def at_the_tool(events: list[Event]) -> list[str]:
    """The runs that have come to their tool call, in the order they came."""
    return list(dict.fromkeys(event.run for event in events if event.what == "tool"))


def test_a_queue_spreads_runs_over_workers_and_holds_its_limit(
    database_url: str, workers: Callable[[int], Workers]
) -> None:
    if database_url.startswith("sqlite"):
        # DBOS 3.4 does not hold a queue's limit over all workers on SQLite: the count of
        # running workflows is read before the write lock is taken (pysqlite begins the
        # transaction at the first write), so two workers can both see room for one more
        # (seen here: three runs at once under a limit of two). What it holds there is
        # each worker's own limit: two workers, one run each.
        pool = workers(0)
        pool.start("w1", "w2")
    else:  # three workers that could run three at once, held to two by the queue
        pool = workers(LIMIT)
        pool.start("w1", "w2", "w3")
    for run, kind in RUNS.items():
        pool.tell("w1", f"start {kind} {run}")
    pool.wait_for(lambda events: len(at_the_tool(events)) == LIMIT, "runs at their tool")
    # The workers poll the queue while the two runs are held; a limit that did not hold
    # would let a third run start in these polls (the journal would show it).
    time.sleep(20 * POLL_SECONDS)
    released: list[str] = []
    while len(released) < len(RUNS):
        events = pool.wait_for(
            lambda events: len(at_the_tool(events)) > len(released), "the next run at its tool"
        )
        for run in at_the_tool(events)[len(released) :]:
            pool.release(run)
            released.append(run)
    results = {run: pool.outcome(run) for run in RUNS}
    events = pool.events()

    assert {run: result.answer for run, result in results.items()} == {
        run: f"{run} passed the gate" for run in RUNS
    }
    assert count(events, "tool") == dict.fromkeys(RUNS, 1)
    assert count(events, "model") == dict.fromkeys(RUNS, 2)
    assert most_at_once(events) == LIMIT, pool.journal.read_text()
    ran_in = {event.executor for event in events if event.what == "tool"}
    assert len(ran_in) >= 2, f"every run went to {ran_in}"


def test_the_runs_of_killed_workers_are_finished_by_another(
    workers: Callable[[int], Workers],
) -> None:
    # Three runs, each on its own worker (a worker takes one run at a time), each worker
    # killed with its run at another point: "again" inside its idempotent tool call, "once"
    # inside a tool call that is not idempotent, "asked" inside its second model call
    # (its tool call finished). The fourth worker takes all three over.
    pool = workers(3)
    pool.start("w1", "w2", "w3", "w4")
    for kind, run in (("react", "again"), ("native", "once"), ("native", "asked")):
        pool.tell("w1", f"start {kind} {run}")
    pool.wait_for(lambda events: len(at_the_tool(events)) == 3, "three runs at their tool")
    pool.release("asked", "tool")
    events = pool.wait_for(
        lambda events: Event("model", "asked", "2", where(events, "asked")) in events,
        "asked to make its second model call",
    )
    doomed = {where(events, run) for run in ("again", "once", "asked")}
    (survivor,) = {"w1", "w2", "w3", "w4"} - doomed
    for executor in sorted(doomed):
        pool.kill(executor)
    pool.tell(survivor, "recover " + " ".join(sorted(doomed)))
    # recover() takes them over at once, unless the survivor's own look for processes
    # gone (every lease / 4) came first: either way, each run once, by the survivor.
    pool.wait_for(
        lambda events: taken_over(events, survivor) == {"again", "once", "asked"},
        "the recovery",
    )
    for run in ("again", "once", "asked"):
        pool.release(run)
    results = {run: pool.outcome(run) for run in ("again", "once", "asked")}
    events = pool.events()

    assert {run: result.answer for run, result in results.items()} == {
        "again": "again passed the gate",
        "once": "once was told its call was interrupted",
        "asked": "asked passed the gate",
    }
    # The idempotent call cut off by the kill ran again, the other one did not, and the
    # call that had finished was not made again.
    assert count(events, "tool") == {"again": 2, "once": 1, "asked": 1}
    assert count(events, "tool-done") == {"again": 1, "asked": 1}
    # No finished model call was made again; the one cut off by the kill was.
    calls = Counter((event.run, event.detail) for event in events if event.what == "model")
    assert calls == {
        ("again", "1"): 1,
        ("again", "2"): 1,
        ("once", "1"): 1,
        ("once", "2"): 1,
        ("asked", "1"): 1,
        ("asked", "2"): 2,
    }
    assert {event.executor for event in events if event.what == "answered"} == {survivor}
    ran_last = {pool.client.retrieve_workflow(run).get_status().executor_id for run in results}
    assert ran_last == {survivor}


def taken_over(events: list[Event], executor: str) -> set[str]:
    """The runs ``executor`` took over, by ``recover`` or by itself."""
    return {
        run
        for event in events
        if event.what in ("recovered", "took-over") and event.executor == executor
        for run in (event.run, *event.detail.split())
        if run
    }


def where(events: list[Event], run: str) -> str:
    """The worker that took ``run`` to its tool last."""
    return [event.executor for event in events if event.what == "tool" and event.run == run][-1]
