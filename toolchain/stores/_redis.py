"""``RedisStore``: entries in Redis (or Valkey), shared by many worker processes.

Needs the ``redis`` client (the ``[redis]`` extra, or ``pip install redis``); ``toolchain.stores``
imports this module only when ``RedisStore`` is first used.
"""

from __future__ import annotations

import asyncio
import math
import struct
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TypeVar
from urllib.parse import parse_qs, quote, unquote, urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from toolchain.stores._common import is_well_formed_id, resolve_ttl
from toolchain.stores._protocol import StoredEntry, StoreError, new_id

__all__ = ["RedisStore"]

T = TypeVar("T")

# A value is a header (format version, then the byte lengths of kind and tool), kind
# and tool in UTF-8 (lone surrogates passed through), then the data: one key, one SET.
_HEADER = struct.Struct("!BII")
_VERSION = 1
_SCAN_BATCH = 500


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _pack(entry: StoredEntry) -> bytes:
    kind, tool = _encode(entry.kind), _encode(entry.tool)
    return b"".join((_HEADER.pack(_VERSION, len(kind), len(tool)), kind, tool, entry.data))


def _unpack(value: bytes) -> StoredEntry | None:
    """The entry a value holds; None when it is not one this store wrote."""
    if len(value) < _HEADER.size:
        return None
    version, kind_size, tool_size = _HEADER.unpack_from(value)
    start = _HEADER.size
    if version != _VERSION or start + kind_size + tool_size > len(value):
        return None
    kind = value[start : start + kind_size]
    tool = value[start + kind_size : start + kind_size + tool_size]
    data = value[start + kind_size + tool_size :]
    try:
        return StoredEntry(
            data, kind.decode("utf-8", "surrogatepass"), tool.decode("utf-8", "surrogatepass")
        )
    except UnicodeDecodeError:
        return None


def _scope_key(scope: str) -> str:
    """``scope`` percent-encoded: no ``:`` (the separator from the id) and no glob
    character (``*?[]\\``), so one scope's keys and SCAN pattern never reach another's."""
    return quote(scope, safe="", errors="surrogatepass")


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)


class RedisStore:
    """A ``Store`` in Redis or Valkey: references shared by every worker process.

    An entry is one key, ``prefix + scope + ":" + id`` (the scope percent-encoded),
    written with a native time to live (``SET … PX``): the server expires entries by
    itself, so ``cleanup`` has nothing to do and returns 0. ``clear`` walks the scope's
    keys with ``SCAN`` (never ``KEYS``) and unlinks them. Stores with different
    ``prefix`` values on one server never see each other's entries.

    Every failure of the server or the network (refused, reset, timed out, an error
    reply) raises ``StoreError`` naming the operation and ``host:port`` — never a
    password from the URL. No call hangs: connecting gives up after
    ``connect_timeout`` seconds and a reply is awaited at most ``socket_timeout``
    seconds. A call whose connection drops or times out is tried once more (so a
    restarted server is picked up), then fails.
    At most ``max_connections`` connections are open per event loop.

    Connections belong to the event loop that opened them; the store keeps one pool per
    loop, so one store serves ``asyncio.run`` after ``asyncio.run``. A loop's pool is
    closed by ``aclose()`` (a later call opens a new one) or, failing that, when the loop
    shuts down its async generators (``asyncio.run`` and ``run_sync`` do).

    Used against a server::

        store = RedisStore("redis://:password@cache.internal:6379/0")
        ref = await store.put("run-1", StoredEntry(b"...", "json", "search"))
        entry = await store.get("run-1", ref)  # in any worker process
        await store.aclose()

    A server that cannot be reached gives a clear error:

    >>> import asyncio
    >>> from toolchain.stores import RedisStore, StoredEntry, StoreError
    >>> store = RedisStore("redis://:s3cret@127.0.0.1:1/0", connect_timeout=0.5)
    >>> async def save() -> None:
    ...     try:
    ...         await store.put("run-1", StoredEntry(b"{}", "json"))
    ...     finally:
    ...         await store.aclose()
    >>> try:
    ...     asyncio.run(save())
    ... except StoreError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    RedisStore put failed on 127.0.0.1:1: ...
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "gent:",
        socket_timeout: float = 5.0,
        connect_timeout: float = 2.0,
        max_connections: int = 32,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._socket_timeout = socket_timeout
        self._connect_timeout = connect_timeout
        self._max_connections = max_connections
        self._where, self._secrets = _describe(url)
        # loop -> its client, and the async generator that closes it when the loop
        # shuts down (asyncio.run and run_sync finalise async generators before closing).
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[Redis, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._pools_lock = threading.Lock()
        self._new_client()  # a malformed URL fails here (ValueError), not on first use

    def __repr__(self) -> str:
        return f"RedisStore({self._where!r}, prefix={self._prefix!r})"

    @property
    def prefix(self) -> str:
        """What every key of this store starts with."""
        return self._prefix

    async def aclose(self) -> None:
        """Close the connections of the running event loop; a later call reconnects."""
        with self._pools_lock:
            held = self._pools.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].aclose()  # closes the client

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        """Store ``entry`` under ``scope`` for ``ttl`` seconds; returns its new id.

        Raises ``ValueError`` for a ``ttl`` that is not a positive, finite number. The
        server keeps it to the millisecond (at least 1 ms).
        """
        milliseconds = max(1, math.ceil(resolve_ttl(ttl) * 1000))
        value = _pack(entry)
        # 128 random bits: a collision never happens, so a plain SET (not NX) is fine,
        # and stays idempotent when a dropped connection makes the client retry it.
        id = new_id()
        key = self._key(scope, id)

        async def write(client: Redis) -> str:
            await client.set(key, value, px=milliseconds)
            return id

        return await self._call("put", write)

    async def get(self, scope: str, id: str) -> StoredEntry | None:
        """The entry, or None when the id is unknown, expired or of another scope."""
        if not is_well_formed_id(id):
            return None
        key = self._key(scope, id)

        async def read(client: Redis) -> StoredEntry | None:
            value = await client.get(key)
            if value is None:
                return None
            entry = _unpack(value) if isinstance(value, bytes) else None
            if entry is None:
                raise StoreError("the key holds a value this store did not write")
            return entry

        return await self._call("get", read)

    async def delete(self, scope: str, id: str) -> bool:
        """Remove one entry; True when it was there."""
        if not is_well_formed_id(id):
            return False
        key = self._key(scope, id)

        async def remove(client: Redis) -> bool:
            return await client.unlink(key) > 0

        return await self._call("delete", remove)

    async def clear(self, scope: str) -> int:
        """Remove every entry of ``scope`` (found with ``SCAN``); returns how many."""
        pattern = _glob_escape(self._prefix + _scope_key(scope) + ":") + "*"

        async def remove(client: Redis) -> int:
            removed = 0
            batch: list[bytes] = []
            # redis types the untyped **kwargs of scan_iter (and from_url) as unknown.
            scan: Callable[..., AsyncIterator[bytes]] = client.scan_iter  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            async for key in scan(match=pattern, count=_SCAN_BATCH):
                batch.append(key)
                if len(batch) >= _SCAN_BATCH:
                    removed += await client.unlink(*batch)
                    batch.clear()
            if batch:
                removed += await client.unlink(*batch)
            return removed

        return await self._call("clear", remove)

    async def cleanup(self) -> int:
        """Always 0: the server expires entries by itself (their keys carry a TTL)."""
        return 0

    def _key(self, scope: str, id: str) -> str:
        return self._prefix + _scope_key(scope) + ":" + id

    def _new_client(self) -> Redis:
        pool = BlockingConnectionPool.from_url(  # pyright: ignore[reportUnknownMemberType]
            self._url,
            max_connections=self._max_connections,
            timeout=self._socket_timeout + self._connect_timeout,
            socket_timeout=self._socket_timeout,
            socket_connect_timeout=self._connect_timeout,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=1),
        )
        return Redis.from_pool(pool)

    async def _client(self) -> Redis:
        loop = asyncio.get_running_loop()
        with self._pools_lock:
            held = self._pools.get(loop)
            if held is not None:
                return held[0]
            client = self._new_client()
            closer = _close_at_shutdown(client)
            self._pools[loop] = (client, closer)
        # Started here, the generator is one the loop finalises at shutdown. It never
        # really suspends, so no other task can run in between.
        await anext(closer)
        return client

    async def _call(self, operation: str, action: Callable[[Redis], Awaitable[T]]) -> T:
        try:
            return await action(await self._client())
        except (RedisError, OSError, StoreError) as exc:
            message = f"RedisStore {operation} failed on {self._where}: {exc}"
            leaks = any(secret in message for secret in self._secrets)
            for secret in self._secrets:
                message = message.replace(secret, "***")
            if leaks or isinstance(exc, StoreError):
                raise StoreError(message) from None
            raise StoreError(message) from exc


async def _close_at_shutdown(client: Redis) -> AsyncGenerator[None, None]:
    """Closes ``client`` when closed: by ``aclose()``, or by its loop shutting down."""
    try:
        yield
    finally:
        await client.aclose()


def _describe(url: str) -> tuple[str, tuple[str, ...]]:
    """Where ``url`` points (``host:port`` or a socket path), and the secrets it holds."""
    parts = urlsplit(url)
    secrets = [parts.password or ""]
    secrets += parse_qs(parts.query).get("password", [])
    secrets += [unquote(secret) for secret in secrets]
    if parts.scheme == "unix":
        where = parts.path
    else:
        host = parts.hostname or "localhost"
        if ":" in host:
            host = f"[{host}]"
        try:
            port = parts.port or 6379
        except ValueError:
            port = 6379
        where = f"{host}:{port}"
    return where, tuple(sorted({secret for secret in secrets if secret}, key=len, reverse=True))
