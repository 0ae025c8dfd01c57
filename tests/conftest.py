"""The suite's fixtures: most come from the library's own pytest plugin,
``toolchain.testing`` (``snapshot_md``, ``snapshot_xml``, ``snapshot_observation``,
``fixed_clock``); ``loopback`` (a running `LoopbackServer`) is defined here. The rest of
the shared scaffolding is in ``tests/support``, with the leak guard every test runs under
(``tests/support/leaks.py``). The suite passes in any order: ``make test-random``.

An install with the ``[testing]`` extra loads that plugin through its ``gent_testing``
entry point before pytest imports this file; naming the module here as well would then
fail ("Plugin already registered under a different name"). So the plugin is named here
only when nothing loaded it: a checkout whose install predates the entry point, or
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, or ``-p no:gent_testing``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from typing import TextIO

import pytest

from tests.support.loopback import LoopbackServer
from tests.support.postgres import Postgres, PostgresUnavailable

# Entry points load (and import) their plugin modules before the rootdir conftest is
# imported, so the module being imported already means it is registered.
# syrupy first (a no-op when its own entry point loaded it), as the plugin imports it.
# The leak guard (tests/support/leaks.py) fails a test that leaves running what it started.
pytest_plugins = [
    *([] if "toolchain.testing" in sys.modules else ["syrupy", "toolchain.testing"]),
    "tests.support.leaks",
]

# Typing fixtures: modules mypy checks (tests/test_typing.py), with deliberate mistakes a
# type checker must report; running them is not the point, and some fail at run time.
collect_ignore_glob = ["fixtures/*"]


class _CurrentStderr(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is when a record comes, never to one it kept."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)

    def flush(self) -> None:
        self.stream = sys.stderr
        super().flush()


def _dbos_console_follows_stderr() -> None:
    """DBOS gives its ``dbos`` logger a console handler on the first ``DBOS()`` of the
    process, bound to the ``sys.stderr`` of that moment, and every later ``DBOS()``
    flushes it. Under a test's ``capsys`` (the README's durable block) that stream is
    closed when the test ends, and the next ``launch()`` fails with "I/O operation on
    closed file" (seed 3, every test shuffled). DBOS adds its handler only to a logger
    that has none, so one made here first, under DBOS's own name, follows the current
    stderr instead."""
    dbos = logging.getLogger("dbos")
    if not dbos.handlers:
        console = _CurrentStderr()
        console.name = "__dbos_console_log_handler__"  # where DBOS sets its console level
        dbos.addHandler(console)
        dbos.propagate = False  # as DBOS's own handler has it


_dbos_console_follows_stderr()


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A running `LoopbackServer`, closed after the test."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A real Postgres on 127.0.0.1 for the whole session (`tests.support.postgres`),
    started on first use and stopped at the end; skips with the reason where it cannot
    start. ``postgres.create_database()`` gives a test its own empty database."""
    try:
        server = Postgres.start()
    except PostgresUnavailable as error:
        pytest.skip(f"no Postgres for this test: {error}")
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres: Postgres) -> str:
    """The SQLAlchemy URL (psycopg driver) of a new, empty database for this test."""
    return postgres.create_database()
