"""One record of a run's tool results, shared by variables and the context relay.

Both change what the model sees of a result: variables name it (``$weather_nyc =``),
the relay may box it (``internal://…``). Each installs its own observation hook, and
either may run first; so neither builds on the text it is handed: both compose the
observation from the chain's original serialisation and this record, and the last
one to run writes the final text. ``$name`` and ``internal://id`` then name the same
stored value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    originals: dict[str, str] = field(default_factory=lambda: {})
    """call id → the output as the chain serialised it, before any rewrite."""
    counts: dict[str, int] = field(default_factory=lambda: {})
    """tool → outputs saved so far (``weather_1``, ``weather_2`` …)."""

    def values(self) -> dict[str, object]:
        """name → value, for resolving references."""
        return {name: variable.value for name, variable in self.variables.items()}

    def save(self, variable: Variable) -> None:
        self.variables.pop(variable.name, None)
        self.variables[variable.name] = variable
        self.names[variable.call_id] = variable.name

    def observation(self, call_id: str, text: str) -> str:
        """The text the model sees for a call: boxed or not, named or not.

        >>> results = RunResults()
        >>> results.save(Variable("weather_1", "weather", {"temp": 21}, "c1"))
        >>> results.observation("c1", '{"temp":21}')
        '$weather_1 = {"temp":21}'
        >>> results.boxed["c1"] = "internal://abc"
        >>> results.observation("c1", "ignored: the original is kept")
        '$weather_1 = internal://abc'
        """
        original = self.originals.setdefault(call_id, text)
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
    if isinstance(value, str):
        return test(value)
    if isinstance(value, dict):  # the common case first: abstract checks are slower
        items = cast("dict[object, object]", value).values()
        return any(any_string(item, test) for item in items)
    if isinstance(value, list | tuple):
        return any(any_string(item, test) for item in cast("list[object]", value))
    if isinstance(value, Mapping):
        mapping = cast("Mapping[object, object]", value)
        return any(any_string(item, test) for item in mapping.values())
    return False
