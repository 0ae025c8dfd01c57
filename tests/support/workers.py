"""Worker processes for the many-worker tests: start them, feed them runs, kill them.

`Workers(database_url, directory, limit)` starts real subprocesses of
`tests.support.durable_worker` on one DBOS database; each serves the queue ``runs`` (at
most ``limit`` runs at once in all, 0 for no such limit; one per worker). The test then
reads what the workers did from their shared journal (`Journal`), opens each run's gates (`release`)
when it wants the run to go on, and may ``kill`` a worker with ``SIGKILL`` at any point.
The answers come from the database itself, through a `dbos.DBOSClient`.

Waiting is on events, not on time: ``wait_for`` polls the journal until a condition
holds. Its only limit is a guard against a hang (a worker that died when no test meant it
to, a run nobody recovers), long enough never to matter on a slow machine, and it fails
with the journal and the workers' logs so the failure explains itself.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tests.support.durable_worker import APPLICATION
from tests.support.guards import HANG_GUARD_SECONDS

_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Event:
    """One journal line: ``what`` happened to ``run`` (``""`` if none) in ``executor``."""

    what: str
    run: str
    detail: str
    executor: str


def parse(line: str) -> Event:
    words = line.split()
    what, executor = words[0], words[-1]
    middle = words[1:-1]
    return Event(what, middle[0] if middle else "", " ".join(middle[1:]), executor)


class Workers:
    """Worker processes on one database, and the journal and gates they share."""

    def __init__(self, database_url: str, directory: Path, *, limit: int) -> None:
        self.database_url = database_url
        self.directory = directory
        self.limit = limit
        self.journal = directory / "journal"
        self.gates = directory / "gates"
        self.gates.mkdir(parents=True, exist_ok=True)
        self.journal.touch()
        self.processes: dict[str, subprocess.Popen[str]] = {}
        self._logs: dict[str, IO[str]] = {}
        self._client: Any = None

    # -- processes -------------------------------------------------------------------

    def start(self, *executors: str, options: Sequence[str] = ()) -> None:
        """Start one worker per executor id and wait until each serves the queue;
        ``options`` as ``tests.support.durable_worker`` takes them (``own-id``, ``lease=S``)."""
        for executor in executors:
            log = (self.directory / f"{executor}.log").open("w")
            self._logs[executor] = log
            self.processes[executor] = subprocess.Popen(
                [
                    sys.executable,
                    *("-m", "tests.support.durable_worker"),
                    *(self.database_url, executor, str(self.directory), str(self.limit)),
                    *options,
                ],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=_ROOT,
            )
        self.wait_for(
            lambda events: {e.executor for e in events if e.what == "ready"} >= set(executors),
            f"workers {', '.join(executors)} to serve the queue",
        )

    def tell(self, executor: str, line: str) -> None:
        stdin = self.processes[executor].stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()

    def kill(self, executor: str) -> None:
        """``SIGKILL`` the worker: no clean-up of any kind runs in it."""
        process = self.processes[executor]
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    def close(self) -> None:
        """End every worker still running (end of input, then a kill if it lingers)."""
        for process in self.processes.values():
            if process.poll() is None and process.stdin is not None:
                process.stdin.close()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in self._logs.values():
            log.close()
        if self._client is not None:
            self._client.destroy()

    # -- the journal and the gates ---------------------------------------------------

    def events(self) -> list[Event]:
        return [parse(line) for line in self.journal.read_text().splitlines() if line]

    def wait_for(self, condition: Callable[[list[Event]], bool], what: str) -> list[Event]:
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while True:
            events = self.events()
            if condition(events):
                return events
            alive = [p for p in self.processes.values() if p.poll() is None]
            if not alive or time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}\n{self.diagnosis()}")
            time.sleep(0.01)

    def release(self, run: str, *points: str) -> None:
        """Open ``run``'s gates (``tool``, ``answer``; both by default)."""
        for point in points or ("tool", "answer"):
            (self.gates / f"{run}.{point}").touch()

    def diagnosis(self) -> str:
        logs = "\n".join(
            f"--- {name} (exit {self.processes[name].poll()}) ---\n"
            + (self.directory / f"{name}.log").read_text()[-4000:]
            for name in self.processes
        )
        return f"--- journal ---\n{self.journal.read_text()}{logs}"

    # -- the runs, as the database has them ------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            from agents.durable import client

            self._client = client(self.database_url, application_name=APPLICATION)
        return self._client

    def outcome(self, run: str) -> Any:
        """The run's ``AgentResult`` once its workflow has ended (polling its status)."""
        from agents.durable import retrieve

        deadline = time.monotonic() + HANG_GUARD_SECONDS
        handle = self.client.retrieve_workflow(run)
        while handle.get_status().status in ("ENQUEUED", "PENDING"):
            if time.monotonic() > deadline:
                raise AssertionError(f"run {run} never ended\n{self.diagnosis()}")
            time.sleep(0.02)

        async def result() -> Any:
            return await (await retrieve(run, client=self.client)).result()

        return asyncio.run(result())


def count(events: Iterable[Event], what: str) -> Counter[str]:
    """How many ``what`` events each run had."""
    return Counter(event.run for event in events if event.what == what)


def most_at_once(events: Iterable[Event]) -> int:
    """The most runs under way at once, in journal order (the order things happened): a
    run is under way from its first model call to its ``answered`` event."""
    under_way: set[str] = set()
    most = 0
    for event in events:
        if event.what == "model":
            under_way.add(event.run)
        elif event.what == "answered":
            under_way.discard(event.run)
        most = max(most, len(under_way))
    return most
