"""A lenient reader of argument values: JSON, Python literals and Gemma's syntax.

Models write arguments in the syntax of whatever they were trained on: Python
(``'single'``, ``True``, ``None``, tuples, ``1_000``), Gemma (``<|"|>`` or FunctionGemma's
``<escape>`` around raw strings, bare keys, commas sometimes left out) or JSON with
``/* comments */``. One hand-written scanner reads them all in one left-to
-right pass: strings are skipped with ``str.find`` and nesting is capped, so hostile
text costs linear time and never recursion errors.

Values that parse but cannot be JSON (``b'bytes'``, ``1e999``) are skipped over and
recorded in ``problems``, so the caller can reject that one call and read on.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from toolchain._errors import ToolchainError
from toolchain._input import unfit_number

__all__ = ["LiteralError", "LiteralReader", "Syntax", "closing_quote", "unescape"]

_GEMMA_QUOTE = '<|"|>'
# What may follow the end of a value: a separator, a closer, or the end of the text.
_AFTER_VALUE = re.compile(r"[ \t\r\n]*(?:[,)\]}:]|\Z)")
_MAX_DEPTH = 64
# Runs of one character class, anchored where they are used: the backtracking engine has
# nothing to retry in them, so they stay linear.
_IDENT = re.compile(r"[^\W\d][\w\-]*")
_NUMBER = re.compile(r"[-+]?[0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9_]+)?")
# A number written with digits other than ASCII (Arabic-Indic, fullwidth …): read whole
# to be refused, as ``int()`` would read it.
_FOREIGN_NUMBER = re.compile(r"[-+]?[\d_]*\.?[\d_]*(?:[eE][-+]?[\d_]+)?")
_NOT_NUMBERS = ("inf", "nan", "Infinity", "NaN")
_KEYWORDS: dict[str, object] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "0": "\0",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "/": "/",
    "\n": "",
}


class LiteralError(ToolchainError, ValueError):
    """Not a readable value. ``at_end``: the text ran out (more may make it readable)."""

    def __init__(self, message: str, position: int, at_end: bool = False) -> None:
        super().__init__(message)
        self.position = position
        self.at_end = at_end


@dataclass(frozen=True, slots=True)
class Syntax:
    """Which leniencies a format allows beyond JSON and Python literals.

    ``loose_quotes``: a quote that cannot end the string (what follows it cannot follow
    a value) is part of it, as LFM2's template writes ``'it's'`` unescaped. Only for
    text already cut to one block: the search for the real end stops at the block's end.
    """

    bare_keys: bool = False  # {a: 1} (Gemma)
    comments: bool = False  # /* … */ and // … (JSON written by hand)
    raw_quotes: tuple[str, ...] = (_GEMMA_QUOTE,)  # delimiters of strings taken as written
    optional_commas: bool = False  # {a:1 b:2} (FunctionGemma as vLLM reads it)
    loose_quotes: bool = False
    stops: tuple[str, ...] = ()  # markers no string may hold: they open the next call


class LiteralReader:
    """Reads one value at a position; ``problems`` lists values that are not JSON."""

    __slots__ = ("problems", "syntax", "text")

    def __init__(self, text: str, syntax: Syntax = Syntax()) -> None:
        self.text = text
        self.syntax = syntax
        self.problems: list[str] = []

    def value(self, at: int, depth: int = 0) -> tuple[object, int]:
        """The value starting at ``at`` (after whitespace) and the index after it."""
        text = self.text
        at = self.ws(at)
        if at >= len(text):
            raise LiteralError("a value was expected", at, at_end=True)
        if depth > _MAX_DEPTH:
            raise LiteralError("values are nested too deeply", at)
        first = text[at]
        if first == "{":
            return self.mapping(at, depth)
        if first in "[(":
            return self.sequence(at, depth)
        if first in "\"'":
            return self.string(at)
        for quote in self.syntax.raw_quotes:
            if len(text) - at < len(quote) and quote.startswith(text[at:]):
                raise LiteralError("a value was expected", at, at_end=True)
            if text.startswith(quote, at):
                close = text.find(quote, at + len(quote))
                self._no_stop(at, close)
                if close < 0:
                    raise LiteralError(f"a {quote} string is not closed", at, at_end=True)
                return text[at + len(quote) : close], close + len(quote)
        if first in "bB" and text[at + 1 : at + 2] in ("'", '"'):
            _, end = self.string(at + 1)
            self.problems.append("a bytes value is not JSON")
            return None, end
        if first in "+-":
            signed = _IDENT.match(text, at + 1)
            if signed is not None and signed.group() in _NOT_NUMBERS:
                self.problems.append(unfit_number(text[at : signed.end()]))
                return None, signed.end()
        word = _IDENT.match(text, at)
        if word is not None:
            name = word.group()
            if word.end() == len(text) and name not in _KEYWORDS:
                raise LiteralError("a value was expected", at, at_end=True)
            if name in _KEYWORDS:
                return _KEYWORDS[name], word.end()
            if name in _NOT_NUMBERS:
                self.problems.append(unfit_number(name))
                return None, word.end()
            raise LiteralError(f"{name!r} is not a value (strings need quotes)", at)
        return self.number(at)

    def ws(self, at: int) -> int:
        """Skip whitespace (and comments where the syntax allows them)."""
        text, n = self.text, len(self.text)
        while at < n:
            char = text[at]
            if char in " \t\r\n":
                at += 1
            elif self.syntax.comments and text.startswith("/*", at):
                close = text.find("*/", at + 2)
                if close < 0:
                    raise LiteralError("a comment is not closed", at, at_end=True)
                at = close + 2
            elif self.syntax.comments and text.startswith("//", at):
                newline = text.find("\n", at)
                at = n if newline < 0 else newline + 1
            else:
                break
        return at

    def mapping(self, at: int, depth: int) -> tuple[dict[str, object], int]:
        text = self.text
        result: dict[str, object] = {}
        at = self.ws(at + 1)
        while True:
            if at >= len(text):
                raise LiteralError("an object is not closed", at, at_end=True)
            if text[at] == "}":
                return result, at + 1
            key, at = self.key(at)
            at = self.ws(at)
            if at >= len(text):
                raise LiteralError("':' was expected", at, at_end=True)
            if text[at] not in ":=":
                raise LiteralError("':' was expected after a key", at)
            known = len(self.problems)
            value, at = self.value(at + 1, depth + 1)
            result[key] = value
            self.within(key, known)
            at = self.ws(at)
            if at < len(text) and text[at] == ",":
                at = self.ws(at + 1)
            elif at < len(text) and text[at] != "}" and not self._key_follows(at):
                raise LiteralError("',' or '}' was expected", at)

    def within(self, key: str, known: int) -> None:
        """Name ``key`` in the problems found since there were ``known`` of them: they
        are in its value (``amount: must be a finite number …``)."""
        for index in range(known, len(self.problems)):
            self.problems[index] = f"{key}: {self.problems[index]}"

    def _key_follows(self, at: int) -> bool:
        """Whether a bare key starts at ``at`` where a comma was left out."""
        return self.syntax.optional_commas and _IDENT.match(self.text, at) is not None

    def key(self, at: int) -> tuple[str, int]:
        text = self.text
        if text[at] in "\"'" or any(text.startswith(q, at) for q in self.syntax.raw_quotes):
            key, end = self.value(at)
            return str(key), end
        if self.syntax.bare_keys:
            word = _IDENT.match(text, at)
            if word is not None:
                return word.group(), word.end()
        number = _NUMBER.match(text, at)
        if number is not None and number.end() > at:  # Python allows {1: …}; JSON keys are text
            return number.group(), number.end()
        raise LiteralError("a key was expected", at)

    def sequence(self, at: int, depth: int) -> tuple[list[object], int]:
        text = self.text
        close = "]" if text[at] == "[" else ")"
        items: list[object] = []
        at = self.ws(at + 1)
        while True:
            if at >= len(text):
                raise LiteralError("a list is not closed", at, at_end=True)
            if text[at] == close:
                return items, at + 1
            item, at = self.value(at, depth + 1)
            items.append(item)
            at = self.ws(at)
            if at < len(text) and text[at] == ",":
                at = self.ws(at + 1)
            elif at < len(text) and text[at] != close:
                raise LiteralError(f"',' or '{close}' was expected", at)

    def string(self, at: int) -> tuple[str, int]:
        """A quoted string (either quote, triple quotes too) with its escapes resolved."""
        text = self.text
        quote = text[at]
        if len(text) - at < 3 and (quote * 3).startswith(text[at:]):
            raise LiteralError("a string is not closed", at, at_end=True)
        if text.startswith(quote * 3, at):
            close = text.find(quote * 3, at + 3)
            if close < 0:
                raise LiteralError("a string is not closed", at, at_end=True)
            return unescape(text[at + 3 : close]), close + 3
        close = closing_quote(text, at)
        self._no_stop(at, close)
        if close < 0:
            raise LiteralError("a string is not closed", at, at_end=True)
        if self.syntax.loose_quotes:
            close = self._loose_close(at, close)
        return unescape(text[at + 1 : close]), close + 1

    def _no_stop(self, at: int, close: int) -> None:
        """A string (from ``at`` to ``close``, or on to the end) must not run into the
        next call: it is broken where a stop marker shows, whatever follows."""
        for stop in self.syntax.stops:
            found = self.text.find(stop, at, close if close >= 0 else len(self.text))
            if found >= 0:
                raise LiteralError(f"a string runs into {stop}", found)

    def _loose_close(self, at: int, close: int) -> int:
        """The first quote from ``close`` on that a value may end with; ``close`` if none.
        Each quote is looked at once per string, and strings do not overlap: linear."""
        text = self.text
        candidate = close
        while candidate >= 0:
            if _AFTER_VALUE.match(text, candidate + 1):
                return candidate
            candidate = closing_quote(text, candidate)
        return close

    def number(self, at: int) -> tuple[int | float, int]:
        text = self.text
        found = _NUMBER.match(text, at)
        raw = found.group() if found is not None else ""
        digits = raw.replace("_", "")
        if not any(char.isdigit() for char in digits):
            foreign = _FOREIGN_NUMBER.match(text, at)
            if foreign is not None and any(char.isdigit() for char in foreign.group()):
                end = foreign.end()
                if end >= len(text):  # more digits may be on their way
                    raise LiteralError("a value was expected", at, at_end=True)
                self.problems.append(unfit_number(repr(foreign.group())))
                return 0, end
            at_end = at + len(raw) >= len(text)
            raise LiteralError("a value was expected", at, at_end=at_end)
        end = at + len(raw)
        rest = text[end:]
        if rest and len(rest) <= 2 and all(c in "eE+-._" for c in rest):
            raise LiteralError(f"{raw + rest!r} is not a number", at, at_end=True)  # `1e` …
        try:
            if digits.lstrip("+-").isdigit():
                return int(digits), end
            value = float(digits)
        except ValueError as error:  # 5000 digits, '1.2.3', or `1e` still being written
            raise LiteralError(f"{raw!r} is not a number", at, end >= len(text)) from error
        if not math.isfinite(value):
            self.problems.append(unfit_number(raw))
        return value, end


def closing_quote(text: str, opening: int) -> int:
    """The index of the unescaped quote closing the string opened at ``opening``, or -1."""
    quote = text[opening]
    cursor = opening + 1
    while True:
        close = text.find(quote, cursor)
        if close < 0:
            return -1
        backslashes = 0
        while text[close - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return close
        cursor = close + 1


def unescape(body: str) -> str:
    """Resolve backslash escapes (JSON's and Python's); unknown ones stay as written."""
    if "\\" not in body:
        return body
    out: list[str] = []
    cursor = 0
    n = len(body)
    while True:
        slash = body.find("\\", cursor)
        if slash < 0 or slash == n - 1:
            out.append(body[cursor:])
            return "".join(out)
        out.append(body[cursor:slash])
        char = body[slash + 1]
        width = {"u": 4, "x": 2, "U": 8}.get(char, 0)
        if width:
            digits = body[slash + 2 : slash + 2 + width]
            if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
                code = int(digits, 16)
                if char == "u" and 0xD800 <= code < 0xDC00:
                    low = body[slash + 6 : slash + 12]
                    if low.startswith("\\u") and _is_low_surrogate(low[2:]):
                        code = 0x10000 + ((code - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00)
                        width += 6
                out.append(chr(code) if code <= 0x10FFFF else body[slash : slash + 2 + width])
                cursor = slash + 2 + width
                continue
        replaced = _ESCAPES.get(char)
        out.append(replaced if replaced is not None else body[slash : slash + 2])
        cursor = slash + 2


def _is_low_surrogate(digits: str) -> bool:
    try:
        return 0xDC00 <= int(digits, 16) < 0xE000 and len(digits) == 4
    except ValueError:
        return False
