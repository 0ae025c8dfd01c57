"""The key that seals a durable run's held calls, one per database, shared by every
process that launches on it.

A durable run paused on held calls hands its ``pending`` to whoever resumes it, which
may be another process (after a restart, a web worker). Each held call carries a seal,
an HMAC of what was shown (``toolchain._approvals.Seal``): a held call edited or forged
on its way back approves nothing. So every process on the run database must seal with
the same key. It is kept in the database itself (``gent_keys``, beside
``gent_executors``), made once by the first process that launches, read by the others:
nothing to configure, and a process that can launch on the database can resume its
runs. Why not a key given to ``launch``: a process given another key (or none) could
not resume a run paused elsewhere, for no gain: whoever can read this table can read
and write every run's record and messages anyway, so the seal guards the way a paused
result travels through an application (a form, a queue), not the database.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError

from agents.durable._executors import engine_on

__all__ = ["TABLE", "shared_key"]

TABLE = "gent_keys"
_NAME = "approvals"


def shared_key(url: str, schema: str | None) -> bytes:
    """The database's sealing key, made here if no process made it yet."""
    engine = engine_on(url)
    try:
        schema = schema if engine.dialect.name == "postgresql" else None
        table = sa.Table(
            TABLE,
            sa.MetaData(schema=schema),
            sa.Column("name", sa.Text, primary_key=True),
            sa.Column("key", sa.Text, nullable=False),
        )
        for last in (False, True):
            try:
                with engine.begin() as connection:
                    if schema is not None:
                        connection.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
                    table.create(connection, checkfirst=True)
                break
            except DBAPIError:  # another process created it between the check and ours
                if last:
                    raise
        try:
            with engine.begin() as connection:
                made = {"name": _NAME, "key": secrets.token_hex(32)}
                connection.execute(sa.insert(table).values(made))
        except IntegrityError:  # another process made it first: theirs is the key
            pass
        with engine.begin() as connection:
            found = connection.execute(
                sa.select(table.c.key).where(table.c.name == _NAME)
            ).scalar_one()
        return bytes.fromhex(found)
    finally:
        engine.dispose()
