"""One record of a run's tool results, shared by variables and the context relay.

Both change what the model sees of a result: variables name it (``$weather_nyc =``),
the relay may box it (``internal://…``). Each installs its own observation hook, and
either may run first; so neither builds on the text it is handed: both compose the
observation from the chain's original serialisation and this record, and the last
one to run writes the final text. ``$name`` and ``internal://id`` then name the same
stored value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

from toolchain._context import ExecutionContext, StateKey

__all__ = ["RunResults", "Variable", "any_string", "results_of"]


@dataclass(frozen=True, slots=True)
class Variable:
    """A saved tool output: its name, the tool, and the value as plain data."""

    name: str
    tool: str
    value: object
    call_id: str


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

    def values(self) -> dict[str, object]:
        """name → value, for resolving references."""
        return {name: variable.value for name, variable in self.variables.items()}

    def save(self, variable: Variable) -> None:
        self.variables.pop(variable.name, None)
        self.variables[variable.name] = variable
        self.names[variable.call_id] = variable.name

    def enlist(self) -> None:
        """Count one more observation hook composing from this record (at install)."""
        self.composers += 1

    def original(self, call_id: str, text: str) -> str:
        """The chain's serialisation of a call's output, whichever composer runs first.

        Each composer calls this once per call with the text it was handed; the first
        call's text is the original, and it is forgotten after the last composer's call.
        """
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


def any_string(value: object, test: Callable[[str], bool]) -> bool:
    """Whether ``test`` holds for some string inside ``value`` (nested dicts, lists,
    tuples): the cheap first check before arguments are searched for references.

    >>> any_string({"a": [1, {"b": "$x"}]}, lambda text: "$" in text)
    True
    """
    kind = type(value)
    if kind is str:
        return test(cast(str, value))
    if kind is dict:  # exact types first: every call's arguments pass here
        items: Iterable[object] = cast("dict[object, object]", value).values()
    elif kind is list or kind is tuple:
        items = cast("list[object]", value)
    elif isinstance(value, str):
        return test(value)
    elif isinstance(value, Mapping):
        items = cast("Mapping[object, object]", value).values()
    elif isinstance(value, list | tuple):
        items = cast("list[object]", value)
    else:
        return False
    for item in items:  # a loop, not any(<generator>): this runs on every call
        if type(item) in SCALAR_TYPES:
            continue
        if type(item) is str:
            if test(item):
                return True
        elif any_string(item, test):
            return True
    return False


SCALAR_TYPES = frozenset({int, float, bool, type(None)})
"""Types of the JSON scalars beside strings: no reference can hide in them."""
