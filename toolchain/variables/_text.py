"""Resolving references in the model's answer, whole or streamed: nothing fails there.

In the model's answer, what resolves is filled in (strings as they are, other values as
compact JSON) and what does not (an unknown name, a path that does not resolve, a
reference past the bound on expansion) is left as written. A stream gives exactly the
result of the whole text, whatever its split.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from toolchain._errors import ToolchainValueError
from toolchain.stores._strings import any_string
from toolchain.variables._expansion import MAX_EXPANSION, Budget, as_text, left_as_written
from toolchain.variables._scanner import Scanner
from toolchain.variables._syntax import Variables, parse, walk

__all__ = ["MAX_PENDING", "StreamResolver", "has_references", "resolve_text"]

MAX_PENDING: Final = 256
"""Default bound on a reference in text: what a stream may hold back."""


def _text_replacer(variables: Variables, budget: Budget) -> Callable[[str], str]:
    """References in the model's answer: what resolves (and fits) is replaced, the rest
    is kept."""

    def replace(written: str) -> str:
        if budget.over:
            return written
        parsed = parse(written)
        if parsed is None or parsed[0] not in variables:
            return written
        value, failed = walk(variables[parsed[0]], parsed[1])
        if failed is not None:
            return written
        filled = as_text(value)
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
    budget = Budget(max_expansion)
    scanner = Scanner(_text_replacer(variables, budget), max_pending)
    scanner.scan(text, out)
    scanner.finish(out)
    if budget.over:
        out.append(left_as_written(max_expansion))
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
        found = found or parse(written) is not None
        return written

    scanner = Scanner(note, None)
    scanner.scan(text, [])
    scanner.finish([])
    return found


def _check_max_pending(max_pending: int) -> int:
    if max_pending < 1:
        raise ToolchainValueError(f"max_pending must be at least 1, not {max_pending}")
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
        self._budget = Budget(max_expansion)
        self._scanner = Scanner(_text_replacer(variables, self._budget), max_pending)

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
            out.append(left_as_written(self._budget.limit))
        self._budget.reset()
        return "".join(out)
