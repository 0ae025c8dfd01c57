"""What the model reads about its variables: the guide in the system prompt, the list of
the most recent ones each step, and how a value is described there (type, preview)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Final, cast

from toolchain._oneline import one_line
from toolchain.stores._results import RunResults

__all__ = [
    "FULL_GUIDE",
    "MINIMAL_GUIDE",
    "PREVIEW",
    "VariableInfo",
    "listing",
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


def listing(results: RunResults, listed: int) -> str:
    """The ``listed`` most recent variables, one line each (name, tool, type, preview),
    and a count of the older ones; nothing before the first."""
    variables = results.variables
    if not variables:
        return ""
    recent = list(islice(reversed(variables.values()), listed))
    lines = [f"- ${v.name} ({v.tool}, {v.kind}): {v.preview}" for v in reversed(recent)]
    older = len(variables) - len(recent)
    if older:
        lines.insert(
            0, f"({older} older variable{'s' if older != 1 else ''} not listed; still usable)"
        )
    return "Variables:\n" + "\n".join(lines)


def type_of(value: object) -> str:
    if isinstance(value, dict):
        keys = [str(key) for key in islice(cast("dict[object, object]", value), 7)]
        more = ", …" if len(keys) > 6 else ""
        return one_line(f"object: {', '.join(k[:40] for k in keys[:6])}{more}", 200)
    if isinstance(value, list):
        return f"list of {len(cast('list[object]', value))}"
    return type(value).__name__
