# toolchain.stores: the Store protocol and its three stores, and, in private modules, what
# the two extensions that file tool outputs here share (variables and the context relay):
# the run's record of results (_results), how an output becomes an entry and the scope it
# is filed under (_entries), and the first look for references in arguments (_strings).
# It imports the toolchain core only, never another extension, never agents.
"""Stores of tool results: one ``Store`` protocol, three places to keep entries.

Variables (``$weather_nyc``) and the context relay (``internal://…``) file tool outputs
here, under the scope of the run or conversation that made them. Ids are unguessable,
and another scope's id is unknown, never its data. Entries expire.

- ``MemoryStore()`` — this process only; fast; for one-process agents and tests.
- ``SQLiteStore(path)`` — one file, shared by the processes of one host.
- ``RedisStore(url)`` — Redis or Valkey, shared by many worker processes. Needs the
  ``redis`` client (the ``[redis]`` extra, or ``pip install redis``), imported only when
  ``RedisStore`` is first used.

>>> import asyncio
>>> from toolchain.stores import MemoryStore, Store, StoredEntry
>>> store: Store = MemoryStore()
>>> async def demo() -> None:
...     ref = await store.put("run-1", StoredEntry(b"[1, 2, 3]", "json", "numbers"))
...     entry = await store.get("run-1", ref)
...     assert entry is not None
...     print(entry.data, await store.clear("run-1"), await store.get("run-1", ref))
>>> asyncio.run(demo())
b'[1, 2, 3]' 1 None
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolchain.stores._memory import MemoryStore
from toolchain.stores._protocol import DEFAULT_TTL, Store, StoredEntry, StoreError, new_id
from toolchain.stores._sqlite import SQLiteStore

if TYPE_CHECKING:
    from toolchain.stores._redis import RedisStore as RedisStore

# RedisStore is left out on purpose: `from toolchain.stores import *` must not import
# redis (an optional extra). It is exported all the same (the `as` form above).
__all__ = [
    "DEFAULT_TTL",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoreError",
    "StoredEntry",
    "new_id",
]


def __getattr__(name: str) -> object:
    """``RedisStore``, imported on first use (PEP 562): ``redis`` is an optional extra."""
    if name != "RedisStore":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from toolchain._extras import requires_extra

    with requires_extra("redis", "RedisStore", "redis"):
        from toolchain.stores import _redis
    globals()["RedisStore"] = _redis.RedisStore
    return _redis.RedisStore


def __dir__() -> list[str]:
    return sorted({*globals(), "RedisStore"})
