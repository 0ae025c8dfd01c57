"""``ReActAgent``: think, act through a tool chain, observe, until an answer or a limit.

Each step: one model call, ``text_format.parse`` of its output, then either the
action sections run through the tool chain (their observation, media included, is the
next user message) or the answer section ends the run through the termination. An
action beats an answer written in the same output. With a ``DialectToolChain``, an
output with neither section is read by the chain's dialect reader: the native calls
written bare (outside any action section) run as an action, a ReAct ``Final Answer:``
is the answer, and call markup that could not be read is fed back. Output that cannot
be used gets corrective feedback naming what was wrong, and the run goes on, within
the limits of the run's ``ExecutionContext``. The loop itself is the step engine shared with
``ToolCallingAgent`` (``agents._engine``); this module is how text becomes steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from typing_extensions import Unpack

from agents._engine import StepEngine
from agents._options import RunOptions, check_keywords
from agents._step_state import RunStop, StepRecord
from agents._system_prompt import default_system_prompt
from agents._tool_runs import count_tool_errors, step_tools, tool_results
from agents.events import ModelTextDelta, RunEvent
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
)
from agents.terminations import Termination, TextTermination
from formats import FormatParseError, Section, SectionDelta
from toolchain import (
    ContentPart,
    DialectParse,
    DialectToolChain,
    ExecutionContext,
    Stats,
    TextContent,
    ToolCallParseError,
    YAMLToolChain,
)
from toolchain.runtime import narrow_chain

__all__ = ["AgentOptions", "ReActAgent"]

AnswerT = TypeVar("AnswerT")


THINKING_GUIDANCE = "Think step by step: what you know, what is missing, what to do next."


class AgentOptions(RunOptions, total=False):
    """Keyword options of ``ReActAgent`` besides the model and the termination.

    Besides those of every agent (``RunOptions``: ``tool_chain``, default
    ``YAMLToolChain()``; ``text_format``; ``behavior``; ``critical_rules``; ``limits``;
    ``options``, to which the observation stop is added; ``prompt_builder``, default
    ``default_system_prompt``; ``clock``; ``name``; ``step_hooks``; ``extensions``):

    >>> from agents import ScriptedModel
    >>> options: AgentOptions = {"behavior": "You are terse.", "thinking": False}
    >>> ReActAgent(ScriptedModel(["<answer>ok</answer>"]), **options).behavior
    'You are terse.'
    """

    thinking: bool
    """Register a ``thinking`` section (default True)."""


_KEYWORDS = frozenset(
    {"termination", *AgentOptions.__required_keys__, *AgentOptions.__optional_keys__}
)


class ReActAgent(StepEngine[AnswerT]):
    """A ReAct loop over any ``Model``, ``ToolChain``, ``TextFormat`` and ``Termination``.

    Defaults follow gent: ``XMLFormat``, ``YAMLToolChain``, ``TextTermination`` and a
    thinking section. ``model`` may be a ``Model`` or a model string
    (``"openai:gpt-4o-mini"``). With a ``TypedTermination(Order)``, ``run`` returns an
    ``AgentResult[Order]``. ``run(task, history=...)`` continues a conversation.

    >>> from agents.models import ScriptedModel
    >>> agent = ReActAgent(ScriptedModel(["<thinking>Easy.</thinking><answer>4</answer>"]))
    >>> agent.run_sync("What is 2 + 2?").answer
    '4'
    >>> agent = ReActAgent(ScriptedModel(["<answer>Paris</answer>", "<answer>2.1M</answer>"]))
    >>> first = agent.run_sync("Capital of France?")
    >>> agent.run_sync("Its population?", history=first.messages).answer
    '2.1M'
    """

    protocol = "text"

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
        check_keywords(f"{type(self).__name__}()", options, _KEYWORDS)
        super().__init__(
            model,
            termination or TextTermination(),
            options,
            tool_chain=YAMLToolChain(),
            prompt_builder=default_system_prompt,
        )
        base = options.get("options") or GenerateOptions()
        stop = self.text_format.wrap_observation("\x00").split("\x00", 1)[0].strip()
        # Stop before the model writes an observation of its own: only tools do that.
        # Every other option is kept; native tools are not sent in text mode.
        self.generate_options = dataclasses.replace(
            base, stop=tuple(dict.fromkeys((*base.stop, stop))), tools=(), tool_choice="auto"
        )
        registered = {s.name.lower() for s in self.text_format.sections}
        wanted = [self.tool_chain, self.termination]
        if options.get("thinking", True):
            wanted.insert(0, Section("thinking", THINKING_GUIDANCE))
        for section in wanted:
            if section.name.lower() not in registered:
                self.text_format.register_section(section)

    # -- how text becomes steps -------------------------------------------------------

    @property
    def _base_options(self) -> GenerateOptions:
        return self.generate_options

    def _options(self, options: GenerateOptions, tools: tuple[str, ...]) -> GenerateOptions:
        return options  # text mode: tools live in the system prompt

    def _task_message(self, task: str | Sequence[ContentPart]) -> Message:
        if isinstance(task, str):
            return Message("user", (TextContent(self.text_format.format_section("task", task)),))
        return Message("user", tuple(task))

    def _feedback(self, feedback: str) -> Message:
        fmt = self.text_format
        return Message.text("user", fmt.wrap_observation(fmt.format_section("feedback", feedback)))

    def _stream_events(
        self, index: int
    ) -> Callable[[TextDelta | ToolCallDelta], Iterable[RunEvent[AnswerT]]]:
        parser = self.text_format.stream()

        def events(item: TextDelta | ToolCallDelta) -> Iterable[ModelTextDelta]:
            if isinstance(item, TextDelta):
                for event in parser.feed(item.text):
                    if isinstance(event, SectionDelta):
                        yield ModelTextDelta(index, event.name, event.text)

        return events

    async def _read(
        self,
        ctx: ExecutionContext,
        index: int,
        response: ModelResponse,
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
        *,
        streaming: bool,
    ) -> AsyncGenerator[RunEvent[AnswerT], None]:
        fmt = self.text_format
        try:
            step.sections = fmt.parse(response.text)
        except FormatParseError as error:
            unsectioned: str | None = str(error)
        else:
            unsectioned = None
        actions = step.sections.get(self.tool_chain.name, [])
        answers = step.sections.get(self.termination.name, [])
        if actions and not streaming:
            # A coroutine, not a generator: nothing is yielded when not streaming, and
            # an async generator per step costs its creation and the loop's hooks.
            await self._act(ctx, index, actions, step, tools, deadline)
            return
        if actions:
            acting = self._act_streaming(ctx, index, actions, step, tools, deadline)
            try:
                async for event in acting:
                    yield event
            except BaseException:  # closed with this one, as in StepEngine._steps
                await acting.aclose()
                raise
            return
        if answers:
            self._replies.take_answer(ctx, index, step, answers[-1])
            return
        bare = self._bare_dialect(response.text)
        if bare is not None and bare.reasoning and "thinking" not in step.sections:
            step.sections["thinking"] = [bare.reasoning]  # a <think> block, kept apart
        if bare is not None and (bare.calls or bare.rejected):
            # A local model's native calls with no action section around them: the
            # chain reads the whole output (thinking blocks and prose are not calls).
            if not streaming:
                await self._act(ctx, index, [response.text], step, tools, deadline)
                return
            acting = self._act_streaming(ctx, index, [response.text], step, tools, deadline)
            async with contextlib.aclosing(acting) as events:
                async for event in events:
                    yield event
            return
        if bare is not None and bare.answer is not None:  # ReAct's "Final Answer:"
            self._replies.take_answer(ctx, index, step, bare.answer)
            return
        if bare is not None and bare.unread:
            feedback = (
                f"your tool calls could not be read: {bare.error}. Write them again, "
                f"inside the {self.tool_chain.name!r} section"
            )
            self._replies.reject(ctx, index, step, "tool_calls", feedback)
            return
        if unsectioned is not None:
            self._replies.reject(ctx, index, step, "format", unsectioned)
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
        self._replies.reject(ctx, index, step, "no_action", feedback)

    def _bare_dialect(self, text: str) -> DialectParse | None:
        """What a ``DialectToolChain`` reads in an output that has neither an action
        nor an answer section; ``None`` with any other chain."""
        chain = self.tool_chain
        return chain.parse(text) if isinstance(chain, DialectToolChain) else None

    async def _act(
        self,
        ctx: ExecutionContext,
        index: int,
        actions: list[str],
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
    ) -> None:
        """Run the action sections, each to its end, then reply (`_acted`)."""
        problems: list[str] = []
        loop = asyncio.get_running_loop()
        chain = narrow_chain(self.tool_chain, tools)  # the chain itself unless hooks narrowed
        for content in actions:
            if deadline is not None and loop.time() >= deadline:
                break
            try:
                work = chain.execute(ctx, content, self.text_format)
                step.results.append(await tool_results(ctx, work, deadline))
            except ToolCallParseError as error:
                problems.append(f"your tool calls could not be read: {error}")
        self._acted(ctx, index, step, problems, deadline, loop)

    async def _act_streaming(
        self,
        ctx: ExecutionContext,
        index: int,
        actions: list[str],
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
    ) -> AsyncGenerator[RunEvent[AnswerT], None]:
        """`_act`, yielding each call's events as they come."""
        problems: list[str] = []
        loop = asyncio.get_running_loop()
        chain = narrow_chain(self.tool_chain, tools)
        for content in actions:
            if deadline is not None and loop.time() >= deadline:
                break
            try:
                work = chain.execute(ctx, content, self.text_format)
                running = step_tools(ctx, work, deadline, step.results, streaming=True)
                async with contextlib.aclosing(running) as items:
                    async for item in items:
                        yield item
            except ToolCallParseError as error:
                problems.append(f"your tool calls could not be read: {error}")
        self._acted(ctx, index, step, problems, deadline, loop)

    def _acted(
        self,
        ctx: ExecutionContext,
        index: int,
        step: StepRecord,
        problems: list[str],
        deadline: float | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """After the actions: stop at the deadline, or reply now or once calls are decided."""
        if deadline is not None and loop.time() >= deadline:
            count_tool_errors(ctx, step.results)
            raise RunStop("limit", "timeout")  # step.results keeps every call that finished
        if any(result.pending for result in step.results):  # reply once the calls are decided
            step.reply = functools.partial(self._observe, ctx, index, step, problems)
        else:
            self._observe(ctx, index, step, problems)

    def _observe(
        self, ctx: ExecutionContext, index: int, step: StepRecord, problems: list[str]
    ) -> None:
        """The step's reply: every action's observation, then what was wrong, if anything."""
        count_tool_errors(ctx, step.results)
        parts = [part for result in step.results for part in result.as_content_parts()]
        if not problems and not any(result.raw.calls for result in step.results):
            problems = [
                "the action section held no tool calls; write at least one call, "
                "or write your answer instead"
            ]
        if problems:
            self._replies.reject(ctx, index, step, "tool_calls", "\n".join(problems))
            feedback = step.replies.pop()
            step.replies.append(Message("user", (*parts, *feedback.content)))
        else:
            ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)
            step.replies.append(Message("user", tuple(parts)))

    def _swallowed_section(self, sections: dict[str, list[str]]) -> tuple[str, str] | None:
        """(outer, inner) when an action or answer sits inside another section's text."""
        fmt = self.text_format
        for inner in (self.tool_chain.name, self.termination.name):
            marker = fmt.format_section(inner, "").splitlines()[0].lower()
            for outer, contents in sections.items():
                if any(marker in content.lower() for content in contents):
                    return outer, inner
        return None
