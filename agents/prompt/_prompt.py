"""``Prompt``: what a ``run_prompt`` build function declares with its ``def_*`` calls.

A build function receives a fresh ``Prompt`` and fills it: named values for the system
prompt (``def_``, ``def_data``), labelled system parts (``def_system``), messages
(``def_message``, ``user``), tools (``def_tool``, ``def_agent``), per-step hooks
(``def_hook``), task lists and extensions. ``run_prompt`` then runs it on a model.
This module also holds what those declarations make: ``FunctionTool``, ``AgentTool``
(a sub-agent, run by the ``run_prompt`` that runs its parent) and ``Task``.

>>> prompt = Prompt()
>>> prompt.def_("USER_NAME", "Ada")
'<USER_NAME>'
>>> prompt.def_data("ORDER", {"item": "tea", "quantity": 2})
'<ORDER>'
>>> prompt.user("Greet <USER_NAME> and confirm <ORDER>.")
>>> print(prompt.system_text())
The values below are named; <NAME> in a message refers to the value in that tag.
<BLANKLINE>
<USER_NAME>
Ada
</USER_NAME>
<ORDER>
item: tea
quantity: 2
</ORDER>
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, cast, overload

from agents._errors import AgentTypeError, AgentValueError
from agents._run_inputs import check_message_text
from agents.models import Message, Model
from agents.prompt._definitions import Definition, Sampling, check_name, fit_data, fit_text
from agents.prompt._prompt_hooks import PromptHook
from agents.result import AgentResult
from agents.steps import StepRequest
from formats import FormattedSection, TextFormat, XMLFormat
from toolchain import (
    Approval,
    ApprovalRequest,
    ExecutionContext,
    Extension,
    StateKey,
    Tool,
    ToolCallError,
    ToolError,
    ToolResult,
    to_builtins,
)
from toolchain.runtime import CallHeld, calls_nest, held_error, logger, rebind

__all__ = [
    "SUB_AGENTS",
    "AgentTool",
    "FunctionTool",
    "Plugin",
    "Prompt",
    "SubAgents",
    "SubRun",
    "Task",
]

InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")
_log = logger("agents")
AnyTool = Tool[Any, Any]
Validation = Callable[[str], "str | Awaitable[str | None] | None"]
Extend = Callable[["Prompt", Sequence[Message]], None]

DEFINITIONS_GUIDE = (
    "The values below are named; <NAME> in a message refers to the value in that tag."
)


StepFn = Callable[[ExecutionContext, StepRequest], Awaitable[StepRequest | None]]


class FunctionTool(Tool[InputT, OutputT], Generic[InputT, OutputT]):
    """A tool from a name, a description, an input type and a function.

    The function takes the validated input, or the input and the run's
    ``ExecutionContext``; it may be async, and may return a ``ToolResult``.

    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     city: str
    >>> weather = FunctionTool("weather", "Weather in a city.", City, lambda i: f"Sun in {i.city}")
    >>> weather.input_schema()["required"]
    ['city']
    """

    def __init__(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., OutputT | ToolResult[OutputT] | Awaitable[OutputT | ToolResult[OutputT]]],
    ) -> None:
        self.name = name
        self.description = description
        self.input_type = input_type
        self._fn = fn
        # The context goes to a second parameter only when it has no default of its own.
        params = list(inspect.signature(fn).parameters.values())
        self._wants_ctx = len(params) >= 2 and params[1].default is inspect.Parameter.empty

    async def call(self, ctx: ExecutionContext, input: InputT) -> ToolResult[OutputT]:
        value = self._fn(input, ctx) if self._wants_ctx else self._fn(input)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, ToolResult):
            return cast("ToolResult[OutputT]", value)
        return ToolResult(cast(OutputT, value))


class Prompt:
    """The declarations of one ``run_prompt`` (see the module text)."""

    def __init__(self, *, text_format: TextFormat | None = None) -> None:
        self.text_format: TextFormat = text_format or XMLFormat()
        self.system = ""
        """The ``system`` option: the start of the system prompt."""
        self.system_parts: dict[str, str] = {}
        self.definitions: dict[str, Definition] = {}
        self.messages: list[Message] = []
        self.tools: dict[str, AnyTool] = {}
        self.hooks: list[PromptHook] = []
        self.step_hooks: list[StepFn] = []
        self.extensions: list[Extension] = []
        self.tasks: list[Task] | None = None
        self.dynamic_tasks = False

    # -- values of the system prompt -------------------------------------------------

    def def_(
        self,
        name: str,
        text: str,
        *,
        budget_tokens: int | None = None,
        keep: Literal["head", "tail"] = "head",
    ) -> str:
        """Define a named text for the system prompt; returns ``<NAME>`` to use in
        messages. ``budget_tokens`` cuts it to that many o200k tokens, keeping its
        ``head`` or ``tail`` and saying what was left out.

        >>> p = Prompt()
        >>> p.def_("NOTES", "word " * 1000, budget_tokens=10)
        '<NOTES>'
        >>> p.definitions["NOTES"].trimmed, p.definitions["NOTES"].text.endswith("tokens left out]")
        (True, True)
        """
        check_name(name)
        shown, trimmed = fit_text(text, budget_tokens, keep)
        self.definitions[name] = Definition(name, "text", shown, text, trimmed)
        return f"<{name}>"

    def def_data(
        self,
        name: str,
        value: object,
        *,
        budget_tokens: int | None = None,
        sampling: Sampling = "head",
    ) -> str:
        """Define named data, shown as YAML inside ``<NAME>`` tags; returns ``<NAME>``.

        With ``budget_tokens``, a list keeps the items that fit: the first ones
        (``head``), the last (``tail``) or an even spread (``sample``), and says how
        many were left out; other data is cut like text.

        >>> p = Prompt()
        >>> _ = p.def_data("ROWS", [{"n": i} for i in range(100)], budget_tokens=40,
        ...                sampling="sample")
        >>> print(p.definitions["ROWS"].text.splitlines()[-1])
        # 96 of 100 items left out (an even sample is shown)
        """
        check_name(name)
        data = to_builtins(value)
        text, trimmed = fit_data(data, budget_tokens, sampling)
        self.definitions[name] = Definition(name, "data", text, value, trimmed)
        return f"<{name}>"

    def def_system(self, name: str, text: str) -> None:
        """Add a labelled part to the system prompt (a part of the same name is replaced)."""
        check_name(name)
        self.system_parts[name] = text

    # -- messages ----------------------------------------------------------------------

    def def_message(self, role: Literal["user", "assistant"], text: str) -> None:
        """Add a message to the conversation (system text goes through ``def_system``).

        ``text`` is a str; anything else (a list of chat dicts, say) is a ``TypeError``
        here, before any model call."""
        if role not in ("user", "assistant"):
            raise AgentValueError(f"def_message takes 'user' or 'assistant', not {role!r}")
        self.messages.append(Message.text(role, check_message_text(role, text)))

    def user(self, text: str) -> None:
        """Add the user message (lmthing's ``$``)."""
        self.def_message("user", text)

    # -- tools ---------------------------------------------------------------------------

    @overload
    def def_tool(self, tool: Tool[InputT, OutputT], /) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., Awaitable[OutputT]],
        /,
    ) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., OutputT],
        /,
    ) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(self, name: str, description: str, subtools: Sequence[AnyTool], /) -> AnyTool: ...

    def def_tool(self, *args: Any) -> AnyTool:
        """Register a tool: a ``Tool``; ``(name, description, InputModel, fn)``; or
        ``(name, description, [subtools])``, one composite tool the model calls with
        ``{"calls": [{"name", "args"}, ...]}``.
        """
        if len(args) == 1:
            made = _as_tool(args[0])
        elif len(args) == 4:
            name, description, input_type, fn = args
            made = FunctionTool(name, description, input_type, fn)
        elif len(args) == 3 and not isinstance(args[2], str | bytes):
            from toolchain.composite import CompositeTool

            name, description, subtools = args
            made = CompositeTool(name, description, list(subtools))
        else:
            raise AgentTypeError(
                "def_tool takes a Tool, (name, description, InputModel, fn), or "
                "(name, description, [subtools])"
            )
        self.tools[made.name] = made
        return made

    def def_agent(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        build: Callable[[InputT, Prompt], Awaitable[None] | None],
        *,
        model: Model | str | None = None,
        system: str = "",
        response_model: type[Any] | None = None,
        plugins: Sequence[Plugin | Extension] = (),
        **options: Any,
    ) -> AnyTool:
        """Register a sub-agent as a tool: each call runs ``build(input, prompt)`` in
        its own child run (its own messages and tools; cancellation, limits, stats and
        usage shared with this run) and returns its answer; with ``response_model``,
        the answer is that model, validated.
        """
        made = AgentTool(
            name,
            description,
            input_type,
            build,
            model=model,
            system=system,
            response_model=response_model,
            plugins=tuple(plugins),
            options=options,
        )
        self.tools[name] = made
        return made

    # -- steps -----------------------------------------------------------------------------

    def def_hook(self, fn: PromptHook) -> None:
        """Run ``fn`` before each step; it may change the system prompt, the active
        tools, the messages and the variables (see ``HookInput``, ``HookResult``)."""
        self.hooks.append(fn)

    def def_extension(self, extension: Extension) -> None:
        """Add a ``toolchain.Extension`` (``ToolVariables``, ``ContextRelay``,
        ``ToolSearch`` …) to the run: the way plugins reach a prompt."""
        self.extensions.append(extension)

    def def_task_list(self, tasks: Sequence[Task]) -> None:
        """Work through ``tasks`` in order, each checked by its validation before the
        next starts (see ``agents.prompt.Task``); adds the ``finish_task`` tool. The run
        ends when the last task is finished: a reply without a tool call before that
        is sent back with the tasks left (``limit == "tasks_pending"`` if it persists)."""
        if not tasks:
            raise AgentValueError("def_task_list needs at least one task")
        self.tasks = list(tasks)

    def def_dynamic_task_list(self) -> None:
        """Let the model plan its own tasks with ``create_task``, ``update_task``,
        ``start_task``, ``complete_task``, ``get_task_list`` and ``delete_task``; the run
        ends when every task is completed, and a reply without a tool call while one is
        left is sent back naming them."""
        self.dynamic_tasks = True

    # -- what the run sends ----------------------------------------------------------------

    def system_text(self, definitions: dict[str, Definition] | None = None) -> str:
        """The system prompt these declarations make: the ``system`` option, the
        labelled parts, then the named values (with a line saying how to read them)."""
        fmt = self.text_format
        blocks: list[str] = []
        if self.system.strip():
            blocks.append(self.system.strip())
        if self.system_parts:
            parts = [
                FormattedSection(name, text.strip()) for name, text in self.system_parts.items()
            ]
            blocks.append(fmt.format_sections(parts))
        shown = self.definitions if definitions is None else definitions
        if shown:
            blocks.append(DEFINITIONS_GUIDE)
            blocks.append(
                fmt.format_sections([FormattedSection(d.name, d.text) for d in shown.values()])
            )
        return "\n\n".join(blocks)


Plugin = Callable[[Prompt], None]
"""A function that applies ``def_*`` calls to a prompt (``plugins=[...]``)."""


@dataclass(frozen=True, slots=True)
class Task:
    """One task of a fixed list.

    - ``task``: what to do, as the model reads it.
    - ``validation``: the result → ``None`` to accept it, or a message saying what is
      wrong (sent back to the model, which tries again).
    - ``extend``: ``(prompt, messages)`` → declares tools, values, system parts and
      messages that exist only while this task runs.

    >>> Task("Calculate 5 + 3", validation=lambda r: None if r.strip() == "8" else "not 8").task
    'Calculate 5 + 3'
    """

    task: str
    validation: Validation | None = None
    extend: Extend | None = None


class SubRun(Protocol):
    """A sub-agent's run, as `SubAgents` starts it: its result, and, when it paused on
    held calls, a resume with decisions for them (its tokens counted each time)."""

    async def result(self) -> AgentResult[Any]: ...

    async def resume(self, decisions: Mapping[str, Approval]) -> AgentResult[Any]: ...


class SubAgents(Protocol):
    """How a run runs its sub-agents: ``build`` on ``model`` in ``ctx.child(name)``, a
    `SubRun` whose tokens count in the run of ``ctx`` (``run_prompt`` is one)."""

    def __call__(
        self,
        ctx: ExecutionContext,
        build: Callable[[Prompt], Awaitable[None]],
        model: Model | str,
        name: str,
        options: dict[str, Any],
    ) -> SubRun: ...


SUB_AGENTS = StateKey[SubAgents]("agents.prompt.sub_agents")
"""Set by ``run_prompt`` on each run's context; an `AgentTool` called in that run, or in
a child of it (a composite tool's call), runs its sub-agent with it."""


def _sub_agents(ctx: ExecutionContext | None) -> SubAgents | None:
    while ctx is not None:
        found = ctx.state.get(SUB_AGENTS)
        if found is not None:
            return found
        ctx = ctx.parent
    return None


class AgentTool(Tool[InputT, object], Generic[InputT]):
    """The tool ``Prompt.def_agent`` registers: a sub-agent, run in a child context.

    Each call builds a fresh prompt from the call's input and runs it to an answer in
    ``ctx.child(name)``, through the ``run_prompt`` that runs the calling run (found in
    its context: `SUB_AGENTS`): the sub-run has its own messages, tools and state, is
    cancelled with the parent, and adds its tool calls and tokens to the parent's stats
    (so the parent's limits count them). A ``response_model`` makes the answer typed:
    the sub-agent must produce that model, validated, and the tool returns it.

    The child context keeps the parent's guards (``ToolHook.guard_tool_call``) and its
    approver (``approve=``), so a tool that needs approval is decided in a sub-agent as
    in the parent. A sub-agent whose calls are held (nobody to decide now) pauses, and
    its call is held in the parent, which pauses too: the parent's ``result.pending``
    lists the sub-agent's held calls, each with ``via`` naming the sub-agents (and
    composite) it came through and a call id of its own (``<group>/<the child's call
    id>``). Resuming the parent resumes the child from its paused step: the approved
    calls run there, the child goes on, and its answer becomes this call's result; no
    model is asked to repeat anything. Nested sub-agents pause and resume the same way.
    A sub-agent stopped by anything else than held calls (``stop_when``) fails the call
    with the reason and pauses the parent.
    """

    def __init__(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        build: Callable[[InputT, Prompt], Awaitable[None] | None],
        *,
        model: Model | str | None,
        system: str,
        response_model: type[Any] | None,
        plugins: tuple[Plugin | Extension, ...],
        options: Mapping[str, Any],
    ) -> None:
        self.name = name
        self.description = description
        self.input_type = input_type
        self.build = build
        self.model = model
        self.system = system
        self.response_model = response_model
        self.plugins = plugins
        self.options = dict(options)
        self.parent_model: Model | str | None = None
        """The parent run's model, used when ``model`` is None (set by ``run_prompt``)."""
        # Its calls are held on the sub-agent's: chains now tell their calls' tools
        # which call they run in (the approver, the clock to stop while one waits).
        calls_nest()

    async def call(self, ctx: ExecutionContext, input: InputT) -> ToolResult[object]:
        model = self.model or self.parent_model
        if model is None:
            raise ToolError(f"the sub-agent {self.name} has no model")
        sub_agents = _sub_agents(ctx)
        if sub_agents is None:
            raise ToolError(f"the sub-agent {self.name} runs only inside run_prompt")

        async def build(prompt: Prompt) -> None:
            done = self.build(input, prompt)
            if inspect.isawaitable(done):
                await done

        options: dict[str, Any] = {**self.options, "plugins": self.plugins}
        if self.system:
            options["system"] = self.system
        if self.response_model is not None:
            options["response_model"] = self.response_model
        sub = sub_agents(ctx, build, model, self.name, options)
        return self._ended(ctx, sub, await sub.result(), None)

    def _ended(
        self, ctx: ExecutionContext, sub: SubRun, result: AgentResult[Any], group: str | None
    ) -> ToolResult[object]:
        """This call's result from the sub-agent's: its answer; or held, with its held
        calls (`CallHeld`; ``group``: the id they are listed under, kept from one pause
        of the sub-agent to the next); or a failure the parent's model reads."""
        if result.stopped_by == "paused" and result.pending:
            raise self._held(ctx, sub, result.pending, group or ctx.new_call_id())
        if result.stopped_by == "paused":
            # Stopped by something else than a held call (stop_when): so is this run.
            reason = result.paused or "paused"
            ctx.pause(f"the sub-agent {self.name} paused: {reason}")
            raise ToolError(
                f"the sub-agent {self.name} paused: {reason}. This run pauses too; once "
                f"it resumes, call {self.name} again to finish"
            )
        if not result.ok:
            why = result.error or result.limit or result.paused or result.stopped_by
            raise ToolError(f"the sub-agent {self.name} did not finish: {why}")
        return ToolResult(cast(object, result.answer))

    def _held(
        self, ctx: ExecutionContext, sub: SubRun, pending: tuple[ApprovalRequest, ...], group: str
    ) -> CallHeld:
        """The held calls of the sub-agent as this run's: each under an id of this run
        (the same child call id may be held by two calls of one step), made in this run
        (what a decision is bound to); what runs once decided is the child's call."""
        inner: dict[str, ApprovalRequest] = {}
        outer: list[ApprovalRequest] = []
        for request in pending:
            call_id = f"{group}/{request.call_id}"
            inner[call_id] = request
            outer.append(dataclasses.replace(request, call_id=call_id, run_id=ctx.run_id, seal=""))

        async def settle(
            decisions: Mapping[str, Approval],
        ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
            # Each checked by this run's chain against the call it was given for; the
            # child checks it again against its own call, as it was held there.
            mine = {
                inner[key].call_id: rebind(decision, inner[key])
                for key, decision in decisions.items()
                if key in inner
            }
            try:
                resumed = await sub.resume(mine)
                return self._ended(ctx, sub, resumed, group), None
            except CallHeld as held:  # the child paused again: so does this call
                return None, held_error(held)
            except ToolError as error:
                return None, ToolCallError("tool_error", str(error), error)
            except Exception as error:  # its resume refused: say so, keep the run going
                _log.error("resuming the sub-agent %s failed", self.name, exc_info=error)
                message = f"the sub-agent {self.name} could not resume: {error}"
                return None, ToolCallError("tool_error", message[:1000], error)

        first, *more = outer
        return CallHeld(first, settle=settle, more=tuple(more))


def _as_tool(value: object) -> AnyTool:
    checked = value  # checked under another name: ``value`` stays ``object`` for the cast
    if not isinstance(checked, Tool):
        raise AgentTypeError(f"def_tool with one argument takes a Tool, not {type(value).__name__}")
    return cast(AnyTool, value)
