"""``ReActAgent``: think, act through a tool chain, observe, until an answer or a limit.

Each iteration: one model call, ``text_format.parse`` of its output, then either the
action sections run through the tool chain (their observation, media included, is the
next user message) or the answer section ends the run through the termination. An
action beats an answer written in the same output. Output that cannot be used gets
corrective feedback naming what was wrong, and the run goes on, within the limits of
the run's ``ExecutionContext``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar, cast, overload

from typing_extensions import Unpack

from agents.events import (
    AfterModelCall,
    AnswerReady,
    BeforeModelCall,
    IterationFinished,
    IterationStarted,
    LimitReached,
    ModelTextDelta,
    ObservationReady,
    OutputRejected,
    RunEvent,
    RunFinished,
    ToolCallFinished,
    ToolCallStarted,
)
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelError,
    ModelResponse,
    TextDelta,
    UnsupportedContentError,
    Usage,
    resolve_model,
)
from agents.prompt import PromptBuilder, PromptContext, default_system_prompt
from agents.result import AgentResult, Iteration, StopKind
from agents.terminations import AnswerRejected, Termination, TextTermination
from formats import FormatParseError, Section, SectionDelta, TextFormat, XMLFormat
from toolchain import (
    AfterToolCall,
    BeforeToolCall,
    ContentPart,
    ExecutionContext,
    Limits,
    Stats,
    TextContent,
    ToolCallParseError,
    ToolChain,
    ToolChainResult,
    YAMLToolChain,
    describe_exception,
    eager_task,
    run_sync,
)

__all__ = ["AgentOptions", "ReActAgent"]

AnswerT = TypeVar("AnswerT")
T = TypeVar("T")
Q = TypeVar("Q")

_log = logging.getLogger("agents")
CANCEL_GRACE = 1.0
TIME_LIMIT = "the run's time limit was reached"
THINKING_GUIDANCE = "Think step by step: what you know, what is missing, what to do next."


class AgentOptions(TypedDict, total=False):
    """Keyword options of ``ReActAgent`` besides the model and the termination.

    >>> from agents import ScriptedModel
    >>> options: AgentOptions = {"behavior": "You are terse.", "thinking": False}
    >>> ReActAgent(ScriptedModel(["<answer>ok</answer>"]), **options).behavior
    'You are terse.'
    """

    tool_chain: ToolChain
    """Reads and runs the calls of the ``action`` section (default ``YAMLToolChain()``)."""
    text_format: TextFormat
    """The section convention, both ways (default ``XMLFormat()``)."""
    behavior: str
    """Who the agent is and how it behaves: the start of the system prompt."""
    critical_rules: str
    """Rules the model must never break, given their own prompt section."""
    thinking: bool
    """Register a ``thinking`` section (default True)."""
    limits: Limits
    """Bounds on each run (iterations, tool calls, tokens, errors, time)."""
    options: GenerateOptions
    """Sampling options for every model call (the observation stop is added)."""
    prompt_builder: PromptBuilder
    """Builds the system prompt from a ``PromptContext`` (default ``default_system_prompt``)."""
    clock: Callable[[], dt.date]
    """Today's date for the prompt (default ``date.today``). Pass a fixed clock, such
    as ``toolchain.testing.fixed_clock``, to make prompts and transcripts reproducible."""
    name: str
    """The run's name in contexts and traces (default ``agent``)."""


class _Stop(Exception):
    kind: StopKind

    def __init__(self, kind: StopKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class _Done(Generic[T]):
    value: T


class ReActAgent(Generic[AnswerT]):
    """A ReAct loop over any ``Model``, ``ToolChain``, ``TextFormat`` and ``Termination``.

    Defaults follow gent: ``XMLFormat``, ``YAMLToolChain``, ``TextTermination`` and a
    thinking section. ``model`` may be a ``Model`` or a model string
    (``"openai:gpt-4o-mini"``). With a ``TypedTermination(Order)``, ``run`` returns an
    ``AgentResult[Order]``.

    >>> from agents.models import ScriptedModel
    >>> agent = ReActAgent(ScriptedModel(["<thinking>Easy.</thinking><answer>4</answer>"]))
    >>> agent.run_sync("What is 2 + 2?").answer
    '4'
    """

    @overload
    def __init__(
        self: ReActAgent[str],
        model: Model | str,
        *,
        termination: None = None,
        **options: Unpack[AgentOptions],
    ) -> None: ...

    @overload
    def __init__(
        self,
        model: Model | str,
        *,
        termination: Termination[AnswerT],
        **options: Unpack[AgentOptions],
    ) -> None: ...

    def __init__(
        self,
        model: Model | str,
        *,
        termination: Termination[Any] | None = None,
        **options: Unpack[AgentOptions],
    ) -> None:
        self.model = resolve_model(model)
        self.tool_chain: ToolChain = options.get("tool_chain") or YAMLToolChain()
        self.text_format: TextFormat = options.get("text_format") or XMLFormat()
        self.termination: Termination[Any] = termination or TextTermination()
        self.behavior = options.get("behavior", "")
        self.critical_rules = options.get("critical_rules", "")
        self.limits = options.get("limits") or Limits()
        self.prompt_builder: PromptBuilder = options.get("prompt_builder", default_system_prompt)
        self.clock: Callable[[], dt.date] = options.get("clock", dt.date.today)
        self.name = options.get("name", "agent")
        base = options.get("options") or GenerateOptions()
        stop = self.text_format.wrap_observation("\x00").split("\x00", 1)[0].strip()
        # Stop before the model writes an observation of its own: only tools do that.
        self.generate_options = GenerateOptions(
            stop=tuple(dict.fromkeys((*base.stop, stop))),
            temperature=base.temperature,
            max_tokens=base.max_tokens,
            seed=base.seed,
        )
        registered = {s.name.lower() for s in self.text_format.sections}
        wanted = [self.tool_chain, self.termination]
        if options.get("thinking", True):
            wanted.insert(0, Section("thinking", THINKING_GUIDANCE))
        for section in wanted:
            if section.name.lower() not in registered:
                self.text_format.register_section(section)

    # -- public API ------------------------------------------------------------------

    def system_prompt(self) -> str:
        """The system prompt this agent sends (built by its ``prompt_builder``)."""
        return self.prompt_builder(
            PromptContext(
                self.text_format, self.tool_chain, self.behavior, self.critical_rules, self.clock()
            )
        )

    async def run(
        self,
        task: str | Sequence[ContentPart],
        *,
        ctx: ExecutionContext | None = None,
        history: Sequence[Message] = (),
    ) -> AgentResult[AnswerT]:
        """Run until an answer, a limit, cancellation or a model failure.

        ``history`` continues a conversation: the messages of an earlier result
        (``result.messages``, or read back with ``messages_from_json``). Their system
        message is replaced by this agent's; the task follows them as a new user turn.

        >>> from agents.models import ScriptedModel
        >>> agent = ReActAgent(ScriptedModel(["<answer>Paris</answer>", "<answer>2.1M</answer>"]))
        >>> first = agent.run_sync("Capital of France?")
        >>> agent.run_sync("Its population?", history=first.messages).answer
        '2.1M'
        """
        result: AgentResult[AnswerT] | None = None
        async for event in self._loop(task, ctx, history, streaming=False):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None  # _loop always ends with RunFinished
        return result

    def run_sync(
        self,
        task: str | Sequence[ContentPart],
        *,
        ctx: ExecutionContext | None = None,
        history: Sequence[Message] = (),
    ) -> AgentResult[AnswerT]:
        """``run`` for synchronous code (not from inside a running event loop).

        A tool that ignores cancellation cannot keep this from returning: leftover
        tasks are abandoned after a grace period (see ``toolchain.run_sync``).
        """
        return run_sync(self.run(task, ctx=ctx, history=history))

    def stream(
        self,
        task: str | Sequence[ContentPart],
        *,
        ctx: ExecutionContext | None = None,
        history: Sequence[Message] = (),
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        """Run, yielding typed events as they happen; the last is ``RunFinished``."""
        return self._loop(task, ctx, history, streaming=True)

    # -- the loop --------------------------------------------------------------------

    async def _loop(
        self,
        task: str | Sequence[ContentPart],
        ctx: ExecutionContext | None,
        history: Sequence[Message],
        *,
        streaming: bool,
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        if ctx is None:
            ctx = ExecutionContext(limits=self.limits, name=self.name)
        elif not ctx.limits_given:
            ctx.limits = self.limits  # a ctx passed only to cancel or observe keeps our limits
        loop = asyncio.get_running_loop()
        deadline = None if ctx.limits.timeout is None else loop.time() + ctx.limits.timeout
        fmt = self.text_format
        task_parts: tuple[ContentPart, ...] = (
            (TextContent(fmt.format_section("task", task)),)
            if isinstance(task, str)
            else tuple(task)
        )
        messages = [
            Message.text("system", self.system_prompt()),
            *(message for message in history if message.role != "system"),
            Message("user", task_parts),
        ]
        iterations: list[Iteration] = []
        usage = Usage()
        answer: AnswerT | None = None
        stop: _Stop

        while True:
            index = len(iterations) + 1
            try:
                self._check(ctx, deadline, loop.time())
                ctx.stats.increment(Stats.ITERATIONS)
                ctx.events.emit(IterationStarted(ctx, index))
                started = time.perf_counter()
                response: ModelResponse | None = None
                async for item in self._model_call(ctx, index, messages, deadline, streaming):
                    if isinstance(item, _Done):
                        response = item.value
                    else:
                        yield item
                assert response is not None
            except _Stop as stopped:
                stop = stopped
                if stop.kind == "limit":
                    yield LimitReached(index, stop.detail)
                break
            usage = usage + response.usage
            messages.append(Message.text("assistant", response.text))
            step = _Step()
            halted: _Stop | None = None
            try:
                async for event in self._handle_output(ctx, index, response.text, step, deadline):
                    yield event
            except _Stop as stopped:
                halted = stopped  # e.g. the deadline passed while tools ran
            except Exception as error:  # a bug in a user's section, chain or termination
                _log.exception("handling the model's output failed")
                halted = _Stop(
                    "error", f"handling the model's output failed: {describe_exception(error)}"
                )
            iteration = Iteration(
                index=index,
                output=response.text,
                sections=step.sections,
                tool_results=tuple(step.results),
                feedback=step.feedback,
                usage=response.usage,
                duration=time.perf_counter() - started,
            )
            iterations.append(iteration)
            ctx.events.emit(IterationFinished(ctx, iteration))
            if halted is not None:
                stop = halted
                if halted.kind == "limit":
                    yield LimitReached(index, halted.detail)
                break
            if step.has_answer:
                answer = step.answer
                yield AnswerReady(index, step.answer)
                stop = _Stop("answer", "")
                break
            if step.observation:
                messages.append(Message("user", step.observation))
                yield ObservationReady(index, _text_of(step.observation), tuple(step.results))
            if ctx.cancelled:
                stop = _Stop("cancelled", ctx.cancel_reason)
                break

        yield RunFinished(
            AgentResult(
                answer=answer,
                stopped_by=stop.kind,
                iterations=tuple(iterations),
                messages=tuple(messages),
                stats=ctx.stats.snapshot(),
                usage=usage,
                limit=stop.detail if stop.kind == "limit" else None,
                error=stop.detail if stop.kind == "error" else None,
            )
        )

    def _check(self, ctx: ExecutionContext, deadline: float | None, now: float) -> None:
        if ctx.cancelled:
            raise _Stop("cancelled", ctx.cancel_reason)
        if deadline is not None and now >= deadline:
            raise _Stop("limit", "timeout")
        limit = ctx.limits.exceeded(ctx.stats, starting_iteration=True)
        if limit is not None:
            raise _Stop("limit", limit)

    async def _model_call(
        self,
        ctx: ExecutionContext,
        index: int,
        messages: list[Message],
        deadline: float | None,
        streaming: bool,
    ) -> AsyncIterator[ModelTextDelta | _Done[ModelResponse]]:
        ctx.events.emit(BeforeModelCall(ctx, index, self.model.name, tuple(messages)))
        started = time.perf_counter()
        queue: asyncio.Queue[ModelTextDelta] = asyncio.Queue()
        response: ModelResponse | None = None
        try:
            for retry in (False, True):
                work: Awaitable[ModelResponse] = (
                    self._consume_stream(index, messages, queue)
                    if streaming
                    else self.model.generate(messages, self.generate_options)
                )
                try:
                    async for item in _drain(work, queue, ctx, deadline, race_cancel=True):
                        if isinstance(item, _Done):
                            response = item.value
                        else:
                            yield item
                    break
                except UnsupportedContentError as error:
                    # A tool returned media this model cannot take: show it as a note and
                    # ask once more, rather than end the run over an attachment.
                    note = f"not shown: {self.model.name} cannot take it"
                    if retry or not _replace_media(messages, note):
                        raise
                    _log.warning("media dropped from the conversation: %s", error)
        except ModelError as error:
            raise _Stop("error", f"model call failed: {error}") from error
        except _Stop:
            raise
        except Exception as error:  # a model that breaks its protocol: end, keep the run
            _log.exception("the model %s raised", self.model.name)
            raise _Stop("error", f"model call failed: {describe_exception(error)}") from error
        if response is None:
            raise _Stop("error", f"model call failed: {self.model.name} returned no response")
        ctx.stats.increment(Stats.MODEL_CALLS)
        ctx.stats.increment(Stats.INPUT_TOKENS, response.usage.input_tokens)
        ctx.stats.increment(Stats.OUTPUT_TOKENS, response.usage.output_tokens)
        duration = time.perf_counter() - started
        ctx.events.emit(AfterModelCall(ctx, index, self.model.name, response, duration))
        yield _Done(response)

    async def _consume_stream(
        self, index: int, messages: list[Message], queue: asyncio.Queue[ModelTextDelta]
    ) -> ModelResponse:
        parser = self.text_format.stream()
        final: ModelResponse | None = None
        async for item in self.model.stream(messages, self.generate_options):
            if isinstance(item, TextDelta):
                for event in parser.feed(item.text):
                    if isinstance(event, SectionDelta):
                        queue.put_nowait(ModelTextDelta(index, event.name, event.text))
            elif isinstance(item, ModelResponse):
                final = item
        if final is None:
            raise ModelError(f"{self.model.name}: the stream ended without a final response")
        return final

    async def _handle_output(
        self, ctx: ExecutionContext, index: int, output: str, step: _Step, deadline: float | None
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        fmt = self.text_format
        try:
            step.sections = fmt.parse(output)
        except FormatParseError as error:
            self._reject(ctx, index, step, "format", str(error))
            return
        actions = step.sections.get(self.tool_chain.name, [])
        answers = step.sections.get(self.termination.name, [])
        if actions:
            async for event in self._act(ctx, index, actions, step, deadline):
                yield event
            return
        if answers:
            try:
                step.answer = self.termination.parse_section(answers[-1])
                step.has_answer = True
                ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)
            except AnswerRejected as rejected:
                self._reject(ctx, index, step, "answer", f"answer rejected: {rejected}")
            except Exception as error:  # a termination that raises is a rejection, not a crash
                _log.warning("the termination raised on an answer", exc_info=error)
                feedback = f"answer rejected: it could not be checked ({type(error).__name__})"
                self._reject(ctx, index, step, "answer", feedback)
            return
        expected = f"{self.tool_chain.name!r} or {self.termination.name!r}"
        feedback = f"no {expected} section found; write one"
        swallowed = self._swallowed_section(step.sections)
        if swallowed is not None:
            outer, inner = swallowed
            feedback += (
                f". The {inner!r} section you wrote inside {outer!r} was read as part of it: "
                f"close {outer!r} first, and start {inner!r} on its own line"
            )
        self._reject(ctx, index, step, "no_action", feedback)

    async def _act(
        self,
        ctx: ExecutionContext,
        index: int,
        actions: list[str],
        step: _Step,
        deadline: float | None,
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        queue: asyncio.Queue[RunEvent[AnswerT]] = asyncio.Queue()

        def started(event: BeforeToolCall) -> None:
            queue.put_nowait(ToolCallStarted(index, event.index, event.name, dict(event.args)))

        def finished(event: AfterToolCall) -> None:
            queue.put_nowait(
                ToolCallFinished(index, event.index, event.name, event.error, event.duration)
            )

        unsubscribe = [
            ctx.events.subscribe(BeforeToolCall, started),
            ctx.events.subscribe(AfterToolCall, finished),
        ]
        parts: list[ContentPart] = []
        problems: list[str] = []
        loop = asyncio.get_running_loop()
        try:
            for content in actions:
                if deadline is not None and loop.time() >= deadline:
                    break
                work = self.tool_chain.execute(ctx, content, self.text_format)
                try:
                    async for item in _drain(work, queue, ctx, deadline, race_cancel=False):
                        if isinstance(item, _Done):
                            step.results.append(item.value)
                            parts.extend(item.value.as_content_parts())
                        else:
                            yield item
                except ToolCallParseError as error:
                    problems.append(f"your tool calls could not be read: {error}")
        finally:
            for remove in unsubscribe:
                remove()
        calls = [e for result in step.results for e in result.raw.errors]
        if calls:
            failed = all(error is not None for error in calls)
            ctx.stats.set(
                Stats.CONSECUTIVE_TOOL_ERRORS,
                ctx.stats.get(Stats.CONSECUTIVE_TOOL_ERRORS) + 1 if failed else 0,
            )
        if deadline is not None and loop.time() >= deadline:
            raise _Stop("limit", "timeout")  # step.results keeps every call that finished
        if not problems and not any(result.raw.calls for result in step.results):
            problems.append(
                "the action section held no tool calls; write at least one call, "
                "or write your answer instead"
            )
        if problems:
            self._reject(ctx, index, step, "tool_calls", "\n".join(problems))
            step.observation = (*parts, *step.observation)
        else:
            ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)
            step.observation = tuple(parts)

    def _swallowed_section(self, sections: dict[str, list[str]]) -> tuple[str, str] | None:
        """(outer, inner) when an action or answer sits inside another section's text."""
        fmt = self.text_format
        for inner in (self.tool_chain.name, self.termination.name):
            marker = fmt.format_section(inner, "").splitlines()[0].lower()
            for outer, contents in sections.items():
                if any(marker in content.lower() for content in contents):
                    return outer, inner
        return None

    def _reject(
        self, ctx: ExecutionContext, index: int, step: _Step, kind: str, feedback: str
    ) -> None:
        ctx.stats.increment(Stats.PARSE_ERRORS)
        ctx.stats.increment(Stats.CONSECUTIVE_PARSE_ERRORS)
        ctx.events.emit(OutputRejected(ctx, index, kind, feedback))
        step.feedback = feedback
        fmt = self.text_format
        text = fmt.wrap_observation(fmt.format_section("feedback", feedback))
        step.observation = (TextContent(text),)


class _Step:
    """What one iteration produced, filled in as it goes."""

    def __init__(self) -> None:
        self.sections: dict[str, list[str]] = {}
        self.results: list[ToolChainResult] = []
        self.observation: tuple[ContentPart, ...] = ()
        self.feedback = ""
        self.answer: Any = None
        self.has_answer = False


async def _drain(
    work: Awaitable[T],
    queue: asyncio.Queue[Q],
    ctx: ExecutionContext,
    deadline: float | None,
    *,
    race_cancel: bool,
) -> AsyncIterator[Q | _Done[T]]:
    """Run ``work``, yielding what lands in ``queue`` meanwhile, then ``_Done(result)``.

    With ``race_cancel`` (model calls) it stops with ``_Stop`` at the deadline or when
    the run is cancelled. Without it (tool execution), the chain handles cancellation
    itself and returns what finished, which is kept: at the deadline the run is
    cancelled and the chain's partial result awaited.
    """
    loop = asyncio.get_running_loop()
    if asyncio.iscoroutine(work):
        task, first = eager_task(work)
        if first.done:  # instant models and in-memory tools: no waiting at all
            if first.error is not None:
                raise first.error
            while not queue.empty():
                yield queue.get_nowait()
            yield _Done(cast(T, first.value))
            return
    else:
        task = asyncio.ensure_future(work)
    cancelled = asyncio.ensure_future(ctx.wait_cancelled()) if race_cancel else None
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            waiting: set[asyncio.Future[Any]] = {task, getter}
            if cancelled is not None:
                waiting.add(cancelled)
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(
                waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if getter in done:
                yield getter.result()
                continue
            getter.cancel()
            if task in done:
                while not queue.empty():
                    yield queue.get_nowait()
                yield _Done(task.result())
                return
            if cancelled is not None and cancelled in done:
                raise _Stop("cancelled", ctx.cancel_reason)
            if not race_cancel:
                ctx.cancel(TIME_LIMIT)
                deadline = None  # now wait for the chain to hand back what finished
                continue
            raise _Stop("limit", "timeout")
    finally:
        if cancelled is not None:
            cancelled.cancel()
        if not task.done():
            task.cancel()
            # Bounded: a model call or chain that ignores cancellation is left behind.
            await asyncio.wait({task}, timeout=CANCEL_GRACE)


def _replace_media(messages: list[Message], note: str) -> bool:
    """Swap every media part for a text note; True when anything was replaced."""
    replaced = False
    for position, message in enumerate(messages):
        if all(isinstance(part, TextContent) for part in message.content):
            continue
        parts = tuple(
            part if isinstance(part, TextContent) else TextContent(f"[{part.describe()}: {note}]")
            for part in message.content
        )
        messages[position] = Message(message.role, parts)
        replaced = True
    return replaced


def _text_of(parts: Sequence[ContentPart]) -> str:
    return "\n".join(part.text for part in parts if isinstance(part, TextContent))
