"""``ToolVariables``: every tool output saved as ``$name``, usable in later calls and answers.

The model passes outputs between tools by name instead of copying them: a string
argument that is exactly ``$weather_nyc`` becomes that output (a dict stays a dict),
``$weather_nyc.temperature`` or ``$search_1.results[0].url`` a part of it, and a
reference inside longer text is filled in (at most ``max_expansion`` characters per
call or answer). ``$$`` is a literal ``$``; ``$5`` and prose are left alone. Tools only
ever see real values. Each result is shown as ``$name = <output>``, and a short list of
the most recent variables (name, tool, type, preview) comes with every step.

Variables last for the conversation: their values live in a store (the context
relay's when one is installed, so a boxed output is one entry for both; else the
extension's own ``MemoryStore``, or the ``store`` given), and ``save_state`` carries
their names on to the next run (``AgentResult.extension_state``). A conversation keeps
at most ``max_variables`` variables and ``max_bytes`` bytes of them: the oldest go
first, and a call naming one is told why it is gone.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> @tool
... def weather(city: str) -> dict[str, object]:
...     '''Today's weather in a city.'''
...     return {"city": city, "temp_c": 21}
>>> @tool
... def report(temp_c: int, city: str) -> str:
...     '''Write a one-line report.'''
...     return f"{city}: {temp_c} C"
>>> variables = ToolVariables()
>>> chain = JSONToolChain(extensions=[variables]).register_tool(weather)
>>> chain = chain.register_tool(report)
>>> ctx = ExecutionContext()
>>> first = chain.execute_sync(ctx, '{"tool": "weather", "args": {"city": "Oslo"}}', XMLFormat())
>>> first.observations[0].text
'$weather_1 = {"city":"Oslo","temp_c":21}'
>>> call = '{"tool": "report", "args": {"temp_c": "$weather_1.temp_c", "city": "$weather_1.city"}}'
>>> chain.execute_sync(ctx, call, XMLFormat()).raw.output(0, str)
'Oslo: 21 C'

Programs read and write the same variables (``list_variables``, ``get_variable``,
``set_variable``, ``resolve``, ``resolve_text``):

>>> import asyncio
>>> [(v.name, v.tool, v.kind) for v in variables.list_variables(ctx)]
[('weather_1', 'weather', 'object: city, temp_c'), ('report_1', 'report', 'str')]
>>> asyncio.run(variables.get_variable(ctx, "weather_1"))
{'city': 'Oslo', 'temp_c': 21}
>>> asyncio.run(variables.resolve_text(ctx, "$weather_1.city: $weather_1.temp_c C"))
'Oslo: 21 C'
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Annotated, Any, Literal, cast

import msgspec

from toolchain._context import ExecutionContext
from toolchain._extension import Extension, TextFilter
from toolchain._hooks import ToolCallRefused, ToolHook
from toolchain._oneline import one_line
from toolchain._output import to_builtins
from toolchain._result import ToolCall, ToolResult
from toolchain._var_refs import (
    MAX_EXPANSION,
    ReferenceProblem,
    StreamResolver,
    has_references,
    resolve_arguments,
)
from toolchain._var_refs import resolve_text as _resolve_text
from toolchain.stores import DEFAULT_TTL, MemoryStore, Store
from toolchain.stores._entries import decode_entry, encode_entry, scope_of, share_scope
from toolchain.stores._results import UNLOADED, RunResults, Variable, results_of
from toolchain.stores._strings import any_string

__all__ = [
    "MAX_EXPANSION",
    "Naming",
    "ReferenceProblem",
    "ToolVariables",
    "UnknownVariable",
    "VariableInfo",
    "has_references",
]

_log = logging.getLogger("toolchain")

Naming = Callable[[str, Mapping[str, object], object], "str | None"]
"""``(tool name, arguments, output) -> name``; None (or an empty name) keeps the default
``<tool>_<n>``. A name is cleaned into an identifier (``weather NYC`` → ``weather_nyc``)."""

FULL_GUIDE = """\
Tool outputs are saved as variables ($name = ... beside each result). Pass one to a
tool as a whole argument value instead of copying it: {"data": "$weather_1"} (the
tool gets the real value); a part: "$weather_1.temp", "$search_1.items[0].url".
Inside text a reference is filled in ("$weather_1.temp degrees"); never follow one
directly with ".word". $$ is a literal $. Your answer may use references too."""

MINIMAL_GUIDE = (
    'Tool outputs are saved as $name variables; pass them as argument values ("$name", '
    '"$name.field", "$name.items[0]") instead of copying them.'
)

_PREVIEW = 80
_NOT_NAME = re.compile(r"[^0-9a-zA-Z_]+")
_MAX_DROPPED = 1_000
"""Names of dropped variables remembered, to say why they are gone."""


@dataclass(frozen=True, slots=True)
class VariableInfo:
    """One variable as ``list_variables`` describes it (what the per-step list shows).

    ``kind`` is its type (``object: temperature, humidity``, ``list of 3``, ``str``),
    ``preview`` its first 80 characters on one line, ``bytes`` its stored size.
    """

    name: str
    tool: str
    kind: str
    preview: str
    bytes: int


class UnknownVariable(LookupError):
    """``get_variable`` of a name that is not saved, or no longer kept; the message says
    which, and what is available.

    >>> str(UnknownVariable("unknown variable $x; no variables are saved yet"))
    'unknown variable $x; no variables are saved yet'
    """


class ToolVariables(Extension):
    """The variables extension (see the module text).

    - ``naming`` names each output (default ``<tool>_<n>``: ``weather_1``,
      ``weather_2``); a name used again is overwritten by the newer output.
    - ``instruction_style`` picks the ``full`` guide (default) or a ``minimal`` one.
    - ``store`` keeps the values (None: the context relay's when one is installed on
      the run, else a ``MemoryStore`` of this extension). Pass a ``SQLiteStore`` or
      ``RedisStore`` to continue conversations in another process.
    - ``max_variables`` and ``max_bytes`` bound a conversation's variables (the oldest
      go first); ``ttl`` is the seconds a value lives in the store.
    - ``max_expansion``: characters that filling in references may add to one call's
      arguments or one answer.
    - ``listed``: how many of the most recent variables each step lists (the others
      are counted).
    """

    name = "tool_variables"

    def __init__(
        self,
        naming: Naming | None = None,
        *,
        instruction_style: Literal["full", "minimal"] = "full",
        store: Store | None = None,
        max_variables: int = 512,
        max_bytes: int = 32 * 1024 * 1024,
        max_expansion: int = MAX_EXPANSION,
        ttl: float = DEFAULT_TTL,
        listed: int = 10,
    ) -> None:
        if max_variables < 1 or max_bytes < 1 or max_expansion < 0 or listed < 0:
            raise ValueError(
                "max_variables and max_bytes must be at least 1, max_expansion and "
                "listed at least 0"
            )
        self.naming = naming
        self.instruction_style = instruction_style
        self.store = store
        self.max_variables = max_variables
        self.max_bytes = max_bytes
        self.max_expansion = max_expansion
        self.ttl = ttl
        self.listed = listed
        self._own_store: Store = MemoryStore()

    # -- Extension -------------------------------------------------------------------

    def install(self, ctx: ExecutionContext) -> None:
        results = results_of(ctx)
        results.enlist()
        results.naming = True
        results.variable_store = self.store
        ctx.hooks.add(_VariablesHook(self))

    def instructions(self) -> str:
        return FULL_GUIDE if self.instruction_style == "full" else MINIMAL_GUIDE

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """The most recent variables, one line each (name, tool, type, preview), and a
        count of the older ones; nothing before the first."""
        variables = results_of(ctx).variables
        if not variables:
            return ""
        recent = list(islice(reversed(variables.values()), self.listed))
        lines = [f"- ${v.name} ({v.tool}, {v.kind}): {v.preview}" for v in reversed(recent)]
        older = len(variables) - len(recent)
        if older:
            lines.insert(
                0, f"({older} older variable{'s' if older != 1 else ''} not listed; still usable)"
            )
        return "Variables:\n" + "\n".join(lines)

    def text_filter(self, ctx: ExecutionContext) -> TextFilter:
        return StreamResolver(_LiveValues(ctx), max_expansion=self.max_expansion)

    async def before_step(self, ctx: ExecutionContext, request: object) -> None:
        """Reads the values an earlier run of the conversation left in the store, before
        the model can name them (a step hook of the agents; ``request`` is theirs)."""
        await self.load(ctx)

    def save_state(self, ctx: ExecutionContext) -> object | None:
        """The conversation's variables (names and store entries, not values), the
        per-tool counts that number the next names, and why dropped ones are gone."""
        results = results_of(ctx)
        if not (results.variables or results.counts or results.dropped):
            return None
        dropped = dict(results.dropped)
        kept: list[_SavedVariable] = []
        for v in results.variables.values():
            if v.entry:
                kept.append(
                    _SavedVariable(v.name, v.tool, v.entry, v.size, v.kind, v.preview, v.shared)
                )
            else:  # a store that failed: the next run can only say so
                dropped[v.name] = "its value could not be stored for later turns"
        saved = _Saved(
            scope=scope_of(ctx),
            variables=kept,
            counts=dict(results.counts),
            dropped=dict(list(dropped.items())[-_MAX_DROPPED:]),
        )
        saved_data: object = msgspec.to_builtins(saved)
        return saved_data

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Takes up the variables an earlier run saved: their values are read from the
        store before the first step (``load``)."""
        saved = msgspec.convert(state, _Saved)
        share_scope(ctx, saved.scope)  # the entries live under the conversation's scope
        results = results_of(ctx)
        for name, count in saved.counts.items():
            results.counts[name] = max(count, results.counts.get(name, 0))
        for name, why in saved.dropped.items():
            if name not in results.variables:
                results.dropped[name] = one_line(why, 300)
        for s in saved.variables:
            if s.name in results.variables:
                continue
            kind, preview = one_line(s.kind, 200), one_line(s.preview, _PREVIEW)
            results.variables[s.name] = Variable(
                s.name, s.tool, UNLOADED, "", kind, preview, s.bytes, s.entry, s.shared
            )
            results.size += s.bytes
            results.dropped.pop(s.name, None)
            results.waiting += 1
        for name in self._over_bounds(results, keep=""):  # saved under larger bounds
            v = results.drop(name, self._why_dropped(results, name), keep=_MAX_DROPPED)
            if v is not None and v.value is UNLOADED:
                results.waiting -= 1

    # -- the programs' side ----------------------------------------------------------

    def list_variables(self, ctx: ExecutionContext) -> list[VariableInfo]:
        """The run's variables, oldest first.

        >>> ToolVariables().list_variables(ExecutionContext())
        []
        """
        return [
            VariableInfo(v.name, v.tool, v.kind, v.preview, v.size)
            for v in results_of(ctx).variables.values()
        ]

    async def get_variable(self, ctx: ExecutionContext, name: str) -> object:
        """The value of ``$name`` (the ``$`` is optional); ``UnknownVariable`` when it
        is not saved, or no longer kept (the message says why)."""
        await self.load(ctx)
        results = results_of(ctx)
        name = name.removeprefix("$")
        found = results.variables.get(name)
        if found is not None:
            return found.value
        why = results.dropped.get(name)
        if why is not None:
            raise UnknownVariable(f"variable ${name} is no longer available: {why}")
        try:
            resolve_arguments({"name": f"${name}"}, _LiveValues(ctx))
        except ReferenceProblem as problem:
            raise UnknownVariable(problem.problem) from None
        raise UnknownVariable(f"{name!r} is not a variable name")

    async def set_variable(
        self, ctx: ExecutionContext, name: str, value: object, *, tool: str = "program"
    ) -> str:
        """Save ``value`` (as plain data) as a variable the model can use; returns its
        name as cleaned (``weather NYC`` → ``weather_nyc``). A name in use is replaced.
        ``ValueError`` for a name with no letters or digits, or a value over ``max_bytes``.
        """
        cleaned = _clean(name.removeprefix("$"))
        if not cleaned:
            raise ValueError(f"{name!r} cannot be a variable name")
        plain = to_builtins(value)
        kept = await self._keep(ctx, results_of(ctx), cleaned, tool, plain, f"set:{cleaned}")
        if kept is None:
            raise ValueError(
                f"${cleaned} was not saved: it is over the {self.max_bytes:,} bytes "
                "variables may hold"
            )
        return cleaned

    async def resolve(self, ctx: ExecutionContext, value: object) -> object:
        """``value`` with its references resolved as a call's arguments are: a string
        that is one reference becomes the value itself; ``ReferenceProblem`` for one
        that does not resolve (the message is the one the model would read)."""
        await self.load(ctx)
        results = results_of(ctx)
        given: dict[str, object] = {"value": value}
        wrapped = resolve_arguments(
            given, _LiveValues(ctx), max_expansion=self.max_expansion, gone=results.dropped
        )
        return wrapped["value"]

    async def resolve_text(self, ctx: ExecutionContext, text: str) -> str:
        """``text`` resolved as the model's answer is: what does not resolve stays."""
        await self.load(ctx)
        return _resolve_text(text, _LiveValues(ctx), max_expansion=self.max_expansion)

    async def load(self, ctx: ExecutionContext) -> None:
        """Read the values of variables an earlier run saved from the store (agents do
        this before each run's first step). One whose entry has expired, or that
        cannot be read, is dropped, and a call naming it is told why."""
        results = results_of(ctx)
        if not results.waiting:
            return
        waiting = [v for v in results.variables.values() if v.value is UNLOADED]
        results.waiting = 0
        store, scope = self.store_of(ctx), scope_of(ctx)
        read = await asyncio.gather(*(_read(store, scope, v) for v in waiting))
        for variable, (value, why) in zip(waiting, read, strict=True):
            if results.variables.get(variable.name) is not variable:
                continue  # replaced by a newer output meanwhile
            if why:
                _log.info("variable $%s is dropped: %s", variable.name, why)
                results.drop(variable.name, why, keep=_MAX_DROPPED)
            else:
                results.variables[variable.name] = dataclasses.replace(variable, value=value)

    def store_of(self, ctx: ExecutionContext) -> Store:
        """The store the run's variables live in."""
        if self.store is not None:
            return self.store
        shared = results_of(ctx).store  # the context relay's
        return shared if shared is not None else self._own_store

    def name_for(self, tool: str, args: Mapping[str, object], output: object, n: int) -> str:
        """The variable name of a tool's ``n``-th output."""
        chosen = None
        if self.naming is not None:
            try:
                chosen = self.naming(tool, args, output)
            except Exception:  # a naming bug must not lose the output
                _log.warning("the variable naming function raised on %s", tool, exc_info=True)
        if not chosen:
            return f"{_base_name(tool)}_{n}"
        cleaned = _clean(chosen)
        return cleaned if cleaned else f"{_base_name(tool)}_{n}"

    # -- keeping values ---------------------------------------------------------------

    async def _keep(
        self,
        ctx: ExecutionContext,
        results: RunResults,
        name: str,
        tool: str,
        value: object,
        call_id: str,
        shown: str | None = None,
        boxed: tuple[str, int] | None = None,
    ) -> Variable | None:
        """Save a variable (its value in the store, or in the relay's entry ``boxed``),
        then drop the oldest past the bounds; None when it alone is over ``max_bytes``.

        ``shown`` is the output as the model sees it, for the preview."""
        store = self.store_of(ctx)
        if boxed is not None:
            entry, size = boxed
            data = None
        else:
            data = encode_entry(value, tool)
            entry, size = "", len(data.data)
        if size > self.max_bytes:
            why = f"it was larger than the {self.max_bytes:,} bytes variables may hold"
            _log.info("the output of %s is not kept as $%s: %s", tool, name, why)
            results.drop(name, why, keep=_MAX_DROPPED)
            return None
        if data is not None:
            try:
                entry = await store.put(scope_of(ctx), data, ttl=self.ttl)
            except Exception:  # kept for this run; a later one is told it was not stored
                _log.warning("the value of $%s could not be stored", name, exc_info=True)
        if shown is None:  # a program's value: its JSON, as a tool's would be shown
            if isinstance(value, str):
                shown = value
            elif data is not None:
                shown = data.data[: 16 * _PREVIEW].decode("utf-8", "ignore")
            else:
                shown = msgspec.json.encode(value).decode()
        variable = Variable(
            name,
            tool,
            value,
            call_id,
            _type_of(value),
            one_line(shown[: 4 * _PREVIEW], _PREVIEW),
            size,
            entry,
            shared=boxed is not None,
        )
        replaced = results.save(variable)
        gone = [replaced] if replaced is not None else []
        for old in self._over_bounds(results, keep=name):
            dropped = results.drop(old, self._why_dropped(results, old), keep=_MAX_DROPPED)
            if dropped is not None:
                _log.info("variable $%s is dropped: over the bounds", old)
                gone.append(dropped)
        await self._forget(ctx, store, results, gone)
        return variable

    def _over_bounds(self, results: RunResults, *, keep: str) -> list[str]:
        """The oldest names to drop so the variables fit the bounds (never ``keep``)."""
        count, size = len(results.variables), results.size
        names: list[str] = []
        for v in results.variables.values():
            if count <= self.max_variables and size <= self.max_bytes:
                break
            if v.name == keep:
                continue
            names.append(v.name)
            count, size = count - 1, size - v.size
        return names

    def _why_dropped(self, results: RunResults, name: str) -> str:
        v = results.variables.get(name)
        again = f"; call {v.tool} again for a fresh value" if v is not None else ""
        if len(results.variables) > self.max_variables:
            return f"a conversation keeps its {self.max_variables} most recent variables{again}"
        return f"a conversation's variables may hold {self.max_bytes:,} bytes in all{again}"

    async def _forget(
        self, ctx: ExecutionContext, store: Store, results: RunResults, gone: list[Variable]
    ) -> None:
        """Delete the entries of variables that are gone, but not one an ``internal://``
        reference still names."""
        scope = scope_of(ctx)
        for v in gone:
            if not v.entry or v.shared or v.call_id in results.boxed:
                continue
            try:
                await store.delete(scope, v.entry)
            except Exception:  # it expires with its ttl anyway
                _log.warning("the entry of $%s could not be deleted", v.name, exc_info=True)


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


_Name = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")]
_Short = Annotated[str, msgspec.Meta(max_length=1_000)]


class _SavedVariable(msgspec.Struct):
    name: _Name
    tool: _Short
    entry: _Short
    bytes: Annotated[int, msgspec.Meta(ge=0)]
    kind: _Short = ""
    preview: _Short = ""
    shared: bool = False


_Many = msgspec.Meta(max_length=100_000)
_Count = Annotated[int, msgspec.Meta(ge=0)]


class _Saved(msgspec.Struct):
    """What ``save_state`` writes; ``load_state`` refuses anything else (logged)."""

    scope: Annotated[str, msgspec.Meta(min_length=1, max_length=1_000)]
    variables: Annotated[list[_SavedVariable], _Many] = msgspec.field(
        default_factory=lambda: list[_SavedVariable]()
    )
    counts: Annotated[dict[_Short, _Count], _Many] = msgspec.field(
        default_factory=lambda: dict[str, int]()
    )
    dropped: Annotated[dict[_Short, _Short], _Many] = msgspec.field(
        default_factory=lambda: dict[str, str]()
    )


def _clean(name: str) -> str:
    """``name`` as an identifier: ``weather NYC`` → ``weather_nyc``; ``""`` if nothing is left."""
    cleaned = _NOT_NAME.sub("_", name).strip("_").lower()
    return f"v_{cleaned}" if cleaned[:1].isdigit() else cleaned


@functools.lru_cache(maxsize=1024)
def _base_name(tool: str) -> str:
    return _clean(tool) or "result"


class _LiveValues(Mapping[str, object]):
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


class _VariablesHook(ToolHook):
    def __init__(self, extension: ToolVariables) -> None:
        self.extension = extension

    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> ToolCall | Awaitable[ToolCall | None] | None:
        if not any_string(call.args, _mentions_dollar):
            return None
        if results_of(ctx).waiting:  # a run continued without the agents' first step
            return self._loaded_then_resolved(ctx, call)
        return self._resolved(ctx, call)

    async def _loaded_then_resolved(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall:
        await self.extension.load(ctx)
        return self._resolved(ctx, call)

    def _resolved(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall:
        results = results_of(ctx)
        try:
            resolved = resolve_arguments(
                call.args,
                _LiveValues(ctx),
                max_expansion=self.extension.max_expansion,
                gone=results.dropped,
            )
        except ReferenceProblem as problem:
            raise ToolCallRefused(str(problem), kind="invalid_arguments") from problem
        return ToolCall(call.name, resolved, call.id)

    async def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        # Saved here, not after the call: this is the result the relay boxes too (any
        # after-hook has run), so a boxed output and its variable are one entry.
        results = results_of(ctx)
        original = results.original(call.id, text)
        boxed = results.boxed_entries.pop(call.id, None)
        n = results.counts.get(call.name, 0) + 1
        results.counts[call.name] = n
        value = to_builtins(result.text)
        name = self.extension.name_for(call.name, call.args, value, n)
        await self.extension._keep(  # pyright: ignore[reportPrivateUsage]  # its own hook
            ctx, results, name, call.name, value, call.id, shown=original, boxed=boxed
        )
        return results.observation(call.id, original)


def _mentions_dollar(text: str) -> bool:
    return "$" in text


def _type_of(value: object) -> str:
    if isinstance(value, dict):
        keys = [str(key) for key in islice(cast("dict[object, object]", value), 7)]
        more = ", …" if len(keys) > 6 else ""
        return one_line(f"object: {', '.join(k[:40] for k in keys[:6])}{more}", 200)
    if isinstance(value, list):
        return f"list of {len(cast('list[object]', value))}"
    return type(value).__name__
