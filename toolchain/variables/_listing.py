"""What the model reads about its variables: the guide (in the system prompt, or in the
step's section once it pays for itself), the list of the most recent ones each step, and
how a value is described there (type, preview)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Final, cast

from toolchain import ExecutionContext, StateKey
from toolchain._oneline import one_line
from toolchain.stores._results import RunResults, Variable

__all__ = [
    "FULL_GUIDE",
    "GUIDE_AT",
    "MINIMAL_GUIDE",
    "PREVIEW",
    "PROGRAM_CALL",
    "STEP_GUIDE",
    "VariableInfo",
    "guide_pays",
    "listing",
    "note_guide_pays",
    "shown_in_run",
    "type_of",
]

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

STEP_GUIDE = (
    'Pass a result on by its $name, not a copy: "$name", "$name.field" or "$name.items[0]" '
    "as an argument value (the tool gets the real value); answers may use them too."
)
"""The ``auto`` style's guide: one sentence with the step's list, once it pays."""

GUIDE_AT: Final = 1024
"""Bytes of one output from which the ``auto`` guide is shown. Copying such an output
costs the model some 250 o200k tokens or more each time it passes it on, and every
later request carries the copy; the guide and a list line cost some 70 per request."""

PROGRAM_CALL: Final = "set:"
"""How the call id of a value a program set begins (``set:<name>``)."""

PREVIEW: Final = 80
"""Characters of a value the list shows, on one line."""


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


class _Listed:
    """The last list a run built and what it was built from (the count of variables
    and the newest one): a step that saved nothing new reuses it."""

    __slots__ = ("count", "limit", "newest", "text")

    def __init__(self) -> None:
        self.count = 0
        self.limit = -1
        self.newest: Variable | None = None
        self.text = ""


_LISTED = StateKey[_Listed]("toolchain.variables.listed")
_GUIDE_PAYS = StateKey[bool]("toolchain.variables.guide_pays")


def listing(
    ctx: ExecutionContext, results: RunResults, listed: int, *, seen_previews: bool = True
) -> str:
    """The ``listed`` most recent variables, one line each (name, tool, type, preview),
    and a count of the older ones; nothing before the first. Without ``seen_previews``,
    a variable whose result the run showed under its name (not boxed) has no preview:
    the model can read it in the conversation. Work per step is bounded by ``listed``,
    whatever the number of variables."""
    variables = results.variables
    if not variables:
        return ""
    newest = next(reversed(variables.values()))
    built = ctx.state.setdefault(_LISTED, _Listed)
    # Every change to the variables adds one (a new newest), or drops one (a new
    # count); reading a saved value back keeps the text as it was.
    limit = listed if seen_previews else -2 - listed
    if built.newest is newest and built.count == len(variables) and built.limit == limit:
        return built.text
    recent = list(islice(reversed(variables.values()), listed))
    lines = [
        f"- ${v.name} ({v.tool}, {v.kind})"
        if not seen_previews and shown_in_run(results, v)
        else f"- ${v.name} ({v.tool}, {v.kind}): {v.preview}"
        for v in reversed(recent)
    ]
    older = len(variables) - len(recent)
    if older:
        lines.insert(
            0, f"({older} older variable{'s' if older != 1 else ''} not listed; still usable)"
        )
    built.count, built.limit, built.newest = len(variables), limit, newest
    built.text = "Variables:\n" + "\n".join(lines)
    return built.text


def shown_in_run(results: RunResults, variable: Variable) -> bool:
    """Whether this run showed the variable's output under its name: a tool's output
    (a program's value, or one an earlier run saved, has no call id of a tool) that
    was not boxed behind an ``internal://`` reference."""
    call_id = variable.call_id
    if not call_id or call_id.startswith(PROGRAM_CALL):
        return False
    return not variable.shared and call_id not in results.boxed


def note_guide_pays(ctx: ExecutionContext) -> None:
    """From now on the ``auto`` guide pays for itself in this run: an output at least
    ``guide_at`` bytes was saved, or variables came from an earlier run (the model has
    not seen them named in this one)."""
    ctx.state.set(_GUIDE_PAYS, True)


def guide_pays(ctx: ExecutionContext) -> bool:
    """Whether ``note_guide_pays`` was called for this run."""
    return ctx.state.get(_GUIDE_PAYS, False)


def type_of(value: object) -> str:
    """How the list describes a value: an object by its first keys, a list by its
    length, anything else by its type.

    >>> type_of({"temp": 21, "sky": "clear"}), type_of([1, 2]), type_of("hi")
    ('object: temp, sky', 'list of 2', 'str')
    """
    if isinstance(value, dict):
        # Annotated, not cast(): that is a Python call, and this runs for every output.
        obj: dict[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        keys = tuple(obj) if len(obj) <= 7 else tuple(islice(obj, 7))
        # A tool's outputs mostly have the same keys, output after output: each set is
        # described once, looked up by the keys themselves (hashed when the output was
        # made). Only sets of short str keys are kept: 1 and 1.0 are one key of a dict
        # but are written differently, and a hostile output's huge keys are not held.
        known = _KINDS.get(keys)
        if known is not None:
            return known
        for key in keys:  # a loop, not all(<generator>): this runs for every new set
            if type(key) is not str or len(key) > 40:
                return _described_keys([str(key) for key in keys])
        described = _described_keys(cast("tuple[str, ...]", keys))
        if len(_KINDS) >= _KINDS_KEPT:
            _KINDS.clear()
        _KINDS[keys] = described
        return described
    if isinstance(value, list):
        items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
        return f"list of {len(items)}"
    return type(value).__name__


_KINDS: dict[tuple[object, ...], str] = {}
"""First keys of an object → how the list describes it (``type_of``), for sets of short
str keys only; emptied when it holds ``_KINDS_KEPT``."""
_KINDS_KEPT: Final = 512


def _described_keys(keys: Sequence[str]) -> str:
    """An object's kind from its first seven keys (six shown, the seventh says more)."""
    more = ", …" if len(keys) > 6 else ""
    return one_line(f"object: {', '.join(k[:40] for k in keys[:6])}{more}", 200)
