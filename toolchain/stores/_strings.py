"""Whether some string in a call's arguments passes a test: the cheap first look that
variables and the context relay take at every call before searching it for references."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import cast

__all__ = ["SCALAR_TYPES", "any_string", "flat_without"]


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


def flat_without(args: Mapping[str, object], marker: str) -> bool:
    """Whether ``args`` is a dict of scalars and strings none of which holds ``marker``:
    most calls' arguments, told so in one pass, without `any_string`'s call per string.
    False whenever it is unsure (a nested value, another mapping): `any_string` looks then.

    >>> flat_without({"city": "Oslo", "days": 3}, "internal://")
    True
    >>> flat_without({"city": "internal://abc"}, "internal://")
    False
    >>> flat_without({"cities": ["Oslo"]}, "internal://")
    False
    """
    values = args.values()  # read before the type test: it narrows to dict[Unknown, ...]
    if type(args) is not dict:
        return False
    for value in values:
        if type(value) is str:
            if marker in value:
                return False
        elif type(value) not in SCALAR_TYPES:
            return False
    return True


SCALAR_TYPES = frozenset({int, float, bool, type(None)})
"""Types of the JSON scalars beside strings: no reference can hide in them."""
