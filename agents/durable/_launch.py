"""Starting and stopping DBOS for durable runs in this process, and taking over the runs
of processes that are gone (by the leases of `agents.durable._executors`)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dbos import DBOS, DBOSConfig

from agents._errors import AgentStateError
from agents.durable._errors import ExecutorInUseError, NotLaunchedError
from agents.durable._executors import Holder, Leases, fresh_executor_id
from agents.durable._keys import shared_key
from agents.durable._serializer import record_settings
from toolchain.runtime import PROCESS_KEY, logger, redact

__all__ = [
    "DEFAULT_DATABASE",
    "DEFAULT_LEASE_SECONDS",
    "launch",
    "recover",
    "require_launched",
    "shutdown",
]

DEFAULT_DATABASE = "sqlite:///gent_durable.sqlite"
"""A SQLite file in the working directory: one machine, no server."""

DEFAULT_LEASE_SECONDS = 20.0
"""How long a process on another machine may go unheard before its runs are taken over."""

_SQLITE = "sqlite:///"
_log = logger("agents.durable")


@dataclass(slots=True)
class _Launched:
    leases: Leases | None  # None under DBOS Conductor, which recovers runs itself
    keeper: _Keeper | None
    key: bytes
    """Seals the held calls of paused runs, the same in every process (`_keys`)."""


_launched: _Launched | None = None


def launch(
    database_url: str | None = None,
    *,
    name: str = "gent",
    config: DBOSConfig | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> None:
    """Start DBOS in this process on ``database_url`` and take over the runs that
    processes now gone left unfinished.

    ``sqlite:///path.sqlite`` (the default, ``gent_durable.sqlite`` here) serves one
    machine; ``postgresql://…`` lets several worker processes share runs (a queue's
    limit over many workers holds only on Postgres: DBOS 3.4 counts a queue's running
    runs on SQLite before it takes the write lock). Build every ``DurableAgent`` /
    ``DurablePrompt`` first: a run taken over finds its agent by name (one not built
    yet waits for it, with a warning). ``config`` passes any other DBOS setting through
    (``log_level``, ``executor_id`` …).

    Each process runs under an executor id of its own (``gent-<host>-<pid>-<random>``,
    unless ``config`` gives one) and holds it by a lease in the database, renewed every
    ``lease_seconds / 4``. A run is taken over only from a process that is gone: it shut
    down, or it ran on this machine and its process is no more, or it ran on another
    machine and was not heard from for ``lease_seconds``. While this process runs, it
    takes over such runs by itself (checking every ``lease_seconds / 4``); ``recover``
    does it at once. Raises ``ExecutorInUseError`` when ``config`` names an executor id a
    live process holds (a holder on another machine is watched for up to
    ``lease_seconds`` first, to tell a dead one from a live one).

    A SQLite file is switched to write-ahead logging first (the file keeps the mode):
    each recorded step then costs one append instead of a rewrite of the rollback
    journal, 1.6x to 5x faster per step (``python -m benchmarks --only durable``), and
    still survives a killed process.

    Example::

        launch("sqlite:///runs.sqlite")
    """
    global _launched
    if _launched is not None:
        raise AgentStateError("agents.durable.launch() was called already: call shutdown() first")
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
    schema = settings.get("dbos_system_schema") or "dbos"
    key = shared_key(url, schema)
    if settings.get("conductor_key"):
        # DBOS Conductor gives each process its own id and recovers the runs of the
        # dead ones itself: no leases of ours.
        DBOS(config=settings)
        DBOS.launch()
        _launched = _Launched(None, None, key)
        return
    executor_id = settings.get("executor_id") or os.environ.get("DBOS__VMID") or fresh_executor_id()
    settings["executor_id"] = executor_id
    leases = Leases(url, name, executor_id, lease_seconds, schema=schema)
    try:
        leases.create()
        leases.claim()  # before DBOS, which recovers this id's pending runs as it launches
    except BaseException:
        leases.close()
        raise
    try:
        DBOS(config=settings)
        DBOS.launch()
    except BaseException:
        DBOS.destroy()
        leases.release()
        leases.close()
        raise
    keeper = _Keeper(leases)
    keeper.start()  # its first look is at once: a process started after a crash finishes its runs
    _launched = _Launched(leases, keeper, key)


async def recover(executor_ids: Sequence[str]) -> list[str]:
    """Take over now the unfinished runs of processes that are gone; their workflow ids.

    A live process takes over a gone process's runs by itself (see ``launch``); this
    does it at once, for the executor ids given (``launch(config={"executor_id":
    "worker-2"})``, or the ``gent-…`` ids ``launch`` makes). Their pending runs go back
    on their own queues (whose limits still apply), or run in a live process if they
    had none, and finish without repeating a finished call. Raises
    ``ExecutorInUseError`` for an executor whose process is alive: its runs are under
    way there. Runs already taken over are not listed again; calling it twice is
    harmless.

    Example::

        taken = await recover(["worker-2"])
    """
    launched = _launched
    if launched is None or launched.leases is None:
        raise NotLaunchedError("recover runs")
    leases = launched.leases
    wanted = set(executor_ids)
    holders, now = await asyncio.to_thread(leases.holders)
    held = [holder for holder in holders if holder.executor_id in wanted]
    for holder in held:
        if holder.token == leases.me.token or not leases.gone(holder, now):
            raise ExecutorInUseError(holder.executor_id, leases.describe(holder, now))
    taken = await asyncio.to_thread(_recover, list(executor_ids))
    for holder in held:
        await asyncio.to_thread(leases.forget, holder)
    return taken


def shutdown() -> None:
    """Stop DBOS in this process; runs not finished stay pending, and a live process
    (or the next to launch) takes them over at once."""
    global _launched
    launched, _launched = _launched, None
    if launched is not None and launched.keeper is not None:
        launched.keeper.stop()
    DBOS.destroy()
    if launched is not None and launched.leases is not None:
        try:
            launched.leases.release()
        except Exception as error:  # the database went away: the lease lapses instead
            _log.warning("could not release this process's lease: %s", _described(error))
        launched.leases.close()


def sealing_key() -> bytes:
    """The key this process seals paused runs' held calls with: the database's
    (`agents.durable._keys`), or, where DBOS was launched without ``launch``, this
    process's own (its paused runs then resume in this process only)."""
    return _launched.key if _launched is not None else PROCESS_KEY


def require_launched(what: str) -> None:
    """Raise ``NotLaunchedError`` unless DBOS is launched in this process (by ``launch``,
    or by the application itself)."""
    if _launched is None and not _dbos_launched():
        raise NotLaunchedError(what)


def _dbos_launched() -> bool:
    import dbos._dbos as dbos_core

    # DBOS 3.4 has no public "is launched"; without this check a durable call before
    # launch() fails with DBOS's "No DBOS was created yet". Pinned by test_lifecycle.
    instance = dbos_core._dbos_global_instance  # pyright: ignore[reportPrivateUsage]
    return instance is not None and bool(instance._launched)  # pyright: ignore[reportPrivateUsage]


def _recover(executor_ids: list[str]) -> list[str]:
    # DBOS recovers another executor's runs through its cloud Conductor; without it the
    # same recovery is this classmethod, not yet public in DBOS 3.4 (it is what launch()
    # calls for this executor). Each run goes back on its queue (the internal one if it
    # had none), and one live process takes it from there. Pinned by test_workers.
    handles = DBOS._recover_pending_workflows(executor_ids)  # pyright: ignore[reportPrivateUsage]
    return [handle.get_workflow_id() for handle in handles]


class _Keeper(threading.Thread):
    """Renews this process's lease and takes over the runs of executors that are gone,
    every quarter of the lease, until ``stop``."""

    def __init__(self, leases: Leases) -> None:
        super().__init__(name="agents.durable.lease", daemon=True)
        self.leases = leases
        self._stopping = threading.Event()
        self._failing = False
        self._lost = False

    def run(self) -> None:
        # A thread of its own (DBOS's synchronous calls refuse a thread whose event loop
        # runs); its first look is for the runs of every process gone, orphans too.
        taken = self._look(orphans=True)
        _log.info(
            "launched as executor %s; took over %d run(s) of processes that are gone",
            self.leases.me.executor_id,
            taken,
        )
        while not self._stopping.wait(self.leases.interval):
            try:
                self._renew()
            except Exception as error:  # the database is away: try again next time
                if not self._failing:
                    _log.warning(
                        "could not renew this process's lease (%s); its runs are taken "
                        "over by another process if this lasts %.0f s",
                        _described(error),
                        self.leases.me.lease_ms / 1000,
                    )
                self._failing = True
                continue
            self._failing = False
            self._look(orphans=False)

    def _look(self, *, orphans: bool) -> int:
        try:
            return self.take_over(orphans=orphans)
        except Exception as error:  # the database is away: look again next time
            _log.warning("could not take over the runs of gone processes: %s", _described(error))
            return 0

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive():
            self.join()

    def _renew(self) -> None:
        renewal = self.leases.renew()
        if renewal == "kept" or self._lost:
            return
        self._lost = True
        if renewal == "restored":
            _log.error(
                "this process (executor %s) was taken for gone, so another process took "
                "its runs over (it was not heard from for %.0f s: a stall?); it holds its "
                "executor id again, and DBOS stops the runs it had at their next step",
                self.leases.me.executor_id,
                self.leases.me.lease_ms / 1000,
            )
        else:
            _log.error(
                "another process now holds this process's executor id %s (this one was "
                "taken for gone): stop this process; its runs go on there",
                self.leases.me.executor_id,
            )

    def take_over(self, *, orphans: bool) -> int:
        """Take over the runs of executors that are gone; with ``orphans``, also those of
        executors that have no lease at all (started before leases, or not by launch).
        How many runs were taken over."""
        leases = self.leases
        # Runs before leases: a process inserts its lease before it starts any run, so
        # every run listed here whose executor has no lease in the next read is an orphan.
        pending: set[str] = _pending_executors(leases.application) if orphans else set()
        holders, now = leases.holders()
        mine = leases.me.executor_id
        taken = 0
        for holder in holders:
            if holder.executor_id != mine and leases.gone(holder, now):
                taken += self._take(holder.executor_id, leases.describe(holder, now), holder)
        for executor_id in sorted(pending - {h.executor_id for h in holders} - {mine}):
            taken += self._take(executor_id, "no lease", None)
        return taken

    def _take(self, executor_id: str, who: str, holder: Holder | None) -> int:
        taken = _recover([executor_id])
        if holder is not None:
            self.leases.forget(holder)
        if taken:
            _log.warning(
                "took over %d run(s) of executor %s (%s), which is gone: %s",
                len(taken),
                executor_id,
                who,
                ", ".join(taken),
            )
        return len(taken)


def _described(error: Exception) -> str:
    # A driver's message may quote a connection string: no password in a log record.
    return redact(f"{type(error).__name__}: {error}")


def _pending_executors(application: str) -> set[str]:
    found = DBOS.list_workflows(
        status="PENDING", application_name=application, load_input=False, load_output=False
    )
    return {status.executor_id for status in found if status.executor_id}


def _write_ahead(path: str) -> None:
    if not path or path == ":memory:":
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.close()
