"""Tool chains: parse calls from an action section, run them, format the observation.

``JSONToolChain`` and ``YAMLToolChain`` differ only in how calls are read and outputs
written; registration, execution, errors and formatting live in ``_ToolChainBase``.
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import functools
import inspect
import logging
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, Self, cast, runtime_checkable

import msgspec

from formats import FormattedSection, TextFormat, XMLFormat
from toolchain._abandon import abandon
from toolchain._calls import call_from_mapping, decode_json_calls
from toolchain._content import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent
from toolchain._context import Cancelled, ExecutionContext, Stats
from toolchain._eager import eager_task, settle
from toolchain._errors import (
    DuplicateToolError,
    ToolCallParseError,
    ToolError,
    describe_exception,
    exception_text,
)
from toolchain._events import AfterToolCall, BeforeToolCall, ToolCallParseFailed
from toolchain._extension import Extension, install_extensions
from toolchain._hooks import ToolCallRefused, guard_call, refusal_error
from toolchain._input import ArgumentsError
from toolchain._oneline import log_line
from toolchain._output import to_json, to_yaml
from toolchain._result import (
    CallObservation,
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    ToolResult,
)
from toolchain._runner import run_sync
from toolchain._tool import Tool, check_tool
from toolchain._workers import run_in_worker
from toolchain._yaml_calls import load_yaml_calls

__all__ = ["JSONToolChain", "ToolChain", "YAMLToolChain"]

AnyTool = Tool[Any, Any]
_SECTION_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_MAX_SECTION_NAME = 64
# The sections agents read from a model's output. Reserved in every observation even
# when the format it is written with has not registered them (a bare XMLFormat(), a
# native agent's format, a loop of one's own): the text may still be read by a format
# that has, and a call's section must never re-parse as an answer.
_AGENT_SECTIONS = frozenset({"thinking", "action", "answer", "observation"})
_log = logging.getLogger("toolchain")


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

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str: ...

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


class _Outcome(NamedTuple):  # internal and per call: a tuple is cheaper to build
    call: ToolCall
    result: ToolResult[object] | None
    error: ToolCallError | None
    text: str  # the serialised output, or the error line
    media: tuple[ContentPart, ...] | None = None  # shown instead of result.media (a hook's)


class _Signals:
    """Which calls of one action the chain has cancelled, why, and when."""

    __slots__ = ("at", "why")

    def __init__(self) -> None:
        self.why: dict[int, ErrorKind] = {}
        self.at: dict[int, float] = {}


class _ToolChainBase(ABC):
    syntax: str  # "JSON" or "YAML", for messages

    def __init__(
        self,
        *,
        name: str = "action",
        subsection: str | None = None,
        timeout: float | None = 60.0,
        max_calls: int = 64,
        max_output_chars: int = 100_000,
        max_observation_chars: int = 400_000,
        cancel_grace: float = 1.0,
        extensions: Sequence[Extension] = (),
    ) -> None:
        """Options, all keyword-only:

        - ``name``: the section the calls are read from (``action``).
        - ``subsection``: read calls from sub-sections of that name inside the action
          (gent's ``<action><direct_call>…</direct_call></action>``); content without
          one is read whole.
        - ``timeout``: seconds per call unless the tool sets its own; ``None``: none.
        - ``max_calls``: calls run per action; the rest are reported as one error.
        - ``max_output_chars`` / ``max_observation_chars``: a call's serialised output
          is cut to the smaller of ``max_output_chars`` and its share of
          ``max_observation_chars``, with a note saying so (``raw`` keeps it whole).
        - ``cancel_grace``: seconds a cancelled or timed-out call gets to stop before
          it is abandoned (a tool that swallows ``CancelledError`` cannot hang a run).
        - ``extensions``: their tools are registered now, and each is installed on a
          run's context when the chain first executes in it (see ``Extension``).
        """
        if max_calls < 1 or max_output_chars < 1 or max_observation_chars < 1:
            raise ValueError("max_calls, max_output_chars and max_observation_chars must be >= 1")
        self._name = name
        self._subsection = subsection
        self.timeout = timeout
        self.max_calls = max_calls
        self.max_output_chars = max_output_chars
        self.max_observation_chars = max_observation_chars
        self.cancel_grace = cancel_grace
        self._tools: dict[str, AnyTool] = {}
        self._reserved: tuple[TextFormat, int, frozenset[str]] | None = None
        self.extensions: tuple[Extension, ...] = tuple(extensions)
        for extension in self.extensions:
            for tool in extension.tools():
                self.register_tool(tool)

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
        """Add a tool; returns the chain, so registrations chain.

        Raises ``ToolDefinitionError`` for a tool without a valid name or description,
        ``ToolInputTypeError`` for an input type that is not a model, dataclass,
        TypedDict or Struct, and ``DuplicateToolError`` when the name is taken.

        >>> from toolchain import tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> list(JSONToolChain().register_tool(ping).tools)
        ['ping']
        """
        check_tool(tool)
        name = tool.name
        existing = self._tools.get(name)
        if existing is not None:
            raise DuplicateToolError(
                f"a tool named {name!r} is already registered ({existing!r}); "
                "tool names must be unique within a chain"
            )
        tool.input_schema()  # fail now, not at the first call, on a bad input type
        self._tools[name] = tool
        return self

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str:
        """Each tool's name, description, policy and parameter schema, for the prompt.

        ``names`` lists only those tools (the ones active in a step), in chain order.
        """
        tools: Iterable[AnyTool] = self._tools.values()
        if names is not None:
            wanted = set(names)
            tools = [tool for tool in tools if tool.name in wanted]
        blocks: list[str] = []
        for tool in tools:
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
        try:
            if self._subsection:
                fmt = text_format if text_format is not None else XMLFormat()
                nested = fmt.parse_nested(content, [self._subsection])
                blocks = next(iter(nested.values()), None)
                if blocks:
                    return [item for block in blocks for item in self._decode(block)]
            return self._decode(content)
        except ToolCallParseError:
            raise
        except Exception as error:  # the parsers' own guards should make this unreachable
            _log.exception("reading tool calls failed unexpectedly")
            raise ToolCallParseError(
                f"tool calls could not be read ({type(error).__name__}); write them as "
                f"{self.syntax} in the documented shape"
            ) from error

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

        ``text`` of the result is the observation, already wrapped by
        ``text_format.wrap_observation``; ``raw`` holds each call's typed output or
        error, in call order. Raises ``ToolCallParseError`` when the content is not
        tool calls at all; every other failure (unknown tool, invalid arguments, a
        tool that raises, hangs or returns junk, a hook that fails, a limit) is
        reported per call, in ``text`` and in ``raw.errors``, and logged on the
        ``toolchain`` logger. Only ``KeyboardInterrupt`` from a tool propagates (it
        stops the program, as Python intends).
        """
        try:
            items = self.parse_calls(content, text_format)
        except ToolCallParseError as error:
            if ctx.events.has_subscribers(ToolCallParseFailed):
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
        """``execute`` for synchronous code; not callable from a running event loop.

        >>> from formats import MarkdownFormat
        >>> from toolchain import tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> chain = JSONToolChain().register_tool(ping)
        >>> print(chain.execute_sync(ExecutionContext(), '{"tool": "ping"}', MarkdownFormat()).text)
        # observation
        <BLANKLINE>
        ## ping
        pong
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run_sync(self.execute(ctx, content, text_format), grace=self.cancel_grace)
        raise RuntimeError("execute_sync() was called inside an event loop; await execute()")

    async def _run(
        self, ctx: ExecutionContext, items: list[ToolCall | str], text_format: TextFormat
    ) -> ToolChainResult:
        if not items:
            return ToolChainResult()
        if self.extensions:
            install_extensions(ctx, self.extensions)
        if len(items) > self.max_calls + 1 or (
            len(items) == self.max_calls + 1 and not _is_overflow(items[-1])
        ):
            dropped = len(items) - self.max_calls
            items = [*items[: self.max_calls], _too_many(dropped, self.max_calls)]
        for index, item in enumerate(items):
            if type(item) is ToolCall and not item.id:
                items[index] = ToolCall(item.name, item.args, ctx.new_call_id(), item.rejected)
        signals = _Signals()
        if len(items) == 1:
            return self._assemble([await self._run_alone(ctx, items[0], signals)], text_format)
        done: list[_Outcome | None] = [None] * len(items)
        tasks: dict[int, asyncio.Task[_Outcome]] = {}
        finished: list[asyncio.Task[_Outcome]] = []
        context = contextvars.copy_context()
        for index, item in enumerate(items):
            # Each call runs eagerly, as its own task, up to its first real suspension:
            # most finish there, and the chain then has their outcome without waiting.
            task, first = eager_task(self._run_one(ctx, index, item, signals), context=context)
            if not first.done:
                tasks[index] = task
                continue
            finished.append(task)
            if first.error is None:
                done[index] = first.value
            else:  # _run_one contains every failure: this would be a bug in the chain
                done[index] = self._internal_error(ctx, item, first.error)
        if tasks:
            await self._wait(ctx, items, tasks, signals)
        for task in finished:  # on 3.11 they still take one empty step: leave none behind
            await settle(task)
        outcomes = [
            outcome
            if outcome is not None
            else self._outcome_of(ctx, items[index], tasks[index], signals.why.get(index))
            for index, outcome in enumerate(done)
        ]
        return self._assemble(outcomes, text_format)

    async def _run_alone(
        self, ctx: ExecutionContext, item: ToolCall | str, signals: _Signals
    ) -> _Outcome:
        """One call, driven in the caller's own task: no task, no loop turn when it
        finishes without suspending, and task-bound state (cancel scopes) intact.

        Timeouts and the run's cancellation are thrown into the call as a task would
        see them; a call that ignores them for ``cancel_grace`` seconds is abandoned
        (no longer driven) and reported.
        """
        step = self._run_one(ctx, 0, item, signals)
        waiting_on: object
        try:
            waiting_on = step.send(None)
        except StopIteration as stop:
            finished: _Outcome = stop.value
            return finished
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[str] = loop.create_future()

        def signal(kind: str) -> None:
            if not wake.done():
                wake.set_result(kind)

        def on_cancel() -> None:
            loop.call_soon_threadsafe(signal, "cancelled")

        def ready(_: object) -> None:
            signal("ready")

        limit = self._timeout_of(item)
        timer = None if limit is None else loop.call_later(limit, signal, "timeout")
        remove = ctx.on_cancel(on_cancel)
        grace: asyncio.TimerHandle | None = None
        try:
            while True:
                pending = _future_of(waiting_on)
                if pending is not None:
                    pending.add_done_callback(ready)
                else:  # a bare yield (asyncio.sleep(0)): one loop turn
                    loop.call_soon(signal, "ready")
                try:
                    kind = await wake
                except asyncio.CancelledError as error:
                    # This task was cancelled (its caller, or a cancel scope inside the
                    # call): deliver it into the call exactly as a Task would.
                    wake = loop.create_future()
                    if pending is not None and not pending.done():
                        pending.cancel(*error.args[:1])
                        waiting_on = step.send(None)
                    else:
                        waiting_on = step.throw(error)
                    continue
                wake = loop.create_future()
                if kind == "abandon":
                    abandon(step)
                    return self._stopped(ctx, item, signals.why.get(0), abandoned=True)
                if kind in ("timeout", "cancelled") and 0 not in signals.why:
                    signals.why[0] = "timeout" if kind == "timeout" else "cancelled"
                    grace = loop.call_later(self.cancel_grace, signal, "abandon")
                    if pending is None:
                        waiting_on = step.throw(asyncio.CancelledError())
                        continue
                    pending.cancel()  # as Task.cancel does: the call reads it on resuming
                elif kind != "ready" or (pending is not None and not pending.done()):
                    continue  # a signal after the first, or a stale wake-up
                waiting_on = step.send(None)
        except StopIteration as stop:
            outcome: _Outcome = stop.value
            return outcome
        finally:
            remove()
            for handle in (timer, grace):
                if handle is not None:
                    handle.cancel()

    async def _wait(
        self,
        ctx: ExecutionContext,
        items: list[ToolCall | str],
        tasks: dict[int, asyncio.Task[_Outcome]],
        signals: _Signals,
    ) -> None:
        """Wait for the suspended calls, enforcing timeouts and cancellation.

        A call that ignores its cancellation is waited for ``cancel_grace`` seconds,
        then abandoned: its task is left running and the call reported as such.
        """
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        remaining = len(tasks)

        def finished(_: object) -> None:
            nonlocal remaining
            remaining -= 1
            if remaining == 0 and not waiter.done():
                waiter.set_result(None)

        def give_up() -> None:
            # Stop waiting once every unfinished call was cancelled at least `grace` ago.
            if waiter.done():
                return
            deadline = loop.time() - self.cancel_grace
            if all(
                task.done() or signals.at.get(index, deadline + 1) <= deadline
                for index, task in tasks.items()
            ):
                waiter.set_result(None)

        def stop(index: int, why: ErrorKind) -> None:
            task = tasks.get(index)
            if task is None or task.done() or index in signals.why:
                return
            signals.why[index] = why
            signals.at[index] = loop.time()
            task.cancel()
            loop.call_later(self.cancel_grace + 1e-3, give_up)

        def cancel_all() -> None:
            for index in tasks:
                stop(index, "cancelled")

        for task in tasks.values():
            task.add_done_callback(finished)

        def on_cancel() -> None:
            loop.call_soon_threadsafe(cancel_all)

        remove = ctx.on_cancel(on_cancel)
        timers = self._arm_timeouts(items, tasks, stop)
        try:
            await waiter
        except asyncio.CancelledError:
            for task in tasks.values():
                task.cancel()
            raise
        finally:
            remove()
            for timer in timers:
                timer.cancel()

    def _arm_timeouts(
        self,
        items: list[ToolCall | str],
        tasks: Mapping[int, asyncio.Task[_Outcome]],
        stop: Callable[[int, ErrorKind], None],
    ) -> list[asyncio.TimerHandle]:
        """One timer per distinct timeout in the action, cancelling the calls still running.

        Calls start together, so a call's deadline is the action's start plus its
        timeout; timers are far cheaper than an ``asyncio.timeout`` around each call.
        """
        limits = {index: self._timeout_of(items[index]) for index in tasks}
        distinct = {t for t in limits.values() if t is not None}
        if not distinct:
            return []

        def expire(limit: float) -> None:
            for index, value in limits.items():
                if value == limit:
                    stop(index, "timeout")

        loop = asyncio.get_running_loop()
        return [loop.call_later(t, expire, t) for t in distinct]

    def _timeout_of(self, item: ToolCall | str) -> float | None:
        tool = self._tools.get(item.name) if isinstance(item, ToolCall) else None
        if tool is None:
            return None
        return tool.timeout if tool.timeout is not None else self.timeout

    def _outcome_of(
        self,
        ctx: ExecutionContext,
        item: ToolCall | str,
        task: asyncio.Task[_Outcome],
        why: ErrorKind | None,
    ) -> _Outcome:
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is None:
                return task.result()
            return self._internal_error(ctx, item, error)
        return self._stopped(ctx, item, why, abandoned=not task.done())

    def _internal_error(
        self, ctx: ExecutionContext, item: ToolCall | str, error: BaseException
    ) -> _Outcome:
        """A failure that escaped ``_run_one``, which contains every failure: a bug here."""
        _log.error("a tool call failed inside the chain itself", exc_info=error)
        call = item if isinstance(item, ToolCall) else ToolCall("error", {})
        return self._fail(ctx, call, "tool_error", f"internal error: {describe_exception(error)}")

    def _stopped(
        self, ctx: ExecutionContext, item: ToolCall | str, why: ErrorKind | None, *, abandoned: bool
    ) -> _Outcome:
        """The outcome of a call the chain cancelled (timeout or the run's cancellation)."""
        call = item if isinstance(item, ToolCall) else ToolCall("error", {})
        if why == "timeout":
            message = f"{call.name} did not finish within {self._timeout_of(call):g} s"
        else:
            message = f"{call.name} was cancelled: {ctx.cancel_reason or 'cancelled'}"
        if abandoned:
            message += " (it ignored cancellation and was abandoned)"
            _log.warning("abandoned tool call %s (%s): it ignored cancellation", call.name, call.id)
        return self._fail(ctx, call, why or "cancelled", message, TimeoutError(message))

    async def _run_one(
        self, ctx: ExecutionContext, index: int, item: ToolCall | str, signals: _Signals
    ) -> _Outcome:
        started = time.perf_counter()
        if isinstance(item, str):
            return self._after(
                ctx, index, ToolCall("error", {}), None, ToolCallError("parse", item), started
            )
        call = item
        stats = ctx.stats
        stats.count_call(Stats.TOOL_CALLS, call.name)
        if call.rejected is not None:
            return self._after(ctx, index, call, None, call.rejected, started)
        tool = self._tools.get(call.name)
        if tool is None:
            failure = ToolCallError("unknown_tool", self._unknown_message(call.name))
            return self._after(ctx, index, call, None, failure, started)
        over = ctx.limits.tool_call_refused(stats, call.name)
        if over is not None:
            message = f"{call.name} was not run: the run's {over} limit is reached"
            return self._after(ctx, index, call, None, ToolCallError("limit", message), started)
        raw_args = call.args
        hooks = ctx.hooks
        if hooks.before:
            replaced, refusal = await _before_hooks(ctx, call)
            if refusal is not None:
                return self._after(ctx, index, call, None, refusal, started)
            call = replaced
            found = self._tools.get(call.name)
            if found is None:
                unknown = ToolCallError("unknown_tool", self._unknown_message(call.name))
                return self._after(ctx, index, call, None, unknown, started)
            tool = found
        if hooks.guarded:  # on the call as it will run, rewritten by the before hooks
            refusal = await guard_call(ctx, call)
            if refusal is not None:
                return self._after(ctx, index, call, None, refusal, started)
        if ctx.events.has_subscribers(BeforeToolCall):
            ctx.events.emit(BeforeToolCall(ctx, index, call.name, call.args, call.id, raw_args))
        result, problem = await self._invoke(ctx, tool, call.args, index, signals)
        if problem is None and result is not None and hooks.after:
            result, problem = await _after_hooks(ctx, call, result)
        outcome = self._after(ctx, index, call, result, problem, started)
        if hooks.observation and outcome.result is not None:
            outcome = await _observation_hooks(ctx, outcome, outcome.result)
        return outcome

    def _after(
        self,
        ctx: ExecutionContext,
        index: int,
        call: ToolCall,
        result: ToolResult[object] | None,
        failure: ToolCallError | None,
        started: float,
    ) -> _Outcome:
        """Every call ends here, failed or not: observers see them all."""
        if ctx.events.has_subscribers(AfterToolCall):
            duration = time.perf_counter() - started
            ctx.events.emit(
                AfterToolCall(ctx, index, call.name, call.args, result, failure, duration, call.id)
            )
        if failure is not None or result is None:
            failure = failure or ToolCallError("output_error", f"{call.name} returned no result")
            return self._fail(ctx, call, failure.kind, failure.message, failure.exception)
        try:
            text = self._encode(result.text)
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as error:
            message = (
                f"{call.name} produced output that cannot be shown: {describe_exception(error)}"
            )
            _log.warning("%s", message, exc_info=error)
            return self._fail(ctx, call, "output_error", message[:500], error)
        return _Outcome(call, result, None, text)

    async def _invoke(
        self,
        ctx: ExecutionContext,
        tool: AnyTool,
        args: Mapping[str, object],
        index: int,
        signals: _Signals,
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        try:
            value = tool.codec.validate(args)
        except ArgumentsError as error:
            message = f"invalid arguments for {tool.name}: {error}"
            return None, ToolCallError("invalid_arguments", message, error)
        except Exception as error:  # a validator that raises something odd, deep nesting …
            message = f"invalid arguments for {tool.name}: {describe_exception(error)}"
            _log.warning("validating arguments of %s raised", tool.name, exc_info=error)
            return None, ToolCallError("invalid_arguments", message[:1000], error)
        result: object
        try:
            if tool.is_async:
                result = await cast("Awaitable[object]", tool.call(ctx, value))
            elif tool.inline:
                result = tool.call(ctx, value)
            else:
                result = await run_in_worker(functools.partial(tool.call, ctx, value))
                if inspect.isawaitable(result):
                    result = await result
        except ToolError as error:
            return None, ToolCallError("tool_error", exception_text(error), error)
        except Cancelled as error:
            return None, ToolCallError("cancelled", f"cancelled: {exception_text(error)}", error)
        except asyncio.CancelledError as error:
            why = signals.why.get(index)
            if why == "timeout":
                message = (
                    f"{tool.name} did not finish within {self._timeout_of(ToolCall(tool.name)):g} s"
                )
                return None, ToolCallError("timeout", message, TimeoutError(message))
            if why is None and not ctx.cancelled:
                raise  # someone else cancelled the whole execution
            reason = ctx.cancel_reason or "cancelled"
            return None, ToolCallError("cancelled", f"{tool.name} was cancelled: {reason}", error)
        except (KeyboardInterrupt, GeneratorExit):  # GeneratorExit: a coroutine being closed
            raise
        except BaseException as error:  # SystemExit … from user code: this call's
            message = f"{tool.name} failed: {describe_exception(error)}"
            _log.warning("tool %s raised", tool.name, exc_info=error)
            return None, ToolCallError("tool_error", message[:2000], error)
        if not isinstance(result, ToolResult):
            message = f"{tool.name} returned {type(result).__name__}, not a ToolResult"
            _log.error("%s: its call() must return ToolResult(...)", message)
            return None, ToolCallError("output_error", message)
        # Any ToolResult: its text is an object to the chain (isinstance leaves it Unknown).
        return cast("ToolResult[object]", result), None

    def _fail(
        self,
        ctx: ExecutionContext,
        call: ToolCall,
        kind: ErrorKind,
        message: str,
        exception: BaseException | None = None,
    ) -> _Outcome:
        ctx.stats.count_call(Stats.TOOL_ERRORS, call.name)
        _log_failure(call, kind, message)
        return _Outcome(call, None, ToolCallError(kind, message, exception), f"Error: {message}")

    def _unknown_message(self, name: str) -> str:
        known = list(self._tools)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        listing = ", ".join(known) or "(none)"
        shown = name if len(name) <= 80 else name[:77] + "..."
        return f"unknown tool {shown!r}.{hint} Available tools: {listing}"

    def _assemble(self, outcomes: list[_Outcome], text_format: TextFormat) -> ToolChainResult:
        reserved = self._reserved_names(text_format)
        share = min(self.max_output_chars, max(1, self.max_observation_chars // len(outcomes)))
        sections: list[FormattedSection] = []
        media: list[ContentPart] = []
        observations: list[CallObservation] = []
        calls: list[ToolCall] = []
        results: list[RawToolCallResult | None] = []
        errors: list[ToolCallError | None] = []
        for outcome in outcomes:
            call, result, text = outcome.call, outcome.result, outcome.text
            if len(text) > share:
                text = (
                    f"{text[:share]}\n[output truncated: {share} of {len(text)} characters "
                    "shown; ask for less, e.g. a narrower query]"
                )
            children: tuple[FormattedSection, ...] = ()
            part_media: tuple[ContentPart, ...] = ()
            instructions = ""
            if result is not None:
                results.append(RawToolCallResult(call.name, result.text, result, call.id))
                shown = tuple(result.media) if outcome.media is None else outcome.media
                if result.instructions or shown:
                    instructions, part_media, children = _extras(result.instructions, shown, media)
            else:
                results.append(None)
            name = call.name
            if name not in self._tools or name.lower() in reserved:
                name = self._section_name(name, reserved)
            sections.append(FormattedSection(name, text, children))
            observations.append(
                CallObservation(call.id, call.name, text, part_media, instructions, outcome.error)
            )
            calls.append(call)
            errors.append(outcome.error)
        raw = RawToolChainResult(tuple(calls), tuple(results), tuple(errors))
        text = text_format.wrap_observation(text_format.format_sections(sections))
        return ToolChainResult(text, tuple(media), raw, tuple(observations))

    def _reserved_names(self, text_format: TextFormat) -> frozenset[str]:
        """Section names an observation must not use, lower-cased: the format's own, the
        chain's, and those agents read whatever the format registered."""
        sections = text_format.sections
        cached = self._reserved
        if cached is not None and cached[0] is text_format and cached[1] == len(sections):
            return cached[2]
        names = frozenset(
            {section.name.lower() for section in sections} | _AGENT_SECTIONS | {self._name.lower()}
        )
        self._reserved = (text_format, len(sections), names)
        return names

    def _section_name(self, name: str, reserved: frozenset[str]) -> str:
        """A section name for a call's result that can never be read as another section.

        Registered tools have valid names; a name the model invented is reduced to
        ASCII tag characters. Either way, a name the text format uses for its own
        sections, or one agents read (``answer``, ``action``, ``thinking``), is prefixed,
        so an observation can never hold a section that re-parses as an answer.
        """
        if name not in self._tools:
            name = _SECTION_UNSAFE.sub("_", name)[:_MAX_SECTION_NAME].strip("._-") or "unknown_tool"
            if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
                name = "tool_" + name
        if name.lower() in reserved:
            name = "tool_" + name
        return name


async def _before_hooks(
    ctx: ExecutionContext, call: ToolCall
) -> tuple[ToolCall, ToolCallError | None]:
    for hook in ctx.hooks.before:
        try:
            replaced = hook(ctx, call)
            if replaced is not None and inspect.isawaitable(replaced):
                replaced = await replaced
        except ToolCallRefused as refused:
            return call, refusal_error(call, refused)
        except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError):
            raise
        except BaseException as error:
            _log.warning("a before-tool-call hook failed on %s", call.name, exc_info=error)
            return call, ToolCallError("hook_error", _hook_message(error), error)
        if replaced is None:
            continue
        # Hooks are user code: check what they return, whatever their annotations say.
        if not isinstance(cast(object, replaced), ToolCall):
            message = f"a tool-call hook returned {type(replaced).__name__}, not a ToolCall"
            _log.error("%s (hook %r)", message, hook)
            return call, ToolCallError("hook_error", message)
        call = replaced if replaced.id else ToolCall(replaced.name, replaced.args, call.id)
    return call, None


async def _after_hooks(
    ctx: ExecutionContext, call: ToolCall, result: ToolResult[object]
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    for hook in ctx.hooks.after:
        try:
            replaced = hook(ctx, call, result)
            if replaced is not None and inspect.isawaitable(replaced):
                replaced = await replaced
        except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError):
            raise
        except BaseException as error:
            _log.warning("an after-tool-call hook failed on %s", call.name, exc_info=error)
            return None, ToolCallError("hook_error", _hook_message(error), error)
        if replaced is None:
            continue
        # Hooks are user code: check what they return, whatever their annotations say.
        if not isinstance(cast(object, replaced), ToolResult):
            message = f"a tool-call hook returned {type(replaced).__name__}, not a ToolResult"
            _log.error("%s (hook %r)", message, hook)
            return None, ToolCallError("hook_error", message)
        result = replaced
    return result, None


async def _observation_hooks(
    ctx: ExecutionContext, outcome: _Outcome, result: ToolResult[object]
) -> _Outcome:
    """The outcome with the text (and parts) its observation hooks wrote; raw keeps the
    result. A hook's ``(text, media)`` replaces the parts shown; a plain text keeps them."""
    call, text, shown = outcome.call, outcome.text, outcome.media
    for hook in ctx.hooks.observation:
        try:
            rewritten = hook(ctx, call, result, text)
            if type(rewritten) is not str and inspect.isawaitable(rewritten):
                rewritten = await rewritten
        except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError):
            raise
        except BaseException as error:
            _log.warning("an observation hook failed on %s", call.name, exc_info=error)
            ctx.stats.count_call(Stats.TOOL_ERRORS, call.name)
            failure = ToolCallError("hook_error", _hook_message(error), error)
            _log_failure(call, failure.kind, failure.message)
            return _Outcome(call, None, failure, f"Error: {failure.message}")
        if rewritten is None:
            continue
        parts = _shown_parts(cast(object, rewritten))
        if parts is not None:
            text, shown = parts
        elif isinstance(cast(object, rewritten), str):
            text = cast(str, rewritten)
        else:
            message = (
                f"an observation hook returned {type(rewritten).__name__}, not a str "
                "or (str, media)"
            )
            _log.error("%s (hook %r)", message, hook)
            ctx.stats.count_call(Stats.TOOL_ERRORS, call.name)
            failure = ToolCallError("hook_error", message)
            _log_failure(call, failure.kind, failure.message)
            return _Outcome(call, None, failure, f"Error: {message}")
    return _Outcome(call, result, None, text, shown)


_PART_TYPES = (TextContent, ImageContent, AudioContent, BinaryContent)


def _shown_parts(value: object) -> tuple[str, tuple[ContentPart, ...]] | None:
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


_LOGGED_CHARS = 500  # a log record quotes this much of a name or message


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


_OVERFLOW = "were not run: an action may hold at most"


def _too_many(dropped: int, limit: int) -> str:
    return (
        f"{dropped} more call{'s' if dropped != 1 else ''} {_OVERFLOW} {limit} calls; "
        "send the rest in a later action"
    )


def _is_overflow(item: ToolCall | str) -> bool:
    if isinstance(item, ToolCall):  # a parse problem handed over as a rejected call
        return item.rejected is not None and _OVERFLOW in item.rejected.message
    return _OVERFLOW in item


def _future_of(value: object) -> asyncio.Future[object] | None:
    """What a suspended coroutine yielded, as the future it waits on (or None)."""
    return cast("asyncio.Future[object]", value) if isinstance(value, asyncio.Future) else None


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


def _hook_message(error: BaseException) -> str:
    return f"a tool-call hook failed: {describe_exception(error)}"


def _describe_part(part: ContentPart) -> str:
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
        values = decode_json_calls(content)
        limit = self.max_calls
        items = [call_from_mapping(i, item) for i, item in enumerate(values[:limit])]
        if len(values) > limit:  # build no calls that will not run
            items.append(_too_many(len(values) - limit, limit))
        return items

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
        return load_yaml_calls(
            content,
            self._schema_for,
            limit=self.max_calls,
            too_many=lambda extra: _too_many(extra, self.max_calls),
        )

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
