"""``SQLiteStore``: entries in one SQLite file, shared by every process that opens it."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from toolchain.stores._common import is_well_formed_id, resolve_ttl
from toolchain.stores._protocol import StoredEntry, StoreError, new_id

__all__ = ["SQLiteStore"]

T = TypeVar("T")

# Text columns hold UTF-8 with lone surrogates passed through, so any `str` a caller
# gives (scope, kind, tool) is stored and comes back unchanged.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
        scope BLOB NOT NULL,
        id TEXT NOT NULL,
        kind BLOB NOT NULL,
        tool BLOB NOT NULL,
        data BLOB NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (scope, id)
    )""",
    "CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at)",
)


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _decode(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    if isinstance(value, str):
        return value
    raise StoreError(f"malformed entry: a text column holds {type(value).__name__}")


class SQLiteStore:
    """A ``Store`` in one SQLite file: survives restarts, shared by processes on a host.

    Every store object (in this process or another) opened on the same file sees the
    same entries; the file is in WAL mode, so readers never wait for a writer. Calls run
    in a worker thread (``asyncio.to_thread``) on one connection per store, opened on
    first use. Expiry uses wall-clock time (``clock``, ``time.time`` by default), which
    all processes share; expired rows are never returned, and ``cleanup`` deletes them.
    ``timeout`` is how long a call waits for another process's write lock. Failures of
    the file (unreadable, not a database, disk full) raise ``StoreError``.

    >>> import asyncio, os, tempfile
    >>> from toolchain.stores import SQLiteStore, StoredEntry
    >>> path = os.path.join(tempfile.mkdtemp(), "refs.db")
    >>> writer, reader = SQLiteStore(path), SQLiteStore(path)
    >>> async def demo() -> None:
    ...     ref = await writer.put("run-1", StoredEntry(b"\\x00\\xff", "bin", "ocr"))
    ...     print(await reader.get("run-1", ref))
    ...     print(await reader.get("run-2", ref))
    >>> asyncio.run(demo())
    StoredEntry(data=b'\\x00\\xff', kind='bin', tool='ocr')
    None
    >>> writer.close(); reader.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = 5.0,
    ) -> None:
        self._path = os.fspath(path)
        self._clock = clock
        self._timeout = timeout
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r})"

    def close(self) -> None:
        """Close the connection (waiting for a call in progress). A later call opens it
        again, so closing is always safe."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        """Store ``entry`` under ``scope`` for ``ttl`` seconds; returns its new id.

        Raises ``ValueError`` for a ``ttl`` that is not a positive, finite number.
        """
        lifetime = resolve_ttl(ttl)
        row = (_encode(scope), _encode(entry.kind), _encode(entry.tool), entry.data)

        def insert(db: sqlite3.Connection) -> str:
            while True:
                id = new_id()
                try:
                    db.execute(
                        "INSERT INTO entries (scope, kind, tool, data, id, expires_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (*row, id, self._clock() + lifetime),
                    )
                except sqlite3.IntegrityError:  # the id is taken: 128 random bits, never
                    continue
                return id

        return await self._run("put", insert)

    async def get(self, scope: str, id: str) -> StoredEntry | None:
        """The entry, or None when the id is unknown, expired or of another scope."""
        if not is_well_formed_id(id):
            return None
        key = (_encode(scope), id)

        def select(db: sqlite3.Connection) -> StoredEntry | None:
            row: tuple[object, object, object] | None = db.execute(
                "SELECT kind, tool, data FROM entries"
                " WHERE scope = ? AND id = ? AND expires_at > ?",
                (*key, self._clock()),
            ).fetchone()
            if row is None:
                return None
            kind, tool, data = row
            if not isinstance(data, bytes):
                raise StoreError(f"malformed entry: data is {type(data).__name__}")
            return StoredEntry(data, _decode(kind), _decode(tool))

        return await self._run("get", select)

    async def delete(self, scope: str, id: str) -> bool:
        """Remove one entry; True when it was there (and not expired)."""
        if not is_well_formed_id(id):
            return False
        key = (_encode(scope), id)

        def remove(db: sqlite3.Connection) -> bool:
            live = db.execute(
                "DELETE FROM entries WHERE scope = ? AND id = ? AND expires_at > ?",
                (*key, self._clock()),
            ).rowcount
            if not live:  # an expired row, if any, goes too
                db.execute("DELETE FROM entries WHERE scope = ? AND id = ?", key)
            return live > 0

        return await self._run("delete", remove)

    async def clear(self, scope: str) -> int:
        """Remove every entry of ``scope``; returns how many were live."""
        key = _encode(scope)

        def remove(db: sqlite3.Connection) -> int:
            db.execute("BEGIN IMMEDIATE")
            try:
                live = db.execute(
                    "DELETE FROM entries WHERE scope = ? AND expires_at > ?",
                    (key, self._clock()),
                ).rowcount
                db.execute("DELETE FROM entries WHERE scope = ?", (key,))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return live

        return await self._run("clear", remove)

    async def cleanup(self) -> int:
        """Delete every expired entry of every scope; returns how many."""

        def remove(db: sqlite3.Connection) -> int:
            return db.execute(
                "DELETE FROM entries WHERE expires_at <= ?", (self._clock(),)
            ).rowcount

        return await self._run("cleanup", remove)

    async def _run(self, operation: str, action: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self._call, operation, action)

    def _call(self, operation: str, action: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return action(self._connect())
            except sqlite3.Error as exc:
                raise StoreError(f"SQLiteStore {operation} failed on {self._path}: {exc}") from exc
            except StoreError as exc:
                raise StoreError(f"SQLiteStore {operation} on {self._path}: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            db = sqlite3.connect(
                self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    db.execute(statement)
            except BaseException:
                db.close()
                raise
            self._connection = db
        return self._connection
