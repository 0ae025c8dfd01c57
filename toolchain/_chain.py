"""Tool chains: parse calls from an action section, run them, format the observation.

``JSONToolChain`` and ``YAMLToolChain`` differ only in how calls are read and outputs
written; registration, execution, errors and formatting live in ``_ToolChainBase``.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

import msgspec

from formats import FormattedSection, TextFormat, XMLFormat
from toolchain._calls import call_from_mapping, decode_json_calls
from toolchain._content import ContentPart
from toolchain._context import Cancelled, ExecutionContext, Stats
from toolchain._errors import DuplicateToolError, ToolCallParseError, ToolError
from toolchain._events import AfterToolCall, BeforeToolCall, ToolCallParseFailed
from toolchain._input import ArgumentsError
from toolchain._output import OutputError, to_json, to_yaml
from toolchain._result import (
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    ToolResult,
)
from toolchain._tool import Tool, check_tool_name
from toolchain._workers import run_in_worker
from toolchain._yaml_calls import load_yaml_calls

__all__ = ["JSONToolChain", "ToolChain", "YAMLToolChain"]

AnyTool = Tool[Any, Any]
_SECTION_SAFE = re.compile(r"[^\w.\-]")


@runtime_checkable
class ToolChain(Protocol):
    """Parses tool calls from its section, runs them and formats the observation.

    A chain *is* a ``TextSection`` (default name ``action``): register it on the
    agent's ``TextFormat`` like any other section.

    >>> from formats import XMLFormat
    >>> isinstance(JSONToolChain(), ToolChain), isinstance(YAMLToolChain(), ToolChain)
    (True, True)
    """

    @property
    def name(self) -> str: ...

    @property
    def guidance(self) -> str: ...

    @property
    def tools(self) -> Mapping[str, AnyTool]: ...

    def parse_section(self, content: str) -> object: ...

    def register_tool(self, tool: AnyTool) -> Self: ...

    def available_tools_prompt(self) -> str: ...

    def parse_calls(
        self, content: str, text_format: TextFormat | None = None
    ) -> list[ToolCall | str]: ...

    async def execute(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult: ...

    async def execute_calls(
        self, ctx: ExecutionContext, calls: Sequence[ToolCall], text_format: TextFormat
    ) -> ToolChainResult: ...

    def execute_sync(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult: ...


@dataclass(frozen=True, slots=True)
class _Outcome:
    call: ToolCall
    result: ToolResult[object] | None
    error: ToolCallError | None
    text: str  # the serialised output, or the error line


class _ToolChainBase(ABC):
    syntax: str  # "JSON" or "YAML", for messages

    def __init__(
        self,
        *,
        name: str = "action",
        subsection: str | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        """``subsection``: read calls from sub-sections of that name inside the action
        (gent's ``<action><direct_call>…</direct_call></action>``); content without one
        is read whole. ``timeout``: seconds per call unless the tool sets its own."""
        self._name = name
        self._subsection = subsection
        self.timeout = timeout
        self._tools: dict[str, AnyTool] = {}

    # -- TextSection -----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def guidance(self) -> str:
        text = self._syntax_guidance()
        if self._subsection:
            text = f"Write the calls inside a `{self._subsection}` sub-section.\n{text}"
        return text

    def parse_section(self, content: str) -> list[ToolCall | str]:
        """The calls in ``content`` (a string per item that is not a call)."""
        return self.parse_calls(content)

    # -- registry --------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, AnyTool]:
        return dict(self._tools)

    def register_tool(self, tool: AnyTool) -> Self:
        """Add a tool; its name must be unique on this chain."""
        name = check_tool_name(tool.name)
        existing = self._tools.get(name)
        if existing is not None:
            raise DuplicateToolError(
                f"a tool named {name!r} is already registered ({existing!r}); "
                "tool names must be unique within a chain"
            )
        tool.input_schema()  # fail now, not at the first call, on a bad input type
        self._tools[name] = tool
        return self

    def available_tools_prompt(self) -> str:
        """Each tool's name, description, policy and parameter schema."""
        blocks = []
        for tool in self._tools.values():
            lines = [f"- {tool.name}: {tool.description.strip()}"]
            if tool.policy.strip():
                lines.append(_indent("Policy: " + tool.policy.strip(), 2))
            lines.append("  Parameters:")
            lines.append(_indent(self._schema_text(tool.prompt_schema()), 4))
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    # -- parsing ---------------------------------------------------------------------

    def parse_calls(
        self, content: str, text_format: TextFormat | None = None
    ) -> list[ToolCall | str]:
        """The calls in ``content``; a string per item that is not a call.

        Raises ``ToolCallParseError`` when the content is not calls at all.
        """
        if self._subsection:
            fmt = text_format if text_format is not None else XMLFormat()
            nested = fmt.parse_nested(content, [self._subsection])
            blocks = next(iter(nested.values()), None)
            if blocks:
                return [item for block in blocks for item in self._decode(block)]
        return self._decode(content)

    @abstractmethod
    def _decode(self, content: str) -> list[ToolCall | str]: ...

    @abstractmethod
    def _encode(self, output: object) -> str: ...

    @abstractmethod
    def _schema_text(self, schema: Mapping[str, object]) -> str: ...

    @abstractmethod
    def _syntax_guidance(self) -> str: ...

    # -- execution -------------------------------------------------------------------

    async def execute(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        """Parse, run (concurrently) and format the calls in ``content``.

        Raises ``ToolCallParseError`` when the content is not tool calls at all; every
        other failure is reported per call, in ``text`` and in ``raw.errors``.
        """
        try:
            items = self.parse_calls(content, text_format)
        except ToolCallParseError as error:
            ctx.events.emit(ToolCallParseFailed(ctx, content, str(error)))
            raise
        return await self._run(ctx, items, text_format)

    async def execute_calls(
        self, ctx: ExecutionContext, calls: Sequence[ToolCall], text_format: TextFormat
    ) -> ToolChainResult:
        """Run calls that arrived already structured (native API tool calling)."""
        return await self._run(ctx, list(calls), text_format)

    def execute_sync(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        """``execute`` for synchronous code; not callable from a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.execute(ctx, content, text_format))
        raise RuntimeError("execute_sync() was called inside an event loop; await execute()")

    async def _run(
        self, ctx: ExecutionContext, items: list[ToolCall | str], text_format: TextFormat
    ) -> ToolChainResult:
        if not items:
            return ToolChainResult()
        loop = asyncio.get_running_loop()
        timed_out: set[int] = set()
        tasks = [
            asyncio.create_task(self._run_one(ctx, index, item, timed_out))
            for index, item in enumerate(items)
        ]

        def cancel_all() -> None:
            for task in tasks:
                task.cancel()

        def on_cancel() -> None:
            loop.call_soon_threadsafe(cancel_all)

        remove = ctx.on_cancel(on_cancel)
        timers = self._arm_timeouts(items, tasks, timed_out)
        try:
            gathered = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            remove()
            for timer in timers:
                timer.cancel()
        outcomes = [
            outcome if isinstance(outcome, _Outcome) else _unexpected(items[i], outcome)
            for i, outcome in enumerate(gathered)
        ]
        return _assemble(outcomes, text_format)

    def _arm_timeouts(
        self, items: list[ToolCall | str], tasks: list[asyncio.Task[_Outcome]], timed_out: set[int]
    ) -> list[asyncio.TimerHandle]:
        """One timer per distinct timeout in the action, cancelling the calls still running.

        Calls start together, so a call's deadline is the action's start plus its
        timeout; timers are far cheaper than an ``asyncio.timeout`` around each call.
        """
        limits = [self._timeout_of(item) for item in items]

        def expire(limit: float) -> None:
            for index, task in enumerate(tasks):
                if limits[index] == limit and not task.done():
                    timed_out.add(index)
                    task.cancel()

        loop = asyncio.get_running_loop()
        return [loop.call_later(t, expire, t) for t in {t for t in limits if t is not None}]

    def _timeout_of(self, item: ToolCall | str) -> float | None:
        tool = self._tools.get(item.name) if isinstance(item, ToolCall) else None
        if tool is None:
            return None
        return tool.timeout if tool.timeout is not None else self.timeout

    async def _run_one(
        self, ctx: ExecutionContext, index: int, item: ToolCall | str, timed_out: set[int]
    ) -> _Outcome:
        started = time.perf_counter()
        if isinstance(item, str):
            failure = ToolCallError("parse", item)
            return self._after(ctx, index, ToolCall("error", {}), None, failure, started)
        call = item
        ctx.stats.increment(Stats.TOOL_CALLS)
        ctx.stats.increment(Stats.per_tool(Stats.TOOL_CALLS, call.name))
        tool = self._tools.get(call.name)
        if tool is None:
            failure = ToolCallError("unknown_tool", self._unknown_message(call.name))
            return self._after(ctx, index, call, None, failure, started)
        over = _over_limit(ctx, call.name)
        if over is not None:
            message = f"{call.name} was not run: the run's {over} limit is reached"
            return self._after(ctx, index, call, None, ToolCallError("limit", message), started)
        if ctx.events.has_subscribers(BeforeToolCall):
            event = BeforeToolCall(ctx, index, call.name, dict(call.args))
            try:
                ctx.events.emit(event)
            except Exception as error:
                failure = ToolCallError("hook_error", _hook_message(error), error)
                return self._after(ctx, index, call, None, failure, started)
            call = ToolCall(call.name, event.args)
        result, problem = await self._invoke(ctx, tool, dict(call.args), index, timed_out)
        return self._after(ctx, index, call, result, problem, started)

    def _after(
        self,
        ctx: ExecutionContext,
        index: int,
        call: ToolCall,
        result: ToolResult[object] | None,
        failure: ToolCallError | None,
        started: float,
    ) -> _Outcome:
        """Every call ends here, failed or not: after-call subscribers see them all."""
        if ctx.events.has_subscribers(AfterToolCall):
            args = dict(call.args)
            after = AfterToolCall(
                ctx, index, call.name, args, result, failure, time.perf_counter() - started
            )
            try:
                ctx.events.emit(after)
            except Exception as error:
                failure = ToolCallError("hook_error", _hook_message(error), error)
            else:
                if failure is None:
                    result = after.result
        if failure is None and result is None:
            failure = ToolCallError("output_error", f"{call.name} returned no result")
        if failure is not None or result is None:
            assert failure is not None
            return self._fail(ctx, call, failure.kind, failure.message, failure.exception)
        try:
            text = self._encode(result.text)
        except (OutputError, msgspec.EncodeError, ValueError, TypeError, RecursionError) as error:
            message = f"{call.name} produced output that cannot be shown: {error!r}"[:500]
            return self._fail(ctx, call, "output_error", message, error)
        return _Outcome(call, result, None, text)

    async def _invoke(
        self,
        ctx: ExecutionContext,
        tool: AnyTool,
        args: dict[str, object],
        index: int,
        timed_out: set[int],
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        try:
            value = tool.codec.validate(args)
        except ArgumentsError as error:
            message = f"invalid arguments for {tool.name}: {error}"
            return None, ToolCallError("invalid_arguments", message, error)
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        result: object
        try:
            if tool.is_async:
                result = await tool.call(ctx, value)  # type: ignore[misc]  # is_async
            elif tool.inline:
                result = tool.call(ctx, value)
            else:
                result = await run_in_worker(functools.partial(tool.call, ctx, value))
                if inspect.isawaitable(result):
                    result = await result
        except ToolError as error:
            return None, ToolCallError("tool_error", str(error), error)
        except Cancelled as error:
            return None, ToolCallError("cancelled", f"cancelled: {error}", error)
        except asyncio.CancelledError as error:
            if index in timed_out:  # cancelled by a timer from _arm_timeouts
                message = f"{tool.name} did not finish within {timeout:g} s"
                return None, ToolCallError("timeout", message, TimeoutError(message))
            if not ctx.cancelled:
                raise
            return None, ToolCallError("cancelled", f"cancelled: {ctx.cancel_reason}", error)
        except Exception as error:
            message = f"{tool.name} failed: {type(error).__name__}: {error}"
            return None, ToolCallError("tool_error", message, error)
        if not isinstance(result, ToolResult):
            message = f"{tool.name} returned {type(result).__name__}, not a ToolResult"
            return None, ToolCallError("output_error", message)
        return result, None

    def _fail(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        kind: ErrorKind,
        message: str,
        exception: BaseException | None = None,
    ) -> _Outcome:
        ctx.stats.increment(Stats.TOOL_ERRORS)
        ctx.stats.increment(Stats.per_tool(Stats.TOOL_ERRORS, call.name))
        return _Outcome(call, None, ToolCallError(kind, message, exception), f"Error: {message}")

    def _unknown_message(self, name: str) -> str:
        known = list(self._tools)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        listing = ", ".join(known) or "(none)"
        return f"unknown tool {name!r}.{hint} Available tools: {listing}"


def _over_limit(ctx: ExecutionContext, name: str) -> str | None:
    """The tool-call limit this call (already counted) goes past, if any."""
    limits = ctx.limits
    if (
        limits.max_tool_calls is not None
        and ctx.stats.get(Stats.TOOL_CALLS) > limits.max_tool_calls
    ):
        return f"max_tool_calls={limits.max_tool_calls}"
    per_tool = limits.max_tool_calls_per_tool.get(name)
    if per_tool is not None and ctx.stats.get(Stats.per_tool(Stats.TOOL_CALLS, name)) > per_tool:
        return f"max_tool_calls_per_tool[{name}]={per_tool}"
    return None


def _hook_message(error: Exception) -> str:
    return f"a tool-call hook failed: {type(error).__name__}: {error}"


def _unexpected(item: ToolCall | str, outcome: BaseException) -> _Outcome:
    call = item if isinstance(item, ToolCall) else ToolCall("error", {})
    kind: ErrorKind = "cancelled" if isinstance(outcome, asyncio.CancelledError) else "tool_error"
    message = "cancelled" if kind == "cancelled" else f"{type(outcome).__name__}: {outcome}"
    return _Outcome(call, None, ToolCallError(kind, message, outcome), f"Error: {message}")


def _assemble(outcomes: list[_Outcome], text_format: TextFormat) -> ToolChainResult:
    sections: list[FormattedSection] = []
    media: list[ContentPart] = []
    for outcome in outcomes:
        children: list[FormattedSection] = []
        if outcome.result is not None:
            if outcome.result.instructions.strip():
                children.append(
                    FormattedSection("instructions", outcome.result.instructions.strip())
                )
            if outcome.result.media:
                lines = []
                for part in outcome.result.media:
                    media.append(part)
                    lines.append(f"[{len(media)}] {_describe(part)}")
                children.append(FormattedSection("attachments", "\n".join(lines)))
        name = _SECTION_SAFE.sub("_", outcome.call.name) or "error"
        if not name[0].isalpha() and name[0] != "_":
            name = "_" + name
        sections.append(FormattedSection(name, outcome.text, tuple(children)))
    raw = RawToolChainResult(
        calls=tuple(o.call for o in outcomes),
        results=tuple(
            RawToolCallResult(o.call.name, o.result) if o.result is not None else None
            for o in outcomes
        ),
        errors=tuple(o.error for o in outcomes),
    )
    text = text_format.wrap_observation(text_format.format_sections(sections))
    return ToolChainResult(text=text, media=tuple(media), raw=raw)


def _describe(part: ContentPart) -> str:
    describe = getattr(part, "describe", None)
    kind = type(part).__name__.removesuffix("Content").lower()
    return f"{kind} ({describe()})" if callable(describe) else kind


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())


class JSONToolChain(_ToolChainBase):
    """Tool calls written as JSON; outputs shown as compact JSON.

    >>> from formats import XMLFormat
    >>> from toolchain import tool, ExecutionContext
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> chain = JSONToolChain().register_tool(add)
    >>> call = '{"tool": "add", "args": {"a": 2, "b": 3}}'
    >>> result = chain.execute_sync(ExecutionContext(), call, XMLFormat())
    >>> print(result.text)
    <observation>
    <add>
    5
    </add>
    </observation>
    """

    syntax = "JSON"

    def _decode(self, content: str) -> list[ToolCall | str]:
        return [call_from_mapping(i, item) for i, item in enumerate(decode_json_calls(content))]

    def _encode(self, output: object) -> str:
        return to_json(output)

    def _schema_text(self, schema: Mapping[str, object]) -> str:
        # One line: indentation would cost more tokens than the schema itself.
        return msgspec.json.encode(schema).decode("utf-8")

    def _syntax_guidance(self) -> str:
        return (
            "Call tools with JSON:\n"
            '{"tool": "tool_name", "args": {"param": "value"}}\n'
            "For several independent calls, write a JSON array:\n"
            '[{"tool": "tool_a", "args": {...}}, {"tool": "tool_b", "args": {...}}]\n'
            "Calls in one action run in parallel; their results come back in order."
        )


class YAMLToolChain(_ToolChainBase):
    """Tool calls written as YAML (schema-aware: strings stay strings); outputs as YAML.

    >>> from formats import MarkdownFormat
    >>> from toolchain import tool, ExecutionContext
    >>> @tool
    ... def echo(code: str) -> dict[str, str]:
    ...     '''Echo a code.'''
    ...     return {"code": code}
    >>> chain = YAMLToolChain().register_tool(echo)
    >>> call = "- tool: echo\\n  args:\\n    code: 0123"
    >>> print(chain.execute_sync(ExecutionContext(), call, MarkdownFormat()).text)
    # observation
    <BLANKLINE>
    ## echo
    code: '0123'
    """

    syntax = "YAML"

    def _decode(self, content: str) -> list[ToolCall | str]:
        return load_yaml_calls(content, self._schema_for)

    def _schema_for(self, name: str) -> Mapping[str, Any] | None:
        tool = self._tools.get(name)
        return tool.input_schema() if tool is not None else None

    def _encode(self, output: object) -> str:
        return to_yaml(output)

    def _schema_text(self, schema: Mapping[str, object]) -> str:
        return to_yaml(dict(schema))

    def _syntax_guidance(self) -> str:
        return (
            "Call tools with YAML, as a list of calls:\n"
            "- tool: tool_name\n"
            "  args:\n"
            "    param: value\n"
            "Add items to the list for several independent calls; they run in parallel "
            "and their results come back in order."
        )
