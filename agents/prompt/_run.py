"""``run_prompt``: lmthing's ``runPrompt`` on this library's own loop.

``run_prompt(build, model=..., **options)`` makes a ``Prompt``, lets the plugins and
then ``build`` declare it, and runs it on an agent: ``ToolCallingAgent`` over the
provider's native tool calling (``protocol="native"``, the default) or ``ReActAgent``
over the text protocol (``protocol="text"``). It returns a ``PromptRun`` at once; the
run starts when something reads it (``await run.text()``, ``run.text_stream()``,
``run.events()``, ``await run``), and every reader sees the same run.

>>> from agents.models import ScriptedModel
>>> def build(prompt: Prompt) -> None:
...     name = prompt.def_("USER_NAME", "Ada")
...     prompt.user(f"Say hello to {name}.")
>>> run = run_prompt(build, model=ScriptedModel(["Hello, Ada!"]))
>>> run.run_sync().answer
'Hello, Ada!'
>>> run.prompt.definitions["USER_NAME"].text
'Ada'
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Mapping,
    Sequence,
)
from typing import Any, Generic, Literal, TypedDict, TypeVar

from typing_extensions import Unpack

from agents._errors import AgentStateError, AgentTypeError, AgentValueError
from agents._options import check_keywords
from agents._resume import ResumeError
from agents._run_inputs import check_extension_state, check_history
from agents._system_prompt import REACT_GUIDE, PromptContext
from agents.events import (
    ModelTextDelta,
    ModelToolCallDelta,
    RunEvent,
    RunFinished,
    StepFinished,
)
from agents.models import GenerateOptions, Message, Model, ToolChoice, Usage, resolve_model
from agents.prompt._prompt import SUB_AGENTS, AgentTool, Plugin, Prompt
from agents.prompt._prompt_hooks import STEPS, PromptHooks
from agents.prompt._tasks import DynamicTaskList, TaskList
from agents.react import ReActAgent
from agents.result import AgentResult, StepResult
from agents.steps import StepHook
from agents.terminations import Termination, TypedTermination
from agents.tool_calling import ToolCallingAgent
from formats import FormattedSection, TextFormat
from toolchain import (
    Approval,
    Approver,
    ExecutionContext,
    Extension,
    JSONToolChain,
    Limits,
    RawToolCallResult,
    StateKey,
    Stats,
    TextContent,
    ToolCall,
    ToolCallError,
)
from toolchain.runtime import logger, run_sync

__all__ = ["PromptOptions", "PromptRun", "run_prompt"]

_log = logger("agents")
AnswerT = TypeVar("AnswerT")
Build = Callable[[Prompt], "Awaitable[None] | None"]


class PromptOptions(TypedDict, total=False):
    """The options of ``run_prompt`` (lmthing's names, in Python's spelling)."""

    system: str
    """The start of the system prompt (``def_system`` and ``def_`` add to it)."""
    protocol: Literal["native", "text"]
    """Native tool calling (default) or the text protocol (ReAct sections)."""
    max_output_tokens: int
    temperature: float
    top_p: float
    top_k: int
    presence_penalty: float
    frequency_penalty: float
    stop_sequences: Sequence[str]
    seed: int
    max_retries: int
    headers: Mapping[str, str]
    tool_choice: ToolChoice
    response_model: type[Any]
    """Validate the answer into this pydantic model (a ``final_answer`` tool in native mode)."""
    stop_when: Callable[[StepResult], bool]
    """Checked after each step; True ends the run there (``stopped_by == "paused"``)."""
    on_step: Callable[[StepResult], object]
    on_chunk: Callable[[ModelTextDelta | ModelToolCallDelta], object]
    on_finish: Callable[[AgentResult[Any]], object]
    on_error: Callable[[str], object]
    plugins: Sequence[Plugin | Extension]
    """Applied before ``build``: functions making ``def_*`` calls, or extensions
    (``ToolVariables()``, ``ContextRelay()``, ``ToolSearch(...)``), added as they are."""
    limits: Limits
    ctx: ExecutionContext
    """The run's context: pass ``ctx.child(...)`` to run a prompt from inside a tool, or
    a context you cancel."""
    history: Sequence[Message]
    """An earlier conversation to continue (``run.result().messages``)."""
    extension_state: Mapping[str, object]
    text_format: TextFormat
    name: str
    approve: Approver
    """Decides the calls of tools that need approval, the sub-agents' too (the agents'
    ``approve=``). Without it, or when it answers ``None``, a call that needs approval
    pauses the run (a sub-agent's pauses its parent too): ``PromptRun.resume`` goes on
    with the decisions."""


@dataclasses.dataclass(slots=True)
class _Resumable(Generic[AnswerT]):
    """What `PromptRun.resume` needs of a started run: its agent, and ``watch``, which
    observes the run's steps and end again while it goes on (and returns how to stop)."""

    agent: ReActAgent[AnswerT] | ToolCallingAgent[AnswerT] | None = None
    watch: Callable[[], Callable[[], None]] | None = None


class PromptRun(Generic[AnswerT]):
    """One run of a prompt; reading it in any way starts it, once.

    - ``await run`` / ``await run.result()``: the ``AgentResult``;
    - ``await run.text()``: the final text (the answer, or ``""``);
    - ``run.text_stream()``: the answer's text as the model writes it;
    - ``run.events()``: every ``RunEvent`` of the run, from the start;
    - ``await run.usage()``, ``await run.tool_calls()``, ``await run.tool_results()``;
    - ``run.prompt``: the ``Prompt`` that was built (after the run started).
    """

    def __init__(
        self,
        start: Callable[
            [PromptRun[AnswerT], _Resumable[AnswerT]], AsyncIterator[RunEvent[AnswerT]]
        ],
        ctx: ExecutionContext | None = None,
    ):
        self._start = start
        self.prompt = Prompt()
        self._events: list[RunEvent[AnswerT]] = []
        self._done = False
        self._error: BaseException | None = None
        self._changed: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.ctx = ctx if ctx is not None else ExecutionContext()
        """The run's context, from the start: ``run.ctx.cancel()`` cancels the run."""
        self._resumable = _Resumable[AnswerT]()
        self._latest: AgentResult[AnswerT] | None = None
        """The result of the latest `resume`, once there is one."""
        self._resuming = False

    def _ensure_started(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._produce())
        return self._changed

    async def _produce(self) -> None:
        changed = self._changed
        assert changed is not None
        try:
            async for event in self._start(self, self._resumable):
                self._events.append(event)
                changed.set()
        except BaseException as error:  # surfaced to every reader
            self._error = error
        finally:
            self._done = True
            changed.set()

    async def events(self) -> AsyncIterator[RunEvent[AnswerT]]:
        """Every event of the run, from its start, as it happens."""
        changed = self._ensure_started()
        seen = 0
        while True:
            while seen < len(self._events):
                seen += 1
                yield self._events[seen - 1]
            if self._done:
                if self._error is not None:
                    raise self._error
                return
            changed.clear()
            if seen < len(self._events) or self._done:
                continue
            await changed.wait()

    async def text_stream(self) -> AsyncIterator[str]:
        """The answer's text as the model writes it (text protocol: the answer
        section; native: the reply text)."""
        async for event in self.events():
            if isinstance(event, ModelTextDelta) and event.section in (None, "answer"):
                yield event.text

    async def result(self) -> AgentResult[AnswerT]:
        """The run's result: the latest `resume`'s once the run was resumed."""
        async for event in self.events():
            if isinstance(event, RunFinished):
                return self._latest if self._latest is not None else event.result
        raise AgentStateError("the run ended without a result")

    async def resume(self, decisions: Mapping[str, Approval]) -> AgentResult[AnswerT]:
        """Go on with this run, paused on held calls (``result.pending``), with
        ``decisions`` for them (``{call_id: Approval.granted(), ...}``): the approved
        calls run with the arguments that were reviewed (a sub-agent's held call runs in
        the sub-agent, which goes on to its answer), the denied ones are answered with
        their reason, and the run goes on with no new user message and no request to
        the model to repeat a call; ``on_step``, ``stop_when`` and ``on_finish`` go on
        too. Calls left undecided keep it paused. Returns the new result, which
        `result` returns from then on.

        Raises ``ResumeError`` (approving nothing) when the run is not paused on held
        calls or a decision is refused (see ``agent.resume``).

        >>> from agents.models import ScriptedModel
        >>> from toolchain import Approval, tool
        >>> @tool(requires_approval=True)
        ... def wipe(disk: str) -> str:
        ...     '''Erase a disk.'''
        ...     return f"{disk} erased"
        >>> def build(prompt: Prompt) -> None:
        ...     prompt.def_tool(wipe)
        ...     prompt.user("Erase sdb")
        >>> model = ScriptedModel([ScriptedModel.call("wipe", disk="sdb"), "sdb is erased"])
        >>> run = run_prompt(build, model=model)
        >>> paused = run.run_sync()
        >>> paused.stopped_by, [(p.tool, dict(p.args)) for p in paused.pending]
        ('paused', [('wipe', {'disk': 'sdb'})])
        >>> done = run.resume_sync({paused.pending[0].call_id: Approval.granted()})
        >>> done.answer, len(model.requests)
        ('sdb is erased', 2)
        """
        paused = await self.result()
        agent, watch = self._resumable.agent, self._resumable.watch
        if agent is None or watch is None or paused.stopped_by != "paused" or self._resuming:
            raise ResumeError(
                {"*": f"this run is not paused on held calls (stopped_by={paused.stopped_by!r})"}
            )
        self._resuming = True  # one resume at a time: each takes the latest pause
        unwatch = watch()
        try:
            resumed = await agent.resume(paused, decisions)
        finally:
            unwatch()
            self._resuming = False
        self._latest = resumed
        return resumed

    def resume_sync(self, decisions: Mapping[str, Approval]) -> AgentResult[AnswerT]:
        """`resume` for synchronous code."""
        return run_sync(self.resume(decisions))

    def __await__(self) -> Generator[Any, None, AgentResult[AnswerT]]:
        return self.result().__await__()

    async def text(self) -> str:
        result = await self.result()
        return "" if result.answer is None else str(result.answer)

    async def usage(self) -> Usage:
        """Tokens of the whole run, its sub-agents' included."""
        result = await self.result()
        return result.usage + self.ctx.state.get(_SUB_USAGE, Usage())

    async def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call of the run, in order."""
        result = await self.result()
        return tuple(
            call for step in result.steps for chain in step.tool_results for call in chain.raw.calls
        )

    async def tool_results(self) -> tuple[RawToolCallResult | ToolCallError, ...]:
        """Each call's result, or its error, in the order of ``tool_calls``."""
        result = await self.result()
        found: list[RawToolCallResult | ToolCallError] = []
        for step in result.steps:
            for chain in step.tool_results:
                for ok, error in zip(chain.raw.results, chain.raw.errors, strict=True):
                    outcome = ok if ok is not None else error
                    assert outcome is not None
                    found.append(outcome)
        return tuple(found)

    def run_sync(self) -> AgentResult[AnswerT]:
        """``await run.result()`` for synchronous code."""
        return run_sync(self.result())


_KEYWORDS = frozenset({"model", *PromptOptions.__required_keys__, *PromptOptions.__optional_keys__})
_PEERS = {
    "system_prompt": "system",
    "instructions": "system",
    "max_tokens": "max_output_tokens",
    "max_iterations": "limits=Limits(max_steps=...)",
    "max_steps": "limits=Limits(max_steps=...)",
    "output_type": "response_model",
    "result_type": "response_model",
    "tools": "prompt.def_tool(...) inside build",
    "tool_chain": "prompt.def_tool(...) inside build",
}


def run_prompt(
    build: Build, *, model: Model | str, **options: Unpack[PromptOptions]
) -> PromptRun[Any]:
    """Run the prompt ``build`` declares (see the module text).

    An option it does not know is a ``TypeError`` naming it, raised here, as is a
    ``history`` that is not ``Message`` objects or an ``extension_state`` that is not a
    mapping (a user message that is not a str is one at ``prompt.user``).
    """
    check_keywords("run_prompt()", options, _KEYWORDS, peers=_PEERS)
    check_history(options.get("history", ()))
    check_extension_state(options.get("extension_state"))
    ctx = options.get("ctx") or ExecutionContext(
        limits=options.get("limits"), name=options.get("name", "prompt")
    )
    return PromptRun(lambda run, resumable: _execute(run, resumable, build, model, options), ctx)


_SUB_USAGE = StateKey[Usage]("agents.prompt.sub_usage")


class _SubRun:
    """How a run of ``run_prompt`` runs an ``AgentTool`` (`SubAgents`): a run of its own
    in ``ctx.child(name)``, whose tokens count in the run of ``ctx`` (``PromptRun.usage``),
    each token once however often it is resumed."""

    def __init__(
        self,
        ctx: ExecutionContext,
        build: Build,
        model: Model | str,
        name: str,
        options: dict[str, Any],
    ) -> None:
        self._parent = ctx
        self._run: PromptRun[Any] = run_prompt(
            build, model=model, ctx=ctx.child(name), name=name, **options
        )
        self._counted = Usage()

    async def result(self) -> AgentResult[Any]:
        return await self._count(await self._run.result())

    async def resume(self, decisions: Mapping[str, Approval]) -> AgentResult[Any]:
        return await self._count(await self._run.resume(decisions))

    async def _count(self, result: AgentResult[Any]) -> AgentResult[Any]:
        """``result``, its tokens not counted yet added to the parent's."""
        total, was = await self._run.usage(), self._counted
        new = Usage(
            total.input_tokens - was.input_tokens,
            total.output_tokens - was.output_tokens,
            total.cached_input_tokens - was.cached_input_tokens,
        )
        self._parent.state.set(_SUB_USAGE, self._parent.state.get(_SUB_USAGE, Usage()) + new)
        self._counted = total
        return result


async def _execute(
    run: PromptRun[Any],
    resumable: _Resumable[Any],
    build: Build,
    model: Model | str,
    options: PromptOptions,
) -> AsyncIterator[RunEvent[Any]]:
    prompt = Prompt(text_format=options.get("text_format"))
    run.prompt = prompt
    prompt.system = options.get("system", "")
    for plugin in options.get("plugins", ()):
        if callable(plugin):
            plugin(prompt)
        else:  # an extension: ToolVariables(), ContextRelay(), ToolSearch(...)
            prompt.def_extension(plugin)
    built = build(prompt)
    if inspect.isawaitable(built):
        await built
    if not prompt.messages or prompt.messages[-1].role != "user":
        raise AgentValueError("the prompt must end with a user message: call prompt.user(...)")
    protocol = options.get("protocol", "native")
    agent = _agent(prompt, resolve_model(model) if isinstance(model, str) else model, options)
    ctx = run.ctx
    ctx.state.set(SUB_AGENTS, _SubRun)
    steps = ctx.state.setdefault(STEPS, list)
    on_step = options.get("on_step")
    stop_when = options.get("stop_when")

    def finished(event: StepFinished) -> None:
        steps.append(event.step)
        if on_step is not None:
            on_step(event.step)
        if stop_when is not None and stop_when(event.step):
            ctx.pause("the stop condition was met")

    on_chunk, on_finish, on_error = (
        options.get("on_chunk"),
        options.get("on_finish"),
        options.get("on_error"),
    )

    def ended(event: RunFinished[Any]) -> None:
        # A resumed run's end, told as the first one's was (a resume streams nothing).
        if event.result.stopped_by == "error" and on_error is not None:
            _notify(ctx, on_error, event.result.error or "error")
        if on_finish is not None:
            _notify(ctx, on_finish, event.result)

    def watch() -> Callable[[], None]:
        """What ``PromptRun.resume`` observes while the run goes on: its steps, its end."""
        steps_off = ctx.events.subscribe(StepFinished, finished)
        end_off = ctx.events.subscribe(RunFinished, ended)

        def off() -> None:
            steps_off()
            end_off()

        return off

    resumable.agent, resumable.watch = agent, watch
    unsubscribe = ctx.events.subscribe(StepFinished, finished)
    last = prompt.messages[-1]
    history = [*options.get("history", ()), *prompt.messages[:-1]]
    try:
        stream = agent.stream(
            last.content if protocol == "native" else (TextContent(last.text_content()),),
            ctx=ctx,
            history=history,
            extension_state=options.get("extension_state"),
        )
        async for event in stream:
            if on_chunk is not None and isinstance(event, ModelTextDelta | ModelToolCallDelta):
                _notify(ctx, on_chunk, event)
            if isinstance(event, RunFinished):
                result = event.result
                if result.stopped_by == "error" and on_error is not None:
                    _notify(ctx, on_error, result.error or "error")
                if on_finish is not None:
                    _notify(ctx, on_finish, result)
            yield event
    finally:
        unsubscribe()


def _notify(ctx: ExecutionContext, callback: Callable[[Any], object], value: object) -> None:
    """Call a callback as the run's observers are called (``on_step`` is one): one that
    raises is logged and counted, and never changes or ends the run."""
    try:
        callback(value)
    except Exception:
        _log.exception("a run_prompt callback raised")
        ctx.stats.increment(Stats.OBSERVER_ERRORS)


def _agent(
    prompt: Prompt, model: Model, options: PromptOptions
) -> ReActAgent[Any] | ToolCallingAgent[Any]:
    chain = JSONToolChain()
    for tool in prompt.tools.values():
        if isinstance(tool, AgentTool) and tool.model is None:
            tool.parent_model = model  # a sub-agent without a model of its own uses ours
        chain.register_tool(tool)
    protocol = options.get("protocol", "native")
    head = prompt.system_text()

    def builder(context: PromptContext) -> str:
        if protocol == "native":
            return head
        tools = context.tool_chain.available_tools_prompt(context.tools) or "(no tools)"
        sections = [
            FormattedSection("react", REACT_GUIDE, escape=False),
            FormattedSection("available_tools", tools, escape=False),
            FormattedSection(
                "output_format", context.text_format.describe_structure(), escape=False
            ),
        ]
        tail = context.text_format.format_sections(sections)
        return f"{head}\n\n{tail}" if head else tail

    hooks: list[StepHook] = []
    # The task lists are extensions (a step hook and an answer check each), after the
    # prompt's own: their step hooks run after discovery's, whose choice they keep.
    extensions: list[Extension] = list(prompt.extensions)
    response_model = options.get("response_model")
    # A typed answer is the model's to write: the last task done does not end the run.
    ends_run = response_model is None
    if prompt.tasks is not None:
        tasks = TaskList(prompt.tasks, ends_run=ends_run)
        tasks.chain = chain
        extensions.append(tasks)
    if prompt.dynamic_tasks:
        extensions.append(DynamicTaskList(ends_run=ends_run))
    for extension in extensions[len(prompt.extensions) :]:
        # On the chain itself, where they are listed before the other extensions'
        # tools (the agent's view then has nothing of theirs to add).
        for tool in extension.tools():
            chain.register_tool(tool)
    if prompt.hooks:
        hooks.append(PromptHooks(prompt.hooks, prompt.definitions, prompt.system_text, head))
    hooks += prompt.step_hooks
    common: dict[str, Any] = {
        "tool_chain": chain,
        "options": _generate_options(options),
        "prompt_builder": builder,
        "step_hooks": hooks,
        "extensions": extensions,
        "text_format": prompt.text_format,
        "name": options.get("name", "prompt"),
    }
    if "limits" in options:
        common["limits"] = options["limits"]
    if "approve" in options:
        common["approve"] = options["approve"]
    termination: Termination[Any] | None = (
        TypedTermination(response_model) if response_model is not None else None
    )
    if protocol == "native":
        return ToolCallingAgent(model, termination=termination, **common)
    if protocol != "text":
        raise AgentValueError(f"protocol must be 'native' or 'text', not {protocol!r}")
    return ReActAgent(model, termination=termination, **common)


def _generate_options(options: PromptOptions) -> GenerateOptions:
    fields = {field.name for field in dataclasses.fields(GenerateOptions)}
    wanted: dict[str, Any] = {
        "max_tokens": options.get("max_output_tokens"),
        "temperature": options.get("temperature"),
        "seed": options.get("seed"),
        "top_p": options.get("top_p"),
        "top_k": options.get("top_k"),
        "presence_penalty": options.get("presence_penalty"),
        "frequency_penalty": options.get("frequency_penalty"),
        "max_retries": options.get("max_retries"),
        "headers": dict(options["headers"]) if "headers" in options else None,
    }
    given = {k: v for k, v in wanted.items() if v is not None}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise AgentTypeError(f"these options are not supported by the model layer: {unknown}")
    if "stop_sequences" in options:
        given["stop"] = tuple(options["stop_sequences"])
    if "tool_choice" in options:
        given["tool_choice"] = options["tool_choice"]
    return GenerateOptions(**given)
