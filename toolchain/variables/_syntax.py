"""The syntax of ``$name.field[0]`` references, and following one through a value.

Variables save tool outputs as plain JSON-like builtins; a reference names one and a
path into it. This module reads references (:func:`parse`) and follows their paths
(:func:`walk`); the scanner finds them in text, and the resolvers of arguments and of
text apply the rules below.

Syntax
------
* A reference is ``$`` and a name, ``[A-Za-z_][A-Za-z0-9_]*``, followed by any number of
  path segments: ``.field`` (``field`` spelled like a name) and ``[index]`` (an integer;
  negative counts from the end, ``[-1]`` is the last item, as in Python and jq). Example:
  ``$weather_nyc.daily[0].temp``. The reference is the longest such run, so in
  ``$w.temp.`` the final dot is text, and in ``$w.temp[`` the bracket is text.
* ``$$`` is always a literal ``$``, wherever it stands: ``$$name`` gives the text
  ``$name``, ``$$$name`` gives ``$`` followed by the value. (A model writing TeX display
  math must therefore write ``$$$$``, which the instructions to the model should say.)
* Not references: ``$5``, ``$ 5``, ``$`` alone, ``$.x``, and a ``$`` right after a
  literal ASCII letter, digit or underscore (``US$x``, ``foo$bar``, ``Outer$Inner``), the
  way identifiers and prices are written. Only ASCII counts, so CJK text, which has no
  spaces, can still write ``温度$w.temp``. A ``$`` right after a reference does start one:
  ``$a$b`` is two references.
* Field names start with a letter or underscore, so ``$total.00`` is the value of
  ``$total`` followed by ``.00``; a key that is not spelled like a name (``"temp-max"``,
  ``"2024"``) is reached only through its parent.
* A reference is replaced only if it resolves completely as written; there is no partial
  match (``$name.txt`` is not ``$name`` followed by ``.txt``).
* Values substituted are never resolved again, so a variable holding ``"$a"`` (even
  ``$a`` itself) is harmless: no cycles. Dict keys are never resolved.

Where each rule applies: in a call's arguments (``_arguments``: a whole-string reference
keeps its type, a failure is the call's error), in the model's answer (``_text``: nothing
fails, what does not resolve stays as written), both under the bound on what filling in
may add (``_expansion``).

>>> parse("$weather_nyc.daily[-1].temp")
('weather_nyc', ['.daily', '[-1]', '.temp'])
>>> walk({"daily": [{"temp": 75}]}, [".daily", "[0]", ".rain"])
({'temp': 75}, 2)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias, cast

__all__ = [
    "DIGITS",
    "IDENT",
    "NAME_START",
    "WORD",
    "Segment",
    "Variables",
    "fields_of",
    "items_of",
    "parse",
    "walk",
]

Variables: TypeAlias = Mapping[str, object]
"""Saved tool outputs by name (without the ``$``): plain JSON-like builtins."""

NAME_START: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
DIGITS: Final = frozenset("0123456789")
WORD: Final = NAME_START | DIGITS

IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX: Final = re.compile(r"\[-?[0-9]+\]")

# An index with more digits than this is out of range of any list (and ``int()`` of a
# very long digit string is slow, and refused past 4300 digits).
_MAX_INDEX_DIGITS: Final = 18

# A path segment as written: ".field" or "[index]".
Segment: TypeAlias = str


def parse(text: str) -> tuple[str, list[Segment]] | None:
    """The name and path segments when ``text`` is exactly one reference, else None."""
    if len(text) < 2 or text[0] != "$":
        return None
    match = IDENT.match(text, 1)
    if match is None:
        return None
    name = match.group()
    segments: list[Segment] = []
    position, end = match.end(), len(text)
    while position < end:
        char = text[position]
        if char == ".":
            match = IDENT.match(text, position + 1)
        elif char == "[":
            match = _INDEX.match(text, position)
        else:
            return None
        if match is None:
            return None
        segments.append(text[position : match.end()])
        position = match.end()
    return name, segments


def fields_of(value: object) -> Mapping[object, object] | None:
    """``value`` as an object whose fields a path can reach, if it is one."""
    return cast("Mapping[object, object]", value) if isinstance(value, Mapping) else None


def items_of(value: object) -> Sequence[object] | None:
    """``value`` as a list a path can index, if it is one (a string is not)."""
    return cast("Sequence[object]", value) if isinstance(value, list | tuple) else None


def walk(value: object, segments: list[Segment]) -> tuple[object, int | None]:
    """Follows ``segments`` from ``value``: (the value reached, None), or (the last value
    reached, the position of the segment that does not apply to it)."""
    for position, segment in enumerate(segments):
        if segment[0] == ".":
            fields = fields_of(value)
            key = segment[1:]
            if fields is None or key not in fields:
                return value, position
            value = fields[key]
        else:
            items = items_of(value)
            if items is None:
                return value, position
            digits = segment[1:-1]
            if len(digits.lstrip("-").lstrip("0")) > _MAX_INDEX_DIGITS:
                return value, position
            index = int(digits)
            if not -len(items) <= index < len(items):
                return value, position
            value = items[index]
    return value, None
