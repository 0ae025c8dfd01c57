"""The databases the durable tests with worker processes run on."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test twice: on a Postgres database of its own (`tests.support.postgres`,
    skipped with the reason where it cannot start), and on a SQLite file."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url
