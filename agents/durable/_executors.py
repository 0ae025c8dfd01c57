"""Which processes run durable runs now: a lease per executor, so that a run is taken
over only from a process that is gone.

DBOS 3.4 records which executor (process) runs each workflow, not whether that executor
is alive: a second process launched under the same executor id (DBOS's default for all,
``"local"``) recovers the first one's runs while they are under way, and nothing tells a
dead executor on another machine from a live one. So each process that launches keeps a
row in a table of ours, ``gent_executors``, in the run database (in DBOS's schema on
Postgres)::

    application, executor_id | token | machine | pid | process_start | lease_ms | heartbeat_ms

- Each launch takes its executor id's row (``claim``) before DBOS starts; a thread
  renews it every quarter of the lease, on the database's clock (``heartbeat_ms``), so
  the machines' clocks need not agree.
- An executor is **gone** when it shut down (``heartbeat_ms`` 0, written by
  ``shutdown``); when it ran on this machine and its process is not there any more (its
  pid, checked with its start time, so a reused pid does not count; a zombie is gone);
  or when it ran on another machine and its last heartbeat is older than its lease. A
  process on this machine that is still there is never gone, whatever its heartbeat
  says: it may be paused, not dead.
- The runs of an executor that is gone are taken over (by ``agents.durable._launch``),
  then its row is deleted. DBOS puts each run back on its queue, and exactly one live
  process takes it from there, so two processes that see the same executor gone at once
  do not both run its runs.

Limits, stated: a process on another machine that stalls (or loses the database) for
longer than its lease is taken for gone while it may be inside a call; DBOS's ownership
check stops it at its next record, but a tool call already under way there finishes, and
the recovering process tells the model the call was interrupted (it runs again only if
its tool is idempotent). Choose the lease longer than any stall you expect. A machine is
its boot id and pid namespace on Linux (so containers on one host are apart), its host
name elsewhere. Processes that start DBOS themselves, not through ``launch``, have no
row: a launching process takes their pending runs for a dead process's.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError

from agents._errors import AgentValueError
from agents.durable._errors import ExecutorInUseError
from toolchain.runtime import logger

__all__ = ["Holder", "Leases", "Renewal", "fresh_executor_id"]

_log = logger("agents.durable")

TABLE = "gent_executors"


Renewal = Literal["kept", "taken", "restored"]
"""A heartbeat's outcome: the row was this process's; another process holds the id now;
the row had been deleted (this process was taken for gone) and is this process's again."""

_NOW_MS = {
    # The database's clock, not this machine's: every process reads and writes one clock.
    "sqlite": "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
    "postgresql": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
}

_live_tokens: set[str] = set()
"""The tokens of this process's launches still under way: a row with this pid and
another token was left by an earlier launch here, which is over."""


def fresh_executor_id() -> str:
    """An executor id of its own for this process: its host, pid and a random part.

    >>> fresh_executor_id().startswith("gent-")
    True
    """
    return f"gent-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def _machine() -> str:
    """This machine, as far as pids go: processes with the same answer share pids."""
    host = socket.gethostname()
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:  # not Linux: the host name has to do
        return host
    return f"{host}/{boot}/{namespace}"


def _process_start(pid: int) -> str:
    """When process ``pid`` started (Linux: clock ticks since boot), ``""`` if unknown;
    with the pid, it names one process even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # the name in parentheses may hold spaces
    return fields[19] if len(fields) > 19 else ""


def _process_alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # there, and someone else's
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not Linux: kill(pid, 0) is all there is
    fields = stat.rpartition(")")[2].split()
    if fields and fields[0] == "Z":  # killed, not yet reaped by its parent
        return False
    return not started or len(fields) <= 19 or fields[19] == started


@dataclass(frozen=True, slots=True)
class Holder:
    """One row: the process that holds an executor id, and when it was last heard from."""

    executor_id: str
    token: str
    machine: str
    pid: int
    process_start: str
    lease_ms: int
    heartbeat_ms: int

    def describe(self, here: str, now_ms: int) -> str:
        if self.machine == here:
            return f"pid {self.pid} on this machine"
        host = self.machine.split("/", 1)[0]
        ago = max(0, now_ms - self.heartbeat_ms) / 1000
        return f"pid {self.pid} on {host}, last heard from {ago:.1f} s ago"


class Leases:
    """The lease table of one database, as this process (executor ``executor_id`` of
    ``application``) sees it. Thread-safe: the keeper thread and callers share it."""

    def __init__(
        self,
        url: str,
        application: str,
        executor_id: str,
        lease_seconds: float,
        *,
        schema: str | None,
    ) -> None:
        if lease_seconds <= 0:
            raise AgentValueError(
                f"lease_seconds={lease_seconds}: give a positive number of seconds"
            )
        self.application = application
        self.machine = _machine()
        self.engine = engine_on(url)
        self.schema = schema if self.engine.dialect.name == "postgresql" else None
        self.table = sa.Table(
            TABLE,
            sa.MetaData(schema=self.schema),
            sa.Column("application", sa.Text, primary_key=True),
            sa.Column("executor_id", sa.Text, primary_key=True),
            sa.Column("token", sa.Text, nullable=False),
            sa.Column("machine", sa.Text, nullable=False),
            sa.Column("pid", sa.BigInteger, nullable=False),
            sa.Column("process_start", sa.Text, nullable=False),
            sa.Column("lease_ms", sa.BigInteger, nullable=False),
            sa.Column("heartbeat_ms", sa.BigInteger, nullable=False),
        )
        self._now: sa.ColumnClause[int] = sa.literal_column(
            _NOW_MS[self.engine.dialect.name], sa.BigInteger
        )
        pid = os.getpid()
        self.me = Holder(
            executor_id,
            secrets.token_hex(16),
            self.machine,
            pid,
            _process_start(pid),
            round(lease_seconds * 1000),
            0,
        )

    @property
    def interval(self) -> float:
        """Seconds between heartbeats (and looks for executors that are gone)."""
        return self.me.lease_ms / 4000

    def create(self) -> None:
        """Create the table (and on Postgres DBOS's schema) if it is not there yet."""
        for last in (False, True):
            try:
                with self.engine.begin() as connection:
                    if self.schema is not None:
                        connection.execute(sa.schema.CreateSchema(self.schema, if_not_exists=True))
                    self.table.create(connection, checkfirst=True)
                return
            except DBAPIError:
                # Another process created it between the check and the CREATE (Postgres
                # reports that as a duplicate); the second pass finds it there.
                if last:
                    raise

    def claim(self) -> None:
        """Take this process's executor id, or raise `ExecutorInUseError` when a live
        process holds it. A holder on another machine that was heard from lately may be
        dead or alive: wait for its next heartbeat (it is alive) or for its lease to
        lapse (it is gone), at most one lease."""
        seen: int | None = None
        while True:
            try:
                held, now = self._try_claim()
            except IntegrityError:
                continue  # another process inserted the row first: look again
            if held is None:
                _live_tokens.add(self.me.token)
                return
            if held.machine == self.machine or (seen is not None and held.heartbeat_ms != seen):
                raise ExecutorInUseError(self.me.executor_id, held.describe(self.machine, now))
            if seen is None:
                _log.warning(
                    "executor id %r is held by %s: waiting up to %.0f s to learn whether "
                    "it is alive (a heartbeat) or gone (its lease lapses)",
                    self.me.executor_id,
                    held.describe(self.machine, now),
                    held.lease_ms / 1000,
                )
            seen = held.heartbeat_ms
            time.sleep(min(held.lease_ms, self.me.lease_ms) / 4000)

    def _try_claim(self) -> tuple[Holder | None, int]:
        """``(None, now)`` once the row is this process's; else the live holder."""
        me = self.me
        with self.engine.begin() as connection:
            now = self._clock(connection)
            found = connection.execute(self._select().where(*self._key(me.executor_id))).first()
            values = self._values(now)
            if found is None:
                connection.execute(sa.insert(self.table).values(**values))
                return None, now
            held = _holder(found)
            if self.gone(held, now):
                # Compare and swap on the holder's token: of two processes taking a
                # gone holder's id at once, one changes the row and the other sees it.
                taken = connection.execute(
                    sa.update(self.table)
                    .where(*self._key(me.executor_id), self.table.c.token == held.token)
                    .values(**values)
                )
                if taken.rowcount == 1:
                    return None, now
            return held, now

    def renew(self) -> Renewal:
        """Write this process's heartbeat, and say whether the row was still its own."""
        with self.engine.begin() as connection:
            renewed = connection.execute(
                sa.update(self.table)
                .where(*self._key(self.me.executor_id), self.table.c.token == self.me.token)
                .values(heartbeat_ms=self._now)
            )
            if renewed.rowcount == 1:
                return "kept"
            found = connection.execute(
                sa.select(self.table.c.token).where(*self._key(self.me.executor_id))
            ).first()
            if found is not None:
                return "taken"
            # Taken for gone and its row deleted while this process lives on (it stalled
            # past its lease): hold the id again, so its new runs are not orphans.
            now = self._clock(connection)
            connection.execute(sa.insert(self.table).values(**self._values(now)))
            return "restored"

    def release(self) -> None:
        """Say this process is gone (a clean shutdown): a live process takes its pending
        runs over at once, without waiting for the lease to lapse."""
        _live_tokens.discard(self.me.token)
        with self.engine.begin() as connection:
            connection.execute(
                sa.update(self.table)
                .where(*self._key(self.me.executor_id), self.table.c.token == self.me.token)
                .values(heartbeat_ms=0)
            )

    def holders(self) -> tuple[list[Holder], int]:
        """Every row of this application, and the database's clock when read."""
        with self.engine.begin() as connection:
            now = self._clock(connection)
            rows = connection.execute(
                self._select().where(self.table.c.application == self.application)
            ).all()
        return [_holder(row) for row in rows], now

    def gone(self, held: Holder, now_ms: int) -> bool:
        """Whether ``held``'s process is gone (see the module's rules)."""
        if held.heartbeat_ms == 0:
            return True  # it shut down
        if held.machine == self.machine:
            if held.pid == self.me.pid:
                return held.token not in _live_tokens  # an earlier launch in this process
            return not _process_alive(held.pid, held.process_start)
        return now_ms - held.heartbeat_ms > held.lease_ms

    def forget(self, held: Holder) -> None:
        """Delete a gone executor's row (once its runs were taken over); a row that a new
        holder took meanwhile (another token) stays."""
        with self.engine.begin() as connection:
            connection.execute(
                sa.delete(self.table).where(
                    *self._key(held.executor_id), self.table.c.token == held.token
                )
            )

    def describe(self, held: Holder, now_ms: int) -> str:
        return held.describe(self.machine, now_ms)

    def close(self) -> None:
        self.engine.dispose()

    def _select(self) -> sa.Select[str, str, str, int, str, int, int]:
        """The row in `Holder`'s field order."""
        columns = self.table.c
        chosen = sa.select(
            columns.executor_id,
            columns.token,
            columns.machine,
            columns.pid,
            columns.process_start,
            columns.lease_ms,
            columns.heartbeat_ms,
        )
        return cast("sa.Select[str, str, str, int, str, int, int]", chosen)

    def _key(self, executor_id: str) -> tuple[sa.ColumnElement[bool], ...]:
        table = self.table
        return (table.c.application == self.application, table.c.executor_id == executor_id)

    def _clock(self, connection: sa.Connection) -> int:
        return int(connection.execute(sa.select(self._now)).scalar_one())

    def _values(self, now: int) -> dict[str, object]:
        me = self.me
        return {
            "application": self.application,
            "executor_id": me.executor_id,
            "token": me.token,
            "machine": me.machine,
            "pid": me.pid,
            "process_start": me.process_start,
            "lease_ms": me.lease_ms,
            "heartbeat_ms": now,
        }


def _holder(row: sa.Row[str, str, str, int, str, int, int]) -> Holder:
    return Holder(*row)


def engine_on(url: str) -> sa.Engine:
    """An engine of our own on the run database, with the driver DBOS uses there."""
    parsed = sa.make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite":
        # As DBOS does: ride out another process's write lock rather than fail at once.
        return sa.create_engine(parsed, connect_args={"timeout": 30.0}, poolclass=sa.NullPool)
    return sa.create_engine(parsed, pool_size=1, max_overflow=1, pool_pre_ping=True)
