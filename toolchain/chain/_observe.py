"""Stage 4 of a chain: what the model reads of each call (a `Ran` becomes an `Outcome`),
and the action's result.

Every call ends in `finish`, failed or not (observers see each one end): a successful
output is serialised in the chain's ``observations`` encoding, a failure becomes
``Error: …`` and a record on the ``toolchain`` logger. The observation hooks may
rewrite what the model reads (``raw`` keeps the real result). `assemble` then makes the
``ToolChainResult``: each text cut to its share of the observation, media numbered
across the action, and each call's section named so that no output, and no name a
model invents, can open a section the agent reads (``answer``, ``action``, …).
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, cast

from formats import FormattedSection, MarkdownFormat, TextFormat, XMLFormat
from toolchain._content import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent
from toolchain._context import Stats
from toolchain._errors import describe_exception
from toolchain._events import ToolCallFinished
from toolchain._hooks import HookFailed, HookStage, hook_error, run_stage
from toolchain._oneline import log_line
from toolchain._redact import logger
from toolchain._result import (
    CallObservation,
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    text_on_read,
)
from toolchain.chain._config import ChainConfig
from toolchain.chain._stages import AnyTool, Outcome, Ran

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["AGENT_SECTIONS", "assemble", "fail", "finish", "observation_hooks", "section_name"]

_log = logger("toolchain")
_SECTION_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_MAX_SECTION_NAME = 64
AGENT_SECTIONS = frozenset({"thinking", "action", "answer", "observation"})
"""The sections agents read from a model's output. Reserved in every observation even
when the format it is written with has not registered them (a bare XMLFormat(), a native
agent's format, a loop of one's own): the text may still be read by a format that has,
and a call's section must never re-parse as an answer."""
_LOGGED_CHARS = 500  # a log record quotes this much of a name or message
_PART_TYPES = (TextContent, ImageContent, AudioContent, BinaryContent)


def finish(
    config: ChainConfig, ctx: ExecutionContext, index: int, ran: Ran, started: float
) -> Outcome:
    """Every call ends here, failed or not: observers see them all."""
    call, result, failure = ran.call, ran.result, ran.error
    if ctx.events.has_subscribers(ToolCallFinished):
        duration = time.perf_counter() - started
        ctx.events.emit(
            ToolCallFinished(ctx, index, call.name, call.args, result, failure, duration, call.id)
        )
    if failure is not None or result is None:
        failure = failure or ToolCallError("output_error", f"{call.name} returned no result")
        return fail(ctx, call, failure.kind, failure.message, failure.exception)
    try:
        text = config.encode_output(result.text)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as error:
        message = f"{call.name} produced output that cannot be shown: {describe_exception(error)}"
        _log.warning("%s", message, exc_info=error)
        return fail(ctx, call, "output_error", message[:500], error)
    return Outcome(call, result, None, text)


def fail(
    ctx: ExecutionContext,
    call: ToolCall,
    kind: ErrorKind,
    message: str,
    exception: BaseException | None = None,
) -> Outcome:
    """The outcome of a failed call: counted, logged, and ``Error: …`` for the model."""
    ctx.stats.count_call(Stats.TOOL_ERRORS, call.name)
    error = ToolCallError(kind, message, exception)  # the message redacted: see ToolCallError
    _log_failure(call, kind, error.message)
    return Outcome(call, None, error, f"Error: {error.message}")


def observation_hooks(ctx: ExecutionContext, outcome: Outcome) -> Outcome | Awaitable[Outcome]:
    """``outcome`` (of a call with a result) with the text and parts its observation
    hooks wrote; raw keeps the result. A hook's ``(text, media)`` replaces the parts
    shown; a plain text keeps them. An awaitable only once a hook is ``async`` (see
    ``run_stage``)."""
    assert outcome.result is not None  # only a call with a result is observed
    args = (ctx, outcome.call, outcome.result)
    return run_stage(_OBSERVED, ctx.hooks.observation, args, outcome.text, _Shown(ctx, outcome))


class _Shown:
    """What the observation hooks of one call have shown so far besides the text."""

    __slots__ = ("ctx", "media", "outcome")

    def __init__(self, ctx: ExecutionContext, outcome: Outcome) -> None:
        self.ctx = ctx
        self.outcome = outcome
        self.media = outcome.media  # None: the result's own


def _a_text(returned: object, text: str, shown: _Shown) -> str | None:
    if isinstance(returned, str):
        return returned
    pair = _text_and_parts(returned)
    if pair is None:
        return None
    shown.media = pair[1]
    return pair[0]


def _observed(text: str, shown: _Shown) -> Outcome:
    outcome = shown.outcome
    return Outcome(outcome.call, outcome.result, None, text, shown.media)


def _observation_failed(failure: HookFailed, text: str, shown: _Shown) -> Outcome:
    call, hook = shown.outcome.call, "an observation hook"
    error = hook_error(failure, call, hook=hook, during=hook, takes="a str or (str, media)")
    return fail(shown.ctx, call, error.kind, error.message, error.exception)


_OBSERVED: HookStage[str, _Shown, Outcome] = HookStage(_a_text, _observed, _observation_failed)


def _text_and_parts(value: object) -> tuple[str, tuple[ContentPart, ...]] | None:
    """``(text, media)`` when an observation hook returned that pair, checked; else None."""
    if type(value) is not tuple:
        return None
    pair = cast("tuple[object, ...]", value)
    if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], tuple):
        return None
    parts = cast("tuple[object, ...]", pair[1])
    if not all(isinstance(part, _PART_TYPES) for part in parts):
        return None
    return pair[0], cast("tuple[ContentPart, ...]", parts)


def _log_failure(call: ToolCall, kind: ErrorKind, message: str) -> None:
    """The INFO record every failed call leaves on the ``toolchain`` logger.

    Its ``tool``, ``call_id`` and ``error_kind`` attributes (the ``ToolCallError.kind``)
    let a handler filter on them; the message is the one the model reads, cut short.
    """
    if not _log.isEnabledFor(logging.INFO):
        return
    name = log_line(call.name, 80)  # the model may invent any name, of any length
    _log.info(
        "tool call %s (%s) failed: %s: %s",
        name,
        log_line(call.id, 80) or "no id",
        kind,
        log_line(message, _LOGGED_CHARS),
        extra={"tool": name, "call_id": call.id, "error_kind": kind},
    )


def assemble(
    config: ChainConfig,
    outcomes: list[Outcome],
    text_format: TextFormat,
    reserved: frozenset[str],
) -> ToolChainResult:
    """The action's result: the wrapped observation, media, raw results and errors."""
    tools = config.tools
    share = min(config.max_output_chars, max(1, config.max_observation_chars // len(outcomes)))
    sections: list[FormattedSection] = []
    media: list[ContentPart] = []
    observations: list[CallObservation] = []
    calls: list[ToolCall] = []
    results: list[RawToolCallResult | None] = []
    errors: list[ToolCallError | None] = []
    for outcome in outcomes:
        call, result, text, error = outcome.call, outcome.result, outcome.text, outcome.error
        if len(text) > share:
            text = (
                f"{text[:share]}\n[output truncated: {share} of {len(text)} characters "
                "shown; ask for less, e.g. a narrower query]"
            )
        name = call.name
        children: tuple[FormattedSection, ...] = ()
        part_media: tuple[ContentPart, ...] = ()
        instructions = ""
        if result is not None:
            results.append(RawToolCallResult(name, result.text, result, call.id))
            # ToolResult made its media a tuple already: tuple() is for one that was not.
            shown = result.media if outcome.media is None else outcome.media
            if result.instructions or shown:
                shown = tuple(shown)
                instructions, part_media, children = _extras(result.instructions, shown, media)
        else:
            results.append(None)
        observations.append(CallObservation(call.id, name, text, part_media, instructions, error))
        if name not in tools or name.lower() in reserved:
            name = section_name(name, tools, reserved)
        sections.append(FormattedSection(name, text, children))
        calls.append(call)
        errors.append(error)
    raw = RawToolChainResult(tuple(calls), tuple(results), tuple(errors))
    if type(text_format) in _WRITTEN_ALIKE:
        # A native agent reads each call's own observation, never the whole text: it is
        # written if read. These formats write the same text whenever asked, and cannot
        # fail on these sections (their names are checked above).
        write = functools.partial(_observation_text, text_format, sections)
        return text_on_read(write, tuple(media), raw, tuple(observations))
    text = _observation_text(text_format, sections)
    return ToolChainResult(text, tuple(media), raw, tuple(observations))


_WRITTEN_ALIKE = (XMLFormat, MarkdownFormat)
"""Formats whose observation text depends on the sections alone, not on state that may
change later (a format of one's own, or a subclass, may keep some): theirs is written
when first read. Exact types only."""


def _observation_text(text_format: TextFormat, sections: list[FormattedSection]) -> str:
    return text_format.wrap_observation(text_format.format_sections(sections))


def section_name(name: str, tools: Mapping[str, AnyTool], reserved: frozenset[str]) -> str:
    """A section name for a call's result that can never be read as another section.

    Registered tools have valid names; a name the model invented is reduced to ASCII
    tag characters. Either way, a name the text format uses for its own sections, or
    one agents read (``answer``, ``action``, ``thinking``), is prefixed, so an
    observation can never hold a section that re-parses as an answer.

    >>> section_name("answer", {}, frozenset({"answer"})), section_name("<b>", {}, frozenset())
    ('tool_answer', 'b')
    """
    if name not in tools:
        name = _SECTION_UNSAFE.sub("_", name)[:_MAX_SECTION_NAME].strip("._-") or "unknown_tool"
        if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
            name = "tool_" + name
    if name.lower() in reserved:
        name = "tool_" + name
    return name


def _extras(
    instructions: str, part_media: tuple[ContentPart, ...], media: list[ContentPart]
) -> tuple[str, tuple[ContentPart, ...], tuple[FormattedSection, ...]]:
    """A result's instructions and attachments (numbered across the observation)."""
    children: list[FormattedSection] = []
    instructions = instructions.strip()
    if instructions:
        children.append(FormattedSection("instructions", instructions))
    if part_media:
        lines: list[str] = []
        for part in part_media:
            media.append(part)
            lines.append(f"[{len(media)}] {_describe_part(part)}")
        children.append(FormattedSection("attachments", "\n".join(lines)))
    return instructions, part_media, tuple(children)


def _describe_part(part: ContentPart) -> str:
    describe = getattr(part, "describe", None)
    kind = type(part).__name__.removesuffix("Content").lower()
    return f"{kind} ({describe()})" if callable(describe) else kind
