"""The step engine both agents stand on: one loop, one deadline policy, one result.

A run is a sequence of steps. Each step: check the limits, build the step's request
(the step hooks may change it), call the model (streamed or whole, racing the deadline
and cancellation), then let the agent read the reply (`StepEngine._read`): a text
agent parses sections, a native one takes the structured calls. What the reply leads
to (tool results, feedback, an answer) is written into a `StepRecord`; the engine appends
the step's messages to the conversation, records the iteration and decides whether
to go on.

The agents differ only in how a task, a reply and tool results become messages.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypedDict, TypeVar, cast

from agents._options import AnyToolLike, chain_of
from agents.events import (
    AfterModelCall,
    AnswerReady,
    BeforeModelCall,
    IterationFinished,
    IterationStarted,
    LimitReached,
    ModelCallFailed,
    ModelTextDelta,
    ObservationReady,
    OutputRejected,
    RunEnded,
    RunEvent,
    RunFinished,
    StepReady,
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
    ToolCallDelta,
    ToolCallRequest,
    UnsupportedContentError,
    Usage,
    resolve_model,
)
from agents.otel._seam import WATCHERS, run_started
from agents.prompt._system import PromptBuilder, PromptContext
from agents.result import AgentResult, Iteration, StopKind
from agents.steps import StepHook, StepHookError, StepRequest, apply_step_hooks
from agents.terminations import AnswerRejected, Termination
from formats import FormattedSection, TextFormat, XMLFormat
from toolchain import (
    AfterToolCall,
    BeforeToolCall,
    ContentPart,
    ExecutionContext,
    Extension,
    Limits,
    Stats,
    TextContent,
    TextFilter,
    ToolCallError,
    ToolChain,
    ToolChainResult,
    describe_exception,
    eager_task,
    install_extensions,
    restore_state,
    run_sync,
    saved_state,
    settle,
)
from toolchain._oneline import log_line
from toolchain._redact import redact

AnswerT = TypeVar("AnswerT")
T = TypeVar("T")
Q = TypeVar("Q")

_log = logging.getLogger("agents")
CANCEL_GRACE = 1.0
TIME_LIMIT = "the run's time limit was reached"
TASKS_PENDING = "tasks_pending"
"""The limit that ends a run whose model keeps answering while a ``check_answer``
holds its answers back (more times in a row than ``max_consecutive_parse_errors``)."""

AnswerCheck = Callable[[ExecutionContext], "str | None"]


class RunOptions(TypedDict, total=False):
    """Keyword options every agent takes, besides the model and the termination.

    Any other keyword is a ``TypeError`` naming it (with the closest known name).
    """

    tool_chain: ToolChain
    """Runs the tools and serialises their outputs (JSON or YAML)."""
    tools: Sequence[AnyToolLike]
    """Tools for a ``JSONToolChain`` built for the agent: ``Tool`` objects (``@tool``
    functions are ones) or typed functions, wrapped with ``@tool``. Give either
    ``tools`` or ``tool_chain`` (register the tools on your chain), not both."""
    text_format: TextFormat
    """The section convention of prompts and observations (default ``XMLFormat()``)."""
    behavior: str
    """Who the agent is and how it behaves: the start of the system prompt."""
    critical_rules: str
    """Rules the model must never break, given their own prompt section."""
    limits: Limits
    """Bounds on each run (iterations, tool calls, tokens, errors, time)."""
    options: GenerateOptions
    """Sampling options for every model call."""
    prompt_builder: PromptBuilder
    """Builds the system prompt from a ``PromptContext``."""
    clock: Callable[[], dt.date]
    """Today's date for the prompt (default ``date.today``). Pass a fixed clock, such
    as ``toolchain.testing.fixed_clock``, to make prompts and transcripts reproducible."""
    name: str
    """The run's name in contexts and traces (default ``agent``)."""
    step_hooks: Sequence[StepHook]
    """Called in order before each model call; may change that step's request (see
    ``agents.steps``). Compactions (``agents.compaction``) are step hooks. A hook
    with a ``check_answer(ctx) -> str | None`` method may also hold back an answer
    while work is left (``run_prompt``'s task lists): its text is the feedback."""
    extensions: Sequence[Extension]
    """Installed on each run's context: their tools join the chain, their prompt
    sections reach the model each step, their text filters rewrite its answer (see
    ``toolchain.Extension``). An extension with a ``before_step(ctx, request)`` method
    is also a step hook, run before ``step_hooks``."""


class RunStop(Exception):
    kind: StopKind

    def __init__(self, kind: StopKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class Done(Generic[T]):
    value: T


class StepRecord:
    """What one step produced, filled in as the agent reads the reply."""

    __slots__ = (
        "answer",
        "assistant",
        "feedback",
        "has_answer",
        "held",
        "replies",
        "results",
        "sections",
        "tool_calls",
    )

    def __init__(self, assistant: Message) -> None:
        self.assistant = assistant
        self.sections: dict[str, list[str]] = {}
        self.tool_calls: tuple[ToolCallRequest, ...] = ()
        self.results: list[ToolChainResult] = []
        self.replies: list[Message] = []
        """Messages answering the reply: tool results, an observation, feedback."""
        self.feedback = ""
        self.answer: Any = None
        self.has_answer = False
        self.held = False
        """An answer was held back: work is left (see ``StepEngine._held``)."""


@dataclass(slots=True)
class _Call:
    """What the model is called with in one step, after the step hooks."""

    model: Model
    messages: list[Message]
    options: GenerateOptions
    tools: tuple[str, ...]


class StepEngine(ABC, Generic[AnswerT]):
    """The loop of an agent: steps until an answer, a limit, cancellation or an error."""

    protocol: ClassVar[Literal["text", "native"]]
    """How this agent's model calls tools (``StepRequest.protocol``)."""

    def __init__(
        self,
        model: Model | str,
        termination: Termination[Any],
        options: RunOptions,
        *,
        tool_chain: ToolChain,
        prompt_builder: PromptBuilder,
    ) -> None:
        self.model = resolve_model(model)
        self.termination: Termination[Any] = termination
        given = options.get("tool_chain")
        if "tools" in options:
            callee = f"{type(self).__name__}()"
            if given is not None:
                raise TypeError(
                    f"{callee} takes tools= or tool_chain=, not both: register the tools on "
                    "your chain (chain.register_tool(...)), or drop tool_chain= for a JSON chain"
                )
            given = chain_of(options["tools"], callee=callee)
        self.tool_chain: ToolChain = given or tool_chain
        self.text_format: TextFormat = options.get("text_format") or XMLFormat()
        self.behavior = options.get("behavior", "")
        self.critical_rules = options.get("critical_rules", "")
        self.limits = options.get("limits") or Limits()
        self.prompt_builder: PromptBuilder = options.get("prompt_builder", prompt_builder)
        self.clock: Callable[[], dt.date] = options.get("clock", dt.date.today)
        self.name = options.get("name", "agent")
        chain_extensions: Sequence[Extension] = getattr(self.tool_chain, "extensions", ())
        self.extensions: tuple[Extension, ...] = (
            *chain_extensions,
            *(e for e in options.get("extensions", ()) if e not in chain_extensions),
        )
        for extension in self.extensions:
            for tool in extension.tools():
                if self.tool_chain.tools.get(tool.name) is not tool:
                    self.tool_chain.register_tool(tool)
        extension_hooks = [
            cast(StepHook, hook)
            for extension in self.extensions
            if callable(hook := getattr(extension, "before_step", None))
        ]
        self.step_hooks: tuple[StepHook, ...] = (
            *extension_hooks,
            *options.get("step_hooks", ()),
        )
        self._answer_checks: tuple[AnswerCheck, ...] = tuple(
            cast(AnswerCheck, check)
            for hook in (*self.extensions, *options.get("step_hooks", ()))
            if callable(check := getattr(hook, "check_answer", None))
        )

    # -- public API ------------------------------------------------------------------

    def system_prompt(self, tools: Sequence[str] | None = None) -> str:
        """The system prompt this agent sends (built by its ``prompt_builder``).

        ``tools`` narrows the tools it describes, as a step hook may.
        """
        prompt = self.prompt_builder(
            PromptContext(
                self.text_format,
                self.tool_chain,
                self.behavior,
                self.critical_rules,
                self.clock(),
                None if tools is None else tuple(tools),
            )
        )
        guides = [
            FormattedSection(extension.name, text, escape=False)
            for extension in self.extensions
            if (text := extension.instructions().strip())
        ]
        if guides:
            prompt = f"{prompt}\n\n{self.text_format.format_sections(guides)}"
        return prompt

    async def run(
        self,
        task: str | Sequence[ContentPart],
        *,
        ctx: ExecutionContext | None = None,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
    ) -> AgentResult[AnswerT]:
        """Run until an answer, a limit, cancellation or a model failure.

        ``history`` continues a conversation: the messages of an earlier result
        (``result.messages``, or read back with ``messages_from_json``). Their system
        message is replaced by this agent's; the task follows them as a new user turn.
        ``extension_state`` continues what the extensions kept in that conversation
        (``result.extension_state``: the tools discovery activated, say).
        """
        result: AgentResult[AnswerT] | None = None
        async for event in self._loop(task, ctx, history, extension_state, streaming=False):
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
        extension_state: Mapping[str, object] | None = None,
    ) -> AgentResult[AnswerT]:
        """``run`` for synchronous code (not from inside a running event loop).

        A tool that ignores cancellation cannot keep this from returning: leftover
        tasks are abandoned after a grace period (see ``toolchain.run_sync``).
        """
        work = self.run(task, ctx=ctx, history=history, extension_state=extension_state)
        return run_sync(work)

    def stream(
        self,
        task: str | Sequence[ContentPart],
        *,
        ctx: ExecutionContext | None = None,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        """Run, yielding typed events as they happen; the last is ``RunFinished``."""
        return self._loop(task, ctx, history, extension_state, streaming=True)

    # -- what each agent supplies ----------------------------------------------------

    @abstractmethod
    def _task_message(self, task: str | Sequence[ContentPart]) -> Message:
        """The user message that states the task."""

    def _history(self, history: Sequence[Message]) -> list[Message]:
        """The earlier conversation as this agent sends it (system messages dropped)."""
        return [message for message in history if message.role != "system"]

    @abstractmethod
    def _options(self, options: GenerateOptions, tools: tuple[str, ...]) -> GenerateOptions:
        """The options sent to the model in a step whose active tools are ``tools``."""

    @abstractmethod
    def _stream_events(
        self, index: int
    ) -> Callable[[TextDelta | ToolCallDelta], Iterable[RunEvent[AnswerT]]]:
        """Turns streamed pieces into run events, for one step."""

    @abstractmethod
    def _read(
        self,
        ctx: ExecutionContext,
        index: int,
        response: ModelResponse,
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        """Read the model's reply into ``step``: sections or calls, tool results,
        feedback, an answer. Raises ``RunStop`` when the run must end (the deadline
        passed while tools ran); ``step`` keeps what was done by then."""

    @abstractmethod
    def _feedback(self, feedback: str) -> Message:
        """The message that tells the model what was wrong with its reply."""

    @property
    def _base_options(self) -> GenerateOptions:
        """The options of every step before hooks (the stop sequences of text mode)."""
        return GenerateOptions()

    # -- the loop --------------------------------------------------------------------

    async def _loop(
        self,
        task: str | Sequence[ContentPart],
        ctx: ExecutionContext | None,
        history: Sequence[Message],
        extension_state: Mapping[str, object] | None,
        *,
        streaming: bool,
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        if ctx is None:
            ctx = ExecutionContext(limits=self.limits, name=self.name)
        elif not ctx.limits_given:
            ctx.limits = self.limits  # a ctx passed only to cancel or observe keeps our limits
        _clear_outcome(ctx)
        if WATCHERS:  # instrumentation (agents.otel) watches ctx.events; else nothing
            run_started(ctx, self, streaming=streaming)
        loop = asyncio.get_running_loop()
        deadline = None if ctx.limits.timeout is None else loop.time() + ctx.limits.timeout
        install_extensions(ctx, self.extensions)
        if extension_state:
            restore_state(ctx, self.extensions, extension_state)
        tools = tuple(self.tool_chain.tools)
        system_text = self.system_prompt()
        messages = [
            Message.text("system", system_text),
            *self._history(history),
            self._task_message(task),
        ]
        # Built once: with no hook changing them, every step sends the same system
        # prompt and the same earlier messages, byte for byte (providers cache them).
        base_options = self._base_options
        options = self._options(base_options, tools)
        plain = _Call(self.model, messages, options, tools)
        task_index = len(messages) - 2  # in messages[1:], which is what hooks see
        iterations: list[Iteration] = []
        usage = Usage()
        answer: AnswerT | None = None
        stop: RunStop

        while True:
            index = len(iterations) + 1
            try:
                self._check(ctx, deadline, loop.time())
                ctx.stats.increment(Stats.ITERATIONS)
                ctx.events.emit(IterationStarted(ctx, index))
                started = time.perf_counter()
                call = plain
                if self.step_hooks or self.extensions or ctx.events.has_subscribers(StepReady):
                    sent = self._with_sections(ctx, messages)
                    request = StepRequest(
                        index,
                        system_text,
                        tuple(sent[1:]),
                        tools,
                        self.model,
                        base_options,
                        task_index,
                        protocol=self.protocol,
                    )
                    call = await self._prepare(
                        ctx, request, plain, system_text, as_is=sent is messages
                    )
                    if ctx.cancelled:  # while the hooks ran (a summary call, say)
                        raise RunStop("cancelled", ctx.cancel_reason)
                    if ctx.pause_reason:  # a hook found a decision to wait for
                        raise RunStop("paused", ctx.pause_reason)
                response: ModelResponse | None = None
                async for item in self._model_call(ctx, index, call, messages, deadline, streaming):
                    if isinstance(item, Done):
                        response = item.value
                    else:
                        yield item
                assert response is not None
            except RunStop as stopped:
                stop = stopped
                if stop.kind == "limit":
                    yield LimitReached(index, stop.detail)
                break
            usage = usage + response.usage
            step = StepRecord(Message.text("assistant", response.text))
            halted: RunStop | None = None
            try:
                async for event in self._read(ctx, index, response, step, call.tools, deadline):
                    yield event
            except RunStop as stopped:
                halted = stopped  # e.g. the deadline passed while tools ran
            except Exception as error:  # a bug in a user's section, chain or termination
                _log.exception("handling the model's output failed")
                halted = RunStop(
                    "error", f"handling the model's output failed: {describe_exception(error)}"
                )
            if halted is None and step.held and self._held_too_often(ctx):
                halted = RunStop("limit", TASKS_PENDING)
            messages.append(step.assistant)
            iteration = Iteration(
                index=index,
                output=response.text,
                sections=step.sections,
                tool_results=tuple(step.results),
                feedback=step.feedback,
                usage=response.usage,
                duration=time.perf_counter() - started,
                tool_calls=step.tool_calls,
            )
            iterations.append(iteration)
            if _log.isEnabledFor(logging.DEBUG):
                _log_step(ctx, iteration, step)
            if halted is not None:
                messages.extend(step.replies)  # calls already made keep their answers
                ctx.events.emit(IterationFinished(ctx, iteration))
                stop = halted
                if halted.kind == "limit":
                    yield LimitReached(index, halted.detail)
                break
            if step.has_answer:
                messages.extend(step.replies)
                ctx.events.emit(IterationFinished(ctx, iteration))
                answer = self._filtered(ctx, step.answer)
                yield AnswerReady[AnswerT](index, answer)
                stop = RunStop("answer", "")
                break
            messages.extend(step.replies)
            ctx.events.emit(IterationFinished(ctx, iteration))
            if step.replies:
                yield ObservationReady(index, _text_of(step.replies), tuple(step.results))
            if ctx.cancelled:
                stop = RunStop("cancelled", ctx.cancel_reason)
                break
            if ctx.pause_reason:
                stop = RunStop("paused", ctx.pause_reason)
                break
            if ctx.finish_text is not None:  # a tool ended the run with its answer
                try:
                    answer = self._filtered(ctx, self.termination.parse_section(ctx.finish_text))
                except Exception as error:
                    stop = RunStop("error", f"the finishing answer was rejected: {error}")
                    break
                yield AnswerReady[AnswerT](index, answer)
                stop = RunStop("answer", "")
                break

        result = AgentResult(
            answer=answer,
            stopped_by=stop.kind,
            iterations=tuple(iterations),
            messages=tuple(messages),
            stats=ctx.stats.snapshot(),
            usage=usage,
            limit=stop.detail if stop.kind == "limit" else None,
            error=stop.detail if stop.kind == "error" else None,
            paused=stop.detail if stop.kind == "paused" else None,
            extension_state=saved_state(ctx, self.extensions),
        )
        _log_end(ctx, result)
        if ctx.events.has_subscribers(RunEnded):
            ctx.events.emit(RunEnded(ctx, result))
        yield RunFinished(result)

    def _with_sections(self, ctx: ExecutionContext, messages: list[Message]) -> list[Message]:
        """The conversation with this step's extension sections added to a copy of its
        last message; ``messages`` itself when no extension has anything to say."""
        fmt = self.text_format
        sections = [
            fmt.format_section(extension.name, text)
            for extension in self.extensions
            if (text := extension.prompt_section(ctx).strip())
        ]
        if not sections:
            return messages
        last = messages[-1]
        added = TextContent("\n\n" + "\n\n".join(sections))
        return [*messages[:-1], dataclasses.replace(last, content=(*last.content, added))]

    async def _prepare(
        self,
        ctx: ExecutionContext,
        request: StepRequest,
        plain: _Call,
        system_text: str,
        *,
        as_is: bool,
    ) -> _Call:
        """The step's call after the hooks; ``plain`` itself when nothing changed and
        the request is the conversation ``as_is``."""
        final = request
        if self.step_hooks:
            try:
                final = await apply_step_hooks(ctx, request, self.step_hooks)
            except StepHookError as error:
                _log.exception("a step hook failed")
                raise RunStop("error", str(error)) from error
        changed = final != request
        if not changed and as_is:
            ctx.events.emit(StepReady(ctx, final, changed))
            return plain
        prompt = final.system_prompt
        shown = final.shown_tools
        if shown != plain.tools and prompt == system_text:
            prompt = self.system_prompt(shown)  # the listing follows the tools shown
            final = dataclasses.replace(final, system_prompt=prompt)
        elif shown != plain.tools and self.protocol == "text":
            # A hook changed the prompt too (a task's system part, say): the listing in
            # it, wherever it kept it, still follows the tools shown.
            listed = self.tool_chain.available_tools_prompt(plain.tools)
            if listed and prompt.count(listed) == 1:
                now = self.tool_chain.available_tools_prompt(shown) or "(no tools)"
                prompt = prompt.replace(listed, now)
                final = dataclasses.replace(final, system_prompt=prompt)
        ctx.events.emit(StepReady(ctx, final, changed))
        system = plain.messages[0]
        if prompt != system_text:
            system = Message.text("system", prompt)
        options = (
            plain.options
            if final.options is request.options and shown == plain.tools
            else self._options(final.options, shown)
        )
        return _Call(final.model, [system, *final.messages], options, final.tools)

    def _filtered(self, ctx: ExecutionContext, answer: AnswerT) -> AnswerT:
        """A text answer through the extensions' text filters (typed answers as they are)."""
        filters = self._text_filters(ctx) if isinstance(answer, str) else []
        if not filters:
            return answer
        return cast(AnswerT, _feed(filters, cast(str, answer)) + _flush(filters))

    def _text_filters(self, ctx: ExecutionContext) -> list[TextFilter]:
        """Fresh filters for one reply of the model, from the extensions that have one."""
        return [f for e in self.extensions if (f := e.text_filter(ctx)) is not None]

    def _check(self, ctx: ExecutionContext, deadline: float | None, now: float) -> None:
        if ctx.cancelled:
            raise RunStop("cancelled", ctx.cancel_reason)
        if deadline is not None and now >= deadline:
            raise RunStop("limit", "timeout")
        limit = ctx.limits.exceeded(ctx.stats, starting_iteration=True)
        if limit is not None:
            raise RunStop("limit", limit)

    async def _model_call(
        self,
        ctx: ExecutionContext,
        index: int,
        call: _Call,
        conversation: list[Message],
        deadline: float | None,
        streaming: bool,
    ) -> AsyncIterator[RunEvent[AnswerT] | Done[ModelResponse]]:
        model = call.model
        ctx.events.emit(BeforeModelCall(ctx, index, model.name, tuple(call.messages)))
        started = time.perf_counter()
        queue: _Inbox[RunEvent[AnswerT]] = _Inbox()
        response: ModelResponse | None = None
        try:
            for retry in (False, True):
                work: Awaitable[ModelResponse] = (
                    self._consume_stream(ctx, model, index, call, queue)
                    if streaming
                    else model.generate(call.messages, call.options)
                )
                try:
                    async for item in _drain(work, queue, ctx, deadline, race_cancel=True):
                        if isinstance(item, Done):
                            response = item.value
                        else:
                            yield item
                    break
                except UnsupportedContentError as error:
                    # A tool returned media this model cannot take: show it as a note and
                    # ask once more, rather than end the run over an attachment.
                    note = f"not shown: {model.name} cannot take it"
                    if retry or not _replace_media(call.messages, note):
                        raise
                    if call.messages is not conversation:
                        _replace_media(conversation, note)
                    _log.warning("media dropped from the conversation: %s", error)
        except ModelError as error:
            status = getattr(error, "status_code", None)
            _model_failed(ctx, index, model.name, type(error).__name__, str(error), status)
            raise RunStop("error", f"model call failed: {error}") from error
        except RunStop as stopped:
            if stopped.kind == "limit":  # the run's deadline passed while the model wrote
                why = "it did not answer before the run's time limit"
                _model_failed(ctx, index, model.name, "timeout", why)
            raise
        except Exception as error:  # a model that breaks its protocol: end, keep the run
            detail = redact(describe_exception(error))
            kind = type(error).__name__
            _model_failed(ctx, index, model.name, kind, f"it raised {detail}", error=error)
            raise RunStop("error", f"model call failed: {detail}") from error
        if response is None:
            _model_failed(ctx, index, model.name, "no_response", "it returned no response")
            raise RunStop("error", f"model call failed: {model.name} returned no response")
        ctx.stats.increment(Stats.MODEL_CALLS)
        ctx.stats.increment(Stats.INPUT_TOKENS, response.usage.input_tokens)
        ctx.stats.increment(Stats.OUTPUT_TOKENS, response.usage.output_tokens)
        if response.usage.cached_input_tokens:
            ctx.stats.increment(Stats.CACHED_INPUT_TOKENS, response.usage.cached_input_tokens)
        duration = time.perf_counter() - started
        ctx.events.emit(AfterModelCall(ctx, index, model.name, response, duration))
        yield Done(response)

    async def _consume_stream(
        self,
        ctx: ExecutionContext,
        model: Model,
        index: int,
        call: _Call,
        queue: _Inbox[RunEvent[AnswerT]],
    ) -> ModelResponse:
        events = self._stream_events(index)
        filters = self._text_filters(ctx)
        final: ModelResponse | None = None
        section: str | None = None
        async for item in model.stream(call.messages, call.options):
            if isinstance(item, ModelResponse):
                final = item
            else:
                for event in events(item):
                    if filters and isinstance(event, ModelTextDelta):
                        section = event.section
                        event = dataclasses.replace(event, text=_feed(filters, event.text))
                        if not event.text:
                            continue  # held back: maybe the start of a reference
                    queue.put_nowait(event)
        if filters and (rest := _flush(filters)):
            queue.put_nowait(ModelTextDelta(index, section, rest))
        if final is None:
            raise ModelError(f"{model.name}: the stream ended without a final response")
        return final

    # -- shared by both agents' readers ----------------------------------------------

    async def _run_tools(
        self,
        ctx: ExecutionContext,
        index: int,
        work: Awaitable[ToolChainResult],
        deadline: float | None,
    ) -> AsyncIterator[RunEvent[AnswerT] | Done[ToolChainResult]]:
        """Run one chain execution, yielding its tool-call events as they happen."""
        queue: _Inbox[RunEvent[AnswerT]] = _Inbox()

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
        try:
            async for item in _drain(work, queue, ctx, deadline, race_cancel=False):
                yield item
        finally:
            for remove in unsubscribe:
                remove()

    def _count_tool_errors(self, ctx: ExecutionContext, results: Sequence[ToolChainResult]) -> None:
        """The consecutive-tool-error streak: a step whose calls all failed extends it."""
        errors = [error for result in results for error in result.raw.errors]
        if errors:
            failed = all(error is not None for error in errors)
            ctx.stats.set(
                Stats.CONSECUTIVE_TOOL_ERRORS,
                ctx.stats.get(Stats.CONSECUTIVE_TOOL_ERRORS) + 1 if failed else 0,
            )

    def _take_answer(
        self, ctx: ExecutionContext, index: int, step: StepRecord, content: str
    ) -> None:
        """The termination's answer from ``content``, or feedback when it is rejected."""
        try:
            answer = self.termination.parse_section(content)
            if self._held(ctx, index, step):
                return
            step.answer = answer
            step.has_answer = True
            ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)
        except AnswerRejected as rejected:
            self._reject(ctx, index, step, "answer", f"answer rejected: {rejected}")
        except Exception as error:  # a termination that raises is a rejection, not a crash
            _log.warning("the termination raised on an answer", exc_info=error)
            feedback = f"answer rejected: it could not be checked ({type(error).__name__})"
            self._reject(ctx, index, step, "answer", feedback)

    def _held(
        self, ctx: ExecutionContext, index: int, step: StepRecord, *, reply: bool = True
    ) -> bool:
        """Whether an answer must wait because work is left (a task list's pending
        tasks): then the feedback naming that work is counted and, with ``reply``,
        queued, as for a rejected answer."""
        if not self._answer_checks:
            return False
        for check in self._answer_checks:
            try:
                left = check(ctx)
            except Exception:  # a broken check must not trap the run in feedback
                _log.exception("an answer check raised; the answer is taken")
                continue
            if left:
                step.held = True
                if reply:
                    self._reject(ctx, index, step, "unfinished", left)
                else:
                    self._count_rejection(ctx, index, step, "unfinished", left)
                return True
        return False

    def _held_too_often(self, ctx: ExecutionContext) -> bool:
        """Whether held answers (counted as rejected replies) have gone past the
        limit of rejected replies in a row: the run then ends as ``tasks_pending``,
        named for what kept it from ending, not as a parse-error limit."""
        bound = ctx.limits.max_consecutive_parse_errors
        return bound is not None and ctx.stats.get(Stats.CONSECUTIVE_PARSE_ERRORS) > bound

    def _reject(
        self, ctx: ExecutionContext, index: int, step: StepRecord, kind: str, feedback: str
    ) -> None:
        """Count a reply the model must redo and queue the feedback that says why."""
        self._count_rejection(ctx, index, step, kind, feedback)
        step.replies.append(self._feedback(feedback))

    def _count_rejection(
        self, ctx: ExecutionContext, index: int, step: StepRecord, kind: str, feedback: str
    ) -> None:
        """``_reject`` without the feedback message: for feedback sent some other way
        (a native call's own tool message)."""
        ctx.stats.increment(Stats.PARSE_ERRORS)
        ctx.stats.increment(Stats.CONSECUTIVE_PARSE_ERRORS)
        if _log.isEnabledFor(logging.INFO):
            _log.info(
                "%s step %d: the reply was rejected (%s): %s",
                ctx.name,
                index,
                kind,
                _clip(feedback, _LOGGED_CHARS),
                extra={"run": ctx.name, "step": index, "rejection": kind},
            )
        ctx.events.emit(OutputRejected(ctx, index, kind, feedback))
        step.feedback = feedback


_LOGGED_CHARS = 500
"""How much of a text (a feedback, an answer) a log record quotes."""


def _clip(text: str, limit: int) -> str:
    """``text`` redacted, on one line, cut to ``limit`` characters: a log line stays one."""
    return log_line(redact(text), limit)


def _model_failed(
    ctx: ExecutionContext,
    index: int,
    model: str,
    kind: str,
    message: str,
    status: int | None = None,
    *,
    error: BaseException | None = None,
) -> None:
    """The record of a failed model call: a WARNING, or an ERROR with the traceback for
    a model that broke its protocol (``error``). ``kind`` names the failure (the
    ``ModelError`` class, ``timeout`` for the run's time limit)."""
    _log.log(
        logging.WARNING if error is None else logging.ERROR,
        "%s step %d: model call to %s failed: %s",
        ctx.name,
        index,
        model,
        # A ModelError is redacted already, a subclass's override may not be; a server's
        # body may span lines.
        _clip(message, 2 * _LOGGED_CHARS),
        exc_info=error,
        extra={
            "run": ctx.name,
            "step": index,
            "model": model,
            "error_kind": kind,
            "status_code": status,
        },
    )
    if ctx.events.has_subscribers(ModelCallFailed):
        said = _clip(message, 2 * _LOGGED_CHARS)
        ctx.events.emit(ModelCallFailed(ctx, index, model, kind, said, status))


def _log_step(ctx: ExecutionContext, iteration: Iteration, step: StepRecord) -> None:
    """The DEBUG record of one step: what the model did and what it cost."""
    # Names as the model wrote them, so each one-line and bounded.
    calls = tuple(
        log_line(call.name, 80) for result in iteration.tool_results for call in result.raw.calls
    ) or tuple(log_line(call.name, 80) for call in iteration.tool_calls)
    if calls:
        did = "called " + ", ".join(calls)
    elif step.has_answer:
        did = "answered: " + _clip(str(step.answer), 200)
    elif step.feedback:
        did = "was sent feedback"
    else:
        did = "made no call and gave no answer"
    usage = iteration.usage
    _log.debug(
        "%s step %d: the model %s (%d input, %d output tokens, %.3f s)",
        ctx.name,
        iteration.index,
        did,
        usage.input_tokens,
        usage.output_tokens,
        iteration.duration,
        extra={
            "run": ctx.name,
            "step": iteration.index,
            "calls": calls,
            "answered": step.has_answer,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        },
    )


def _log_end(ctx: ExecutionContext, result: AgentResult[Any]) -> None:
    """How the run ended: DEBUG for an answer or a pause, INFO for a limit, an error or
    cancellation (the failure that caused it has its own record)."""
    level = logging.DEBUG if result.stopped_by in ("answer", "paused") else logging.INFO
    if not _log.isEnabledFor(level):
        return
    detail = result.limit or result.error or result.paused or ""
    _log.log(
        level,
        "%s ended: %s%s after %d steps",
        ctx.name,
        result.stopped_by,
        f" ({_clip(detail, _LOGGED_CHARS)})" if detail else "",
        len(result.iterations),
        extra={"run": ctx.name, "stopped_by": result.stopped_by, "steps": len(result.iterations)},
    )


def _clear_outcome(ctx: ExecutionContext) -> None:
    """A context used by an earlier run must not end this one before it starts."""
    ctx.pause_reason, ctx.finish_text = "", None


def inactive_tool(name: str, tools: Sequence[str]) -> ToolCallError:
    """The error of a call to a tool the step's hooks turned off (both agents)."""
    listing = ", ".join(tools) or "(none)"
    return ToolCallError(
        "unknown_tool", f"the tool {name!r} is not available now. Available tools: {listing}"
    )


class _Inbox(Generic[Q]):
    """The events a call produces while it runs, for `_drain` to pass on in order.

    `ready` is a plain future for the next event: waiting on it leaves nothing scheduled
    when the call ends first, as a task awaiting ``Queue.get()`` would (until cancelled).
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Q] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Q) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def get_nowait(self) -> Q:
        return self._items.popleft()

    def ready(self) -> asyncio.Future[None]:
        """A future that is done once an event is waiting (at once if one is)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._items:
            waiter.set_result(None)
        self._waiter = waiter
        return waiter


def _cancellation(ctx: ExecutionContext) -> tuple[asyncio.Future[None], Callable[[], None]]:
    """A future done when the run is cancelled (from any thread), and the function that
    stops watching. A plain future, not a task waiting on ``ctx.wait_cancelled()``:
    dropping it leaves nothing scheduled."""
    loop = asyncio.get_running_loop()
    cancelled: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not cancelled.done():
            cancelled.set_result(None)

    def wake() -> None:
        loop.call_soon_threadsafe(resolve)

    return cancelled, ctx.on_cancel(wake)


async def _drain(
    work: Awaitable[T],
    queue: _Inbox[Q],
    ctx: ExecutionContext,
    deadline: float | None,
    *,
    race_cancel: bool,
) -> AsyncIterator[Q | Done[T]]:
    """Run ``work``, yielding what lands in ``queue`` meanwhile, then ``Done(result)``.

    With ``race_cancel`` (model calls) it stops with ``RunStop`` at the deadline or when
    the run is cancelled. Without it (tool execution), the chain handles cancellation
    itself and returns what finished, which is kept: at the deadline the run is
    cancelled and the chain's partial result awaited. Whatever it started is done when
    it ends, but a call that ignores cancellation past ``CANCEL_GRACE`` (left behind).
    """
    loop = asyncio.get_running_loop()
    if asyncio.iscoroutine(work):
        task, first = eager_task(work)
        if first.done:  # instant models and in-memory tools: no waiting at all
            await settle(task)
            if first.error is not None:
                raise first.error
            while not queue.empty():
                yield queue.get_nowait()
            yield Done(cast(T, first.value))
            return
    else:
        task = asyncio.ensure_future(work)
    cancelled, stop_watching = _cancellation(ctx) if race_cancel else (None, None)
    try:
        while True:
            while not queue.empty():
                yield queue.get_nowait()
            ready = queue.ready()
            waiting: set[asyncio.Future[Any]] = {task, ready}
            if cancelled is not None:
                waiting.add(cancelled)
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(
                waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                while not queue.empty():
                    yield queue.get_nowait()
                yield Done(task.result())
                return
            if ready in done:
                continue
            if cancelled is not None and cancelled in done:
                raise RunStop("cancelled", ctx.cancel_reason)
            if not race_cancel:
                ctx.cancel(TIME_LIMIT)
                deadline = None  # now wait for the chain to hand back what finished
                continue
            raise RunStop("limit", "timeout")
    finally:
        if stop_watching is not None:
            stop_watching()
        if not task.done():
            task.cancel()
            # Bounded: a model call or chain that ignores cancellation is left behind.
            await asyncio.wait({task}, timeout=CANCEL_GRACE)


def _feed(filters: Sequence[TextFilter], text: str) -> str:
    for text_filter in filters:
        text = text_filter.feed(text)
    return text


def _flush(filters: Sequence[TextFilter]) -> str:
    """The text every filter still holds, passed through the filters after it."""
    text = ""
    for text_filter in filters:
        text = text_filter.feed(text) + text_filter.flush() if text else text_filter.flush()
    return text


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
        messages[position] = Message(
            message.role, parts, message.tool_calls, message.tool_call_id, message.name
        )
        replaced = True
    return replaced


def _text_of(messages: Sequence[Message]) -> str:
    return "\n".join(message.text_content() for message in messages)
