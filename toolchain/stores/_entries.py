"""How variables and the context relay file a tool output in a store: one encoding for
both (so one entry can serve both), under the scope of the run or of its conversation."""

from __future__ import annotations

import msgspec

from toolchain import ExecutionContext, StateKey, to_builtins
from toolchain.stores._protocol import StoredEntry

__all__ = ["decode_entry", "encode_entry", "encode_plain", "scope_of", "share_scope"]


def encode_entry(value: object, tool: str) -> StoredEntry:
    """A tool output as a store entry: text as it is, anything else as JSON (the one
    encoding of variables and the relay, so one entry can serve both).

    >>> encode_entry({"temp": 21}, "weather")
    StoredEntry(data=b'{"temp":21}', kind='json', tool='weather')
    """
    data, kind = encode_plain(value if isinstance(value, str) else to_builtins(value))
    return StoredEntry(data, kind, tool)


def encode_plain(value: object) -> tuple[bytes, str]:
    """`encode_entry`'s data and kind for a value that is plain data already (not walked
    through ``to_builtins`` again: the cost of a large output).

    >>> encode_plain("hi")
    (b'hi', 'text')
    """
    if isinstance(value, str):  # most large outputs: kept as text, no JSON round trip
        return value.encode("utf-8", "surrogatepass"), "text"
    return msgspec.json.encode(value), "json"


def decode_entry(entry: StoredEntry) -> object:
    """The value ``encode_entry`` stored.

    >>> decode_entry(encode_entry("hello", "echo"))
    'hello'
    """
    if entry.kind == "text":
        return entry.data.decode("utf-8", "surrogatepass")
    return msgspec.json.decode(entry.data)


_SCOPE = StateKey[str]("toolchain.relay.scope")


def scope_of(ctx: ExecutionContext) -> str:
    """The store scope of a run: its own id unless a conversation scope was set.

    >>> ctx = ExecutionContext()
    >>> scope_of(ctx) == ctx.run_id
    True
    """
    return ctx.state.get(_SCOPE) or ctx.run_id


def share_scope(ctx: ExecutionContext, scope: str) -> None:
    """File this run's stored values under ``scope`` (one conversation across runs)."""
    ctx.state.set(_SCOPE, scope)
