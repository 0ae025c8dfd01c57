"""What a reference that does not resolve is told: the errors, and messages written for
the model (what is wrong, the closest name, what is available), bounded in length."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from itertools import islice
from typing import Final

from toolchain._errors import ToolchainError
from toolchain.variables._syntax import Segment, Variables, fields_of, items_of

__all__ = [
    "CLIP",
    "ReferenceProblem",
    "UnknownVariable",
    "bad_path",
    "clip",
    "describe_fields",
    "gone_message",
    "unknown_name",
]

# Bounds on error messages: what they list and how much of any one name they quote.
_MAX_LISTED: Final = 10
_MAX_NAMES_LISTED: Final = 20
CLIP: Final = 60
_MAX_SUGGESTION_CANDIDATES: Final = 1000
_MAX_SUGGESTION_CHARS: Final = 64


class ReferenceProblem(ToolchainError, ValueError):
    """A ``$reference`` in a tool call's arguments that cannot be resolved.

    The message is written for the model: what is wrong, the closest name, and what is
    available. ``problem`` is that message without the argument's location;
    ``argument`` is where in the arguments it occurred (``"city"``, ``"legs[0].from"``),
    or None.

    >>> error = ReferenceProblem("unknown variable $x; no variables are saved yet", "city")
    >>> str(error)
    'argument city: unknown variable $x; no variables are saved yet'
    """

    def __init__(self, problem: str, argument: str | None = None) -> None:
        self.problem = problem
        self.argument = argument
        super().__init__(problem if argument is None else f"argument {argument}: {problem}")

    def __reduce__(self) -> tuple[type[ReferenceProblem], tuple[str, str | None]]:
        return type(self), (self.problem, self.argument)


class UnknownVariable(ToolchainError, LookupError):
    """``get_variable`` of a name that is not saved, or no longer kept; the message says
    which, and what is available.

    >>> str(UnknownVariable("unknown variable $x; no variables are saved yet"))
    'unknown variable $x; no variables are saved yet'
    """


def clip(text: str, limit: int = CLIP) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _kind(value: object) -> str:
    fields, items = fields_of(value), items_of(value)
    if fields is not None:
        return "an object" if fields else "an empty object"
    if items is not None:
        return f"a list of {_count(len(items))}" if items else "an empty list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _count(count: int) -> str:
    return "1 item" if count == 1 else f"{count} items"


def describe_fields(value: object, limit: int = _MAX_LISTED) -> str:
    """What a reference can reach in ``value``, for messages and variable lists: the field
    names of an object (at most ``limit``, each clipped), else what kind of value it is.

    >>> describe_fields({"temperature": 72, "conditions": "sunny"})
    'temperature, conditions'
    >>> describe_fields({f"f{i}": i for i in range(12)}, limit=3)
    'f0, f1, f2, … (9 more)'
    >>> describe_fields([1, 2, 3]), describe_fields("x"), describe_fields({})
    ('a list of 3 items', 'a string', 'an empty object')
    """
    fields = fields_of(value)
    if not fields:
        return _kind(value)
    shown = [clip(str(key), 40) for key in islice(fields, limit)]
    more = len(fields) - len(shown)
    return ", ".join(shown) + (f", … ({more} more)" if more else "")


def _suggest(word: str, candidates: Iterable[object]) -> str | None:
    """The closest of (a bounded number of) ``candidates`` to ``word``, if any is close."""
    if len(word) > _MAX_SUGGESTION_CHARS:
        return None
    pool = [
        candidate
        for candidate in islice(candidates, _MAX_SUGGESTION_CANDIDATES)
        if isinstance(candidate, str) and len(candidate) <= _MAX_SUGGESTION_CHARS
    ]
    close = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_name(name: str, variables: Variables) -> str:
    problem = f"unknown variable ${clip(name)}"
    if not variables:
        return problem + "; no variables are saved yet"
    shown = ", ".join("$" + clip(known) for known in islice(variables, _MAX_NAMES_LISTED))
    more = len(variables) - _MAX_NAMES_LISTED
    available = shown + (f", … ({more} more)" if more > 0 else "")
    close = _suggest(name, variables)
    if close is not None:
        return f"{problem}; did you mean ${close}? Available: {available}"
    return f"{problem}; available: {available}"


def bad_path(name: str, segments: list[Segment], failed: int, value: object) -> str:
    where = clip("$" + name + "".join(segments[:failed]), 2 * CLIP)
    segment = segments[failed]
    fields, items = fields_of(value), items_of(value)
    if segment[0] == "[":
        index = clip(segment[1:-1])
        if items is not None:
            return f"index {index} out of range: {where} has {_count(len(items))}"
        if fields:
            listed = describe_fields(fields)
            return f"{where} has no index [{index}]; it is an object, its fields: {listed}"
        return f"{where} has no index [{index}]; it is {_kind(value)}"
    field = segment[1:]
    problem = f"{where} has no field {clip(field)!r}"
    if fields:
        close = _suggest(field, fields)
        hint = f"; did you mean {close!r}? Its fields: " if close else "; its fields: "
        return problem + hint + describe_fields(fields)
    if items:
        return f"{problem}; it is {_kind(value)} (use an index: {where}[0])"
    return f"{problem}; it is {_kind(value)}"


def gone_message(name: str, why: str) -> str:
    return f"variable ${clip(name)} is no longer available: {why}"
