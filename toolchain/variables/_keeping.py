"""Keeping variables' values: each saved in a store within the bounds of a conversation
(the oldest dropped first, each drop remembered with why), and the values an earlier run
saved read back before the model can name them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator, Mapping
from typing import Final, Protocol, cast

import msgspec

from toolchain import ExecutionContext
from toolchain._oneline import one_line
from toolchain._redact import logger
from toolchain.stores import Store, StoredEntry
from toolchain.stores._entries import decode_entry, encode_plain, scope_of
from toolchain.stores._memory import delete_at_once, put_at_once
from toolchain.stores._results import UNLOADED, RunResults, Variable, results_of
from toolchain.variables._listing import PREVIEW, type_of

__all__ = [
    "MAX_DROPPED",
    "KeepSettings",
    "LiveValues",
    "keep_value",
    "load_saved",
    "over_bounds",
    "why_dropped",
]

_log = logger("toolchain")

MAX_DROPPED: Final = 1_000
"""Names of dropped variables remembered, to say why they are gone."""


class KeepSettings(Protocol):
    """What keeping reads of the variables extension, when it keeps: its bounds, the
    seconds a value lives, and the store of the run's variables."""

    @property
    def max_variables(self) -> int: ...

    @property
    def max_bytes(self) -> int: ...

    @property
    def ttl(self) -> float: ...

    def store_for(self, results: RunResults) -> Store: ...


def keep_value(
    settings: KeepSettings,
    ctx: ExecutionContext,
    results: RunResults,
    name: str,
    tool: str,
    value: object,
    call_id: str,
    *,
    shown: str | None = None,
    boxed: tuple[str, int] | None = None,
) -> Variable | Awaitable[Variable | None] | None:
    """Save a variable (its value in the store, or in the relay's entry ``boxed``),
    then drop the oldest past the bounds; None when it alone is over ``max_bytes``.

    ``value`` is plain data (``to_builtins``'s); ``shown`` is the output as the model
    sees it, for the preview. Kept at once, with no coroutine, when the store answers
    at once (a ``MemoryStore``, the default: every call's output is kept this way); an
    awaitable of the same otherwise."""
    store = settings.store_for(results)
    data: bytes | None = None
    kind = "json"
    if boxed is not None:
        entry, size = boxed
    else:
        data, kind = encode_plain(value)
        entry, size = "", len(data)
    if size > settings.max_bytes:
        why = f"it was larger than the {settings.max_bytes:,} bytes variables may hold"
        _log.info("the output of %s is not kept as $%s: %s", tool, name, why)
        results.drop(name, why, keep=MAX_DROPPED)
        return None
    if shown is None:  # a program's value: its JSON, as a tool's would be shown
        if isinstance(value, str):
            shown = value
        elif data is not None:
            shown = data[: 16 * PREVIEW].decode("utf-8", "ignore")
        else:
            shown = msgspec.json.encode(value).decode()
    described, preview = type_of(value), one_line(shown[: 4 * PREVIEW], PREVIEW)
    if data is not None:
        try:
            stored = put_at_once(store, scope_of(ctx), data, kind, tool, settings.ttl)
        except Exception:  # kept for this run; a later one is told it was not stored
            _not_stored(name)
            stored = ""
        if stored is None:  # a store to wait for
            variable = Variable(name, tool, value, call_id, described, preview, size)
            entered = StoredEntry(data, kind, tool)
            return _stored_then_kept(settings, ctx, results, store, entered, variable)
        entry = stored
    shared = boxed is not None
    variable = Variable(name, tool, value, call_id, described, preview, size, entry, shared)
    return _kept(settings, ctx, results, store, variable)


async def _stored_then_kept(
    settings: KeepSettings,
    ctx: ExecutionContext,
    results: RunResults,
    store: Store,
    data: StoredEntry,
    variable: Variable,
) -> Variable:
    """`keep_value`'s end for a store to wait for: ``variable`` stored, then kept."""
    try:
        entry = await store.put(scope_of(ctx), data, ttl=settings.ttl)
    except Exception:  # kept for this run; a later one is told it was not stored
        _not_stored(variable.name)
    else:
        variable = msgspec.structs.replace(variable, entry=entry)
    kept = _kept(settings, ctx, results, store, variable)
    return kept if isinstance(kept, Variable) else await kept


def _not_stored(name: str) -> None:
    _log.warning("the value of $%s could not be stored", name, exc_info=True)


def _kept(
    settings: KeepSettings,
    ctx: ExecutionContext,
    results: RunResults,
    store: Store,
    variable: Variable,
) -> Variable | Awaitable[Variable]:
    """``variable`` saved, and the oldest dropped past the bounds; an awaitable only
    when deleting their entries waits on the store."""
    replaced = results.save(variable)
    if (
        replaced is None
        and len(results.variables) <= settings.max_variables
        and results.size <= settings.max_bytes
    ):
        return variable  # no name used again, within the bounds: nothing goes
    gone = [replaced] if replaced is not None else []
    for old in over_bounds(settings, results, keep=variable.name):
        dropped = results.drop(old, why_dropped(settings, results, old), keep=MAX_DROPPED)
        if dropped is not None:
            _log.info("variable $%s is dropped: over the bounds", old)
            gone.append(dropped)
    # A name used again, or the bounds passed: their entries go too.
    forgetting = _forget(ctx, store, results, gone)
    return variable if forgetting is None else _forgotten_then(forgetting, variable)


async def _forgotten_then(forgetting: Awaitable[None], variable: Variable) -> Variable:
    await forgetting
    return variable


def over_bounds(settings: KeepSettings, results: RunResults, *, keep: str) -> list[str]:
    """The oldest names to drop so the variables fit the bounds (never ``keep``)."""
    count, size = len(results.variables), results.size
    names: list[str] = []
    for v in results.variables.values():
        if count <= settings.max_variables and size <= settings.max_bytes:
            break
        if v.name == keep:
            continue
        names.append(v.name)
        count, size = count - 1, size - v.size
    return names


def why_dropped(settings: KeepSettings, results: RunResults, name: str) -> str:
    """Why ``name`` goes, for a call that names it later: the bound passed, and how to
    get the value again."""
    v = results.variables.get(name)
    again = f"; call {v.tool} again for a fresh value" if v is not None else ""
    if len(results.variables) > settings.max_variables:
        return f"a conversation keeps its {settings.max_variables} most recent variables{again}"
    return f"a conversation's variables may hold {settings.max_bytes:,} bytes in all{again}"


def _forget(
    ctx: ExecutionContext, store: Store, results: RunResults, gone: list[Variable]
) -> Awaitable[None] | None:
    """Delete the entries of variables that are gone, but not one an ``internal://``
    reference still names: at once from a store that answers at once, else in the
    awaitable returned."""
    scope = scope_of(ctx)
    waiting: list[Variable] = []
    for v in gone:
        if not v.entry or v.shared or v.call_id in results.boxed:
            continue
        try:
            if delete_at_once(store, scope, v.entry) is None:
                waiting.append(v)
        except Exception:  # it expires with its ttl anyway
            _not_deleted(v)
    return _deleted(store, scope, waiting) if waiting else None


async def _deleted(store: Store, scope: str, gone: list[Variable]) -> None:
    for v in gone:
        try:
            await store.delete(scope, v.entry)
        except Exception:  # it expires with its ttl anyway
            _not_deleted(v)


def _not_deleted(variable: Variable) -> None:
    _log.warning("the entry of $%s could not be deleted", variable.name, exc_info=True)


async def load_saved(settings: KeepSettings, ctx: ExecutionContext) -> None:
    """Read the values of variables an earlier run saved from the store (agents do
    this before each run's first step). One whose entry has expired, or that
    cannot be read, is dropped, and a call naming it is told why."""
    results = results_of(ctx)
    if not results.waiting:
        return
    waiting = [v for v in results.variables.values() if v.value is UNLOADED]
    results.waiting = 0
    store, scope = settings.store_for(results), scope_of(ctx)
    read = await asyncio.gather(*(_read(store, scope, v) for v in waiting))
    for variable, (value, why) in zip(waiting, read, strict=True):
        if results.variables.get(variable.name) is not variable:
            continue  # replaced by a newer output meanwhile
        if why:
            _log.info("variable $%s is dropped: %s", variable.name, why)
            results.drop(variable.name, why, keep=MAX_DROPPED)
        else:
            results.variables[variable.name] = msgspec.structs.replace(variable, value=value)


async def _read(store: Store, scope: str, variable: Variable) -> tuple[object, str]:
    """(the value, "") or (None, why it cannot be read)."""
    try:
        entry = await store.get(scope, variable.entry)
    except Exception:
        _log.warning("the value of $%s could not be read", variable.name, exc_info=True)
        return None, "its value could not be read from the store"
    if entry is None:
        return None, f"its stored value has expired; call {variable.tool} again for a fresh one"
    try:
        return decode_entry(entry), ""
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None, "its stored value could not be read"


class LiveValues(Mapping[str, object]):
    """The run's variables as they are when read (the answer may follow new results);
    values not read from the store yet are not there."""

    def __init__(self, ctx: ExecutionContext) -> None:
        self._results = results_of(ctx)

    def __getitem__(self, name: str) -> object:
        value = self._results.variables[name].value
        if value is UNLOADED:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:  # Mapping's goes through __getitem__
        found = self._results.variables.get(cast(str, name))
        return found is not None and found.value is not UNLOADED

    def __iter__(self) -> Iterator[str]:
        return (n for n, v in self._results.variables.items() if v.value is not UNLOADED)

    def __len__(self) -> int:
        return sum(1 for v in self._results.variables.values() if v.value is not UNLOADED)
