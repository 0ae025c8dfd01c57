"""The step engine both agents stand on: one loop, one deadline policy, one result.

A run is a sequence of steps. Each step: check the limits (`_run_record`), build the
step's call (the step hooks may change it: `_step_request`), call the model (streamed
or whole, racing the deadline and cancellation: `_model_call`), then let the agent read
the reply (`StepEngine._read`): a text agent parses sections, a native one takes the
structured calls, both judging answers and feedback through `Replies` (`_replies`) and
running tools through `_tool_runs`. What the reply leads to is written into a
`StepRecord`; the engine keeps the step in the run's record and decides whether to go on.

The agents differ only in how a task, a reply and tool results become messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

from agents._extensions import AgentExtensions
from agents._model_call import Streaming, call_model, model_reply
from agents._options import RunOptions, agent_chain
from agents._replies import Replies
from agents._resume import (
    LiveRun,
    PausedRun,
    checked,
    claim,
    held_requests,
    park,
    paused_reason,
    remaining,
    replace_last,
    run_decided,
)
from agents._run_inputs import check_run_inputs
from agents._run_record import RunRecord, check_limits, run_context, stopped_during_step
from agents._savings import LedgerPlan, open_ledger
from agents._step_log import log
from agents._step_request import UNSENT, StepCalls
from agents._step_state import TASKS_PENDING, Done, RunStop, StepCall, StepRecord
from agents._system_prompt import PromptBuilder, PromptContext
from agents._tool_specs import chain_names
from agents.events import (
    AnswerReady,
    LimitReached,
    ObservationReady,
    RunEvent,
    RunFinished,
    StepFinished,
    StepReady,
    StepStarted,
)
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    resolve_model,
)
from agents.otel._seam import WATCHERS, run_ending, run_started
from agents.result import AgentResult
from agents.steps import StepHook
from agents.terminations import Termination
from formats import TextFormat, XMLFormat
from toolchain import (
    Approval,
    Approver,
    ContentPart,
    ExecutionContext,
    Extension,
    Limits,
    Stats,
    ToolChain,
)
from toolchain.runtime import SettleLater, describe_exception, run_sync, set_approver
from toolchain.runtime import current_step_runner as current_runner

__all__ = ["StepEngine"]

AnswerT = TypeVar("AnswerT")
Decisions = Mapping[str, Approval] | None


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
        callee = f"{type(self).__name__}()"
        given = agent_chain(options, tool_chain, callee=callee)
        self.text_format: TextFormat = options.get("text_format") or XMLFormat()
        self.behavior = options.get("behavior", "")
        self.critical_rules = options.get("critical_rules", "")
        self.limits: Limits = options.get("limits") or Limits()
        self.prompt_builder: PromptBuilder = options.get("prompt_builder", prompt_builder)
        self.clock: Callable[[], dt.date] = options.get("clock", dt.date.today)
        self.name = options.get("name", "agent")
        self.approve: Approver | None = options.get("approve")
        """Decides the calls of tools that need approval (None: they are held, and the
        run pauses; see ``resume``)."""
        wired = AgentExtensions(
            given, options.get("extensions", ()), options.get("step_hooks", ()), callee=callee
        )
        self.tool_chain: ToolChain = wired.chain
        """The chain runs use: the one given, or a view of it offering the extensions'
        tools too (the chain given is never changed: other agents may share it)."""
        self._extensions = wired
        self.extensions: tuple[Extension, ...] = wired.all
        self.step_hooks: tuple[StepHook, ...] = wired.step_hooks
        # Through a weak reference: the replies are this agent's own (see _weakly).
        feedback = _weakly(weakref.WeakMethod(self._feedback))
        self._replies = Replies(termination, wired.answer_checks, feedback)
        self._plan: LedgerPlan | None = None  # what its runs' ledgers share (_ledger_plan)

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
                self._today(),
                None if tools is None else tuple(tools),
            )
        )
        return self._extensions.guides(prompt, self.text_format)

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

        A task of another kind (a list of chat dicts, say) is a ``TypeError`` here,
        before any model call, as is a history that is not ``Message`` objects or an
        ``extension_state`` that is not a mapping.
        """
        task, history, extension_state = check_run_inputs(task, history, extension_state)
        # The tasks that finish at once in its steps (an instant model's call, in-memory
        # tools) end together when it ends, in one loop turn, not two a step.
        return await SettleLater().awaiting(self._result(task, ctx, history, extension_state))

    async def _result(
        self,
        task: str | Sequence[ContentPart],
        ctx: ExecutionContext | None,
        history: Sequence[Message],
        extension_state: Mapping[str, object] | None,
    ) -> AgentResult[AnswerT]:
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
        task, history, extension_state = check_run_inputs(task, history, extension_state)
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
        """Run, yielding typed events as they happen; the last is ``RunFinished``.

        Its arguments are checked here, as ``run`` checks them."""
        task, history, extension_state = check_run_inputs(task, history, extension_state)
        return self._loop(task, ctx, history, extension_state, streaming=True)

    def _today(self) -> dt.date:
        """The clock's date; in a durable run on the default clock, the date the run
        started on (recorded, so a recovered run writes the same prompt)."""
        # == not is: each read of dt.date.today makes a new bound method (never the same
        # object), so `is` never matched and a recovered run wrote the date it ran on.
        runner = current_runner() if self.clock == dt.date.today else None
        return self.clock() if runner is None else runner.today()

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
        *,
        streaming: bool,
    ) -> AsyncGenerator[RunEvent[AnswerT], None]:
        """Read the model's reply into ``step``: sections or calls, tool results,
        feedback, an answer (judged by ``self._replies``). Raises ``RunStop`` when the
        run must end (the deadline passed while tools ran); ``step`` keeps what was
        done by then. The tool-call events are yielded only when ``streaming``."""

    async def _read_whole(
        self,
        ctx: ExecutionContext,
        index: int,
        response: ModelResponse,
        step: StepRecord,
        tools: tuple[str, ...],
        deadline: float | None,
    ) -> None:
        """`_read` for a run that is not streamed (it yields nothing then). An agent
        whose reader can do without a generator overrides it: awaited, a coroutine
        costs less a step than a generator drained."""
        reading = self._read(ctx, index, response, step, tools, deadline, streaming=False)
        try:
            async for _ in reading:
                pass
        except BaseException:
            # Closed with this one, as aclosing would (a cancellation, an error); one
            # run to its end needs no closing, and aclosing costs two coroutines more.
            await reading.aclose()
            raise

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
        ctx = run_context(ctx, self.limits, self.name, self.extensions, extension_state)
        set_approver(ctx, self.approve)  # the run's own (None: the chain's, or held)
        # Instrumentation (agents.otel) watches ctx.events; else nothing.
        settles = run_started(ctx, self, streaming=streaming) if WATCHERS else None
        # What the extensions save is counted only in a run that has some.
        ledger = open_ledger(ctx, self._ledger_plan()) if self.extensions else None
        loop = asyncio.get_running_loop()
        deadline = None if ctx.limits.timeout is None else loop.time() + ctx.limits.timeout
        steps = self._step_calls(task, history)
        stream = (
            Streaming(self._stream_events, self._extensions.text_filters) if streaming else None
        )
        run: RunRecord[AnswerT] = RunRecord(steps.messages)
        live = LiveRun(ctx, steps, run, deadline, stream, ledger, settles)
        # Closed with this one: a stream let go early releases the run at once.
        async with contextlib.aclosing(self._steps(live)) as events:
            async for event in events:
                yield event

    async def _steps(
        self, live: LiveRun, paused: PausedRun | None = None, decisions: Decisions = None
    ) -> AsyncGenerator[RunEvent[AnswerT], None]:
        """The run's steps until it stops; ``paused``: first the paused step, its held
        calls ``decisions`` decide (``resume``)."""
        ctx, steps, deadline = live.ctx, live.steps, live.deadline
        streaming = live.stream is not None  # call events are yielded only to a stream
        run: RunRecord[AnswerT] = live.run
        loop = asyncio.get_running_loop()
        messages = steps.messages
        # Extensions whose hooks are all left at their defaults (tools only) leave a step
        # plain: only step hooks and prompt sections change what a step sends.
        hooked = bool(self.step_hooks or self._extensions.sectioned)
        plain: StepCall | None = None  # the run's plain call, once a step sends it
        stop: RunStop | None = None
        held: PausedRun | None = None  # the step that pauses the run, its calls held
        if paused is not None:
            index, step = paused.index, paused.step
            ctx.step = index  # the decided calls' events carry the step that held them
            decided = run_decided(
                ctx, index, step, decisions or {}, self.text_format, deadline, streaming=streaming
            )
            # Each generator below is closed with this one (aclosing), so a stream let go
            # early cancels the model call or the tools it waits on at once, not when
            # the garbage collector finds them.
            async with contextlib.aclosing(decided) as tool_events:
                async for tool_event in tool_events:
                    yield tool_event
            still = held_requests(step)
            if still:  # calls still wait: the run stays paused, no model call
                held = dataclasses.replace(paused, pending=still)
                stop = RunStop("paused", paused_reason(still))
            else:
                assert step.reply is not None
                step.reply()
                replace_last(run, step)
                events, stop = self._went_on(ctx, index, step, run)
                for event in events:
                    yield event

        while stop is None:
            index = len(run.steps) + 1
            try:
                check_limits(ctx, deadline, loop.time())
                ctx.stats.increment(Stats.STEPS)
                ctx.step = index  # what the step's call events carry
                if ctx.events.has_subscribers(StepStarted):
                    ctx.events.emit(StepStarted(ctx, index))
                started = time.perf_counter()
                # Without hooks, prompt sections or a StepReady observer, no StepRequest
                # is built: the step sends the plain call, and a ledger is told so.
                if hooked or ctx.events.has_subscribers(StepReady):
                    made = steps.call(ctx, index, messages)
                    call = made if isinstance(made, StepCall) else await made
                else:
                    # The same call every step (nothing changes it): asked for once.
                    call = plain = steps.plain if plain is None else plain
                    if live.ledger is not None:
                        live.ledger.plain_step(index, call)
                response: ModelResponse | None = None
                if live.stream is None:
                    response = await model_reply(ctx, index, call, messages, deadline)
                else:
                    replying = call_model(ctx, index, call, messages, deadline, live.stream)
                    async with contextlib.aclosing(replying) as items:
                        async for item in items:
                            if isinstance(item, Done):
                                response = item.value
                            else:
                                yield item
                assert response is not None
            except RunStop as stopped:
                # Without its traceback, which holds this frame (that keeps it): no cycle
                # for the collector to free; only its kind and detail are read.
                stop = stopped.with_traceback(None)
                if stop.kind == "limit":
                    yield LimitReached(index, stop.detail)
                break
            step = StepRecord()
            halted: RunStop | None = None
            try:
                if streaming:
                    reading = self._read(
                        ctx, index, response, step, call.tools, deadline, streaming=True
                    )
                    try:
                        async for event in reading:
                            yield event
                    except BaseException:
                        # Closed with this one, as aclosing would (a stream let go early,
                        # a cancellation, an error); one run to its end needs no closing,
                        # and aclosing costs two coroutines more each step.
                        await reading.aclose()
                        raise
                else:  # nothing to yield: awaited
                    await self._read_whole(ctx, index, response, step, call.tools, deadline)
            except RunStop as stopped:  # e.g. the deadline passed while tools ran
                halted = stopped.with_traceback(None)  # as above
            except Exception as error:  # a bug in a user's section, chain or termination
                log.exception("handling the model's output failed")
                why = f"handling the model's output failed: {describe_exception(error)}"
                halted = RunStop("error", why)
            if halted is None and step.held and self._replies.held_too_often(ctx):
                halted = RunStop("limit", TASKS_PENDING)
            waiting = held_requests(step) if halted is None and step.reply is not None else ()
            if waiting:  # calls wait for a person: the run pauses here (agents._resume)
                halted = RunStop("paused", paused_reason(waiting))
                held = PausedRun(self, live, index, step, None, waiting)
            done = run.add(ctx, response, step, started)
            if live.ledger is not None:
                live.ledger.step_done(done)
            if ctx.events.has_subscribers(StepFinished):
                ctx.events.emit(StepFinished(ctx, done))
            if halted is not None:
                stop = halted
                if halted.kind == "limit":
                    yield LimitReached(index, halted.detail)
                break
            if step.has_answer:
                answer: AnswerT = self._extensions.filtered(ctx, step.answer)
                run.answer = answer
                yield AnswerReady[AnswerT](index, answer)
                stop = RunStop("answer", "")
                break
            events, stop = self._went_on(ctx, index, step, run, streaming=streaming)
            for event in events:
                yield event

        ctx.step = 0  # no step of this loop runs any more
        steps.conversation()  # a run that made no call keeps the plain system message
        pending = held.pending if held is not None and stop.kind == "paused" else ()
        # On ctx.events too, as it is made.
        finished = run.finished(ctx, stop, self.extensions, live.ledger, pending)
        if held is not None and pending:
            park(finished.result, dataclasses.replace(held, remaining=remaining(deadline)))
        if live.settles:  # the run's spans exported before it returns, within its deadline
            await run_ending(live.settles, deadline)
        yield finished

    def _went_on(
        self,
        ctx: ExecutionContext,
        index: int,
        step: StepRecord,
        run: RunRecord[AnswerT],
        *,
        streaming: bool = True,
    ) -> tuple[list[RunEvent[AnswerT]], RunStop | None]:
        """After a step whose tools ran: its observation (for a stream: ``run`` reads
        only the result), then whether the run stops (a tool cancelled or paused it, or
        ended it with an answer)."""
        events: list[RunEvent[AnswerT]] = []
        if step.replies and streaming:
            events.append(ObservationReady(index, _text_of(step.replies), tuple(step.results)))
        during = stopped_during_step(ctx)
        if during is not None:
            return events, during
        if ctx.finish_text is not None:  # a tool ended the run with its answer
            try:
                finished = self.termination.parse_section(ctx.finish_text)
                answer = self._extensions.filtered(ctx, finished)
            except Exception as error:
                return events, RunStop("error", f"the finishing answer was rejected: {error}")
            run.answer = answer
            events.append(AnswerReady[AnswerT](index, answer))
            return events, RunStop("answer", "")
        return events, None

    # -- resuming --------------------------------------------------------------------

    async def resume(
        self, result: AgentResult[AnswerT], decisions: Mapping[str, Approval]
    ) -> AgentResult[AnswerT]:
        """Go on with a run paused on held calls: ``decisions`` maps the call ids of
        ``result.pending`` to ``Approval.granted()`` or ``Approval.denied(reason)``.

        Each approved call runs with exactly the arguments that were reviewed; each
        denied one is answered with its reason, which the model reads as the call's
        result; the run then goes on from the same step, with no new user message and
        no request for the model to make the call again. Calls left undecided keep the
        run paused (no model call), listed in the new result's ``pending``. A paused
        result resumes once, with the agent that ran it, in the process that ran it.

        Raises ``ResumeError`` (an ``ApprovalError``), approving nothing, when any
        decision is refused: its call id holds no call, it is not an ``Approval``, it
        was bound to another call, run or arguments (``ApprovalRequest.approve``), or
        the result's held calls were edited or forged, or resumed already.

        >>> from agents import ReActAgent, ScriptedModel
        >>> from toolchain import Approval, tool
        >>> @tool(requires_approval=True)
        ... def wipe(disk: str) -> str:
        ...     '''Erase a disk.'''
        ...     return f"{disk} erased"
        >>> call = '<action>{"tool": "wipe", "args": {"disk": "sdb"}}</action>'
        >>> model = ScriptedModel([call, "<answer>sdb is erased</answer>"])
        >>> agent = ReActAgent(model, tools=[wipe])
        >>> paused = agent.run_sync("Erase sdb")
        >>> paused.stopped_by, [(p.tool, dict(p.args)) for p in paused.pending]
        ('paused', [('wipe', {'disk': 'sdb'})])
        >>> done = agent.resume_sync(paused, {paused.pending[0].call_id: Approval.granted()})
        >>> done.answer, done.stats["model_calls"]
        ('sdb is erased', 2)
        """
        paused, taken = checked(self, result, decisions)
        final: AgentResult[AnswerT] | None = None
        async for event in self._resumed(result, paused, taken, streaming=False):
            if isinstance(event, RunFinished):
                final = event.result
        assert final is not None  # _steps always ends with RunFinished
        return final

    def resume_stream(
        self, result: AgentResult[AnswerT], decisions: Mapping[str, Approval]
    ) -> AsyncIterator[RunEvent[AnswerT]]:
        """``resume``, yielding typed events as they happen, as ``stream`` does: the
        decided calls' ``ToolCallStarted`` / ``ToolCallFinished``, the model's text as
        ``ModelTextDelta`` pieces, the later steps' calls, and last ``RunFinished`` with
        the result (paused again, with ``pending``, while calls stay undecided).

        The decisions are checked here, at the call: a refused one raises
        ``ResumeError`` as ``resume`` does, approving nothing. The paused run is taken
        when the iterator is first advanced (an iterator never advanced leaves it
        paused; one first advanced after another resume took it raises
        ``ResumeError``). Closing the iterator early (``aclose``, or leaving an
        ``async for``) cancels the run, as closing ``stream``'s does.

        >>> import asyncio
        >>> from agents import ReActAgent, ScriptedModel
        >>> from agents.events import ModelTextDelta, RunFinished, ToolCallFinished
        >>> from toolchain import Approval, tool
        >>> @tool(requires_approval=True)
        ... def wipe(disk: str) -> str:
        ...     '''Erase a disk.'''
        ...     return f"{disk} erased"
        >>> call = '<action>{"tool": "wipe", "args": {"disk": "sdb"}}</action>'
        >>> model = ScriptedModel([call, "<answer>sdb is erased</answer>"], chunk_size=4)
        >>> agent = ReActAgent(model, tools=[wipe])
        >>> paused = agent.run_sync("Erase sdb")
        >>> async def resumed() -> None:
        ...     decisions = {paused.pending[0].call_id: Approval.granted()}
        ...     async for event in agent.resume_stream(paused, decisions):
        ...         if isinstance(event, ToolCallFinished) and event.result is not None:
        ...             print("ran:", event.result.text)
        ...         elif isinstance(event, ModelTextDelta) and event.section == "answer":
        ...             print(repr(event.text))
        ...         elif isinstance(event, RunFinished):
        ...             print(event.result.stopped_by)
        >>> asyncio.run(resumed())
        ran: sdb erased
        'sdb'
        ' is e'
        'rase'
        'd'
        answer
        """
        paused, taken = checked(self, result, decisions)
        return self._resumed(result, paused, taken, streaming=True)

    async def _resumed(
        self,
        result: AgentResult[AnswerT],
        paused: PausedRun,
        decisions: Mapping[str, Approval],
        *,
        streaming: bool,
    ) -> AsyncGenerator[RunEvent[AnswerT], None]:
        """The resumed run's events: ``resume`` drains them, ``resume_stream`` yields
        them. ``result`` is held until the run is claimed: the pause it keeps alive
        (`park`) is there until then."""
        claim(paused)
        del result  # held only until the run was claimed
        live = paused.live
        loop = asyncio.get_running_loop()
        live.deadline = None if paused.remaining is None else loop.time() + paused.remaining
        ctx = live.ctx
        live.stream = (
            Streaming(self._stream_events, self._extensions.text_filters) if streaming else None
        )
        live.settles = run_started(ctx, self, streaming=streaming) if WATCHERS else None
        live.ledger = open_ledger(ctx, self._ledger_plan()) if self.extensions else None
        # Closed with this one: a stream let go early releases the run at once.
        async with contextlib.aclosing(self._steps(live, paused, decisions)) as events:
            async for event in events:
                yield event

    def resume_sync(
        self, result: AgentResult[AnswerT], decisions: Mapping[str, Approval]
    ) -> AgentResult[AnswerT]:
        """``resume`` for synchronous code (not from inside a running event loop)."""
        return run_sync(self.resume(result, decisions))

    def _ledger_plan(self) -> LedgerPlan:
        """What the savings ledgers of this agent's runs share: worked out for its first
        run, and again only when the extensions, chain, format or a guide changed."""
        plan = self._plan
        extensions, chain, fmt = self.extensions, self.tool_chain, self.text_format
        if plan is None or not plan.holds(extensions, chain, fmt, self.protocol):
            plan = self._plan = LedgerPlan(extensions, chain, fmt, self.protocol)
        return plan

    def _step_calls(
        self, task: str | Sequence[ContentPart], history: Sequence[Message]
    ) -> StepCalls:
        """The run's plain call (its conversation so far), and how hooks change it."""
        tools = chain_names(self.tool_chain)
        # The system message is the one the first step's call sends (UNSENT until then):
        # a run whose hooks narrow the tools never builds the prompt listing them all.
        messages = [UNSENT, *self._history(history), self._task_message(task)]
        # Built once, when first sent: with no hook changing them, every step sends the
        # same system prompt and the same earlier messages, byte for byte (providers
        # cache them).
        return StepCalls(
            self.model,
            messages,
            tools,
            base_options=self._base_options,
            task_index=len(messages) - 2,  # in messages[1:], which is what hooks see
            protocol=self.protocol,
            hooks=self.step_hooks,
            extensions=self._extensions,
            text_format=self.text_format,
            tool_chain=self.tool_chain,
            system_prompt=self.system_prompt,
            options=self._options,
        )


def _weakly(method: weakref.WeakMethod[Callable[[str], Message]]) -> Callable[[str], Message]:
    """An agent's ``_feedback`` called through ``method``, a weak reference: its `Replies`
    is the agent's own, and a bound method there would make the two a cycle (an agent
    built per request would wait for the garbage collector, and all it holds with it)."""

    def feedback(text: str) -> Message:
        bound = method()
        assert bound is not None  # called while the agent runs: it is alive
        return bound(text)

    return feedback


def _text_of(messages: Sequence[Message]) -> str:
    return "\n".join(message.text_content() for message in messages)
