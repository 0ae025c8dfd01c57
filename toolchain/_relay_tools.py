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

import bisect
import itertools
import json
import re
import string
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Protocol, TypeVar, cast, get_args

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from toolchain._context import ExecutionContext
from toolchain._errors import ToolError
from toolchain._result import ToolResult
from toolchain._tool import Tool
from toolchain._workers import run_in_worker

__all__ = [
    "DEFAULT_MAX_CHARS",
    "GrepInput",
    "InternalResourceGrep",
    "InternalResourceLength",
    "InternalResourceRead",
    "InternalResourceReadLines",
    "InternalResourceReadSlice",
    "LinesInput",
    "Reference",
    "ReferenceInput",
    "ReferenceReader",
    "RelayMode",
    "SliceInput",
    "UnknownReference",
    "parse_reference",
    "reader_tools",
    "relay_guide",
]

RelayMode = Literal["opaque", "json"]
"""How the relay shows a boxed value: ``internal://<id>``, or a ``resource_link`` JSON."""

Reference = str | dict[str, object]
"""A reference as a tool argument: a string of either form, or the resource link object."""

DEFAULT_MAX_CHARS = 20_000
MAX_LINES = 200
"""Lines ``internal_resource_read_lines`` returns at most per call."""
MAX_MATCHES = 50
"""Matches ``internal_resource_grep`` shows at most per call."""
MAX_WINDOW = 10
"""Context lines before and after a match, at most."""
COUNT_LIMIT = 10_000
"""Matches ``internal_resource_grep`` counts; beyond, it says "more than 10000"."""
MAX_PATTERN = 1_000
LINE_CHARS = 300
"""A line grep shows longer than this is cut: around each match, or after its start."""
EXCERPT = 120
"""Characters grep shows on each side of a match in a cut line."""
OFFLOAD_CHARS = 1_000_000
"""Values longer than this are split and searched on a worker thread, off the loop."""
_MIN_MAX_CHARS = 1_000  # room for the notes

_MAX_REFERENCE = 1_000  # a longer string is a value, not a reference
_URI = re.compile(r"(?i:internal)://([A-Za-z0-9._~-]{1,200})\Z")


class ReferenceReader(Protocol):
    """Where the reader tools get a referenced value from (the relay's store).

    ``reference`` is always the canonical ``internal://<id>``, whichever form the model
    wrote (``parse_reference(reference)`` is the id). ``read`` returns the whole value
    as text, and raises ``UnknownReference`` when the id is unknown, expired or of
    another run (scope it with ``ctx``). Any other exception fails the call too, shown
    as ``<tool> failed: <Type>: <message>``.
    """

    async def read(self, ctx: ExecutionContext, reference: str) -> str: ...


class UnknownReference(ToolError, LookupError):
    """A reference that cannot be resolved: unknown, expired, of another run, or not a
    reference at all. The message is written for the model; ``of(reference)`` writes
    the usual one.

    It is a ``ToolError``, so a chain shows the model just the message (not
    ``... failed: UnknownReference: ...``), and a ``LookupError`` for programs.

    >>> str(UnknownReference.of("internal://a1b2"))  # doctest: +NORMALIZE_WHITESPACE
    'internal://a1b2 is unknown or expired (references belong to one run): use only a
    reference a tool returned in this run, unchanged'
    >>> error = UnknownReference("no such page", reference="internal://x")
    >>> str(error), error.reference, isinstance(error, LookupError)
    ('no such page', 'internal://x', True)
    """

    def __init__(self, message: str, *, reference: str = "") -> None:
        super().__init__(message)
        self.reference = reference
        """The reference as given, when the raiser set it."""

    @classmethod
    def of(cls, reference: str) -> UnknownReference:
        """The usual error for ``reference`` (``internal://<id>``, or just the id)."""
        shown = reference if "://" in reference else f"internal://{reference}"
        return cls(
            f"{_clip(shown)} is unknown or expired (references belong to one run): use only "
            "a reference a tool returned in this run, unchanged",
            reference=reference,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), str(self), self.reference))


def _rebuild(kind: type[UnknownReference], message: str, reference: str) -> UnknownReference:
    return kind(message, reference=reference)


def parse_reference(value: object) -> str | None:
    """The id of a reference written as ``internal://<id>`` or as the resource link
    ``{"type":"resource_link","uri":"internal://<id>"}`` (a JSON string or a mapping;
    other keys are ignored, and a missing ``type`` is allowed); None for anything else.

    >>> parse_reference("internal://a1B2-c3_")
    'a1B2-c3_'
    >>> parse_reference(' {"type": "resource_link", "uri": "internal://a1"} ')
    'a1'
    >>> parse_reference({"type": "resource_link", "uri": "internal://a1", "name": "page"})
    'a1'
    >>> [parse_reference(v) for v in ("the transcript", "internal://", {"uri": "http://x"})]
    [None, None, None]
    """
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _MAX_REFERENCE:
            return None
        if not text.startswith("{"):
            found = _URI.match(text)
            return found.group(1) if found else None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    link = cast("Mapping[object, object]", value)
    uri = link.get("uri")
    if link.get("type", "resource_link") != "resource_link" or not isinstance(uri, str):
        return None
    found = _URI.match(uri.strip())
    return found.group(1) if found else None


# -- inputs -------------------------------------------------------------------------

_START_INDEX = (
    "Index of the first character: 0 is the start; negative counts from the end "
    "(-200 starts 200 characters before the end)."
)
_START_LINE = (
    "First line, counted from 0; negative counts from the end (-20 with line_count 20: "
    "the last 20 lines)."
)


class ReferenceInput(BaseModel):
    """Arguments of ``internal_resource_read`` and ``internal_resource_length``."""

    model_config = ConfigDict(extra="forbid")

    opaque_reference: Reference = Field(description="The reference, as a tool returned it.")


class SliceInput(ReferenceInput):
    """Arguments of ``internal_resource_read_slice``."""

    start_index: int = Field(description=_START_INDEX)
    length: int = Field(description="How many characters to return (at least 1).")


class LinesInput(ReferenceInput):
    """Arguments of ``internal_resource_read_lines``."""

    start_line: int = Field(description=_START_LINE)
    line_count: int = Field(default=50, description=f"How many lines to return (1 to {MAX_LINES}).")


class GrepInput(ReferenceInput):
    """Arguments of ``internal_resource_grep``."""

    pattern: str = Field(
        description=(
            "RE2 regular expression, e.g. <img or (?i)total: \\d+ (no lookarounds or "
            "backreferences; (?i) ignores case)."
        )
    )
    window: int = Field(
        default=2,
        description=f"Context lines to show before and after each match (0 to {MAX_WINDOW}).",
    )


_REFERENCE_ARGUMENT: dict[RelayMode, str] = {
    "opaque": "The reference exactly as a tool returned it, e.g. internal://a1b2c3.",
    "json": (
        "The resource link exactly as a tool returned it, e.g. "
        '{"type":"resource_link","uri":"internal://a1b2c3"} (the object, or its uri).'
    ),
}

_ModelT = TypeVar("_ModelT", bound=ReferenceInput)
_variants: dict[tuple[type[ReferenceInput], RelayMode], type[ReferenceInput]] = {}


def _for_mode(base: type[_ModelT], mode: RelayMode) -> type[_ModelT]:
    """``base`` with ``opaque_reference`` typed and described for ``mode``: a string in
    opaque mode; a string or the resource link object in json mode."""
    found = _variants.get((base, mode))
    if found is None:
        field: Any = Field(description=_REFERENCE_ARGUMENT[mode])
        if mode == "opaque":
            found = pydantic.create_model(
                base.__name__, __base__=base, __module__=__name__, opaque_reference=(str, field)
            )
        else:
            found = pydantic.create_model(
                base.__name__,
                __base__=base,
                __module__=__name__,
                opaque_reference=(Reference, field),
            )
        _variants[(base, mode)] = found
    return cast("type[_ModelT]", found)


# -- the tools ----------------------------------------------------------------------

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
            raise ValueError(f"mode must be 'opaque' or 'json', not {mode!r}")
        if isinstance(max_chars, bool) or not isinstance(cast(object, max_chars), int):
            raise TypeError("max_chars must be an int")
        if max_chars < _MIN_MAX_CHARS:
            raise ValueError(f"max_chars must be at least {_MIN_MAX_CHARS} (notes need room)")
        self.reader = reader
        self.mode: RelayMode = mode
        self.max_chars = max_chars
        words = {"ref": _NOUN[mode], "max_chars": max_chars, "max_lines": MAX_LINES}
        self.description = self._description.format_map(words)
        self.policy = self._policy.format_map(words)
        self.input_type = _for_mode(type(self).input_type, mode)

    async def _value(self, ctx: ExecutionContext, reference: object) -> str:
        found = parse_reference(reference)
        if found is None:
            form = "internal://<id> string" if self.mode == "opaque" else "resource link"
            raise UnknownReference(
                f"{_clip(repr(reference))} is not a reference: pass the {form} a tool "
                "returned, unchanged",
                reference=_clip(str(reference), 200),
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
            _fit(
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
            _fit(
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
            f"{len(text)} {_plural(len(text), 'character')}, {lines} {_plural(lines, 'line')}"
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
            await _compute(text, lambda: _read_lines(text, start, count, self.max_chars))
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
        regex = _compile(pattern)
        text = await self._value(ctx, input.opaque_reference)
        window = min(window, MAX_WINDOW)
        return ToolResult(await _compute(text, lambda: _grep(text, regex, window, self.max_chars)))


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


# -- the guide ----------------------------------------------------------------------

_GUIDE = """\
Large tool results are kept out of the conversation: in their place the tool returns \
$refnoun such as $ref. It stands for the whole value.
- To give the value to another tool, pass $refit as that argument, exactly as returned. \
The tool receives the full value. Do not read the value first.
- Read the value only when you yourself need its content (to quote or check a \
detail), and only the part you need: internal_resource_grep finds matching lines, \
internal_resource_read_lines and internal_resource_read_slice return a part (a \
negative start counts from the end), internal_resource_length gives the size. \
internal_resource_read returns the whole value: use it only as a last resort.
- Never invent, edit or shorten a reference; references belong to this run and expire."""

_EXAMPLES = """\
Examples (tools other than internal_resource_* are made up):
1. Pass a value on without reading it.
User: Transcribe video 123 and save the transcript as transcript.txt.
Call transcribe(video_id="123") -> $ref
Call save_file(name="transcript.txt", content=$arg)
Wrong: reading the transcript first, or writing its text into content.
2. Read only the part you need.
User: Which number is said at the end of that transcript?
Call internal_resource_read_slice(opaque_reference=$arg, start_index=-300, length=300)
Answer with the number found in those last characters.
3. Search instead of reading.
User: Which images does the page https://example.com show?
Call fetch_page(url="https://example.com") -> $ref2
Call internal_resource_grep(opaque_reference=$arg2, pattern="<img", window=0)
Answer from the matching lines.
4. Mixed values.
User: Analyze the transcript, then save the transcript and the analysis.
Call analyze(text=$arg) -> "Calm tone; three topics." (short results stay plain text)
Call save_file(name="transcript.txt", content=$arg)
Call save_file(name="analysis.txt", content="Calm tone; three topics.")"""

_GUIDE_WORDS: dict[RelayMode, dict[str, str]] = {
    "opaque": {
        "refnoun": "a reference",
        "refit": "the reference string",
        "ref2": "internal://d4e5f6",
        "arg2": '"internal://d4e5f6"',
        "ref": "internal://a1b2c3",
        "arg": '"internal://a1b2c3"',
    },
    "json": {
        "refnoun": "a resource link",
        "refit": "the resource link",
        "ref2": '{"type":"resource_link","uri":"internal://d4e5f6"}',
        "arg2": '{"type":"resource_link","uri":"internal://d4e5f6"}',
        "ref": '{"type":"resource_link","uri":"internal://a1b2c3"}',
        "arg": '{"type":"resource_link","uri":"internal://a1b2c3"}',
    },
}


def relay_guide(mode: RelayMode, *, few_shot: bool) -> str:
    """The prompt text teaching the model how references work in ``mode``, with worked
    examples when ``few_shot`` (they decide success for small models).

    >>> print(relay_guide("opaque", few_shot=False).splitlines()[0])  # doctest: +ELLIPSIS
    Large tool results are kept out of the conversation: ... such as internal://a1b2c3. ...
    >>> '"uri":"internal://d4e5f6"' in relay_guide("json", few_shot=True)
    True
    """
    if mode not in get_args(RelayMode):
        raise ValueError(f"mode must be 'opaque' or 'json', not {mode!r}")
    text = _GUIDE + ("\n\n" + _EXAMPLES if few_shot else "")
    return string.Template(text).substitute(_GUIDE_WORDS[mode])


# -- the work -----------------------------------------------------------------------


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def _fit(text: str, max_chars: int, note: Callable[[int], str]) -> str:
    """``text``, or as much of it as fits in ``max_chars`` with ``note(kept)`` after."""
    if len(text) <= max_chars:
        return text
    kept = max(0, max_chars - len(note(max_chars)))  # the note's longest form
    return text[:kept] + note(kept)


_ResultT = TypeVar("_ResultT")


async def _compute(text: str, work: Callable[[], _ResultT]) -> _ResultT:
    """``work()``: on a worker thread for a large value, so the loop stays free."""
    if len(text) > OFFLOAD_CHARS:
        return await run_in_worker(work)
    return work()


def _split_lines(text: str) -> list[str]:
    """Lines split at ``\\n``; a final newline ends the last line (no empty line after)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _shown(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def _read_lines(text: str, start_line: int, line_count: int, max_chars: int) -> str:
    lines = _split_lines(text)
    total = len(lines)
    if total == 0:
        return "[the value is empty]"
    start = max(0, total + start_line) if start_line < 0 else start_line
    if start >= total:
        raise ToolError(
            f"start_line {start_line} is past the end: the value has {total} "
            f"{_plural(total, 'line')} (0 to {total - 1}, or negative from the end)"
        )
    asked = min(total, start + line_count)
    stop = min(asked, start + MAX_LINES)
    why = f"{MAX_LINES} lines"
    budget = max_chars - 200  # the footer's room
    rows: list[str] = []
    used = 0
    for index in range(start, stop):
        row = _shown(lines[index])
        if used + len(row) + 1 > budget:
            if not rows:  # one line longer than the whole budget: show its start
                kept = max(0, budget)
                offset = sum(len(line) + 1 for line in lines[:index])
                return (
                    row[:kept] + f"\n[line {index} cut at {kept} of its {len(row)} characters; "
                    f"read on with internal_resource_read_slice from start_index "
                    f"{offset + kept}]"
                )
            why = f"{max_chars} characters"
            break
        rows.append(row)
        used += len(row) + 1
    last = start + len(rows) - 1
    footer = f"[lines {start}-{last} of {total}"
    if last + 1 < total:
        footer += f"; next start_line {last + 1}"
    if last + 1 < asked:
        footer += f" (at most {why} per call)"
    return "\n".join([*rows, footer + "]"])


class _Match(Protocol):
    def span(self) -> tuple[int, int]: ...


class _Regex(Protocol):
    """What grep uses of a compiled RE2 pattern."""

    def finditer(self, text: str) -> Iterator[_Match]: ...


def _compile(pattern: str) -> _Regex:
    import re2  # lazy: loaded by the first grep, not by `import toolchain`

    options = re2.Options()
    options.log_errors = False  # the model gets the error; nothing for stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        detail = error.args[0] if error.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        hint = "; use \\z for the end of the text" if "\\Z" in pattern else ""
        raise ToolError(
            f"the pattern is not valid RE2: {detail}; lookarounds and backreferences are "
            f"not supported{hint}"
        ) from None


def _find(regex: _Regex, text: str) -> tuple[list[tuple[int, int]], int]:
    """The first ``MAX_MATCHES`` spans, and the matches counted (up to ``COUNT_LIMIT`` + 1)."""
    spans: list[tuple[int, int]] = []
    count = 0
    for match in itertools.islice(regex.finditer(text), COUNT_LIMIT + 1):
        count += 1
        if count <= MAX_MATCHES:
            spans.append(match.span())
    return spans, count


def _grep(text: str, regex: _Regex, window: int, max_chars: int) -> str:
    try:
        spans, count = _find(regex, text)
    except UnicodeEncodeError:  # lone surrogates: one '?' each keeps every index
        spans, count = _find(regex, text.encode("utf-8", "replace").decode("utf-8"))
    lines = _split_lines(text)
    if not lines:
        return "[the value is empty]"
    if count == 0:
        return (
            f"no match in {len(lines)} {_plural(len(lines), 'line')}; try a broader "
            "pattern, or (?i) to ignore case"
        )
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    starts.pop()

    def line_of(index: int) -> int:
        return max(0, min(len(lines) - 1, bisect.bisect_right(starts, index) - 1))

    hits: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        for line in range(line_of(start), line_of(max(start, end - 1)) + 1):
            hits.setdefault(line, []).append((start, end))
    shown: list[tuple[int, int]] = []  # ranges of lines, merged
    for line in sorted(hits):
        low, high = max(0, line - window), min(len(lines) - 1, line + window)
        if shown and low <= shown[-1][1] + 1:
            shown[-1] = (shown[-1][0], max(shown[-1][1], high))
        else:
            shown.append((low, high))

    if count > COUNT_LIMIT:
        head = f"more than {COUNT_LIMIT} matches; the first {MAX_MATCHES} shown"
    elif count > MAX_MATCHES:
        head = f"{count} matches; the first {MAX_MATCHES} shown (narrow the pattern for others)"
    else:
        head = f"{count} {'match' if count == 1 else 'matches'}"
    head += " (lines numbered from 0; ':' marks a matching line, '-' a context line):"
    rows = [head]
    used = len(head)
    budget = max_chars - 200  # the note's room
    for number, (low, high) in enumerate(shown):
        # (where the row starts in the value, the row): "--" between groups of lines
        block = [(starts[low], "--")] if number and window else []
        for line in range(low, high + 1):
            block += _line_rows(line, lines[line], starts[line], hits)
        for at, row in block:
            if used + len(row) + 1 > budget:
                done = sum(1 for start, _ in spans if start < at)
                rows.append(
                    f"[output cut at {max_chars} characters: {done} of {len(spans)} matches "
                    "shown; narrow the pattern or lower window]"
                )
                return "\n".join(rows)[:max_chars]
            rows.append(row)
            used += len(row) + 1
    return "\n".join(rows)[:max_chars]


def _line_rows(
    number: int, line: str, offset: int, hits_by_line: dict[int, list[tuple[int, int]]]
) -> list[tuple[int, str]]:
    """One line as grep shows it: whole when short, else around each match (with its
    index in the value) or, for context, its start. Each row comes with the index in
    the value it starts at."""
    line = _shown(line)
    hits = hits_by_line.get(number)
    if len(line) <= LINE_CHARS:
        return [(offset, f"{number}{':' if hits else '-'}{line}")]
    if not hits:
        return [(offset, f"{number}-{line[:LINE_CHARS]}... [{len(line)} characters]")]
    rows: list[tuple[int, str]] = []
    covered = -1
    for start, end in hits:
        begin = max(start - offset, 0)
        if begin < covered:
            continue  # inside the previous excerpt
        low = max(0, begin - EXCERPT)
        high = min(len(line), max(end - offset, begin) + EXCERPT, low + LINE_CHARS)
        covered = high
        text = ("..." if low else "") + line[low:high] + ("..." if high < len(line) else "")
        rows.append((offset + begin, f"{number}:{text} [match at index {offset + begin}]"))
    return rows
