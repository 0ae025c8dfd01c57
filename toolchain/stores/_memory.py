"""``MemoryStore``: entries in a dict of this process."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import cast

from toolchain.stores._common import resolve_ttl
from toolchain.stores._protocol import Store, StoredEntry, new_id

__all__ = ["MemoryStore", "delete_at_once", "put_at_once"]

_Entry = tuple[bytes, str, str, float]
"""An entry as kept: its data, kind and tool, and when it expires."""

_SWEEP_MIN = 256
"""Puts between two sweeps of a small store (a sweep walks every entry)."""


class MemoryStore:
    """A ``Store`` in this process's memory: fast, and gone when the process ends.

    Every operation is O(1) but ``clear`` (O(entries of the scope)) and ``cleanup``
    (O(all entries)); ``put`` is O(1) amortized. Expired entries are never returned; one
    is dropped when a ``get`` or ``delete`` meets it, and the rest go without anyone
    calling ``cleanup``: ``put`` sweeps them out once it has made as many entries as the
    last sweep left (so a store that outlives many runs holds about one time to live of
    their entries, never all of them). ``clock`` gives the time in seconds
    (``time.monotonic`` by default; tests pass a fake one). Safe to share between
    threads and event loops.

    >>> import asyncio
    >>> from toolchain.stores import MemoryStore, StoredEntry
    >>> now = [0.0]
    >>> store = MemoryStore(clock=lambda: now[0])
    >>> async def demo() -> None:
    ...     ref = await store.put("run-1", StoredEntry(b'{"temp": 21}', "json", "weather"))
    ...     print(await store.get("run-1", ref))
    ...     print(await store.get("run-2", ref))  # another run: unknown
    ...     now[0] += 3600.0  # DEFAULT_TTL later
    ...     print(await store.get("run-1", ref))
    >>> asyncio.run(demo())
    StoredEntry(data=b'{"temp": 21}', kind='json', tool='weather')
    None
    None
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # scope -> id -> (data, kind, tool, expires_at); a scope's dict goes when it
        # empties. A tuple of a bytes, two str and a float, not the StoredEntry: the
        # collector stops tracking such a tuple, and a store that lives as long as
        # its process holds a time to live of every run's entries.
        self._scopes: dict[str, dict[str, _Entry]] = {}
        self._lock = threading.Lock()
        self._puts_left = _SWEEP_MIN  # puts until the next sweep of expired entries

    def __repr__(self) -> str:
        return f"MemoryStore(scopes={len(self._scopes)})"

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        """Store ``entry`` under ``scope`` for ``ttl`` seconds; returns its new id.

        Raises ``ValueError`` for a ``ttl`` that is not a positive, finite number.
        """
        data = entry.data
        if type(data) is not bytes:  # a bytearray the caller may change later
            data = bytes(data)
        return self._put(scope, data, entry.kind, entry.tool, ttl)

    def _put(self, scope: str, data: bytes, kind: str, tool: str, ttl: float | None) -> str:
        # A float in range is the common case (DEFAULT_TTL, a setting): no call for it.
        lifetime = ttl if type(ttl) is float and 0.0 < ttl < math.inf else resolve_ttl(ttl)
        with self._lock:
            entries = self._scopes.get(scope)
            if entries is None:  # a run's first put (setdefault made a dict every time)
                entries = self._scopes[scope] = {}
            id = new_id()
            while id in entries:  # 128 random bits: never, but cheap to rule out
                id = new_id()
            now = self._clock()
            entries[id] = (data, kind, tool, now + lifetime)
            self._puts_left -= 1
            if self._puts_left <= 0:
                self._sweep(now)
        return id

    async def get(self, scope: str, id: str) -> StoredEntry | None:
        """The entry, or None when the id is unknown, expired or of another scope."""
        with self._lock:
            entries = self._scopes.get(scope)
            found = None if entries is None else entries.get(id)
            if found is None:
                return None
            data, kind, tool, expires_at = found
            if self._clock() < expires_at:
                return StoredEntry(data, kind, tool)
            self._drop(scope, id)
            return None

    async def delete(self, scope: str, id: str) -> bool:
        """Remove one entry; True when it was there (and not expired)."""
        return self._delete(scope, id)

    def _delete(self, scope: str, id: str) -> bool:
        with self._lock:
            entries = self._scopes.get(scope)
            found = None if entries is None else entries.get(id)
            if found is None:
                return False
            self._drop(scope, id)
            return self._clock() < found[3]

    async def clear(self, scope: str) -> int:
        """Remove every entry of ``scope``; returns how many were live."""
        with self._lock:
            entries = self._scopes.pop(scope, None)
            if entries is None:
                return 0
            now = self._clock()
            return sum(1 for entry in entries.values() if now < entry[3])

    async def cleanup(self) -> int:
        """Remove every expired entry of every scope; returns how many."""
        with self._lock:
            return self._sweep(self._clock())

    def _sweep(self, now: float) -> int:
        """Drop every expired entry (under the lock); the next sweep comes after as
        many puts as there are entries left, which keeps ``put`` O(1) amortized."""
        removed = left = 0
        for scope in list(self._scopes):
            entries = self._scopes[scope]
            expired = [id for id, entry in entries.items() if entry[3] <= now]
            for id in expired:
                del entries[id]
            removed += len(expired)
            left += len(entries)
            if not entries:
                del self._scopes[scope]
        self._puts_left = max(_SWEEP_MIN, left)
        return removed

    def _drop(self, scope: str, id: str) -> None:
        entries = self._scopes[scope]
        del entries[id]
        if not entries:
            del self._scopes[scope]


def put_at_once(
    store: Store, scope: str, data: bytes, kind: str, tool: str, ttl: float | None
) -> str | None:
    """The new id of ``store.put(scope, StoredEntry(data, kind, tool), ttl=ttl)``, put
    without a coroutine (nor a ``StoredEntry``), when ``store`` is a ``MemoryStore`` that
    puts as its class does (it never waits, and variables keep each call's output
    here); None for any other store, whose ``put`` is to be awaited.

    >>> import asyncio
    >>> store = MemoryStore()
    >>> id = put_at_once(store, "run-1", b"1", "json", "", None)
    >>> asyncio.run(store.get("run-1", id or ""))
    StoredEntry(data=b'1', kind='json', tool='')
    """
    if type(store).put is not MemoryStore.put:  # another store, or its own put
        return None
    return cast(MemoryStore, store)._put(scope, data, kind, tool, ttl)  # pyright: ignore[reportPrivateUsage]  # MemoryStore is this module's


def delete_at_once(store: Store, scope: str, id: str) -> bool | None:
    """``store.delete``'s answer, without a coroutine, when ``store`` is a ``MemoryStore``
    that deletes as its class does; None for any other store (await its ``delete``)."""
    if type(store).delete is not MemoryStore.delete:
        return None
    return cast(MemoryStore, store)._delete(scope, id)  # pyright: ignore[reportPrivateUsage]  # as above
