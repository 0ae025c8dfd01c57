"""The Postgres the many-worker tests run on (`tests.support.postgres`) answers through the
driver DBOS uses (SQLAlchemy on psycopg 3), on loopback, with one empty database per test."""

from __future__ import annotations

import pytest

sa = pytest.importorskip("sqlalchemy", reason="SQLAlchemy comes with the [durable] extra")


def test_a_database_of_its_own_answers_and_keeps_what_is_written(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            assert (
                conn.execute(
                    sa.text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
                ).scalar_one()
                == 0
            )
            conn.execute(sa.text("CREATE TABLE answers (run text, answer text)"))
            conn.execute(sa.text("INSERT INTO answers VALUES ('r1', 'Paris')"))
        with engine.connect() as conn:  # another connection sees the committed row
            assert conn.execute(sa.text("SELECT answer FROM answers")).scalars().all() == ["Paris"]
            assert (
                conn.execute(sa.text("SELECT current_database()")).scalar_one()
                == sa.make_url(postgres_url).database
            )
            assert conn.execute(sa.text("SHOW listen_addresses")).scalar_one() == "127.0.0.1"
    finally:
        engine.dispose()


def test_the_next_test_starts_from_an_empty_database(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                sa.text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            )
            assert tables.scalars().all() == []
    finally:
        engine.dispose()
