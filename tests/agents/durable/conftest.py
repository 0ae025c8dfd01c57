"""The databases the durable tests run on: a DBOS launched in the test process for a
module (``launched``), or a database for worker processes (``database_url``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """DBOS launched here on a SQLite file of the module's own, shut down after it
    (``pytestmark = pytest.mark.usefixtures("launched")``)."""
    from agents.durable import launch, shutdown

    database = tmp_path_factory.mktemp("durable") / "runs.sqlite"
    launch(f"sqlite:///{database}")
    yield
    shutdown()


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test twice: on a Postgres database of its own (`tests.support.postgres`,
    skipped with the reason where it cannot start), and on a SQLite file."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url
