"""The leak guard, a pytest plugin the whole suite runs under (``tests/conftest.py``): a
test fails when it leaves running what it started, so no test can poison the ones
after it, in whatever order they run.

After each test's teardown, against what ran before its setup, it looks for:

- non-daemon threads (one keeps the process from exiting), less those a thread pool
  that ran before the test added to itself: such a pool (DBOS's executor, launched by a
  module's fixture) grows on demand and belongs to whoever made it;
- child processes still alive (zombies aside), read from ``/proc`` (Linux only; the
  children of the threads Python knows, less the tool workers': a tool's child is the
  tool's, and one that moves to the main thread when its tool worker exits idle, as
  code mode's sandbox workers do, is not new then);
- listening sockets of this process (TCP, TCP6, Unix), read from ``/proc`` too;
- sync tool calls the worker pool abandoned that still run (``toolchain._concurrency``):
  each counts against the pool's ceiling for every test after;
- asyncio tasks still pending in an async test's own event loop once its fixtures are
  torn down, just before pytest-asyncio closes the loop (which would cancel them
  quietly).

What a fixture of a wider scope (module, session) starts while it is set up is its
own, not the test's. Something that ends by itself gets ``LEAK_GRACE`` seconds to do
so; only then does the test fail, naming what it left. Cost when nothing leaks: a few
hundred microseconds a test (no waiting).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolchain._concurrency import stuck_calls

LEAK_GRACE = 5.0
"""Seconds something a test started gets to end by itself after its teardown (the ini
option ``leak_grace`` sets another)."""

_PROC = Path("/proc/self")
_LISTEN_TCP = "0A"  # TCP_LISTEN in /proc/net/tcp's "st" column
_UNIX_ACCEPTING = 0x10000  # __SO_ACCEPTCON in /proc/net/unix's "Flags" column
_ASYNC_RUNNER = "_function_scoped_runner"  # pytest-asyncio's loop of a function-scoped test


@dataclass
class Snapshot:
    """What runs in this process at one moment, as far as the guard looks."""

    threads: set[threading.Thread] = field(default_factory=lambda: set[threading.Thread]())
    children: set[int] = field(default_factory=lambda: set[int]())
    tool_children: set[int] = field(default_factory=lambda: set[int]())
    """Children of the tool workers: never reported, but known, so that one that moves
    to another thread when its tool worker exits idle does not read as new then."""
    sockets: set[str] = field(default_factory=lambda: set[str]())  # "socket:[inode]"
    stuck: int = 0

    @classmethod
    def take(cls) -> Snapshot:
        threads = set(threading.enumerate())
        tool_workers = {t for t in threads if t.name.startswith("tool-worker")}
        return cls(
            {t for t in threads if not t.daemon and t is not threading.main_thread()},
            _children(threads - tool_workers),
            _children(tool_workers),
            _sockets(),
            len(stuck_calls()),
        )

    def update(self, other: Snapshot) -> None:
        self.threads |= other.threads
        self.children |= other.children
        self.tool_children |= other.tool_children
        self.sockets |= other.sockets


def _pool_of(thread: threading.Thread) -> int | None:
    """The ``id`` of the `ThreadPoolExecutor` whose worker ``thread`` is, if it is one.

    A pool's worker runs ``_worker(weakref to the pool, ...)``; the arguments are kept on
    the thread while it runs (``Thread.run`` drops them when its target returns).
    """
    args = getattr(thread, "_args", ())
    reference = args[0] if args else None
    pool = reference() if isinstance(reference, weakref.ref) else None
    return id(pool) if isinstance(pool, ThreadPoolExecutor) else None


def _children(threads: Iterable[threading.Thread]) -> set[int]:
    """Pids of the live children of ``threads``."""
    found: set[int] = set()
    for thread in threads:
        if thread.native_id is None:
            continue
        try:
            found.update(
                map(int, (_PROC / "task" / str(thread.native_id) / "children").read_text().split())
            )
        except OSError:  # the thread ended in between, or no /proc here
            continue
    return {pid for pid in found if _alive(pid)}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split(" ", 1)[0] != "Z"  # the state after "(name)"


def _sockets() -> set[str]:
    found: set[str] = set()
    try:
        fds = os.listdir(_PROC / "fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(_PROC / "fd" / fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target)
    return found


def _listening(sockets: set[str]) -> set[str]:
    """Those of ``sockets`` that listen."""
    if not sockets:  # the common case: no socket opened, no table read
        return set()
    inodes = {s[len("socket:[") : -1] for s in sockets}
    listening: set[str] = set()
    for name in ("tcp", "tcp6"):
        for line in _lines(f"/proc/net/{name}"):
            fields = line.split()
            if len(fields) > 9 and fields[3] == _LISTEN_TCP and fields[9] in inodes:
                listening.add(fields[9])
    for line in _lines("/proc/net/unix"):
        fields = line.split()
        if len(fields) > 6 and int(fields[3], 16) & _UNIX_ACCEPTING and fields[6] in inodes:
            listening.add(fields[6])
    return {f"socket:[{inode}]" for inode in listening}


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()[1:]
    except OSError:
        return []


def _leaks(before: Snapshot, owned: Snapshot) -> list[str]:
    """What runs now that ran neither before the test nor for a wider fixture."""
    now = Snapshot.take()
    problems: list[str] = []
    known = before.threads | owned.threads
    pools = {pool for pool in map(_pool_of, known) if pool is not None}
    threads = {t for t in now.threads - known if _pool_of(t) not in pools}
    if threads:
        names = ", ".join(sorted(f"{t.name} ({t.ident})" for t in threads))
        problems.append(f"non-daemon threads still running: {names}")
    # A tool worker's child (code mode's sandbox pool starts its workers from one) moves
    # to the main thread when that tool worker exits idle: known before, not new now.
    known_children = before.children | before.tool_children | owned.children | owned.tool_children
    children = now.children - known_children
    if children:
        problems.append(
            f"child processes still alive: {', '.join(map(_describe, sorted(children)))}"
        )
    listening = _listening(now.sockets - before.sockets - owned.sockets)
    if listening:
        problems.append(f"sockets still listening: {', '.join(sorted(listening))}")
    if now.stuck > before.stuck:
        calls = stuck_calls()[before.stuck :]
        named = ", ".join(f"{tool} ({call_id})" for tool, call_id in calls)
        problems.append(f"sync tool calls still stuck in the worker pool: {named}")
    return problems


def _describe(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        command = "?"
    return f"{pid} ({command.strip()[:120]})"


def _settled(check: Callable[[], list[str]], grace: float) -> list[str]:
    """``check()`` until it finds nothing or ``grace`` seconds passed: what is left."""
    problems = check()
    give_up = time.monotonic() + grace
    while problems and time.monotonic() < give_up:
        time.sleep(0.02)
        problems = check()
    return problems


class LeakGuard:
    """The plugin: snapshots around each test and around wider fixtures' set-ups."""

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.owned = Snapshot()  # started by module- or session-scoped fixtures
        self.before: Snapshot | None = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self.before = Snapshot.take()
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, None, None]:
        result = yield
        before, self.before = self.before, None
        if before is not None:
            problems = _settled(lambda: _leaks(before, self.owned), self.grace)
            if problems:
                pytest.fail(f"{item.nodeid} leaked: " + "; ".join(problems), pytrace=False)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, object, object]:
        wider = fixturedef.scope != "function"
        start = Snapshot.take() if wider else None
        value = yield
        if start is not None:
            made = Snapshot.take()
            self.owned.update(
                Snapshot(
                    made.threads - start.threads,
                    made.children - start.children,
                    made.tool_children - start.tool_children,
                    made.sockets - start.sockets,
                )
            )
        if fixturedef.argname == _ASYNC_RUNNER and isinstance(value, asyncio.Runner):
            # Registered after the runner's own teardown, so it runs just before it,
            # and after every fixture that uses the loop was torn down.
            runner = value
            fixturedef.addfinalizer(lambda: _no_pending_tasks(runner, request.node.nodeid))
        return value


def _no_pending_tasks(runner: asyncio.Runner, nodeid: str) -> None:
    loop = runner.get_loop()
    if loop.is_closed() or loop.is_running():
        return
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for _ in range(3):  # a task cancelled at the very end needs a turn or two to finish
        if not pending:
            return
        loop.run_until_complete(asyncio.sleep(0))
        pending = [task for task in pending if not task.done()]
    if not pending:
        return
    names = ", ".join(sorted(f"{task.get_name()} ({task.get_coro()!r})" for task in pending))
    pytest.fail(f"{nodeid} leaked: asyncio tasks still pending: {names}", pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("leak_grace", "seconds a leak gets to end by itself", default=str(LEAK_GRACE))


def pytest_configure(config: pytest.Config) -> None:
    grace = float(str(config.getini("leak_grace")))
    config.pluginmanager.register(LeakGuard(grace), "leak-guard")
