"""A run is taken over only from a process that is gone (issue 26, item 4).

Each process launches under an executor id of its own and holds it by a lease
(``agents.durable._executors``). A second process launched on the database leaves the
first one's live runs alone, and takes them over once the first is killed; a process
that asks for a live process's id, or to recover a live process's runs, is refused. The
workers are real subprocesses (`tests.support.durable_worker`) on Postgres and on a
SQLite file; the test process plays a process on another machine in the last test.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="agents.durable needs the [durable] extra")

from agents.durable import (
    ExecutorInUseError,
    NotLaunchedError,
    _executors,
    launch,
    recover,
    retrieve,
    shutdown,
)
from tests.support.durable_worker import APPLICATION, Gates, Journal, build_agents
from tests.support.guards import HANG_GUARD_SECONDS
from tests.support.workers import Event, Workers, count


@pytest.fixture
def pool(database_url: str, tmp_path: Path) -> Iterator[Workers]:
    workers = Workers(database_url, tmp_path / "workers", limit=0)
    try:
        yield workers
    finally:
        workers.close()


def executor_of(events: list[Event], worker: str) -> str:
    """The DBOS executor id a worker launched as."""
    return next(e.run for e in events if e.what == "executor" and e.executor == worker)


def seen(what: str, run: str, worker: str) -> Callable[[list[Event]], bool]:
    return lambda events: any(
        e.what == what and e.run == run and e.executor == worker for e in events
    )


def test_a_second_process_leaves_a_live_run_alone_and_takes_it_over_once_it_is_killed(
    pool: Workers,
) -> None:
    pool.start("w1", options=["own-id"])
    pool.tell("w1", "direct native once1")  # not idempotent: a refund, say
    pool.wait_for(seen("tool", "once1", "w1"), "once1 at its tool in w1")

    # Launched while once1 is under way in w1, with the default (its own) executor id.
    pool.start("w2", options=["own-id"])
    events = pool.wait_for(
        lambda events: Event("looked", "", "", "w2") in events, "w2's first look"
    )
    assert executor_of(events, "w1") != executor_of(events, "w2")
    status = pool.client.retrieve_workflow("once1").get_status()
    assert (status.status, status.executor_id) == ("PENDING", executor_of(events, "w1"))

    pool.release("once1")
    assert pool.outcome("once1").answer == "once1 passed the gate"

    # Now w1 dies inside the tool call of another run: w2 takes that run over by itself.
    pool.tell("w1", "direct native once2")
    pool.wait_for(seen("tool", "once2", "w1"), "once2 at its tool in w1")
    pool.kill("w1")
    pool.wait_for(seen("took-over", "once2", "w2"), "w2 to take once2 over")
    pool.release("once2")
    assert pool.outcome("once2").answer == "once2 was told its call was interrupted"
    events = pool.events()

    # Each refund ran once: once1's in w1, untouched by w2; once2's was cut off by the
    # kill and not run again (the model was told), its last model call made in w2.
    assert count(events, "tool") == {"once1": 1, "once2": 1}
    assert {e.executor for e in events if e.what in ("tool", "model") and e.run == "once1"} == {
        "w1"
    }
    calls = Counter((e.run, e.detail, e.executor) for e in events if e.what == "model")
    assert calls == {
        ("once1", "1", "w1"): 1,
        ("once1", "2", "w1"): 1,
        ("once2", "1", "w1"): 1,
        ("once2", "2", "w2"): 1,
    }


async def test_an_executor_id_a_live_process_holds_is_refused(pool: Workers) -> None:
    pool.start("w1", "w2")  # each under the id it is given: "w1", "w2"
    pool.tell("w2", "recover w1")
    pool.wait_for(lambda events: Event("refused", "w1", "", "w2") in events, "the refusal")

    with pytest.raises(ExecutorInUseError, match=r"executor id 'w1' is held by a live process"):
        launch(pool.database_url, name=APPLICATION, config={"executor_id": "w1"})

    with pytest.raises(NotLaunchedError):  # nothing was launched here
        await recover(["w1"])


async def test_a_process_on_another_machine_is_taken_for_gone_once_its_lease_lapses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker renews its lease every quarter of a second. This process says it is on
    # another machine, so it cannot see the worker's pid: its heartbeat is all it has.
    # (Killed rather than paused: a paused SQLite writer would hold the file's lock.)
    pool = Workers(f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "workers", limit=0)
    try:
        pool.start("w1", options=["lease=1.0"])
        pool.tell("w1", "direct react again1")  # idempotent: may run again
        pool.wait_for(seen("tool", "again1", "w1"), "again1 at its tool in w1")
        build_agents(Journal(pool.journal, "here"), Gates(pool.gates))
        monkeypatch.setattr(_executors, "_machine", lambda: "another-machine")
        launch(pool.database_url, name=APPLICATION, lease_seconds=1.0)
        try:
            with pytest.raises(ExecutorInUseError, match=r"pid \d+ on .*, last heard from"):
                await recover(["w1"])  # heard from lately: alive

            pool.kill("w1")  # no more heartbeats; its pid means nothing here
            pool.release("again1")
            run = await retrieve("again1")
            result = await asyncio.wait_for(run.result(), HANG_GUARD_SECONDS)
        finally:
            shutdown()
        events = pool.events()
    finally:
        pool.close()

    assert result.answer == "again1 passed the gate"
    # Taken over by this process once the lease lapsed: the cut-off call ran again here.
    assert [(e.what, e.executor) for e in events if e.what in ("tool", "answered")] == [
        ("tool", "w1"),
        ("tool", "here"),
        ("answered", "here"),
    ]
