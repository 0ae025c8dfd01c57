"""The one protocol every store of tool results implements.

Variables (``$weather_nyc``) and the context relay (``internal://…``) keep tool outputs
here. An entry is bytes (the value encoded by its user) with a little metadata, filed
under a *scope*: the run or the conversation that made it. Ids are unguessable, and an
id is only ever found in its own scope: another scope's id is unknown, never its data.
Entries expire after their time to live; ``cleanup`` removes expired ones for good.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections import deque
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

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
    """An unguessable id (at least 128 random bits, URL-safe).

    >>> len(new_id()) >= 22
    True
    """
    runner = _step_seam.current() if _step_seam.active else None
    if runner is not None and (replayable := runner.new_id()) is not None:
        return replayable  # a durable run: the same id when the run is replayed
    try:
        return _drawn.popleft()
    except IndexError:
        return _draw()


_BATCH: Final = 64
"""Ids drawn from one read of the OS's random source."""

_drawn: deque[str] = deque()
"""Ids drawn and not handed out yet: every variable kept is a store entry with an id,
and drawing one at a time (``secrets.token_urlsafe``) took a system call and a base64
encoding per tool call (some 0.9 µs, twenty times what taking a drawn one costs). A
deque: taking one and adding a batch are atomic, so threads never hand out the same id."""


def _draw() -> str:
    """One id, and the next ``_BATCH - 1`` drawn with it: 22 characters of URL-safe
    base64 each (the alphabet and length of ``secrets.token_urlsafe(16)``), 132 bits
    of the OS's random source, the whole batch read and encoded at once."""
    drawn = base64.urlsafe_b64encode(secrets.token_bytes(_BATCH * 33 // 2)).decode()
    _drawn.extend([drawn[at : at + 22] for at in range(22, len(drawn), 22)])
    return drawn[:22]


# A forked child would hand out its parent's drawn ids again: it draws its own.
os.register_at_fork(after_in_child=_drawn.clear)


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
