"""Resolving references in a tool call's arguments, before they are validated.

* An argument string that is exactly one reference becomes the value itself, keeping its
  type (a dict reaches a pydantic field as a dict; the very object, not a copy). An unknown
  name or a path that does not resolve is the call's error (``ReferenceProblem``),
  naming the available variables or fields, so the model can correct itself.
* References inside longer argument text are interpolated: strings as they are, other
  values as compact JSON. An unknown name is left as written (``echo $HOME``, ``costs
  $USD``: not every ``$word`` is meant as a variable), but a *known* variable whose path
  does not resolve is an error, because the model clearly meant the variable and the tool
  would otherwise receive ``$weather_nyc.temprature`` verbatim.
* Filling in more than ``max_expansion`` characters in all is the call's error, saying to
  pass the variable whole instead.
* A variable that is gone (dropped by the bounds of a conversation, or expired from the
  store) is an error wherever the arguments name it, saying why (``gone``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from toolchain.stores._strings import SCALAR_TYPES
from toolchain.variables._expansion import MAX_EXPANSION, Budget, as_text, too_long
from toolchain.variables._problems import (
    CLIP,
    ReferenceProblem,
    bad_path,
    clip,
    gone_message,
    unknown_name,
)
from toolchain.variables._scanner import Scanner
from toolchain.variables._syntax import IDENT, Variables, fields_of, items_of, parse, walk

__all__ = ["resolve_arguments"]


class _Resolution:
    """What one call's arguments are resolved with."""

    __slots__ = ("budget", "gone", "variables")

    def __init__(self, variables: Variables, gone: Mapping[str, str], max_expansion: int) -> None:
        self.variables = variables
        self.gone = gone
        self.budget = Budget(max_expansion)


def _resolve_string(text: str, how: _Resolution) -> object:
    """One argument string: a whole reference becomes its value, others are interpolated."""
    if "$" not in text:
        return text
    variables, gone, budget = how.variables, how.gone, how.budget
    parsed = parse(text)
    if parsed is not None:
        name, segments = parsed
        if name not in variables:
            why = gone.get(name)
            raise ReferenceProblem(
                unknown_name(name, variables) if why is None else gone_message(name, why)
            )
        value, failed = walk(variables[name], segments)
        if failed is not None:
            raise ReferenceProblem(bad_path(name, segments, failed, value))
        return value

    def replace(written: str) -> str:
        parsed = parse(written)
        if parsed is None:
            return written
        name, segments = parsed
        if name not in variables:
            why = gone.get(name)
            if why is None:
                return written
            raise ReferenceProblem(gone_message(name, why))
        value, failed = walk(variables[name], segments)
        if failed is not None:
            raise ReferenceProblem(bad_path(name, segments, failed, value))
        filled = as_text(value)
        if not budget.take(filled):
            raise ReferenceProblem(too_long(written, filled, budget.limit))
        return filled

    out: list[str] = []
    scanner = Scanner(replace, None)
    scanner.scan(text, out)
    scanner.finish(out)
    result = "".join(out)
    return text if result == text else result  # unchanged: the same object


def _location(keys: list[object]) -> str:
    parts: list[str] = []
    for key in keys:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif isinstance(key, str) and IDENT.fullmatch(key):
            parts.append(("." if parts else "") + key)
        else:
            parts.append(f"[{clip(repr(key))}]")
    return clip("".join(parts), 2 * CLIP)


class _Frame:
    """A container being rebuilt by :func:`resolve_arguments`."""

    __slots__ = ("changed", "items", "kind", "original", "position", "values")

    def __init__(self, original: object, items: list[tuple[object, object]], kind: str) -> None:
        self.original = original
        self.items = items
        self.kind = kind
        self.position = 0
        self.values: list[object] = []
        self.changed = False


def _frame(value: object) -> _Frame | None:
    fields, items = fields_of(value), items_of(value)
    if fields is not None:
        return _Frame(value, list(fields.items()), "dict")
    if items is not None:
        return _Frame(
            value, list(enumerate(items)), "tuple" if isinstance(value, tuple) else "list"
        )
    return None


def _rebuilt(frame: _Frame) -> object:
    if not frame.changed:
        return frame.original
    if frame.kind == "dict":
        return {key: value for (key, _), value in zip(frame.items, frame.values, strict=True)}
    if frame.kind == "list":
        return frame.values
    return tuple(frame.values)


def _resolve_flat(args: Mapping[str, object], how: _Resolution) -> dict[str, object] | None:
    """``resolve_arguments`` for the common call whose arguments hold no containers
    (None when one does): one plain loop instead of the general walk."""
    out: dict[str, object] = {}
    for key, value in args.items():
        kind = type(value)
        if kind is str:
            text = cast(str, value)
            if "$" in text:
                try:
                    value = _resolve_string(text, how)
                except ReferenceProblem as problem:
                    raise ReferenceProblem(problem.problem, _location([key])) from None
        elif kind not in SCALAR_TYPES:
            return None
        out[key] = value
    return out


def resolve_arguments(
    args: Mapping[str, object],
    variables: Variables,
    *,
    max_expansion: int = MAX_EXPANSION,
    gone: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """A tool call's arguments with their references resolved, before validation.

    Strings are resolved wherever they are in nested dicts, lists and tuples (keys are
    left alone): a string that is exactly one reference becomes the value itself, of its
    own type, not a copy; references in longer text are interpolated (strings as they
    are, other values as compact JSON); ``$$`` is ``$``. Containers with nothing to
    resolve are returned as they are (not copied); the result is always a new dict.

    Raises :class:`ReferenceProblem` for a whole-string reference to an unknown name, for
    any reference to a known name whose path does not resolve, to a name in ``gone``
    (name → why it is no longer available), and when interpolation would fill in more
    than ``max_expansion`` characters in all. An unknown name inside longer text
    (``echo $HOME``) is left as written.

    >>> saved = {"nyc": {"temperature": 72, "day": [{"high": 75}]}}
    >>> resolve_arguments({"city": "$nyc", "note": "high $nyc.day[0].high, $$5"}, saved)
    {'city': {'temperature': 72, 'day': [{'high': 75}]}, 'note': 'high 75, $5'}
    >>> try:
    ...     resolve_arguments({"t": "$nyc.temprature"}, saved)
    ... except ReferenceProblem as problem:
    ...     print(problem)
    argument t: $nyc has no field 'temprature'; did you mean 'temperature'? Its fields: ...
    """
    how = _Resolution(variables, gone or {}, max_expansion)
    flat = _resolve_flat(args, how)
    if flat is not None:
        return flat
    root = _Frame(args, list(cast("Mapping[object, object]", args).items()), "dict")
    root.changed = True  # always a new dict
    stack = [root]
    while True:
        frame = stack[-1]
        if frame.position == len(frame.items):
            stack.pop()
            result = _rebuilt(frame)
            if not stack:
                return cast("dict[str, object]", result)
            parent = stack[-1]
            parent.values.append(result)
            parent.changed = parent.changed or result is not frame.original
            parent.position += 1
            continue
        value = frame.items[frame.position][1]
        if isinstance(value, str):
            try:
                resolved = _resolve_string(value, how)
            except ReferenceProblem as problem:
                keys = [entry.items[entry.position][0] for entry in stack]
                raise ReferenceProblem(problem.problem, _location(keys)) from None
            frame.values.append(resolved)
            frame.changed = frame.changed or resolved is not value
            frame.position += 1
            continue
        child = _frame(value)
        if child is None:
            frame.values.append(value)
            frame.position += 1
        else:
            stack.append(child)
