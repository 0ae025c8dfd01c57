"""``ToolVariables``, the extension, and the tool hook it installs on each run: references
resolved in a call's arguments, each result saved and named in what the model sees."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Literal

import msgspec

from toolchain import (
    ExecutionContext,
    Extension,
    StepView,
    TextFilter,
    ToolCall,
    ToolCallRefused,
    ToolHook,
    ToolResult,
    to_builtins,
)
from toolchain._errors import ToolchainValueError
from toolchain._redact import logger
from toolchain.stores import DEFAULT_TTL, MemoryStore, Store
from toolchain.stores._results import RunResults, Variable, results_of
from toolchain.stores._strings import any_string, flat_without
from toolchain.variables._arguments import resolve_arguments
from toolchain.variables._events import VariablesResolved
from toolchain.variables._expansion import MAX_EXPANSION
from toolchain.variables._keeping import LiveValues, keep_value, load_saved
from toolchain.variables._listing import (
    FULL_GUIDE,
    GUIDE_AT,
    MINIMAL_GUIDE,
    PROGRAM_CALL,
    STEP_GUIDE,
    VariableInfo,
    guide_pays,
    listing,
    note_guide_pays,
)
from toolchain.variables._naming import Naming, clean_name, default_name, name_output
from toolchain.variables._problems import ReferenceProblem, UnknownVariable
from toolchain.variables._state import saved_variables, take_up
from toolchain.variables._text import StreamResolver
from toolchain.variables._text import resolve_text as _resolve_text

__all__ = ["ToolVariables"]

_log = logger("toolchain")


class ToolVariables(Extension):
    """The variables extension (see ``toolchain.variables``).

    - ``naming`` names each output (default ``<tool>_<n>``: ``weather_1``,
      ``weather_2``); a name used again is overwritten by the newer output.
    - ``instruction_style``: ``auto`` (default) shows a one-sentence guide and the
      list of variables only once they pay for themselves: from the step after an
      output of at least ``guide_at`` bytes is saved, or when variables come from an
      earlier run; before that the model sees only each result's name beside it
      (``$weather_1 = ...``). ``full`` and ``minimal`` put that guide (with examples,
      or in one sentence) in the system prompt and list the variables every step.
    - ``store`` keeps the values (None: the context relay's when one is installed on
      the run, else a ``MemoryStore`` of this extension). Pass a ``SQLiteStore`` or
      ``RedisStore`` to continue conversations in another process.
    - ``max_variables`` and ``max_bytes`` bound a conversation's variables (the oldest
      go first); ``ttl`` is the seconds a value lives in the store.
    - ``max_expansion``: characters that filling in references may add to one call's
      arguments or one answer.
    - ``listed``: how many of the most recent variables each step lists (the others
      are counted).
    - ``guide_at``: bytes of one output from which the ``auto`` guide is shown.
    """

    name = "tool_variables"

    def __init__(
        self,
        naming: Naming | None = None,
        *,
        instruction_style: Literal["auto", "full", "minimal"] = "auto",
        store: Store | None = None,
        max_variables: int = 512,
        max_bytes: int = 32 * 1024 * 1024,
        max_expansion: int = MAX_EXPANSION,
        ttl: float = DEFAULT_TTL,
        listed: int = 10,
        guide_at: int = GUIDE_AT,
    ) -> None:
        if max_variables < 1 or max_bytes < 1 or min(max_expansion, listed, guide_at) < 0:
            raise ToolchainValueError(
                "max_variables and max_bytes must be at least 1, max_expansion, "
                "listed and guide_at at least 0"
            )
        if instruction_style not in ("auto", "full", "minimal"):
            raise ToolchainValueError(
                f"instruction_style is 'auto', 'full' or 'minimal', not {instruction_style!r}"
            )
        self.naming = naming
        self.instruction_style = instruction_style
        self.store = store
        self.max_variables = max_variables
        self.max_bytes = max_bytes
        self.max_expansion = max_expansion
        self.ttl = ttl
        self.listed = listed
        self.guide_at = guide_at
        self._own_store: Store = MemoryStore()

    # -- Extension -------------------------------------------------------------------

    def install(self, ctx: ExecutionContext) -> None:
        results = results_of(ctx)
        results.enlist()
        results.naming = True
        results.variable_store = self.store
        ctx.hooks.add(_VariablesHook(self, ctx, results))

    def instructions(self) -> str:
        """The system prompt's guide: none in the ``auto`` style (its guide comes with
        the step's list, once it pays for itself)."""
        if self.instruction_style == "auto":
            return ""
        return FULL_GUIDE if self.instruction_style == "full" else MINIMAL_GUIDE

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """The most recent variables, one line each (name, tool, type, preview), and a
        count of the older ones; nothing before the first. In the ``auto`` style,
        nothing until the guide pays for itself, then the guide's sentence first, and
        no preview of an output shown under its name in this run (it is in the
        conversation)."""
        if self.instruction_style != "auto":
            return listing(ctx, results_of(ctx), self.listed)
        if not guide_pays(ctx):
            return ""
        listed = listing(ctx, results_of(ctx), self.listed, seen_previews=False)
        return f"{STEP_GUIDE}\n{listed}" if listed else ""

    def text_filter(self, ctx: ExecutionContext) -> TextFilter:
        return StreamResolver(LiveValues(ctx), max_expansion=self.max_expansion)

    def before_step(self, ctx: ExecutionContext, request: StepView) -> Awaitable[None] | None:
        """Reads the values an earlier run of the conversation left in the store, before
        the model can name them; the step itself as it is. Plain when none are waiting
        (every step but a continued run's first): no coroutine, no await per step."""
        if not results_of(ctx).waiting:
            return None
        return self.load(ctx)

    def save_state(self, ctx: ExecutionContext) -> object | None:
        """The conversation's variables (names and store entries, not values), the
        per-tool counts that number the next names, and why dropped ones are gone."""
        return saved_variables(ctx)

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Takes up the variables an earlier run saved: their values are read from the
        store before the first step (``load``)."""
        if take_up(self, ctx, state):
            note_guide_pays(ctx)  # the model has not seen them named in this run

    # -- the programs' side ----------------------------------------------------------

    def named(self, ctx: ExecutionContext, call_id: str) -> str | None:
        """The variable a call's output is saved as (shown beside it as ``$name = ``);
        None when it was not saved (the call failed, or its output was over
        ``max_bytes``) or is gone (its name reused, or dropped past the bounds).

        >>> ToolVariables().named(ExecutionContext(), "call_1") is None
        True
        """
        return results_of(ctx).names.get(call_id)

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
            resolve_arguments({"name": f"${name}"}, LiveValues(ctx))
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
        cleaned = clean_name(name.removeprefix("$"))
        if not cleaned:
            raise ToolchainValueError(f"{name!r} cannot be a variable name")
        plain = to_builtins(value)
        kept = keep_value(self, ctx, results_of(ctx), cleaned, tool, plain, PROGRAM_CALL + cleaned)
        if kept is not None and not isinstance(kept, Variable):
            kept = await kept
        if kept is None:
            raise ToolchainValueError(
                f"${cleaned} was not saved: it is over the {self.max_bytes:,} bytes "
                "variables may hold"
            )
        if kept.size >= self.guide_at:
            note_guide_pays(ctx)
        return cleaned

    async def resolve(self, ctx: ExecutionContext, value: object) -> object:
        """``value`` with its references resolved as a call's arguments are: a string
        that is one reference becomes the value itself; ``ReferenceProblem`` for one
        that does not resolve (the message is the one the model would read)."""
        await self.load(ctx)
        results = results_of(ctx)
        given: dict[str, object] = {"value": value}
        wrapped = resolve_arguments(
            given, LiveValues(ctx), max_expansion=self.max_expansion, gone=results.dropped
        )
        return wrapped["value"]

    async def resolve_text(self, ctx: ExecutionContext, text: str) -> str:
        """``text`` resolved as the model's answer is: what does not resolve stays."""
        await self.load(ctx)
        return _resolve_text(text, LiveValues(ctx), max_expansion=self.max_expansion)

    async def load(self, ctx: ExecutionContext) -> None:
        """Read the values of variables an earlier run saved from the store (agents do
        this before each run's first step). One whose entry has expired, or that
        cannot be read, is dropped, and a call naming it is told why."""
        await load_saved(self, ctx)

    def store_of(self, ctx: ExecutionContext) -> Store:
        """The store the run's variables live in."""
        return self.store_for(results_of(ctx))

    def store_for(self, results: RunResults) -> Store:
        """``store_of`` the run whose record of results is ``results``."""
        if self.store is not None:
            return self.store
        shared = results.store  # the context relay's
        return shared if shared is not None else self._own_store

    def name_for(self, tool: str, args: Mapping[str, object], output: object, n: int) -> str:
        """The variable name of a tool's ``n``-th output."""
        return name_output(self.naming, tool, args, output, n)


_NAME_FOR = ToolVariables.name_for
"""The default ``name_for``: a subclass's own is called for every output."""


class _VariablesHook(ToolHook):
    def __init__(
        self, extension: ToolVariables, ctx: ExecutionContext, results: RunResults
    ) -> None:
        self.extension = extension
        # The record of the run the hook is installed on, found once, not at every call:
        # a run's record is made once and never replaced in its state bag. Kept with
        # that bag (not the context, which holds this hook: no cycle); a call of another
        # context, or of one whose bag was replaced, looks its own record up.
        self._state = ctx.state
        self._results = results

    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> ToolCall | Awaitable[ToolCall | None] | None:
        if flat_without(call.args, "$") or not any_string(call.args, _mentions_dollar):
            return None
        if results_of(ctx).waiting:  # a run continued without the agents' first step
            return self._loaded_then_resolved(ctx, call)
        return self._resolved(ctx, call)

    async def _loaded_then_resolved(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall:
        await self.extension.load(ctx)
        return self._resolved(ctx, call)

    def _resolved(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall:
        results = results_of(ctx)
        watched = ctx.events.has_subscribers(VariablesResolved)
        values = _ReadValues(ctx) if watched else LiveValues(ctx)
        try:
            resolved = resolve_arguments(
                call.args,
                values,
                max_expansion=self.extension.max_expansion,
                gone=results.dropped,
            )
        except ReferenceProblem as problem:
            raise ToolCallRefused(str(problem), kind="invalid_arguments") from problem
        if isinstance(values, _ReadValues) and values.read:
            ctx.events.emit(VariablesResolved(ctx, call.id, call.name, tuple(values.read)))
        return ToolCall(call.name, resolved, call.id)

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str | Awaitable[str]:
        # Saved here, not after the call: this is the result the relay boxes too (any
        # after-hook has run), so a boxed output and its variable are one entry.
        results = self._results if ctx.state is self._state else results_of(ctx)
        call_id, tool = call.id, call.name
        original = results.original(call_id, text)
        boxed = results.boxed_entries.pop(call_id, None) if results.boxed_entries else None
        n = results.counts.get(tool, 0) + 1
        results.counts[tool] = n
        value = _snapshot(result.text)
        extension = self.extension
        if extension.naming is None and type(extension).name_for is _NAME_FOR:
            name = default_name(tool, n)
        else:
            name = extension.name_for(tool, call.args, value, n)
        keeping = keep_value(
            extension, ctx, results, name, tool, value, call_id, shown=original, boxed=boxed
        )
        # A store that answers at once (a MemoryStore, the default) keeps it at once,
        # and the observation is then returned as it is, with no coroutine of this
        # hook's, nor the hook stage's, around it.
        if keeping is not None and not isinstance(keeping, Variable):
            return self._shown_later(ctx, results, call_id, original, keeping)
        if keeping is not None and keeping.size >= extension.guide_at:
            note_guide_pays(ctx)
        return results.observation(call_id, original)

    async def _shown_later(
        self,
        ctx: ExecutionContext,
        results: RunResults,
        call_id: str,
        original: str,
        keeping: Awaitable[Variable | None],
    ) -> str:
        """`rewrite_observation`'s end for a store to wait for."""
        kept = await keeping
        if kept is not None and kept.size >= self.extension.guide_at:
            note_guide_pays(ctx)
        return results.observation(call_id, original)


class _ReadValues(LiveValues):
    """The run's variables, noting which ones a resolution read (for observers)."""

    def __init__(self, ctx: ExecutionContext) -> None:
        super().__init__(ctx)
        self.read: dict[str, None] = {}

    def __getitem__(self, name: str) -> object:
        value = super().__getitem__(name)
        self.read[name] = None
        return value


_JSON_LIKE = frozenset({dict, list})


def _snapshot(output: object) -> object:
    """An output as plain data, the variable's value (a copy: the tool may change what
    it returned). The chain has written it already, so its keys are ones its encoding
    takes: JSON-like data is converted in C, without ``to_builtins``' walk over every
    key (three quarters of its time for a 1 KB record); anything msgspec does not know goes through
    ``to_builtins``."""
    if type(output) in _JSON_LIKE:
        try:
            return msgspec.to_builtins(output)
        except (TypeError, ValueError, NotImplementedError):  # a pydantic model inside
            pass
    return to_builtins(output)


def _mentions_dollar(text: str) -> bool:
    return "$" in text
