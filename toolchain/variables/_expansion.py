"""The bound on what filling in references may add, and a value as the text it fills in.

What interpolation fills in is bounded (``max_expansion`` characters, 16,000,000 by
default, for one call's arguments or one answer): ``"$big " * 5000`` cannot ask for
gigabytes. In arguments, passing the bound is the call's error (saying to pass the
variable whole instead); in an answer, references past it are left as written and a
note at the end says so. A whole-string reference costs nothing: it is the value itself,
not a copy.

>>> budget = Budget(5)
>>> budget.take(as_text({"a": 1})), budget.take("abc"), budget.over
(False, False, True)
"""

from __future__ import annotations

from typing import Final

import msgspec

from toolchain._errors import ToolchainValueError
from toolchain.variables._problems import clip

__all__ = ["MAX_EXPANSION", "Budget", "as_text", "left_as_written", "too_long"]

MAX_EXPANSION: Final = 16_000_000
"""Default bound on what interpolation fills in: characters, for one call's arguments or
one answer."""


def as_text(value: object) -> str:
    """A value interpolated into text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, ValueError, RecursionError, msgspec.MsgspecError):
        return str(value)


class Budget:
    """What interpolation may still fill in, for one call's arguments or one answer.

    Once a reference does not fit, ``over`` is set and nothing more is filled in: each
    later reference then costs no encoding, so the work stays linear.
    """

    __slots__ = ("left", "limit", "over")

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ToolchainValueError(f"max_expansion must be at least 0, not {limit}")
        self.limit = limit
        self.left = limit
        self.over = False

    def take(self, text: str) -> bool:
        """Whether ``text`` fits (and is now counted)."""
        if self.over or len(text) > self.left:
            self.over = True
            return False
        self.left -= len(text)
        return True

    def reset(self) -> None:
        self.left, self.over = self.limit, False


def too_long(written: str, filled: str, limit: int) -> str:
    reference = clip(written)
    return (
        f"filling in the references of these arguments would pass {limit:,} characters "
        f"({reference} is {len(filled):,} characters here): pass a variable as a whole "
        f'argument value ("{reference}") or a part of it, rather than repeating it inside text'
    )


def left_as_written(limit: int) -> str:
    return (
        f"\n\n[Some $references were left as written: filling them in would have added "
        f"more than {limit:,} characters.]"
    )
