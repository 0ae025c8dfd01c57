"""Resolving ``$name.field[0]`` references to saved tool outputs: the pure core.

No I/O and no asyncio: the ``ToolVariables`` extension saves tool outputs as plain
JSON-like builtins (``msgspec.to_builtins``) and calls these functions on a call's
arguments (:func:`resolve_arguments`) and on the model's answer, whole
(:func:`resolve_text`) or streamed (:class:`StreamResolver`).

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

Where each rule applies
-----------------------
* An argument string that is exactly one reference becomes the value itself, keeping its
  type (a dict reaches a pydantic field as a dict; the very object, not a copy). An unknown
  name or a path that does not resolve is the call's error (:class:`ReferenceProblem`),
  naming the available variables or fields, so the model can correct itself.
* References inside longer argument text are interpolated: strings as they are, other
  values as compact JSON. An unknown name is left as written (``echo $HOME``, ``costs
  $USD``: not every ``$word`` is meant as a variable), but a *known* variable whose path
  does not resolve is an error, because the model clearly meant the variable and the tool
  would otherwise receive ``$weather_nyc.temprature`` verbatim.
* In the model's answer nothing can fail: what does not resolve is left as written.
* Values substituted are never resolved again, so a variable holding ``"$a"`` (even
  ``$a`` itself) is harmless: no cycles. Dict keys are never resolved.
* What interpolation fills in is bounded (``max_expansion`` characters, 16,000,000 by
  default, for one call's arguments or one answer): ``"$big " * 5000`` cannot ask for
  gigabytes. In arguments, passing the bound is the call's error (:class:`ReferenceProblem`,
  saying to pass the variable whole instead); in an answer, references past it are left as
  written and a note at the end says so. A whole-string reference costs nothing: it is
  the value itself, not a copy.
* A variable that is gone (dropped by the bounds of a conversation, or expired from the
  store) is an error wherever the arguments name it, saying why (``gone``).

Linear time
-----------
One left-to-right state machine (:class:`_Scanner`) does all scanning. Plain text is
skipped with ``str.find``; names, fields and indexes are consumed with anchored
single-character-class runs (``[A-Za-z0-9_]*``, ``[0-9]*``) that cannot backtrack. Each
input character enters the machine once; a candidate reference is buffered as a list of
pieces and joined once when it ends, then parsed once more (anchored patterns whose only
backtracking is giving back one run a character at a time before one failing
comparison). In text the candidate is bounded (``max_pending``, 256 by default): one
longer is written as it is, and the rest of it is passed straight through. The scanner
counts the characters it touches (``work``) so the tests can check linearity without a
clock.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Final, TypeAlias, cast

import msgspec

from toolchain.stores._strings import SCALAR_TYPES, any_string

__all__ = [
    "MAX_EXPANSION",
    "MAX_PENDING",
    "ReferenceProblem",
    "StreamResolver",
    "Variables",
    "describe_fields",
    "has_references",
    "resolve_arguments",
    "resolve_text",
]

Variables: TypeAlias = Mapping[str, object]
"""Saved tool outputs by name (without the ``$``): plain JSON-like builtins."""

MAX_PENDING: Final = 256
"""Default bound on a reference in text: what a stream may hold back."""

MAX_EXPANSION: Final = 16_000_000
"""Default bound on what interpolation fills in: characters, for one call's arguments or
one answer."""

_NAME_START: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS: Final = frozenset("0123456789")
_WORD: Final = _NAME_START | _DIGITS

_WORD_RUN: Final = re.compile(r"[A-Za-z0-9_]*")
_DIGIT_RUN: Final = re.compile(r"[0-9]*")
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX: Final = re.compile(r"\[-?[0-9]+\]")

# An index with more digits than this is out of range of any list (and ``int()`` of a
# very long digit string is slow, and refused past 4300 digits).
_MAX_INDEX_DIGITS: Final = 18

# Bounds on error messages: what they list and how much of any one name they quote.
_MAX_LISTED: Final = 10
_MAX_NAMES_LISTED: Final = 20
_CLIP: Final = 60
_MAX_SUGGESTION_CANDIDATES: Final = 1000
_MAX_SUGGESTION_CHARS: Final = 64


class ReferenceProblem(ValueError):
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


# --- the syntax ---------------------------------------------------------------------

# A path segment as written: ".field" or "[index]".
_Segment: TypeAlias = str


def _parse(text: str) -> tuple[str, list[_Segment]] | None:
    """The name and path segments when ``text`` is exactly one reference, else None."""
    if len(text) < 2 or text[0] != "$":
        return None
    match = _IDENT.match(text, 1)
    if match is None:
        return None
    name = match.group()
    segments: list[_Segment] = []
    position, end = match.end(), len(text)
    while position < end:
        char = text[position]
        if char == ".":
            match = _IDENT.match(text, position + 1)
        elif char == "[":
            match = _INDEX.match(text, position)
        else:
            return None
        if match is None:
            return None
        segments.append(text[position : match.end()])
        position = match.end()
    return name, segments


def _fields(value: object) -> Mapping[object, object] | None:
    """``value`` as an object whose fields a path can reach, if it is one."""
    return cast("Mapping[object, object]", value) if isinstance(value, Mapping) else None


def _items(value: object) -> Sequence[object] | None:
    """``value`` as a list a path can index, if it is one (a string is not)."""
    return cast("Sequence[object]", value) if isinstance(value, list | tuple) else None


def _walk(value: object, segments: list[_Segment]) -> tuple[object, int | None]:
    """Follows ``segments`` from ``value``: (the value reached, None), or (the last value
    reached, the position of the segment that does not apply to it)."""
    for position, segment in enumerate(segments):
        if segment[0] == ".":
            fields = _fields(value)
            key = segment[1:]
            if fields is None or key not in fields:
                return value, position
            value = fields[key]
        else:
            items = _items(value)
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


# --- messages -------------------------------------------------------------------------


def _clip(text: str, limit: int = _CLIP) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _kind(value: object) -> str:
    fields, items = _fields(value), _items(value)
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
    fields = _fields(value)
    if not fields:
        return _kind(value)
    shown = [_clip(str(key), 40) for key in islice(fields, limit)]
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


def _unknown_name(name: str, variables: Variables) -> str:
    problem = f"unknown variable ${_clip(name)}"
    if not variables:
        return problem + "; no variables are saved yet"
    shown = ", ".join("$" + _clip(known) for known in islice(variables, _MAX_NAMES_LISTED))
    more = len(variables) - _MAX_NAMES_LISTED
    available = shown + (f", … ({more} more)" if more > 0 else "")
    close = _suggest(name, variables)
    if close is not None:
        return f"{problem}; did you mean ${close}? Available: {available}"
    return f"{problem}; available: {available}"


def _bad_path(name: str, segments: list[_Segment], failed: int, value: object) -> str:
    where = _clip("$" + name + "".join(segments[:failed]), 2 * _CLIP)
    segment = segments[failed]
    fields, items = _fields(value), _items(value)
    if segment[0] == "[":
        index = _clip(segment[1:-1])
        if items is not None:
            return f"index {index} out of range: {where} has {_count(len(items))}"
        if fields:
            listed = describe_fields(fields)
            return f"{where} has no index [{index}]; it is an object, its fields: {listed}"
        return f"{where} has no index [{index}]; it is {_kind(value)}"
    field = segment[1:]
    problem = f"{where} has no field {_clip(field)!r}"
    if fields:
        close = _suggest(field, fields)
        hint = f"; did you mean {close!r}? Its fields: " if close else "; its fields: "
        return problem + hint + describe_fields(fields)
    if items:
        return f"{problem}; it is {_kind(value)} (use an index: {where}[0])"
    return f"{problem}; it is {_kind(value)}"


# --- values as text ---------------------------------------------------------------


def _as_text(value: object) -> str:
    """A value interpolated into text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, ValueError, RecursionError, msgspec.MsgspecError):
        return str(value)


class _Budget:
    """What interpolation may still fill in, for one call's arguments or one answer.

    Once a reference does not fit, ``over`` is set and nothing more is filled in: each
    later reference then costs no encoding, so the work stays linear.
    """

    __slots__ = ("left", "limit", "over")

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"max_expansion must be at least 0, not {limit}")
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


def _too_long(written: str, filled: str, limit: int) -> str:
    reference = _clip(written)
    return (
        f"filling in the references of these arguments would pass {limit:,} characters "
        f"({reference} is {len(filled):,} characters here): pass a variable as a whole "
        f'argument value ("{reference}") or a part of it, rather than repeating it inside text'
    )


def _left_as_written(limit: int) -> str:
    return (
        f"\n\n[Some $references were left as written: filling them in would have added "
        f"more than {limit:,} characters.]"
    )


def _gone(name: str, why: str) -> str:
    return f"variable ${_clip(name)} is no longer available: {why}"


# --- the scanner --------------------------------------------------------------------

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


class _Scanner:
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
                    self._after_word = chunk[stop - 1] in _WORD
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
                elif self._eligible and char in _NAME_START:
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
                if char in _NAME_START:
                    self._state = _WORD_RUN_STATE
                else:
                    self._end(out)
            elif state in (_BRACKET, _MINUS):
                if char in _DIGITS:
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
        self._after_word = self._length > self._complete and self._last in _WORD
        self._pending.clear()
        self._length = self._complete = 0
        self._overlong = False
        self._state = _TEXT


# --- resolving text -----------------------------------------------------------------


def _text_replacer(variables: Variables, budget: _Budget) -> Callable[[str], str]:
    """References in the model's answer: what resolves (and fits) is replaced, the rest
    is kept."""

    def replace(written: str) -> str:
        if budget.over:
            return written
        parsed = _parse(written)
        if parsed is None or parsed[0] not in variables:
            return written
        value, failed = _walk(variables[parsed[0]], parsed[1])
        if failed is not None:
            return written
        filled = _as_text(value)
        return filled if budget.take(filled) else written

    return replace


def resolve_text(
    text: str,
    variables: Variables,
    *,
    max_pending: int = MAX_PENDING,
    max_expansion: int = MAX_EXPANSION,
) -> str:
    """``text`` (the model's answer) with its references replaced; never fails.

    Known references are interpolated (strings as they are, other values as compact JSON);
    unknown names, paths that do not resolve and references longer than ``max_pending``
    characters are left as written; ``$$`` is ``$``. ``max_pending`` is the bound of
    :class:`StreamResolver`, so that streaming gives exactly this result. Once filling in
    would pass ``max_expansion`` characters, the rest of the references are left as
    written, and a note at the end says so.

    >>> saved = {"w": {"temp": 72, "days": ["mon", "tue"]}, "city": "NYC"}
    >>> resolve_text("$city: $w.temp°F, then $w.days[-1]. Not $w.wind, $HOME or $5.", saved)
    'NYC: 72°F, then tue. Not $w.wind, $HOME or $5.'
    >>> resolve_text("$$city costs $$$w.temp", saved)
    '$city costs $72'
    >>> resolve_text("$city $city $city", saved, max_expansion=7).splitlines()[0]
    'NYC NYC $city'
    """
    _check_max_pending(max_pending)
    if "$" not in text:
        return text
    out: list[str] = []
    budget = _Budget(max_expansion)
    scanner = _Scanner(_text_replacer(variables, budget), max_pending)
    scanner.scan(text, out)
    scanner.finish(out)
    if budget.over:
        out.append(_left_as_written(max_expansion))
    return "".join(out)


def has_references(value: object) -> bool:
    """Whether any string in ``value`` (nested dicts, lists, tuples; keys aside) holds a
    ``$reference`` as the resolver reads one (``$$x``, ``$5`` and ``US$x`` do not).

    >>> has_references({"a": ["$weather_nyc.temp"]}), has_references("costs $5 or $$x")
    (True, False)
    """
    return any_string(value, _holds_reference)


def _holds_reference(text: str) -> bool:
    if "$" not in text:
        return False
    found = False

    def note(written: str) -> str:
        nonlocal found
        found = found or _parse(written) is not None
        return written

    scanner = _Scanner(note, None)
    scanner.scan(text, [])
    scanner.finish([])
    return found


def _check_max_pending(max_pending: int) -> int:
    if max_pending < 1:
        raise ValueError(f"max_pending must be at least 1, not {max_pending}")
    return max_pending


class StreamResolver:
    """Resolves references in streamed text, chunk by chunk.

    :meth:`feed` returns what is safe to show now, holding back only a possible
    reference at the end (``$weather_`` waits for ``nyc``), at most ``max_pending``
    characters; a longer one is written as it is. :meth:`flush` returns the rest when the
    stream ends. Whatever the split, the concatenated output equals
    ``resolve_text(whole, variables, max_pending=max_pending)``. Variables are looked up
    when a reference completes. After :meth:`flush` the resolver can take a new stream.

    >>> stream = StreamResolver({"weather_nyc": {"temp": 72}})
    >>> [stream.feed("It is $weather_"), stream.feed("nyc.te"), stream.feed("mp°F.")]
    ['It is ', '', '72°F.']
    >>> stream.feed(" Tomorrow: $weather_nyc"), stream.held, stream.flush()
    (' Tomorrow: ', 12, '{"temp":72}')
    """

    __slots__ = ("_budget", "_scanner", "max_pending", "variables")

    def __init__(
        self,
        variables: Variables,
        *,
        max_pending: int = MAX_PENDING,
        max_expansion: int = MAX_EXPANSION,
    ) -> None:
        self.variables = variables
        self.max_pending = _check_max_pending(max_pending)
        self._budget = _Budget(max_expansion)
        self._scanner = _Scanner(_text_replacer(variables, self._budget), max_pending)

    @property
    def held(self) -> int:
        """How many characters of the input are held back, waiting for more."""
        return self._scanner.held

    def feed(self, chunk: str) -> str:
        """The text that can be shown now, given one more chunk."""
        out: list[str] = []
        self._scanner.scan(chunk, out)
        return "".join(out)

    def flush(self) -> str:
        """The held-back rest, resolved, at the end of the stream (and the note of
        ``resolve_text`` when references were left unfilled past ``max_expansion``)."""
        out: list[str] = []
        self._scanner.finish(out)
        if self._budget.over:
            out.append(_left_as_written(self._budget.limit))
        self._budget.reset()
        return "".join(out)


# --- resolving arguments ------------------------------------------------------------


class _Resolution:
    """What one call's arguments are resolved with."""

    __slots__ = ("budget", "gone", "variables")

    def __init__(self, variables: Variables, gone: Mapping[str, str], max_expansion: int) -> None:
        self.variables = variables
        self.gone = gone
        self.budget = _Budget(max_expansion)


def _resolve_string(text: str, how: _Resolution) -> object:
    """One argument string: a whole reference becomes its value, others are interpolated."""
    if "$" not in text:
        return text
    variables, gone, budget = how.variables, how.gone, how.budget
    parsed = _parse(text)
    if parsed is not None:
        name, segments = parsed
        if name not in variables:
            why = gone.get(name)
            raise ReferenceProblem(
                _unknown_name(name, variables) if why is None else _gone(name, why)
            )
        value, failed = _walk(variables[name], segments)
        if failed is not None:
            raise ReferenceProblem(_bad_path(name, segments, failed, value))
        return value

    def replace(written: str) -> str:
        parsed = _parse(written)
        if parsed is None:
            return written
        name, segments = parsed
        if name not in variables:
            why = gone.get(name)
            if why is None:
                return written
            raise ReferenceProblem(_gone(name, why))
        value, failed = _walk(variables[name], segments)
        if failed is not None:
            raise ReferenceProblem(_bad_path(name, segments, failed, value))
        filled = _as_text(value)
        if not budget.take(filled):
            raise ReferenceProblem(_too_long(written, filled, budget.limit))
        return filled

    out: list[str] = []
    scanner = _Scanner(replace, None)
    scanner.scan(text, out)
    scanner.finish(out)
    result = "".join(out)
    return text if result == text else result  # unchanged: the same object


def _location(keys: list[object]) -> str:
    parts: list[str] = []
    for key in keys:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif isinstance(key, str) and _IDENT.fullmatch(key):
            parts.append(("." if parts else "") + key)
        else:
            parts.append(f"[{_clip(repr(key))}]")
    return _clip("".join(parts), 2 * _CLIP)


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
    fields, items = _fields(value), _items(value)
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
