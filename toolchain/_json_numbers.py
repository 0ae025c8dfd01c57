"""Arguments hold only numbers JSON can carry: finite, and written in ASCII digits.

A tool's JSON Schema says ``number`` or ``integer`` for values JSON can carry, and JSON
has no NaN, no infinity and no digits but ASCII ones. Python is laxer on every side:
``float("NaN")``, ``float("1e400")`` (infinity) and ``float("٣")`` (3.0) all read;
pydantic and msgspec turn the *strings* ``"NaN"`` and ``"Infinity"`` into a float field's
value; YAML has ``.nan``; a reader that types text by the schema (an XML parameter, a
GLM ``<arg_value>``) or a JSON decoder that takes JavaScript's constants makes such
floats itself. None of them is a number a model could have meant for an ``amount``, so
every tool's arguments are checked before they are validated, whatever read them:

- a float that is not finite, anywhere in the arguments, is refused;
- a string where the schema takes a number but no string is refused when it spells a
  number that is not finite or holds a digit other than ``0``-``9``; any other string
  is left to the validator (``"12"`` is read as 12 as before, ``"twelve"`` refused there).

Each problem names the argument's path and says what to write instead.

>>> schema = {"properties": {"amount": {"type": "number"}, "note": {"type": "string"}}}
>>> number_problems({"amount": "NaN", "note": "NaN"}, schema)
["amount: must be a finite number written in ASCII digits (got 'NaN')"]
>>> number_problems({"amount": [1.5, float("inf")]}, None)
['amount.1: must be a finite number written in ASCII digits (got inf)']
>>> number_problems({"amount": "٣"}, schema)
["amount: must be a finite number written in ASCII digits (got '٣')"]
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import cast

from toolchain._schema_walk import Schema, accepts, items_schema, property_schema, resolve

__all__ = ["number_problems", "unfit_number"]

_MAX_SHOWN = 40
# A decimal digit that is not 0-9 (Arabic-Indic, fullwidth, Devanagari …).
_FOREIGN_DIGIT = re.compile(r"(?![0-9])\d")
# Values that hold no number to check, and lists of numbers all finite: a long list of
# them costs one pass in C.
_PLAIN = frozenset({int, bool, type(None)})
_NUMBERS = frozenset({int, float, bool})

# What float() reads begins so (after blanks): a sign, a digit, a point, inf or nan.
# Text that does not is let through without a float() that would raise.
_NUMBERISH = re.compile(r"\s*[-+]?[0-9.iInN]")

_Path = tuple[str | int, ...]
_Stack = list[tuple[object, Schema | None, _Path]]


def number_problems(args: Mapping[str, object], schema: Schema | None) -> list[str]:
    """One line per argument holding a number JSON cannot carry (see the module text);
    ``[]`` when there is none. ``schema`` is the arguments' JSON Schema (``None``: not
    known, so only floats are checked). Iterative: depth costs no recursion; a child's
    schema is looked up only for a container or a suspect string."""
    problems: list[str] = []
    stack: _Stack = [(args, schema, ())]
    while stack:
        value, at, path = stack.pop()
        at = resolve(at, schema)
        if isinstance(value, Mapping):
            for key, item in cast("Mapping[object, object]", value).items():
                if type(item) not in _PLAIN:
                    _check(item, at, str(key), schema, path, problems, stack)
            continue
        items = cast("list[object] | tuple[object, ...]", value)
        kinds = set(map(type, items))
        if kinds <= _PLAIN:
            continue
        if kinds <= _NUMBERS and all(map(math.isfinite, cast("list[float]", items))):
            continue  # every item an int, float or bool (kinds): all finite, in C
        for index, item in enumerate(items):
            if type(item) not in _PLAIN:
                _check(item, at, index, schema, path, problems, stack)
    return problems


def _check(
    item: object,
    at: Schema | None,
    key: str | int,
    root: Schema | None,
    path: _Path,
    problems: list[str],
    stack: _Stack,
) -> None:
    """``item``, found under ``key`` of a container whose schema is ``at``."""
    if isinstance(item, float):
        if not math.isfinite(item):
            problems.append(_problem((*path, key), repr(item)))
    elif isinstance(item, str):
        if _spells_a_bad_number(item) and _takes_only_numbers(_schema_of(at, key, root), root):
            problems.append(_problem((*path, key), repr(item)))
    elif isinstance(item, Mapping | list | tuple):
        stack.append((cast(object, item), _schema_of(at, key, root), (*path, key)))


def _schema_of(at: Schema | None, key: str | int, root: Schema | None) -> Schema | None:
    if isinstance(key, str):
        return property_schema(at, key, root)
    # An item: a tuple's ``prefixItems`` give one schema a position, ``items`` the rest.
    return items_schema(at, root, key if at is not None and "prefixItems" in at else None)


def _spells_a_bad_number(text: str) -> bool:
    """Whether ``text`` holds a digit other than 0-9, or reads as a float that is not
    finite (``NaN``, ``-Infinity``, ``inf``, ``1e400``) as Python and pydantic read it."""
    if not text.isascii():
        return _FOREIGN_DIGIT.search(text) is not None
    if _NUMBERISH.match(text) is None:
        return False
    try:
        return not math.isfinite(float(text))
    except ValueError:  # not a number at all: the validator says what is wrong
        return False


def _takes_only_numbers(schema: Schema | None, root: Schema | None) -> bool:
    if schema is None or accepts(schema, "string", root):
        return False
    return accepts(schema, "number", root) or accepts(schema, "integer", root)


def unfit_number(shown: str) -> str:
    """What a model is told of a number JSON cannot carry, written ``shown``; readers that
    refuse one themselves (Python-style and Gemma arguments) say the same.

    >>> unfit_number("NaN")
    'must be a finite number written in ASCII digits (got NaN)'
    """
    if len(shown) > _MAX_SHOWN:
        shown = shown[: _MAX_SHOWN - 3] + "..."
    return f"must be a finite number written in ASCII digits (got {shown})"


def _problem(path: _Path, shown: str) -> str:
    return ".".join(str(part) for part in path) + ": " + unfit_number(shown)
