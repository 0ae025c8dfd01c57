"""Starting and stopping DBOS for durable runs in this process."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from dbos import DBOS, DBOSConfig

from agents.durable._serializer import record_settings

__all__ = ["DEFAULT_DATABASE", "launch", "recover", "shutdown"]

DEFAULT_DATABASE = "sqlite:///gent_durable.sqlite"
"""A SQLite file in the working directory: one machine, no server."""

_SQLITE = "sqlite:///"


def launch(
    database_url: str | None = None,
    *,
    name: str = "gent",
    config: DBOSConfig | None = None,
) -> None:
    """Start DBOS in this process on ``database_url`` and recover the runs left pending.

    ``sqlite:///path.sqlite`` (the default, ``gent_durable.sqlite`` here) serves one
    machine; ``postgresql://…`` lets several worker processes share runs (a queue's
    limit over many workers holds only on Postgres: DBOS 3.4 counts a queue's running
    runs on SQLite before it takes the write lock). Build every ``DurableAgent`` /
    ``DurablePrompt`` first: recovery finds them by name. ``config`` passes any other
    DBOS setting through (``log_level``, ``executor_id`` …).

    A SQLite file is switched to write-ahead logging first (the file keeps the mode):
    each recorded step then costs one append instead of a rewrite of the rollback
    journal, 1.6x to 5x faster per step (``python -m benchmarks --only durable``), and
    still survives a killed process.

    Example::

        launch("sqlite:///runs.sqlite")
    """
    url = database_url or DEFAULT_DATABASE
    if url.startswith(_SQLITE):
        _write_ahead(url.removeprefix(_SQLITE).split("?", 1)[0])
    settings: DBOSConfig = {
        "name": name,
        "system_database_url": url,
        "log_level": "WARNING",
        **(config or {}),
        **record_settings(config),
    }
    DBOS(config=settings)
    DBOS.launch()


async def recover(executor_ids: Sequence[str]) -> list[str]:
    """Take over the unfinished runs of dead worker processes; their workflow ids.

    Each worker launches with its own ``executor_id`` (``launch(config={"executor_id":
    ...})``). When one dies, a live worker (or any process that launched DBOS on the
    same database) calls ``recover([dead_id])``: the dead worker's pending runs go back
    on their own queues (whose limits still apply), or resume here if they had none, and
    finish without repeating a finished call. Calling it twice for the same runs is
    harmless.

    Example::

        taken = await recover(["worker-2"])
    """
    # DBOS recovers another executor's runs through its cloud Conductor; without it the
    # same recovery is this classmethod, not yet public in DBOS 3.4 (it is what launch()
    # calls for this executor). Pinned behaviour: tests/agents/durable/test_workers.py.
    handles = await asyncio.to_thread(DBOS._recover_pending_workflows, list(executor_ids))  # pyright: ignore[reportPrivateUsage]
    return [handle.get_workflow_id() for handle in handles]


def shutdown() -> None:
    """Stop DBOS in this process; runs not finished stay pending for the next launch."""
    DBOS.destroy()


def _write_ahead(path: str) -> None:
    if not path or path == ":memory:":
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.close()
