"""Starting and stopping DBOS for durable runs in this process."""

from __future__ import annotations

from dbos import DBOS, DBOSConfig

__all__ = ["DEFAULT_DATABASE", "launch", "shutdown"]

DEFAULT_DATABASE = "sqlite:///gent_durable.sqlite"
"""A SQLite file in the working directory: one machine, no server."""


def launch(
    database_url: str | None = None,
    *,
    name: str = "gent",
    config: DBOSConfig | None = None,
) -> None:
    """Start DBOS in this process on ``database_url`` and recover the runs left pending.

    ``sqlite:///path.sqlite`` (the default, ``gent_durable.sqlite`` here) serves one
    machine; ``postgresql://…`` lets several worker processes share runs. Build every
    ``DurableAgent`` / ``DurablePrompt`` first: recovery finds them by name. ``config``
    passes any other DBOS setting through (``log_level``, ``executor_id`` …).
    """
    settings: DBOSConfig = {
        "name": name,
        "system_database_url": database_url or DEFAULT_DATABASE,
        "log_level": "WARNING",
        **(config or {}),
    }
    DBOS(config=settings)
    DBOS.launch()


def shutdown() -> None:
    """Stop DBOS in this process; runs not finished stay pending for the next launch."""
    DBOS.destroy()
