"""`LoopClients`: the SDK client a model calls with, one for each event loop.

An SDK client's connections belong to the event loop that opened them. ``run_sync`` and
``asyncio.run`` make a new loop each time, and each thread runs a loop of its own; a
keep-alive connection pooled on a loop that has closed fails the next call with
``RuntimeError: Event loop is closed``. So a model keeps one client (and so one
connection pool) per loop, and closes each when its loop shuts down.

The moment a loop shuts down is caught with an async generator parked at a ``yield``:
``asyncio.run``, ``asyncio.Runner``, ``toolchain.run_sync`` and pytest's loops all call
``loop.shutdown_asyncgens()`` before closing a loop, which resumes it, and it closes the
client there, on its own loop. A loop closed without that step (``loop.close()`` right
after ``run_until_complete``) cannot close anything; its entry is dropped when the next
loop asks for a client.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Generic, Protocol, Self, TypeVar

from agents.models._call_options import RetryClients

__all__ = ["LoopClients", "SDKClient", "sdk_built_pool", "sdk_loop_clients"]

ClientT = TypeVar("ClientT")


class SDKClient(Protocol):
    """What `sdk_loop_clients` needs of an official SDK's async client (both the OpenAI
    and the Anthropic one are shaped alike)."""

    max_retries: int

    @property
    def timeout(self) -> Any: ...  # a float or the SDK's Timeout: passed on as it is

    async def close(self) -> None: ...

    def with_options(self, *, max_retries: int) -> Self: ...

    def copy(self, *, http_client: Any) -> Self: ...


SDKClientT = TypeVar("SDKClientT", bound=SDKClient)


def sdk_loop_clients(
    client: SDKClientT, default_pool: Callable[..., object], *, given: bool
) -> LoopClients[SDKClientT]:
    """A copy of ``client`` with a pool of its own (``default_pool(timeout=...)``, the
    SDK's ``DefaultAsyncHttpxClient``) for each event loop; ``client`` itself serves the
    first loop when the model built it (``given`` is false). A client given with its own
    ``http_client`` serves every loop as it is, and its owner closes it."""

    async def close(each: SDKClientT) -> None:
        await each.close()

    def with_retries(each: SDKClientT, retries: int) -> SDKClientT:
        return each.with_options(max_retries=retries)

    retries = client.max_retries
    if given and not sdk_built_pool(client, default_pool):
        return LoopClients(client, close, with_retries, retries=retries, fresh=None)

    def fresh() -> SDKClientT:
        return client.copy(http_client=default_pool(timeout=client.timeout))

    return LoopClients(client, close, with_retries, retries=retries, fresh=fresh, owned=not given)


def sdk_built_pool(client: object, default: Callable[..., object]) -> bool:
    """True when an SDK client built its own connection pool (it was given no
    ``http_client``), so a copy with a new pool of the SDK's ``default`` class is as good.

    Both SDKs keep the pool in ``_client``, a private subclass of their public
    ``DefaultAsyncHttpxClient``. A pool the caller built may carry settings a copy
    would lose (a proxy, a transport), so it is never replaced.

    >>> class Default: ...
    >>> class Built(Default): ...
    >>> class Client:
    ...     def __init__(self, pool: object) -> None:
    ...         self._client = pool
    >>> sdk_built_pool(Client(Built()), Default), sdk_built_pool(Client(Default()), Default)
    (True, False)
    """
    pool = getattr(client, "_client", None)
    return isinstance(default, type) and isinstance(pool, default) and type(pool) is not default


class _Entry(Generic[ClientT]):
    """One loop's client (with its retry copies) and the generator that closes it."""

    __slots__ = ("client", "clients", "closer")

    def __init__(self, client: ClientT, clients: RetryClients[ClientT]) -> None:
        self.client = client
        self.clients = clients
        self.closer: AsyncGenerator[None, None] | None = None


class LoopClients(Generic[ClientT]):
    """The client for the running event loop, built on first use, closed with its loop.

    ``fresh()`` builds a copy of ``client`` with a connection pool of its own for each
    loop; ``client`` itself serves the first loop when ``owned`` (the model built it: no
    second pool for the common one-loop program), and is otherwise left to its owner.
    With ``fresh`` ``None``, ``client`` serves every loop as it is: its connection pool
    was built by the caller (a custom ``http_client``) and cannot be copied; it is closed
    only by `aclose`. ``close`` closes a client; ``with_retries(client, n)`` makes the
    copy that retries ``n`` times (see `RetryClients`).

    >>> async def call(clients: LoopClients[str]) -> str:
    ...     return clients.pick(None)[0]
    >>> async def close(client: str) -> None:
    ...     print("closed", client)
    >>> copies = iter(["copy for loop 2", "copy for loop 3"])
    >>> clients = LoopClients(
    ...     "ours", close, lambda client, n: client, retries=2, fresh=lambda: next(copies),
    ...     owned=True,
    ... )
    >>> asyncio.run(call(clients))
    closed ours
    'ours'
    >>> asyncio.run(call(clients))
    closed copy for loop 2
    'copy for loop 2'
    >>> shared = LoopClients("theirs", close, lambda client, n: client, retries=2, fresh=None)
    >>> asyncio.run(call(shared)), asyncio.run(call(shared))
    ('theirs', 'theirs')
    >>> asyncio.run(shared.aclose())
    closed theirs
    """

    def __init__(
        self,
        client: ClientT,
        close: Callable[[ClientT], Awaitable[None]],
        with_retries: Callable[[ClientT, int], ClientT],
        *,
        retries: int,
        fresh: Callable[[], ClientT] | None,
        owned: bool = False,
    ) -> None:
        self._fresh = fresh
        self._close = close
        self._with_retries = with_retries
        self._retries = retries
        self._spare = client if owned and fresh is not None else None
        self._lock = threading.RLock()  # a closer may drop its entry while we sweep
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry[ClientT]] = (
            weakref.WeakKeyDictionary()
        )
        self._shared_client = client if fresh is None else None
        self._shared = self._retry_copies(client) if fresh is None else None
        self._home: weakref.ref[asyncio.AbstractEventLoop] | None = None
        # A model dropped while its loops run (an agent built per request) closes its
        # clients there and then: left to the garbage collector, their sockets would be
        # collected with them, unclosed. The entries are passed, not `self`, which must die.
        weakref.finalize(self, _close_orphans, self._by_loop).atexit = False

    def pick(self, max_retries: int | None) -> tuple[ClientT, int]:
        """The running loop's client for a call's ``max_retries``, and the count it applies.

        Must be called from the loop's own thread, with the loop running.
        """
        loop = asyncio.get_running_loop()
        if self._shared is not None:
            if self._home is None:
                self._home = weakref.ref(loop)
            return self._shared.pick(max_retries)
        entry = self._by_loop.get(loop)
        if entry is None:
            entry = self._open(loop)
        return entry.clients.pick(max_retries)

    def moved_loop(self) -> bool:
        """True when a shared client, first used on another loop, is called from this one
        after that loop closed: its pooled connections cannot serve this loop."""
        if self._home is None:
            return False
        home = self._home()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        return home is not running and (home is None or home.is_closed())

    async def aclose(self) -> None:
        """Close the running loop's client now; a later call builds a new one.

        Clients of loops still running in other threads close when those loops shut
        down. A shared client is closed here, as the model's owner asked.
        """
        if self._shared_client is not None:
            await self._close(self._shared_client)
            return
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._by_loop.pop(loop, None)
            spare, self._spare = self._spare, None
        if entry is not None and entry.closer is not None:
            await entry.closer.aclose()  # closes the client, as the loop's shutdown would
        if spare is not None:  # never used: no connections, but close it all the same
            await self._close(spare)

    def _open(self, loop: asyncio.AbstractEventLoop) -> _Entry[ClientT]:
        """This loop's entry, built now, with a closer the loop will run at shutdown."""
        with self._lock:
            entry = self._by_loop.get(loop)
            if entry is not None:  # another call on this loop got here first
                return entry
            self._forget_closed_loops()
            client = self._spare
            self._spare = None
            if client is None:
                assert self._fresh is not None
                client = self._fresh()
            entry = self._by_loop[loop] = _Entry(client, self._retry_copies(client))
        closer = _close_at_shutdown(entry, self._close, weakref.ref(self), weakref.ref(loop))
        # Step it to its `yield` now: starting it registers it with the running loop
        # (its async-generator hooks), so the loop's shutdown resumes it.
        start = closer.asend(None)
        try:
            start.send(None)
        except StopIteration:
            entry.closer = closer
        return entry

    def _retry_copies(self, client: ClientT) -> RetryClients[ClientT]:
        with_retries = self._with_retries
        return RetryClients(client, self._retries, lambda n: with_retries(client, n))

    def _forget_closed_loops(self) -> None:
        """Drop the entries of loops closed without shutting down their generators.

        Their clients cannot be closed any more (closing a transport needs its loop);
        dropping them lets those loops be freed. Called with the lock held.
        """
        for loop in [loop for loop in self._by_loop if loop.is_closed()]:
            entry = self._by_loop.pop(loop)
            if entry.closer is not None:
                _finish_unawaited(entry.closer)

    def forget(self, loop: asyncio.AbstractEventLoop | None, entry: _Entry[ClientT]) -> None:
        """Drop ``entry``, closed, unless ``loop`` has another by now."""
        with self._lock:
            if loop is not None and self._by_loop.get(loop) is entry:
                del self._by_loop[loop]


async def _close_at_shutdown(
    entry: _Entry[ClientT],
    close: Callable[[ClientT], Awaitable[None]],
    owner: weakref.ref[LoopClients[ClientT]],
    loop: weakref.ref[asyncio.AbstractEventLoop],
) -> AsyncGenerator[None, None]:
    """Parked at its ``yield`` until the loop shuts down (or `aclose`), then closes the
    entry's client. Holds the owner and the loop weakly, so that neither is kept alive."""
    try:
        yield
    finally:
        entry.closer = None
        clients = owner()
        if clients is not None:
            clients.forget(loop(), entry)
        home = loop()
        if home is not None and not home.is_closed():
            await close(entry.client)


def _close_orphans(
    by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry[ClientT]],
) -> None:
    """Close each entry's client on its own loop, from whatever thread dropped the model.

    The scheduled callback keeps the entry (and so its connections) alive until then.
    """
    for loop, entry in list(by_loop.items()):
        if entry.closer is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_start_closing, entry)


_CLOSING: set[asyncio.Future[None]] = set()
"""Closings of dropped models' clients under way: a loop keeps its tasks only weakly."""


def _start_closing(entry: _Entry[ClientT]) -> None:
    closer = entry.closer
    if closer is not None:
        closing = asyncio.ensure_future(closer.aclose())
        _CLOSING.add(closing)
        closing.add_done_callback(_CLOSING.discard)


def _finish_unawaited(closer: AsyncGenerator[None, None]) -> None:
    """Run ``closer``'s ``finally`` without a loop (its loop is closed: it skips closing)."""
    step = closer.aclose()
    try:
        step.send(None)
    except StopIteration:
        return
    except RuntimeError:  # already running or closed: nothing left to do
        return
    step.close()
