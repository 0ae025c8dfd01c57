"""``ContextRelay``, the extension, and the tool hook it installs on each run: outputs
over the threshold boxed into a store (shown as a reference), references in a call's
arguments unboxed before the tool runs."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Literal, cast

import msgspec

from toolchain import (
    ExecutionContext,
    Extension,
    TextContent,
    Tool,
    ToolCall,
    ToolCallRefused,
    ToolHook,
    ToolResult,
)
from toolchain._errors import ToolchainValueError
from toolchain._hooks import Shown
from toolchain._redact import logger
from toolchain._tokens import count_tokens
from toolchain.relay._events import OutputBoxed, ReferencesResolved
from toolchain.relay._guide import relay_guide
from toolchain.relay._readers import reader_tools
from toolchain.relay._references import ReferenceReader, UnknownReference, parse_reference
from toolchain.runtime import describe_exception
from toolchain.stores import DEFAULT_TTL, MemoryStore, Store, StoreError
from toolchain.stores._entries import decode_entry, encode_entry, scope_of
from toolchain.stores._results import RunResults, results_of
from toolchain.stores._strings import any_string, flat_without

__all__ = ["ContextRelay"]

_log = logger("toolchain")

Mode = Literal["opaque", "json"]
Unit = Literal["chars", "tokens"]


class ContextRelay(Extension):
    """The relay extension (see ``toolchain.relay``).

    - ``threshold``: outputs longer than this (in ``unit``: ``chars`` or o200k
      ``tokens``) are boxed; ``per_tool`` overrides it by tool name, ``None`` there
      meaning never box that tool's outputs.
    - ``mode``: ``opaque`` (``internal://<id>``) or ``json`` (a resource link).
    - ``store``: where boxed values live (a ``MemoryStore`` by default; a shared
      ``RedisStore`` lets many worker processes resolve each other's references).
    - ``preview``: characters of the head and the tail shown with a reference (0: none).
    - ``few_shot``: add worked examples to the prompt guide (they decide success for
      small models, as the relay's prompt cases found).
    - ``ttl``: seconds a boxed value lives in the store.
    - ``max_read_chars``: characters a reader tool returns at most per call.

    The result's text parts (``TextContent`` media) count toward the threshold with its
    output; over it, the largest pieces are boxed until the rest fits, a boxed text
    part shown as its reference. When the store fails (a broken file, a held lock, a
    full or unreachable server), the call still ran: its result is kept, and shown
    unboxed (its first ``max_read_chars`` characters), saying it could not be stored;
    the store's error, with its path or address, goes only to the log (WARNING). A
    reference the store cannot read fails that call with "the store did not answer".
    """

    name = "context_relay"

    def __init__(
        self,
        threshold: int = 2_000,
        *,
        unit: Unit = "chars",
        per_tool: Mapping[str, int | None] | None = None,
        mode: Mode = "opaque",
        store: Store | None = None,
        preview: int = 0,
        few_shot: bool = False,
        ttl: float = DEFAULT_TTL,
        max_read_chars: int = 20_000,
    ) -> None:
        if threshold < 1 or preview < 0:
            raise ToolchainValueError("threshold must be at least 1 and preview at least 0")
        self.threshold = threshold
        self.unit: Unit = unit
        self.per_tool = dict(per_tool or {})
        self.mode: Mode = mode
        self.store: Store = store if store is not None else MemoryStore()
        self.preview = preview
        self.few_shot = few_shot
        self.ttl = ttl
        self.max_read_chars = max_read_chars
        self._guide: tuple[tuple[Mode, bool] | None, str] = (None, "")
        self._reader = _StoreReader(self)
        self._tools = reader_tools(self._reader, mode=mode, max_chars=max_read_chars)
        self.reader_names = frozenset(tool.name for tool in self._tools)

    # -- Extension -------------------------------------------------------------------

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return self._tools

    def install(self, ctx: ExecutionContext) -> None:
        results = results_of(ctx)
        results.enlist()
        if results.store is None:  # variables keep their values here too
            results.store = self.store
        ctx.hooks.add(_RelayHook(self, ctx, results))

    def instructions(self) -> str:
        # Asked once per run by the agent and once by its savings ledger: the guide is
        # made again only when the mode or few_shot changed since the last time.
        key = (self.mode, self.few_shot)
        if self._guide[0] != key:
            self._guide = (key, relay_guide(self.mode, few_shot=self.few_shot))
        return self._guide[1]

    # -- boxing ----------------------------------------------------------------------

    def limit_for(self, tool: str) -> int | None:
        """The threshold for ``tool``'s outputs; None: never boxed."""
        return self.per_tool.get(tool, self.threshold)

    def size_of(self, text: str) -> int:
        """``text``'s size in this relay's unit."""
        return len(text) if self.unit == "chars" else count_tokens(text)

    async def box(self, ctx: ExecutionContext, tool: str, value: object) -> str:
        """Store ``value``; the reference as the model sees it."""
        id = await self.store.put(scope_of(ctx), encode_entry(value, tool), ttl=self.ttl)
        return self.reference(id)

    def reference(self, id: str) -> str:
        """The reference to a stored entry, as the model sees it in this relay's mode.

        >>> ContextRelay().reference("abc")
        'internal://abc'
        """
        uri = f"internal://{id}"
        if self.mode == "json":
            return msgspec.json.encode({"type": "resource_link", "uri": uri}).decode()
        return uri

    async def unbox(self, ctx: ExecutionContext, reference: str) -> object:
        """The stored value a reference names; ``UnknownReference`` when there is none."""
        id = parse_reference(reference)
        if id is None:
            raise UnknownReference(f"{reference!r} is not an internal:// reference")
        return await self.unbox_id(ctx, id)

    async def unbox_id(self, ctx: ExecutionContext, id: str) -> object:
        """The stored value under a reference's id (``unbox`` once the id is parsed)."""
        try:
            entry = await self.store.get(scope_of(ctx), id)
        except StoreError as error:  # its path or host:port is for the log, not the model
            _log.warning("the relay could not read internal://%s: %s", id, error)
            raise UnknownReference(
                f"internal://{id} could not be read: the store did not answer; try again "
                "later, or go on without it"
            ) from None
        if entry is None:
            raise UnknownReference(
                f"unknown reference internal://{id}: it was never made in this run, "
                "or it has expired"
            )
        return decode_entry(entry)


class _StoreReader(ReferenceReader):
    def __init__(self, relay: ContextRelay) -> None:
        self.relay = relay

    async def read(self, ctx: ExecutionContext, reference: str) -> str:
        value = await self.relay.unbox(ctx, reference)
        return value if isinstance(value, str) else msgspec.json.encode(value).decode()


class _RelayHook(ToolHook):
    def __init__(self, relay: ContextRelay, ctx: ExecutionContext, results: RunResults) -> None:
        self.relay = relay
        # The record of the run the hook is installed on, found once, not at every call
        # (as the variables' hook does): kept with the context's state bag, where it is
        # made and never replaced; a call of another bag looks its own up.
        self._state = ctx.state
        self._results = results

    # Both hooks are plain functions that hand the chain a coroutine only when there is
    # store work to await: most calls pass no reference and return a short output.
    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> Awaitable[ToolCall | None] | None:
        if call.name in self.relay.reader_names:  # the readers take references themselves
            return None
        args = call.args
        if flat_without(args, "internal://") or not any_string(args, _may_be_reference):
            return None
        return self._unboxed(ctx, call)

    async def _unboxed(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
        counted = [0] if ctx.events.has_subscribers(ReferencesResolved) else None
        try:
            args = await self._unbox(ctx, call.args, counted)
        except UnknownReference as unknown:
            raise ToolCallRefused(str(unknown), kind="invalid_arguments") from unknown
        if counted is not None and counted[0]:
            ctx.events.emit(ReferencesResolved(ctx, call.id, call.name, counted[0]))
        return ToolCall(call.name, cast("dict[str, object]", args), call.id)

    async def _unbox(
        self, ctx: ExecutionContext, value: object, counted: list[int] | None
    ) -> object:
        """``value`` with every reference in it replaced by what it names; ``counted``
        (when observers want it) adds up the references replaced."""
        if isinstance(value, str):
            if not _may_be_reference(value):
                return value
            id = parse_reference(value)
            if id is None:
                return value
        elif isinstance(value, Mapping):
            mapping = cast("Mapping[str, object]", value)
            id = parse_reference(mapping)
            if id is None:  # not a resource link as an object: look inside
                out: dict[str, object] = {}
                for key, item in mapping.items():  # only what may hold one is awaited
                    has = any_string(item, _may_be_reference)
                    out[key] = await self._unbox(ctx, item, counted) if has else item
                return out
        elif isinstance(value, list | tuple):
            items = cast("list[object]", value)
            return [
                await self._unbox(ctx, item, counted)
                if any_string(item, _may_be_reference)
                else item
                for item in items
            ]
        else:
            return value
        if counted is not None:
            counted[0] += 1
        return await self.relay.unbox_id(ctx, id)

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> Awaitable[Shown] | None:
        relay, name = self.relay, call.name
        results = self._results if ctx.state is self._state else results_of(ctx)
        original = results.original(call.id, text)
        limit = relay.limit_for(name)
        if limit is None or name in relay.reader_names:
            return None
        size = relay.size_of(original)
        media = result.media  # a tuple (ToolResult makes it one)
        # No media (most results: no generator to look through them) or no text parts.
        if not media or not any(type(part) is TextContent for part in media):
            return None if size <= limit else self._boxed(ctx, call, result, original)
        # Text parts reach the model beside the output: they count, and are boxed, too.
        sizes = [size] + [
            relay.size_of(part.text) if type(part) is TextContent else 0 for part in media
        ]
        if sum(sizes) <= limit:
            return None
        return self._boxed_parts(ctx, call, result, original, sizes, limit)

    async def _boxed(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], original: str
    ) -> str:
        results = results_of(ctx)
        entry = self._variables_entry(results, call)
        if entry:  # the variables hook stored this very output: one entry for both
            shown = self.relay.reference(entry)
            if self.relay.preview:
                shown += _preview(original, self.relay.preview)
        else:
            shown = await self._reference(ctx, call, result.text, original, whole=True)
        results.boxed[call.id] = shown
        _tell_boxed(ctx, call, original, shown)
        return results.observation(call.id, original)

    def _variables_entry(self, results: RunResults, call: ToolCall) -> str:
        """The entry the variables hook made for this call's output in the relay's
        store (now marked shared, so it outlives the variable), or ``""``."""
        name = results.names.get(call.id)
        variable = None if name is None else results.variables.get(name)
        if variable is None or not variable.entry or not results.shares_entries(self.relay.store):
            return ""
        results.variables[variable.name] = msgspec.structs.replace(variable, shared=True)
        return variable.entry

    async def _boxed_parts(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        result: ToolResult[Any],
        original: str,
        sizes: list[int],
        limit: int,
    ) -> Shown:
        """Box the largest of the output and its text parts until what is left fits."""
        media = list(result.media)
        left = sum(sizes)
        for at in sorted(range(len(sizes)), key=lambda n: -sizes[n]):
            if left <= limit or sizes[at] == 0:
                break
            left -= sizes[at]
            if at == 0:
                await self._boxed(ctx, call, result, original)
            else:
                part = cast(TextContent, media[at - 1])
                shown = await self._reference(ctx, call, part.text, part.text, whole=False)
                media[at - 1] = TextContent(shown)
                _tell_boxed(ctx, call, part.text, shown)
        return results_of(ctx).observation(call.id, original), tuple(media)

    async def _reference(
        self, ctx: ExecutionContext, call: ToolCall, value: object, text: str, *, whole: bool
    ) -> str:
        """``value`` stored, as the model sees it: the reference (and a preview of ``text``).

        ``whole``: ``value`` is the call's output, whose entry a ``ToolVariables`` sharing
        this store will name too. When the store fails, the call still ran: its result is
        kept and shown unboxed (at most ``max_read_chars`` of it), saying it could not be
        stored; the failure, with the store's path or address, goes only to the log.
        """
        store = self.relay.store
        data = encode_entry(value, call.name)
        try:
            entry = await store.put(scope_of(ctx), data, ttl=self.relay.ttl)
        except Exception as error:  # (cancellation is not an Exception: it goes through)
            _log.warning(
                "the relay could not store an output of %s, so it is shown unboxed: %s",
                call.name,
                describe_exception(error),
            )
            return _unstored(text, self.relay.max_read_chars)
        results = results_of(ctx)
        if whole and results.shares_entries(store):  # the variable will name this entry too
            results.boxed_entries[call.id] = (entry, len(data.data))
        shown = self.relay.reference(entry)
        if self.relay.preview:
            shown += _preview(text, self.relay.preview)
        return shown


def _tell_boxed(ctx: ExecutionContext, call: ToolCall, original: str, shown: str) -> None:
    if ctx.events.has_subscribers(OutputBoxed):  # counting tokens costs: only when watched
        counts = count_tokens(original), count_tokens(shown)
        ctx.events.emit(OutputBoxed(ctx, call.id, call.name, *counts, original, shown))


def _unstored(text: str, limit: int) -> str:
    """``text`` shown in place of a reference the store could not make (the note first:
    a chain may cut a long observation's end)."""
    if len(text) <= limit:
        return f"[this output could not be stored for reference, so it is shown in full]\n{text}"
    return (
        f"[this output could not be stored for reference, so it is shown here: its first "
        f"{limit} of {len(text)} characters]\n{text[:limit]}"
    )


def _preview(text: str, chars: int) -> str:
    return f"\n({len(text)} characters; it starts: {text[:chars]!r} … and ends: {text[-chars:]!r})"


_LONGEST_REFERENCE = 1_100  # a resource link with a long id; see parse_reference


def _may_be_reference(text: str) -> bool:
    """Only a whole string can be a reference, and references are short: long strings
    (a 50 KB transcript passed on) are never scanned, so the check stays cheap."""
    return len(text) <= _LONGEST_REFERENCE and "internal://" in text
