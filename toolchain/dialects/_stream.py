"""The public entry points: ``parse`` (one text) and ``DialectStream`` (chunks)."""

from __future__ import annotations

from collections.abc import Iterable

from toolchain._errors import ToolchainStateError
from toolchain._result import ToolCall
from toolchain.dialects._assemble import assemble, settled_calls
from toolchain.dialects._catalog import Catalog, ToolSpec
from toolchain.dialects._engine import Engine
from toolchain.dialects._registry import openers_for
from toolchain.dialects._result import DialectParse, DialectPolicy

__all__ = ["DialectStream", "parse"]

_DEFAULT = DialectPolicy()


class DialectStream:
    """Reads a model's output as it streams: ``feed`` chunks, ``finish`` at the end.

    ``feed`` returns the calls that became certain with that chunk: a call in explicit
    markup as soon as its block closes; calls read from unmarked text (bare JSON, a
    Python-style list, ReAct labels) only at ``finish``, because what follows can still
    change their meaning. The calls ``feed`` returned are always the first calls of
    ``finish()``'s result, which is exactly ``parse`` of the whole text, whatever the
    chunking. Time is linear in the text's length.

    >>> stream = DialectStream()
    >>> stream.feed('Let me look.<tool_call>{"name": "search", "argu')
    ()
    >>> [call.name for call in stream.feed('ments": {"q": "cats"}}</tool_call>')]
    ['search']
    >>> stream.finish().content
    'Let me look.'
    """

    __slots__ = ("_catalog", "_emitted", "_engine", "_policy", "_result", "_settled")

    def __init__(
        self, tools: Iterable[ToolSpec] | None = None, *, policy: DialectPolicy = _DEFAULT
    ) -> None:
        self._catalog = Catalog(tools)
        self._policy = policy
        self._engine = Engine(self._catalog, openers_for(policy.families), policy.max_chars)
        self._settled = 0  # pieces already searched for settled calls
        self._emitted: list[ToolCall] = []
        self._result: DialectParse | None = None

    def feed(self, chunk: str) -> tuple[ToolCall, ...]:
        """Add text; returns the calls that became certain (often none)."""
        if self._result is not None:
            raise ToolchainStateError("feed() after finish(): start a new DialectStream")
        self._engine.feed(chunk)
        calls, self._settled = settled_calls(
            self._engine.pieces, self._settled, self._catalog, self._policy
        )
        valid = tuple(call for call in calls if call.rejected is None)
        self._emitted.extend(valid)
        return valid

    def finish(self) -> DialectParse:
        """The whole output read; later calls return the same result."""
        if self._result is None:
            self._engine.finish()
            self._result = assemble(
                self._engine.pieces, self._catalog, self._policy, self._engine.truncated
            )
        return self._result

    @property
    def emitted(self) -> tuple[ToolCall, ...]:
        """The calls ``feed`` has returned so far."""
        return tuple(self._emitted)


def parse(
    text: str, tools: Iterable[ToolSpec] | None = None, *, policy: DialectPolicy = _DEFAULT
) -> DialectParse:
    """Read the tool calls in a model's output, whatever native format it wrote them in.

    ``tools`` (names, ``Tool`` objects or function specs) type text arguments by their
    schemas and decide, with ``policy.unknown_tools``, what a call to a tool that is not
    offered means. Never raises on any text: problems are in ``error``.

    >>> result = parse("[get_weather(city='Paris', days=2)]")
    >>> result.format, result.calls[0].name, dict(result.calls[0].args)
    ('pythonic', 'get_weather', {'city': 'Paris', 'days': 2})
    >>> parse("Thought: easy.\\nFinal Answer: 42").answer
    '42'
    """
    stream = DialectStream(tools, policy=policy)
    stream.feed(text)
    return stream.finish()
