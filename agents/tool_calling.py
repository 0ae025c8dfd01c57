"""``ToolCallingAgent``: the same loop as ``ReActAgent`` over native tool calling.

The model gets the chain's tools as API tool specs (OpenAI ``tools``, Anthropic
``tool_use``) and answers with structured calls. Each call is answered by its own
tool message: that call's output serialised by the chain (JSON or YAML), with its
instructions and a list of its attachments; the media itself travels as the provider
allows (inside the tool result on Anthropic, in a following user message on OpenAI
chat completions). Unreadable arguments, unknown tools and failures are answered per
call, so the model can fix that one call. Calls of one turn run concurrently.

A reply without calls is the answer (through the termination). With a
``TypedTermination`` the answer comes through a final-answer tool whose parameters
are the answer's schema; a rejected answer is that call's error.

With a ``DialectToolChain``, a reply that has no structured calls but text (a local
server with no tool parser passes the model's native call format through as text) is
read by the chain's dialect reader: the calls it finds are made as if the API had
sent them, the text around them (without the call markup or the thinking) is the
reply's content, and the thinking is kept in the step's ``thinking`` section.
Call markup that could not be read is sent back to the model as feedback, never
taken as the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from typing_extensions import Unpack

from agents._engine import StepEngine
from agents._native_messages import answer_every_call, as_request, call_replies, with_unique_ids
from agents._options import RunOptions, check_keywords
from agents._step_state import RunStop, StepRecord
from agents._system_prompt import native_system_prompt
from agents._tool_runs import count_tool_errors, step_tools, tool_results
from agents._tool_specs import NativeSpecs
from agents.events import ModelTextDelta, ModelToolCallDelta, RunEvent
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
)
from agents.terminations import AnswerRejected, Termination, TextTermination, TypedTermination
from toolchain import (
    ContentPart,
    DialectParse,
    DialectToolChain,
    ExecutionContext,
    JSONToolChain,
    Stats,
    TextContent,
    ToolCall,
    ToolCallError,
)
from toolchain.dialects import parse as read_dialect
from toolchain.runtime import logger, narrow_chain

__all__ = ["ToolCallingAgent", "ToolCallingOptions"]

AnswerT = TypeVar("AnswerT")

_log = logger("agents")
ANSWER_ACCEPTED = "Answer accepted."


class ToolCallingOptions(RunOptions, total=False):
    """Keyword options of ``ToolCallingAgent`` besides the model and the termination.

    Besides those of every agent (``RunOptions``: ``tool_chain``, default
    ``JSONToolChain()``; ``text_format`` for the system prompt and the sections inside
    tool messages; ``behavior``; ``critical_rules``; ``limits``; ``options``;
    ``prompt_builder``, default ``native_system_prompt``; ``clock``; ``name``;
    ``step_hooks``; ``extensions``):

    >>> from agents import ScriptedModel
    >>> options: ToolCallingOptions = {"answer_tool": "submit"}
    >>> ToolCallingAgent(ScriptedModel(["ok"]), **options).answer_tool
    'submit'
    """

    answer_tool: str
    """The final-answer tool's name when the termination is typed (``final_answer``)."""


_KEYWORDS = frozenset(
    {"termination", *ToolCallingOptions.__required_keys__, *ToolCallingOptions.__optional_keys__}
)


class ToolCallingAgent(StepEngine[AnswerT]):
    """An agent whose model calls the chain's tools through its API's tool calling.

    Same tools, chain, hooks, limits, events, traces and ``AgentResult`` as
    ``ReActAgent``; ``model`` may be a model string. With ``TypedTermination(Order)``
    the model answers by calling ``final_answer`` with an ``Order`` and ``run``
    returns an ``AgentResult[Order]``.

    >>> from agents import ScriptedModel
    >>> from toolchain import JSONToolChain, tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> model = ScriptedModel([ScriptedModel.call("add", {"a": 2, "b": 3}), "It is 5."])
    >>> agent = ToolCallingAgent(model, tool_chain=JSONToolChain().register_tool(add))
    >>> result = agent.run_sync("What is 2 + 3?")
    >>> result.answer, [m.role for m in result.messages]
    ('It is 5.', ['system', 'user', 'assistant', 'tool', 'assistant'])
    >>> result.messages[3].text_content()
    '5'
    """

    protocol = "native"

    @overload
    def __init__(
        self: ToolCallingAgent[str],
        model: Model | str,
        *,
        termination: None = None,
        **options: Unpack[ToolCallingOptions],
    ) -> None: ...

    @overload
    def __init__(
        self,
        model: Model | str,
        *,
        termination: Termination[AnswerT],
        **options: Unpack[ToolCallingOptions],
    ) -> None: ...

    def __init__(
        self,
        model: Model | str,
        *,
        termination: Termination[Any] | None = None,
        **options: Unpack[ToolCallingOptions],
    ) -> None:
        check_keywords(f"{type(self).__name__}()", options, _KEYWORDS)
        super().__init__(
            model,
            termination or TextTermination(),
            options,
            tool_chain=JSONToolChain(),
            prompt_builder=native_system_prompt,
        )
        self.generate_options = options.get("options") or GenerateOptions()
        self.answer_tool = options.get("answer_tool", "final_answer")
        self._typed: TypedTermination[Any] | None = (
            self.termination if isinstance(self.termination, TypedTermination) else None
        )
        self._specs = NativeSpecs(self.tool_chain, self.answer_tool, self._typed)

    # -- how native calls become steps -----------------------------------------------

    @property
    def _base_options(self) -> GenerateOptions:
        return self.generate_options

    def _options(self, options: GenerateOptions, tools: tuple[str, ...]) -> GenerateOptions:
        return self._specs.options(options, tools)

    def _task_message(self, task: str | Sequence[ContentPart]) -> Message:
        if isinstance(task, str):
            return Message.text("user", task)
        return Message("user", tuple(task))

    def _history(self, history: Sequence[Message]) -> list[Message]:
        return answer_every_call([m for m in history if m.role != "system"])

    def _feedback(self, feedback: str) -> Message:
        return Message.text("user", feedback)

    def _stream_events(
        self, index: int
    ) -> Callable[[TextDelta | ToolCallDelta], Iterable[RunEvent[AnswerT]]]:
        def events(item: TextDelta | ToolCallDelta) -> Iterable[RunEvent[AnswerT]]:
            if isinstance(item, TextDelta):
                return (ModelTextDelta(index, None, item.text),)
            return (ModelToolCallDelta(index, item.index, item.id, item.name, item.arguments),)

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
        if not streaming:
            await self._read_whole(ctx, index, response, step, tools, deadline)
            return
        taken = self._take(ctx, index, response, step)
        if taken is None:
            return
        read, work = taken
        if work:
            chain_work = narrow_chain(self.tool_chain, tools).execute_calls(
                ctx, work, self.text_format
            )
            running = step_tools(ctx, chain_work, deadline, step.results, streaming=True)
            async with contextlib.aclosing(running) as items:
                async for item in items:
                    yield item
        self._ran(ctx, index, step, read, bool(work), deadline)

    async def _read_whole(
        self,
        ctx: ExecutionContext,
        index: int,
        response: ModelResponse,
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
    ) -> None:
        # `_read` with no events to pass on: a coroutine, not a generator to drain.
        taken = self._take(ctx, index, response, step)
        if taken is None:
            return
        read, work = taken
        if work:
            chain = narrow_chain(self.tool_chain, tools)  # the chain itself unless narrowed
            chain_work = chain.execute_calls(ctx, work, self.text_format)
            step.results.append(await tool_results(ctx, chain_work, deadline))
        self._ran(ctx, index, step, read, bool(work), deadline)

    def _take(
        self, ctx: ExecutionContext, index: int, response: ModelResponse, step: StepRecord
    ) -> tuple[DialectParse | None, list[ToolCall]] | None:
        """The reply's calls into ``step`` (with the assistant message): how they were
        read, and the chain's calls to run (the final-answer tool's are not the
        chain's). None when the reply is read already: it made no call."""
        requested, reply = response.tool_calls, response.text
        read: DialectParse | None = None
        written: tuple[ToolCall | None, ...] = (None,) * len(requested)
        if not requested and reply and isinstance(self.tool_chain, DialectToolChain):
            read = self._read_dialect(self.tool_chain, reply)
            if read.reasoning:
                step.sections = {"thinking": [read.reasoning]}
            if read.unread and not (read.calls or read.rejected):
                # Markup the model meant as a call: tell it, never answer with the rest.
                feedback = (
                    f"your tool call could not be read: {read.error}. Write the call again "
                    "in your tool-call format, or answer without call markup"
                )
                self._replies.reject(ctx, index, step, "tool_calls", feedback)
                return None
            from_text = (*read.calls, *read.rejected)
            written = from_text
            requested = tuple(as_request(call) for call in from_text)
            reply = read.content or ""
            _log.debug("read %d call(s) written as text (%s)", len(requested), read.format)
        calls = with_unique_ids(ctx, requested)
        step.tool_calls = calls
        shown = reply or ("" if calls else response.text)  # a reply of thinking only stays
        text = (TextContent(shown),) if shown else ()
        step.assistant = Message("assistant", text, tool_calls=calls)
        if not calls:
            self._read_text(ctx, index, reply, step)
            return None
        answer_name = self.answer_tool if self._typed is not None else None
        if read is None:  # the API's own calls: none was read from text
            work = [self._tool_call(call) for call in calls if call.name != answer_name]
        else:
            work = [
                self._tool_call(call, original)
                for call, original in zip(calls, written, strict=True)
                if call.name != answer_name
            ]
        return read, work

    def _ran(
        self,
        ctx: ExecutionContext,
        index: int,
        step: StepRecord,
        read: DialectParse | None,
        ran: bool,
        deadline: float | None,
    ) -> None:
        """After the step's calls ran: its replies (once its held calls are decided,
        if any are held); the run stops if its deadline passed meanwhile."""
        for result in step.results:
            if result.pending:  # replies once the calls are decided
                step.reply = functools.partial(self._answer, ctx, index, step, read, ran=ran)
                break
        else:
            self._answer(ctx, index, step, read, ran=ran)
        if deadline is not None and asyncio.get_running_loop().time() >= deadline:
            raise RunStop("limit", "timeout")  # every call is answered, and kept in the run

    def _answer(
        self,
        ctx: ExecutionContext,
        index: int,
        step: StepRecord,
        read: DialectParse | None,
        *,
        ran: bool,
    ) -> None:
        """The step's replies: a tool message per call, in call order (the final-answer
        tool's own), then feedback on what was not read."""
        if ran:
            count_tool_errors(ctx, step.results)
        observations = [each for result in step.results for each in result.observations]
        calls = step.tool_calls
        answered: dict[str, Message] = {}
        if self._typed is not None:  # only a typed answer comes through a tool
            answers = [call for call in calls if call.name == self.answer_tool]
            answered = self._answer_calls(ctx, index, answers, step, alone=not ran)
        step.replies += call_replies(self.text_format, calls, answered, observations)
        if read is not None and read.unread:  # the calls read ran; the rest was not read
            feedback = f"part of your reply was not read as a tool call: {read.error}"
            self._replies.reject(ctx, index, step, "tool_calls", feedback)
        if ran and not step.feedback:
            ctx.stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)

    def _read_dialect(self, chain: DialectToolChain, text: str) -> DialectParse:
        """The calls, content and reasoning in a reply's text, read by the chain's
        dialect reader (with the final-answer tool offered too, when there is one)."""
        if self._typed is None:
            return chain.parse(text)
        answer = {"name": self.answer_tool, "parameters": self._typed.model.model_json_schema()}
        return read_dialect(text, [*chain.tools.values(), answer], policy=chain.policy)

    def _tool_call(self, call: ToolCallRequest, written: ToolCall | None = None) -> ToolCall:
        """The chain's call for a native one; ``written``: the call as read from text."""
        if written is not None and written.rejected is not None:
            return ToolCall(call.name, written.args, call.id, rejected=written.rejected)
        try:
            args = dict(written.args) if written is not None else call.parsed_arguments()
        except ValueError as error:
            message = f"{error}; send the call again with its arguments as one JSON object"
            return ToolCall(
                call.name, {}, call.id, rejected=ToolCallError("invalid_arguments", message)
            )
        return ToolCall(call.name, args, call.id)

    def _answer_calls(
        self,
        ctx: ExecutionContext,
        index: int,
        calls: list[ToolCallRequest],
        step: StepRecord,
        *,
        alone: bool,
    ) -> dict[str, Message]:
        """The tool message answering each final-answer call; sets the answer if taken."""
        replies: dict[str, Message] = {}
        if not calls:
            return replies
        problem = ""
        if not alone:
            problem = (
                "the answer was not taken: you called other tools in the same turn. "
                f"Read their results, then call {self.answer_tool} alone"
            )
        elif len(calls) > 1:
            problem = (
                f"the answer was not taken: call {self.answer_tool} once, not {len(calls)} times"
            )
        else:
            try:
                assert self._typed is not None
                answer = self._typed.parse_section(calls[0].arguments)
                if self._replies.held(ctx, index, step, reply=False):  # told in the tool message
                    problem = f"the answer was not taken: {step.feedback}"
                else:
                    self._replies.accept(ctx, step, answer)
            except AnswerRejected as rejected:
                problem = f"answer rejected: {rejected}"
        text = f"Error: {problem}" if problem else ANSWER_ACCEPTED
        for call in calls:
            replies[call.id] = Message(
                "tool", (TextContent(text),), tool_call_id=call.id, name=call.name
            )
        if problem and not step.held:
            self._replies.count_rejection(ctx, index, step, "answer", problem)
        return replies

    def _read_text(self, ctx: ExecutionContext, index: int, text: str, step: StepRecord) -> None:
        """A reply without calls: the answer, or feedback saying what to do instead."""
        if self._typed is not None:
            try:
                answer = self._typed.parse_section(text)  # JSON written as text: take it
                if not self._replies.held(ctx, index, step):
                    self._replies.accept(ctx, step, answer)
                return
            except AnswerRejected:
                feedback = (
                    f"call the {self.answer_tool} tool with your final answer, or another "
                    "tool to learn more; a reply in plain text is not read as the answer"
                )
                self._replies.reject(ctx, index, step, "no_action", feedback)
                return
        if not text.strip():
            self._replies.reject(
                ctx, index, step, "empty", "your reply was empty: answer, or call a tool"
            )
            return
        self._replies.take_answer(ctx, index, step, text)
