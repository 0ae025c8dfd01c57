"""One record of a run's tool results, shared by variables and the context relay.

Both change what the model sees of a result: variables name it (``$weather_nyc =``),
the relay may box it (``internal://…``). Each installs its own observation hook, and
either may run first; so neither builds on the text it is handed: both compose the
observation from the chain's original serialisation and this record, and the last
one to run writes the final text. ``$name`` and ``internal://id`` then name the same
stored value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import msgspec

from toolchain import ExecutionContext, StateKey
from toolchain.stores._protocol import Store

__all__ = ["UNLOADED", "RunResults", "Variable", "results_of"]


class _Unloaded:
    """The value of a variable an earlier run saved, not yet read from the store."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNLOADED"


UNLOADED: Final = _Unloaded()


class Variable(msgspec.Struct, frozen=True):
    """A saved tool output: its name, the tool, and the value as plain data.

    ``kind`` and ``preview`` describe it for the per-step list (kept with the
    conversation, so the list needs no value); ``size`` is the bytes it counts
    against the bounds; ``entry`` its id in the store (``""``: not stored); ``shared``
    whether an ``internal://`` reference names that entry too (then it is never
    deleted when the variable goes). A frozen msgspec struct, not a frozen dataclass:
    one is made for every output kept, and a frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__`` (the struct's, in C, takes a tenth of its time).
    """

    name: str
    tool: str
    value: object
    call_id: str
    kind: str = ""
    preview: str = ""
    size: int = 0
    entry: str = ""
    shared: bool = False


@dataclass(slots=True)
class RunResults:
    """What a run's extensions know about its tool results (kept in ``ctx.state``)."""

    variables: dict[str, Variable] = field(default_factory=lambda: {})
    """name → variable, in the order they were saved (a reused name moves to the end)."""
    names: dict[str, str] = field(default_factory=lambda: {})
    """call id → the variable its output was saved as."""
    boxed: dict[str, str] = field(default_factory=lambda: {})
    """call id → the reference text the model sees instead of the output."""
    counts: dict[str, int] = field(default_factory=lambda: {})
    """tool → outputs saved so far (``weather_1``, ``weather_2`` …)."""
    composers: int = 0
    """How many installed observation hooks compose their text from this record."""
    held: dict[str, tuple[str, int]] = field(default_factory=lambda: {})
    """call id → (the chain's serialisation, composers that have seen it), held only
    until the last composer has run: a run never keeps every output it has shown."""
    store: Store | None = None
    """The context relay's store, when one is installed: variables keep their values
    there too, and a boxed output is one entry for both."""
    boxed_entries: dict[str, tuple[str, int]] = field(default_factory=lambda: {})
    """call id → (the entry the relay boxed that output in, its bytes), until the
    variables hook (which runs for every call the relay boxes) takes it as the
    variable's entry. Filled only when variables keep their values in that store."""
    naming: bool = False
    """Whether the variables extension is installed (the relay then hands it entries)."""
    variable_store: Store | None = None
    """The store variables were given (None: the relay's when one is installed)."""
    dropped: dict[str, str] = field(default_factory=lambda: {})
    """name → why that variable is gone (the bounds, an expired entry), oldest first."""
    size: int = 0
    """The bytes of the variables kept (``Variable.size`` summed)."""
    waiting: int = 0
    """Variables an earlier run saved whose values are not read from the store yet."""

    def shares_entries(self, store: Store) -> bool:
        """Whether variables keep their values in ``store`` (a relay's): then a boxed
        output and its variable are one entry."""
        return self.naming and (self.variable_store or self.store) is store

    def values(self) -> dict[str, object]:
        """name → value, for resolving references (those read from the store)."""
        return {n: v.value for n, v in self.variables.items() if v.value is not UNLOADED}

    def save(self, variable: Variable) -> Variable | None:
        """Keep ``variable`` (the newest); returns the one it replaced, if any."""
        old = self.variables.pop(variable.name, None)
        if old is not None:
            self.size -= old.size
            self.names.pop(old.call_id, None)
        self.variables[variable.name] = variable
        self.size += variable.size
        self.names[variable.call_id] = variable.name
        self.dropped.pop(variable.name, None)
        return old

    def drop(self, name: str, why: str, *, keep: int) -> Variable | None:
        """Forget a variable, remembering why (for at most ``keep`` names)."""
        old = self.variables.pop(name, None)
        if old is not None:
            self.size -= old.size
            self.names.pop(old.call_id, None)
        self.dropped.pop(name, None)
        self.dropped[name] = why
        while len(self.dropped) > keep:
            del self.dropped[next(iter(self.dropped))]
        return old

    def enlist(self) -> None:
        """Count one more observation hook composing from this record (at install)."""
        self.composers += 1

    def original(self, call_id: str, text: str) -> str:
        """The chain's serialisation of a call's output, whichever composer runs first.

        Each composer calls this once per call with the text it was handed; the first
        call's text is the original, and it is forgotten after the last composer's call.
        """
        if self.composers == 1:  # the only composer: its text is the original
            return text
        original, seen = self.held.get(call_id, (text, 0))
        seen += 1
        if seen >= self.composers:
            self.held.pop(call_id, None)
        else:
            self.held[call_id] = (original, seen)
        return original

    def observation(self, call_id: str, original: str) -> str:
        """The text the model sees for a call: boxed or not, named or not.

        >>> results = RunResults()
        >>> results.save(Variable("weather_1", "weather", {"temp": 21}, "c1"))
        >>> results.observation("c1", '{"temp":21}')
        '$weather_1 = {"temp":21}'
        >>> results.boxed["c1"] = "internal://abc"
        >>> results.observation("c1", '{"temp":21}')
        '$weather_1 = internal://abc'
        """
        shown = self.boxed.get(call_id, original)
        name = self.names.get(call_id)
        return f"${name} = {shown}" if name else shown


_RESULTS = StateKey[RunResults]("toolchain.results")


def results_of(ctx: ExecutionContext) -> RunResults:
    """The run's record, made on first use.

    >>> results_of(ExecutionContext()).variables
    {}
    """
    found = ctx.state.get(_RESULTS)
    if found is None:
        found = RunResults()
        ctx.state.set(_RESULTS, found)
    return found
