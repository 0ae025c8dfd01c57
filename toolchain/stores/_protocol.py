"""The one protocol every store of tool results implements.

Variables (``$weather_nyc``) and the context relay (``internal://…``) keep tool outputs
here. An entry is bytes (the value encoded by its user) with a little metadata, filed
under a *scope*: the run or the conversation that made it. Ids are unguessable, and an
id is only ever found in its own scope: another scope's id is unknown, never its data.
Entries expire after their time to live; ``cleanup`` removes expired ones for good.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolchain._errors import ToolchainError
from toolchain.chain import _step_seam

__all__ = ["DEFAULT_TTL", "Store", "StoreError", "StoredEntry", "new_id"]

DEFAULT_TTL = 3600.0
"""Seconds an entry lives unless its ``put`` says otherwise."""


class StoreError(ToolchainError):
    """The store could not be reached or answered wrongly (a server down, a broken file).

    Raised by every store for its own failures, so callers catch one type; the message
    says what failed and never holds credentials.
    """


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """One stored value: its bytes and what made it.

    >>> StoredEntry(b'"hello"', "json", "yt_transcribe").kind
    'json'
    """

    data: bytes
    kind: str
    """How ``data`` is encoded (``json`` for tool outputs; users may add their own)."""
    tool: str = ""
    """The tool whose output this is, when it is one."""


def new_id() -> str:
    """An unguessable id (128 random bits, URL-safe).

    >>> len(new_id()) >= 22
    True
    """
    runner = _step_seam.current() if _step_seam.active else None
    if runner is not None and (replayable := runner.new_id()) is not None:
        return replayable  # a durable run: the same id when the run is replayed
    return secrets.token_urlsafe(16)


@runtime_checkable
class Store(Protocol):
    """Where stored values live: in memory, in SQLite, in Redis.

    All methods are coroutines; a failure of the store itself raises ``StoreError``.

    What every implementation keeps (``tests/toolchain/stores/test_stores.py`` checks each):

    - scopes are any strings, compared exactly: no scope, however spelt (with ``:`` or
      ``*``, or empty), reaches another scope's entries;
    - an id that ``new_id`` could not have made (a model's hostile ``*``, ``../x``,
      megabytes of text) is simply unknown: ``get`` gives None, ``delete`` False;
    - ``ttl`` is a positive, finite number of seconds, else ``ValueError``;
    - an expired entry is never returned, even before ``cleanup`` removes it, and
      ``delete``/``clear`` do not count it.
    """

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        """Store ``entry`` under ``scope`` for ``ttl`` seconds (``DEFAULT_TTL`` when None);
        returns its new id."""
        ...

    async def get(self, scope: str, id: str) -> StoredEntry | None:
        """The entry, or None when the id is unknown, expired or of another scope."""
        ...

    async def delete(self, scope: str, id: str) -> bool:
        """Remove one entry; True when it was there."""
        ...

    async def clear(self, scope: str) -> int:
        """Remove every entry of ``scope`` (a finished run); returns how many."""
        ...

    async def cleanup(self) -> int:
        """Remove every expired entry of every scope; returns how many."""
        ...
