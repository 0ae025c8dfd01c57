"""The YAML of simple tool outputs, written directly: the same text PyYAML writes.

``to_yaml`` sends every output through ``yaml.dump``, whose representer and emitter
cost tens of microseconds even for ``{"key": "alpha", "value": 5}``: most of a native
step's own time. Outputs made of dicts with string keys, lists, ints, floats, bools,
None and short one-line strings PyYAML writes plain are laid out here by the rules
PyYAML's block emitter follows (two-space indent, a list under a key not indented);
anything else (a string PyYAML would quote, a long or multi-line one, deep nesting)
returns None and takes the ``yaml.dump`` path. Whether PyYAML writes a string plain is
asked of PyYAML itself, once per string, unless it is obviously plain (a word-like
string that is not a YAML boolean or null). A property test holds the two paths to
the same text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import cast

__all__ = ["simple_yaml"]

MAX_DEPTH = 20
MAX_TEXT = 100  # longer strings go through yaml.dump (and long keys are written "? key")
_CACHE_SIZE = 4096

# Letters, digits and "_", runs joined by one of " ._/-": PyYAML writes these plain
# unless the whole string is one of the words its resolver reads as a bool or null.
_WORDLIKE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[ ._/-][A-Za-z0-9_]+)*")
_RESOLVED_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


class _Plain:
    """Whether PyYAML writes a string as a plain scalar, remembered per string."""

    def __init__(self, asked: Callable[[str], bool]) -> None:
        self._asked = asked
        self._known: dict[str, bool] = {}

    def __call__(self, text: str) -> bool:
        if len(text) > MAX_TEXT:
            return False
        if _WORDLIKE.fullmatch(text) is not None and text.lower() not in _RESOLVED_WORDS:
            return True
        known = self._known.get(text)
        if known is None:
            known = self._asked(text)
            if len(self._known) >= _CACHE_SIZE:
                self._known.clear()
            self._known[text] = known
        return known


def _float(value: float) -> str | None:
    """PyYAML's text for a float (``represent_float``); None for nan and infinities."""
    if not math.isfinite(value):
        return None
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


class _Writer:
    __slots__ = ("_plain",)

    def __init__(self, plain: Callable[[str], bool]) -> None:
        self._plain = plain

    def scalar(self, value: object) -> str | None:
        """The one-line text of a scalar or an empty collection; None if not simple."""
        kind = type(value)
        if kind is str:
            text = cast(str, value)  # kind is str exactly
            return text if self._plain(text) else None
        if kind is int:
            number = cast(int, value)  # kind is int exactly (a bool is not)
            return str(number) if -(10**18) < number < 10**18 else None
        if kind is bool:
            return "true" if value else "false"
        if value is None:
            return "null"
        if kind is float:
            return _float(cast(float, value))
        if kind is dict and not value:
            return "{}"
        if kind is list and not value:
            return "[]"
        return None

    def block(self, value: object, depth: int, lines: list[str]) -> bool:
        """Append the lines of a non-empty dict or list; False if not simple."""
        if depth > MAX_DEPTH:
            return False
        if type(value) is dict:
            mapping = cast("dict[object, object]", value)
            for key, item in mapping.items():
                if type(key) is not str or not key:
                    return False
                name = self.scalar(key)
                if name is None:
                    return False
                text = self.scalar(item)
                if text is not None:
                    lines.append(f"{name}: {text}")
                    continue
                inner: list[str] = []
                if not self.block(item, depth + 1, inner):
                    return False
                lines.append(f"{name}:")
                if type(item) is dict:
                    lines.extend(f"  {line}" for line in inner)
                else:  # a list under a key is not indented
                    lines.extend(inner)
            return True
        if type(value) is list:
            sequence = cast("list[object]", value)
            for item in sequence:
                text = self.scalar(item)
                if text is not None:
                    lines.append(f"- {text}")
                    continue
                inner = []
                if not self.block(item, depth + 1, inner):
                    return False
                lines.append(f"- {inner[0]}")
                lines.extend(f"  {line}" for line in inner[1:])
            return True
        return False


def simple_yaml(data: object, plain: Callable[[str], bool]) -> str | None:
    """``data`` (JSON-like builtins, not a str) as ``to_yaml`` writes it, or None.

    ``plain(text)`` says whether PyYAML writes ``text`` as a plain scalar.
    """
    writer = _Writer(plain)
    text = writer.scalar(data)
    if text is not None:
        return text
    lines: list[str] = []
    return "\n".join(lines) if writer.block(data, 0, lines) else None


def plain_cache(asked: Callable[[str], bool]) -> Callable[[str], bool]:
    """A remembering ``plain`` for `simple_yaml`, asking ``asked`` once per string."""
    return _Plain(asked)
