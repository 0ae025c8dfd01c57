"""`DurableAgent` and `DurablePrompt`: what users build, by name, to run durably."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from dbos import DBOS, Queue, WorkflowHandleAsync
from typing_extensions import Unpack

from agents._errors import AgentTypeError, AgentValueError
from agents._resume import ResumeError
from agents.durable._launch import require_launched, sealing_key
from agents.durable._pauses import TOPIC as DECISIONS
from agents.durable._pauses import message as paused_message
from agents.durable._record import answer_type_of, reader_of
from agents.durable._retries import ModelRetries
from agents.durable._runner import MAX_OUTPUT_BYTES
from agents.durable._serializer import MAX_RECORD_BYTES
from agents.durable._workflow import DurableRun, Task, register, start_run
from agents.models import Message, Model
from agents.prompt import Prompt, PromptOptions, PromptRun, run_prompt
from agents.react import ReActAgent
from agents.result import AgentResult
from agents.tool_calling import ToolCallingAgent
from formats import XMLFormat
from toolchain import Approval, ExecutionContext

__all__ = ["DurableAgent", "DurablePrompt"]

AnswerT = TypeVar("AnswerT")

DEFAULT_RETRIES = ModelRetries()

_PROMPT_RUN = ContextVar[PromptRun[Any] | None]("agents.durable.prompt_run", default=None)
"""The ``run_prompt`` run a `DurablePrompt`'s workflow is running: set by ``execute`` in
the workflow's own context (awaited there, not in a task of its own), read by
``go_on`` when decisions come for its pause; gone with the workflow's task."""


async def _decided(result: AgentResult[Any], decisions: Mapping[str, Approval]) -> AgentResult[Any]:
    """Send ``decisions`` for the pause of a paused durable run's ``result`` to the run,
    wherever it runs now, and wait for what follows (``DurableAgent.resume``)."""
    require_launched("resume a paused durable run")
    workflow_id, pause, message = paused_message(result, decisions, sealing_key())
    found: WorkflowHandleAsync[Any] = await DBOS.retrieve_workflow_async(workflow_id)
    run: DurableRun[Any] = DurableRun(found)
    status = await run.status()
    latest, waits = await run.pause()
    if status not in ("PENDING", "ENQUEUED") or latest != pause or not waits:
        raise ResumeError(
            {"*": f"run {workflow_id} does not wait on this pause now: it was resumed already"}
        )
    sent = secrets.token_hex(16)  # the run says whose decisions its pause took
    await DBOS.send_async(workflow_id, {**message, "id": sent}, DECISIONS)
    after = await run.after(pause)
    taken = await run.taken(pause)
    if taken != sent:
        # Two resumes raced for this pause: both checked it waited before either's
        # decisions were taken. The run went on with the other's; say so, not a result
        # the caller would read as the outcome of its own decisions.
        raise ResumeError(
            {
                "*": f"run {workflow_id}'s pause {pause} was decided by another resume "
                "before this one's decisions reached it: they were not applied (the "
                "run went on with the other's; retrieve(...).result() reads where it is)"
            }
        )
    return after


class DurableAgent(Generic[AnswerT]):
    """Runs of ``agent`` as DBOS workflows: each model call and tool call a step.

    Build it at import time of your module, under a name unique in the application:
    a process that recovers a run finds the agent by that name, so it must build the
    same agent before ``agents.durable.launch()``. ``max_output_bytes``: the largest
    tool output its runs record (as JSON; ``MAX_OUTPUT_BYTES`` by default); a larger
    one fails its call alone with an ``output_error`` naming the size and the limit.
    ``retries`` says how its model calls are made again when the provider fails for a
    passing reason (``ModelRetries``: by default up to 6 tries over about half a minute).

    >>> from agents import ReActAgent, ScriptedModel
    >>> durable = DurableAgent(ReActAgent(ScriptedModel(["<answer>4</answer>"])), name="doc-adder")
    >>> durable.name
    'doc-adder'
    """

    def __init__(
        self,
        agent: ReActAgent[AnswerT] | ToolCallingAgent[AnswerT],
        *,
        name: str,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        retries: ModelRetries = DEFAULT_RETRIES,
    ) -> None:
        self.agent = agent
        self.name = name
        self.max_output_bytes = _output_limit(max_output_bytes)
        self.retries = retries
        register(self)

    async def run(
        self,
        task: Task,
        *,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
        workflow_id: str | None = None,
    ) -> AgentResult[AnswerT]:
        """Run ``task`` durably and wait for its result (``agent.run``'s arguments).

        ``workflow_id`` names the run (default: a fresh one); starting a run with the id
        of one that exists returns that run's result instead of running it again, when
        it is this agent's run of the same task and history (else
        ``WorkflowIdTakenError``). A run that ended in error keeps its result:
        ``agents.durable.resume(workflow_id)`` makes it go on.
        """
        started = await self.start(
            task, history=history, extension_state=extension_state, workflow_id=workflow_id
        )
        return await started.result()

    async def start(
        self,
        task: Task,
        *,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
        workflow_id: str | None = None,
        queue: Queue | None = None,
    ) -> DurableRun[AnswerT]:
        """Start the run and return its handle at once; on ``queue`` (a DBOS ``Queue``),
        a worker process listening to that queue runs it."""
        return await start_run(self, task, history, extension_state, workflow_id, queue)

    async def resume(
        self, result: AgentResult[AnswerT], decisions: Mapping[str, Approval]
    ) -> AgentResult[AnswerT]:
        """Decide the held calls of a paused durable run and wait for what follows: its
        end, or its next pause (``agent.resume``'s arguments).

        ``result`` is the paused result as ``run`` or ``retrieve(...).result()`` gave it,
        in this process or any other launched on the same database: the run waits in
        its workflow, wherever that runs now. Each approved call runs once, with the
        arguments that were shown (as a step of the run: a crash after it ran does not
        run it again), each denied call is answered with its reason, and the run goes
        on. Raises ``ResumeError``, approving nothing, when a decision is refused (its
        call id holds no call, it was bound to another call, run or arguments), when
        the held calls were edited or forged, or when this pause was decided already.
        """
        return await _decided(result, decisions)

    async def execute(
        self, task: Task, history: Sequence[Message], extension_state: Mapping[str, object] | None
    ) -> AgentResult[AnswerT]:
        """The run itself, inside the workflow (not for users: ``run`` or ``start``)."""
        # The run's id is its workflow's, the same in every process that replays it:
        # decisions on its held calls are bound to it.
        ctx = ExecutionContext(name=self.agent.name)
        ctx.run_id = DBOS.workflow_id or ctx.run_id
        return await self.agent.run(task, ctx=ctx, history=history, extension_state=extension_state)

    def go_on(
        self, result: AgentResult[Any], decisions: Mapping[str, Approval]
    ) -> Awaitable[AgentResult[Any]]:
        """The paused run resumed, inside the workflow (not for users: ``resume``)."""
        return self.agent.resume(result, decisions)

    def reader(self) -> dict[str, str]:
        """What reads a run's record: the agent's class, its chain's and its format's."""
        return reader_of(self.agent)

    def output_type(self, tool: str) -> object:
        """The output type of the agent's tool ``tool`` (``Any`` if it has none such)."""
        found = self.agent.tool_chain.tools.get(tool)
        return Any if found is None else found.output_type

    def answer_type(self) -> object:
        """The type of the agent's answers, by its termination."""
        return answer_type_of(self.agent.termination)


class DurablePrompt:
    """Runs of ``run_prompt(build, model=..., **options)`` as DBOS workflows.

    ``name=`` is required: the name it is registered under, and the run's name.
    ``retries`` as for ``DurableAgent``.
    ``run(task)`` adds ``task`` as the user message after ``build`` (when ``build``
    writes its own, call ``run()`` without one). Sub-agents (``def_agent``) run inside
    the same workflow: their model and tool calls are its steps. ``max_output_bytes``
    as for ``DurableAgent``; the tools ``build`` defines are not known before a run, so
    a run's result read from another process has their outputs as plain data.

    >>> from agents import ScriptedModel
    >>> durable = DurablePrompt(lambda p: None, model=ScriptedModel(["Hi"]), name="doc-hi")
    >>> durable.name
    'doc-hi'
    """

    def __init__(
        self,
        build: Callable[[Prompt], Awaitable[None] | None],
        *,
        model: Model | str,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        retries: ModelRetries = DEFAULT_RETRIES,
        **options: Unpack[PromptOptions],
    ) -> None:
        name = options.get("name")
        if not name:
            raise AgentTypeError("DurablePrompt() needs name=: the name recovery finds it by")
        for taken in ("history", "extension_state", "ctx"):
            if taken in options:
                raise AgentTypeError(f"DurablePrompt() takes {taken}= in run(), not here")
        self.build = build
        self.model = model
        self.options = options
        self.name = name
        self.max_output_bytes = _output_limit(max_output_bytes)
        self.retries = retries
        register(self)

    async def run(
        self,
        task: Task = "",
        *,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
        workflow_id: str | None = None,
    ) -> AgentResult[Any]:
        """Run the prompt durably and wait for its result."""
        started = await self.start(
            task, history=history, extension_state=extension_state, workflow_id=workflow_id
        )
        return await started.result()

    async def start(
        self,
        task: Task = "",
        *,
        history: Sequence[Message] = (),
        extension_state: Mapping[str, object] | None = None,
        workflow_id: str | None = None,
        queue: Queue | None = None,
    ) -> DurableRun[Any]:
        """Start the run and return its handle at once (see ``DurableAgent.start``)."""
        return await start_run(self, task, history, extension_state, workflow_id, queue)

    async def resume(
        self, result: AgentResult[Any], decisions: Mapping[str, Approval]
    ) -> AgentResult[Any]:
        """Decide the held calls of a paused durable run of the prompt (its own calls or
        a sub-agent's, ``via`` naming it) and wait for its end or next pause; from any
        process launched on the same database (see ``DurableAgent.resume``). A
        sub-agent's approved call runs in the sub-agent, which goes on to its answer."""
        return await _decided(result, decisions)

    async def execute(
        self, task: Task, history: Sequence[Message], extension_state: Mapping[str, object] | None
    ) -> AgentResult[Any]:
        """The run itself, inside the workflow (not for users: ``run`` or ``start``)."""
        build = self.build

        async def with_task(prompt: Prompt) -> None:
            built = build(prompt)
            if built is not None:
                await built
            if task:
                prompt.user(task if isinstance(task, str) else _text(task))

        options = self.options.copy()
        options["history"] = history
        if extension_state is not None:
            options["extension_state"] = extension_state
        # The run's id is its workflow's, the same in every process that replays it:
        # decisions on its held calls (and its sub-agents') are bound to it.
        ctx = ExecutionContext(limits=options.get("limits"), name=self.name)
        ctx.run_id = DBOS.workflow_id or ctx.run_id
        options["ctx"] = ctx
        run = run_prompt(with_task, model=self.model, **options)
        _PROMPT_RUN.set(run)  # for go_on, later in this workflow's own context
        return await run.result()

    def go_on(
        self, result: AgentResult[Any], decisions: Mapping[str, Approval]
    ) -> Awaitable[AgentResult[Any]] | None:
        """The paused run resumed, inside the workflow (not for users: ``resume``);
        None outside the workflow that ran it."""
        run = _PROMPT_RUN.get()
        return None if run is None else run.resume(decisions)

    def reader(self) -> dict[str, str]:
        """What reads a run's record: the protocol's agent and the text format."""
        text_format = self.options.get("text_format") or XMLFormat()
        return {
            "agent": "run_prompt",
            "protocol": self.options.get("protocol", "native"),
            "text_format": type(text_format).__qualname__,
        }

    def output_type(self, tool: str) -> object:
        """``Any``: the tools are defined by ``build``, during a run."""
        return Any

    def answer_type(self) -> object:
        """``response_model`` when given, else text."""
        return self.options.get("response_model", str)


def _output_limit(given: int) -> int:
    if not 0 < given <= MAX_RECORD_BYTES:
        raise AgentValueError(
            f"max_output_bytes must be between 1 and {MAX_RECORD_BYTES:,} (the largest "
            f"value a durable run records in one piece), not {given!r}"
        )
    return given


def _text(task: Sequence[object]) -> str:
    return "".join(str(getattr(part, "text", "")) for part in task)
