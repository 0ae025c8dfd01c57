"""`SeededStore`: a store whose ids repeat from run to run, so recordings replay.

The relay's references (``internal://<id>``) are part of every later request; with the
random ids of ``MemoryStore`` no recorded request would ever be asked again. Here the
n-th id of a store is a hash of its seed and n: unguessable-looking, identical in every
run of the same case. Scopes still keep runs apart.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import threading

from toolchain.stores import StoredEntry

__all__ = ["SeededStore"]


class SeededStore:
    """A ``Store`` in memory with ids derived from ``seed`` (entries never expire here:
    a store lives for one evaluated run).

    >>> import asyncio
    >>> async def first_id(seed: str) -> str:
    ...     return await SeededStore(seed).put("run", StoredEntry(b"x", "text"))
    >>> asyncio.run(first_id("case1")) == asyncio.run(first_id("case1"))
    True
    >>> asyncio.run(first_id("case1")) == asyncio.run(first_id("case2"))
    False
    """

    def __init__(self, seed: str) -> None:
        self._seed = seed
        self._counter = itertools.count(1)
        self._scopes: dict[str, dict[str, StoredEntry]] = {}
        self._lock = threading.Lock()

    def _new_id(self) -> str:
        digest = hashlib.sha256(f"{self._seed}\x00{next(self._counter)}".encode()).digest()
        return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        with self._lock:
            id = self._new_id()
            self._scopes.setdefault(scope, {})[id] = StoredEntry(
                bytes(entry.data), entry.kind, entry.tool
            )
        return id

    async def get(self, scope: str, id: str) -> StoredEntry | None:
        with self._lock:
            return self._scopes.get(scope, {}).get(id)

    async def delete(self, scope: str, id: str) -> bool:
        with self._lock:
            return self._scopes.get(scope, {}).pop(id, None) is not None

    async def clear(self, scope: str) -> int:
        with self._lock:
            return len(self._scopes.pop(scope, {}))

    async def cleanup(self) -> int:
        return 0
