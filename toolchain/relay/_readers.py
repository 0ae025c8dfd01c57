"""The context relay's reader tools: what the model may look at behind a reference.

The relay keeps large tool outputs out of the conversation and shows the model a
reference in their place: ``internal://<id>`` (``opaque`` mode) or the resource link
``{"type":"resource_link","uri":"internal://<id>"}`` (``json`` mode). Other tools get
the real value (the relay unboxes their arguments); these five tools let the model
inspect a value itself, a little at a time, without reading it whole:

========================================  =============================================
``internal_resource_length``              characters and lines
``internal_resource_grep``                matching lines with context (RE2 patterns)
``internal_resource_read_lines``          a range of lines (negative: from the end)
``internal_resource_read_slice``          a range of characters (negative: from the end)
``internal_resource_read``                the whole value: the last resort
========================================  =============================================

They do not know how values are stored: they read them through a ``ReferenceReader``
(the relay's store, or a fake in tests). Every output is at most ``max_chars``
characters, with a note in brackets saying what was left out and how to read on.

Errors fail the call, in words the model can act on: a reference that is unknown,
expired, of another run or not a reference at all raises ``UnknownReference`` (a
``ToolError``, so the model sees just its message); a start at or past the end, a
length or line count below 1, a negative window, or a pattern RE2 cannot compile
raises ``ToolError`` naming the valid range or the problem. A past-the-end start is an
error rather than an empty result, so the model learns the size instead of reading
nothing. A negative start counts from the end, Python-style; one before the start of
the value is clamped to 0 (``text[-10**9:]`` is the whole text too).

>>> import asyncio
>>> from toolchain import ExecutionContext
>>> class Reader:
...     async def read(self, ctx: ExecutionContext, reference: str) -> str:
...         if reference != "internal://a1b2":
...             raise UnknownReference.of(reference)
...         return "alpha\\nbeta\\ngamma 42\\n"
>>> grep, = [t for t in reader_tools(Reader()) if t.name == "internal_resource_grep"]
>>> found = asyncio.run(grep.call(ExecutionContext(), GrepInput(
...     opaque_reference="internal://a1b2", pattern=r"\\d+", window=1)))
>>> print(found.text)
1 match (lines numbered from 0; ':' marks a matching line, '-' a context line):
1-beta
2:gamma 42
"""

from __future__ import annotations

from typing import Any, TypeVar, cast, get_args

from toolchain import ExecutionContext, Tool, ToolError, ToolResult
from toolchain._errors import ToolchainTypeError, ToolchainValueError
from toolchain.relay._grep import MAX_MATCHES, MAX_PATTERN, MAX_WINDOW, compile_pattern, grep
from toolchain.relay._inputs import GrepInput, LinesInput, ReferenceInput, SliceInput, for_mode
from toolchain.relay._references import (
    ReferenceReader,
    RelayMode,
    UnknownReference,
    clip,
    parse_reference,
)
from toolchain.relay._text import MAX_LINES, compute, fit, plural, read_lines

__all__ = [
    "DEFAULT_MAX_CHARS",
    "InternalResourceGrep",
    "InternalResourceLength",
    "InternalResourceRead",
    "InternalResourceReadLines",
    "InternalResourceReadSlice",
    "reader_tools",
]

DEFAULT_MAX_CHARS = 20_000
_MIN_MAX_CHARS = 1_000  # room for the notes

_NOUN: dict[RelayMode, str] = {
    "opaque": "an internal://<id> reference",
    "json": 'a resource link {"type":"resource_link","uri":"internal://<id>"}',
}

InputT = TypeVar("InputT", bound=ReferenceInput)


class _ReaderTool(Tool[InputT, str]):
    """What the five tools share: the reader, the mode, the output bound."""

    _description: str
    _policy: str

    def __init__(
        self,
        reader: ReferenceReader,
        *,
        mode: RelayMode = "opaque",
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        if mode not in get_args(RelayMode):
            raise ToolchainValueError(f"mode must be 'opaque' or 'json', not {mode!r}")
        if isinstance(max_chars, bool) or not isinstance(cast(object, max_chars), int):
            raise ToolchainTypeError("max_chars must be an int")
        if max_chars < _MIN_MAX_CHARS:
            raise ToolchainValueError(
                f"max_chars must be at least {_MIN_MAX_CHARS} (notes need room)"
            )
        self.reader = reader
        self.mode: RelayMode = mode
        self.max_chars = max_chars
        words = {"ref": _NOUN[mode], "max_chars": max_chars, "max_lines": MAX_LINES}
        self.description = self._description.format_map(words)
        self.policy = self._policy.format_map(words)
        self.input_type = for_mode(type(self).input_type, mode)

    async def _value(self, ctx: ExecutionContext, reference: object) -> str:
        found = parse_reference(reference)
        if found is None:
            form = "internal://<id> string" if self.mode == "opaque" else "resource link"
            raise UnknownReference(
                f"{clip(repr(reference))} is not a reference: pass the {form} a tool "
                "returned, unchanged",
                reference=clip(str(reference), 200),
            )
        return await self.reader.read(ctx, f"internal://{found}")


class InternalResourceRead(_ReaderTool[ReferenceInput]):
    """``internal_resource_read``: the whole value, cut at ``max_chars`` (last resort)."""

    name = "internal_resource_read"
    _description = "Return the whole value behind {ref} (cut at {max_chars} characters)."
    _policy = (
        "Last resort: only when you must read the entire content and "
        "internal_resource_grep, internal_resource_read_lines or "
        "internal_resource_read_slice cannot answer. Never read a value to pass it to "
        "another tool: pass the reference itself."
    )

    async def call(self, ctx: ExecutionContext, input: ReferenceInput) -> ToolResult[str]:
        text = await self._value(ctx, input.opaque_reference)
        return ToolResult(
            fit(
                text,
                self.max_chars,
                lambda kept: (
                    f"\n[cut at {kept} of {len(text)} characters; read on with "
                    f"internal_resource_read_slice from start_index {kept}, or search with "
                    "internal_resource_grep]"
                ),
            )
        )


class InternalResourceReadSlice(_ReaderTool[SliceInput]):
    """``internal_resource_read_slice``: ``length`` characters from ``start_index``.

    A negative ``start_index`` counts from the end (clamped to the start); one at or past
    the end is an error naming the value's length (an empty value reads as a note).
    """

    name = "internal_resource_read_slice"
    _description = (
        "Return `length` characters of the value behind {ref}, from `start_index` (0 is "
        "the first character; negative counts from the end: start_index -200 with "
        "length 200 is the last 200 characters)."
    )
    _policy = (
        "Use to look at one part: the beginning, the end, or the text around an index "
        "internal_resource_grep reported. At most {max_chars} characters per call."
    )

    async def call(self, ctx: ExecutionContext, input: SliceInput) -> ToolResult[str]:
        if input.length < 1:
            raise ToolError(
                f"length must be at least 1 (got {input.length}); to read the end, use a "
                "negative start_index"
            )
        text = await self._value(ctx, input.opaque_reference)
        size = len(text)
        if size == 0:
            return ToolResult("[the value is empty]")
        start = max(0, size + input.start_index) if input.start_index < 0 else input.start_index
        if start >= size:
            raise ToolError(
                f"start_index {input.start_index} is past the end: the value has {size} "
                f"characters (start_index 0 to {size - 1}, or negative from the end)"
            )
        end = min(size, start + input.length)
        piece = text[start:end]
        asked = end - start
        ended = start + input.length > size and input.start_index >= 0
        tail = f"\n[the value ends here, at {size} characters]" if ended else ""
        if len(piece) + len(tail) <= self.max_chars:
            return ToolResult(piece + tail)
        return ToolResult(
            fit(
                piece,
                self.max_chars,
                lambda kept: (
                    f"\n[cut at {kept} of the {asked} characters asked for ({self.max_chars} "
                    f"per call); continue with start_index {start + kept}]"
                ),
            )
        )


class InternalResourceLength(_ReaderTool[ReferenceInput]):
    """``internal_resource_length``: the value's size in characters and lines."""

    name = "internal_resource_length"
    _description = "Return the size of the value behind {ref}: characters and lines."
    _policy = (
        "Use to plan reads of a value you must inspect (slices, line ranges); it reads "
        "none of the content."
    )

    async def call(self, ctx: ExecutionContext, input: ReferenceInput) -> ToolResult[str]:
        text = await self._value(ctx, input.opaque_reference)
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        return ToolResult(
            f"{len(text)} {plural(len(text), 'character')}, {lines} {plural(lines, 'line')}"
        )


class InternalResourceReadLines(_ReaderTool[LinesInput]):
    """``internal_resource_read_lines``: up to ``MAX_LINES`` lines from ``start_line``.

    Lines are split at ``\\n`` (a final newline ends the last line; a trailing ``\\r``
    is dropped) and counted from 0. A negative ``start_line`` counts from the end
    (clamped to the first line); one past the last line is an error naming the count.
    A footer gives the range shown and where to read on.
    """

    name = "internal_resource_read_lines"
    _description = (
        "Return `line_count` lines of the value behind {ref}, from `start_line` (counted "
        "from 0; negative counts from the end: start_line -20 is the last 20 lines)."
    )
    _policy = (
        "Use for line-based text (transcripts, logs, code, CSV, HTML), e.g. around a line "
        "internal_resource_grep found. At most {max_lines} lines and {max_chars} "
        "characters per call."
    )

    async def call(self, ctx: ExecutionContext, input: LinesInput) -> ToolResult[str]:
        if input.line_count < 1:
            raise ToolError(f"line_count must be at least 1 (got {input.line_count})")
        text = await self._value(ctx, input.opaque_reference)
        start, count = input.start_line, input.line_count
        return ToolResult(
            await compute(text, lambda: read_lines(text, start, count, self.max_chars))
        )


class InternalResourceGrep(_ReaderTool[GrepInput]):
    """``internal_resource_grep``: lines matching an RE2 pattern, with context.

    RE2 runs in linear time (no backtracking), so no pattern can hang the run; it has
    no lookarounds or backreferences. Matches may span lines (``\\n`` in the pattern).
    Up to ``MAX_MATCHES`` matches are shown, in lines numbered from 0 like
    ``internal_resource_read_lines`` counts them; a line longer than ``LINE_CHARS`` is
    shown around each match, with the match's character index for
    ``internal_resource_read_slice``.
    """

    name = "internal_resource_grep"
    _description = (
        "Search the value behind {ref} with a regular expression; return the matching "
        "lines, numbered from 0, with `window` lines of context before and after each."
    )
    _policy = (
        "Use first to find something (a word, a number, a tag such as <img) without "
        "reading the whole value; then read around it with internal_resource_read_lines. "
        "RE2 syntax: no lookarounds or backreferences; (?i) ignores case. At most "
        f"{MAX_MATCHES} matches per call."
    )

    async def call(self, ctx: ExecutionContext, input: GrepInput) -> ToolResult[str]:
        pattern, window = input.pattern, input.window
        if not pattern:
            raise ToolError("pattern is empty: give a regular expression, e.g. <img")
        if len(pattern) > MAX_PATTERN:
            raise ToolError(
                f"pattern is too long ({len(pattern)} characters; at most {MAX_PATTERN})"
            )
        if window < 0:
            raise ToolError(f"window must be 0 or more (got {window})")
        regex = compile_pattern(pattern)
        text = await self._value(ctx, input.opaque_reference)
        window = min(window, MAX_WINDOW)
        return ToolResult(await compute(text, lambda: grep(text, regex, window, self.max_chars)))


def reader_tools(
    reader: ReferenceReader, *, mode: RelayMode = "opaque", max_chars: int = DEFAULT_MAX_CHARS
) -> list[Tool[Any, str]]:
    """The five reader tools over ``reader``, described for ``mode``, each output at most
    ``max_chars`` characters.

    >>> class Nothing:
    ...     async def read(self, ctx: ExecutionContext, reference: str) -> str:
    ...         raise UnknownReference.of(reference)
    >>> for tool in reader_tools(Nothing(), mode="json"):
    ...     print(tool.name)
    internal_resource_length
    internal_resource_grep
    internal_resource_read_lines
    internal_resource_read_slice
    internal_resource_read
    """
    kinds: list[type[_ReaderTool[Any]]] = [
        InternalResourceLength,
        InternalResourceGrep,
        InternalResourceReadLines,
        InternalResourceReadSlice,
        InternalResourceRead,
    ]
    return [kind(reader, mode=mode, max_chars=max_chars) for kind in kinds]
