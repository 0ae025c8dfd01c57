"""Finding references in text: one left-to-right state machine, in linear time.

Every resolving function (a call's arguments, the model's answer, a stream of it) runs
this scanner, which hands each complete reference as written to a ``replace`` function
and passes everything else through.

Linear time
-----------
One left-to-right state machine (:class:`Scanner`) does all scanning. Plain text is
skipped with ``str.find``; names, fields and indexes are consumed with anchored
single-character-class runs (``[A-Za-z0-9_]*``, ``[0-9]*``) that cannot backtrack. Each
input character enters the machine once; a candidate reference is buffered as a list of
pieces and joined once when it ends, then parsed once more (anchored patterns whose only
backtracking is giving back one run a character at a time before one failing
comparison). In text the candidate is bounded (``max_pending``, 256 by default): one
longer is written as it is, and the rest of it is passed straight through. The scanner
counts the characters it touches (``work``) so the tests can check linearity without a
clock.

>>> out: list[str] = []
>>> scanner = Scanner(str.upper, None)
>>> scanner.scan("US$x costs $$5, $w.temp[0].", out)
>>> scanner.finish(out)
>>> "".join(out)
'US$x costs $5, $W.TEMP[0].'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from toolchain.variables._syntax import DIGITS, NAME_START, WORD

__all__ = ["Scanner"]

_WORD_RUN: Final = re.compile(r"[A-Za-z0-9_]*")
_DIGIT_RUN: Final = re.compile(r"[0-9]*")

# States of the scanner. A "candidate" is a possible reference, from its "$" on.
_TEXT: Final = 0  # plain text
_DOLLAR: Final = 1  # just after a "$": an escape, a reference, or a lone "$"
_WORD_RUN_STATE: Final = 2  # in a name or field
_END: Final = 3  # after a complete name, field or index: "." or "[" may continue it
_DOT: Final = 4  # after "."; a name start makes a field, anything else ends the candidate
_BRACKET: Final = 5  # after "["
_MINUS: Final = 6  # after "[-"
_INDEX_STATE: Final = 7  # in the digits of an index


def _run_end(run: re.Pattern[str], text: str, position: int) -> int:
    """Where a run of one character class starting at ``position`` ends."""
    match = run.match(text, position)
    return position if match is None else match.end()


class Scanner:
    """The state machine behind every resolving function (see the module docstring).

    ``scan`` may be called with any split of the input; the output, in order, is the same
    for every split. ``replace`` maps a complete reference as written (``$w.temp``) to
    its replacement text; it may raise.
    """

    __slots__ = (
        "_after_word",
        "_complete",
        "_eligible",
        "_last",
        "_length",
        "_max_pending",
        "_overlong",
        "_pending",
        "_replace",
        "_state",
        "work",
    )

    def __init__(self, replace: Callable[[str], str], max_pending: int | None) -> None:
        self._replace = replace
        self._max_pending = max_pending
        self._state = _TEXT
        self._after_word = False  # the last character was a literal [A-Za-z0-9_]
        self._eligible = False  # in _DOLLAR: this "$" may start a reference
        self._pending: list[str] = []  # the candidate, held back
        self._length = 0  # characters in the candidate
        self._complete = 0  # how many of them form a complete reference
        self._last = ""  # the candidate's last character
        self._overlong = False  # the candidate outgrew max_pending: passed through as is
        self.work = 0  # characters touched: a deterministic measure of running time

    @property
    def held(self) -> int:
        """How many characters are held back."""
        if self._state == _DOLLAR:
            return 1
        return 0 if self._overlong else self._length

    def scan(self, chunk: str, out: list[str]) -> None:
        position, end = 0, len(chunk)
        while position < end:
            state = self._state
            if state == _TEXT:
                dollar = chunk.find("$", position)
                stop = end if dollar < 0 else dollar
                if stop > position:
                    out.append(chunk[position:stop])
                    self._after_word = chunk[stop - 1] in WORD
                    self.work += stop - position
                if dollar < 0:
                    return
                self._eligible = not self._after_word
                self._state = _DOLLAR
                self.work += 1
                position = dollar + 1
                continue
            char = chunk[position]
            self.work += 1
            if state == _DOLLAR:
                if char == "$":
                    out.append("$")
                    self._state, self._after_word = _TEXT, False
                    position += 1
                elif self._eligible and char in NAME_START:
                    self._pending.append("$")
                    self._length, self._complete, self._last = 1, 0, "$"
                    self._state = _WORD_RUN_STATE
                else:  # a lone "$"; the character is read again as text
                    out.append("$")
                    self._state, self._after_word = _TEXT, False
            elif state == _WORD_RUN_STATE:
                stop = _run_end(_WORD_RUN, chunk, position)
                if stop > position:
                    self._take(chunk[position:stop], out, complete=True)
                    position = stop
                if position < end:
                    self._state = _END
            elif state == _END:
                if char == ".":
                    self._take(".", out, complete=False)
                    self._state = _DOT
                    position += 1
                elif char == "[":
                    self._take("[", out, complete=False)
                    self._state = _BRACKET
                    position += 1
                else:
                    self._end(out)
            elif state == _DOT:
                if char in NAME_START:
                    self._state = _WORD_RUN_STATE
                else:
                    self._end(out)
            elif state in (_BRACKET, _MINUS):
                if char in DIGITS:
                    self._state = _INDEX_STATE
                elif char == "-" and state == _BRACKET:
                    self._take("-", out, complete=False)
                    self._state = _MINUS
                    position += 1
                else:
                    self._end(out)
            else:  # _INDEX_STATE
                stop = _run_end(_DIGIT_RUN, chunk, position)
                if stop > position:
                    self._take(chunk[position:stop], out, complete=False)
                    position = stop
                if position < end:
                    if chunk[position] == "]":
                        self._take("]", out, complete=True)
                        self._state = _END
                        position += 1
                    else:
                        self._end(out)

    def finish(self, out: list[str]) -> None:
        """The input is over: what is held back is resolved or written as it is."""
        if self._state == _DOLLAR:
            out.append("$")
        elif self._state != _TEXT:
            self._end(out)
        self._state, self._after_word = _TEXT, False

    def _take(self, piece: str, out: list[str], *, complete: bool) -> None:
        """Adds ``piece`` to the candidate; ``complete`` when it ends a name, field or index."""
        self.work += len(piece)
        self._length += len(piece)
        self._last = piece[-1]
        if complete:
            self._complete = self._length
        if self._overlong:
            out.append(piece)
        elif self._max_pending is not None and self._length > self._max_pending:
            self._pending.append(piece)
            out.append("".join(self._pending))
            self.work += self._length
            self._pending.clear()
            self._overlong = True
        else:
            self._pending.append(piece)

    def _end(self, out: list[str]) -> None:
        """The candidate ends before the current character, which is read again as text.

        Its complete part is the reference; an unfinished tail (``.``, ``[``, ``[-12``)
        is text.
        """
        if not self._overlong:
            written = "".join(self._pending)
            self.work += len(written)
            out.append(self._replace(written[: self._complete]))
            if self._complete < len(written):
                out.append(written[self._complete :])
        self._after_word = self._length > self._complete and self._last in WORD
        self._pending.clear()
        self._length = self._complete = 0
        self._overlong = False
        self._state = _TEXT
