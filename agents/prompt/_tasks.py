"""Task lists for ``run_prompt``: a fixed sequence (``def_task_list``) or one the model
plans itself (``def_dynamic_task_list``).

Both keep the model's view short: before each step, the conversation is cut to the
user's request, a status note (completed tasks as one-line summaries, the current
task, what is left) and the messages of the task in progress. The run's own record
keeps everything (``AgentResult.messages``). When the last task is done, the run
ends with the summary as its answer, without another model call; when the run wants a
typed answer (``response_model``), the model is asked for it instead.

Fixed list: the model ends each task with ``finish_task(result)``; the task's
``validation`` may reject the result with a message the model reads and corrects.
``extend`` adds tools, named values, system parts and messages for that task only.

Dynamic list: ``create_task``, ``update_task`` and ``delete_task`` (pending tasks
only), ``start_task``, ``complete_task`` and ``get_task_list``; states pending, in
progress, completed.

The model must complete every task (lmthing's rule): while one is left, a reply
without a tool call is not the answer. It gets feedback naming the tasks left
(``check_answer``), counted as a rejected reply; past
``Limits.max_consecutive_parse_errors`` of those in a row the run ends with
``stopped_by == "limit"`` and ``limit == "tasks_pending"``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents._errors import AgentTypeError
from agents.models import Message
from agents.prompt._prompt import Prompt, Task
from agents.steps import StepRequest
from toolchain import (
    ExecutionContext,
    Extension,
    StateKey,
    StepView,
    TextContent,
    Tool,
    ToolChain,
    ToolError,
    ToolResult,
)
from toolchain.runtime import one_line

__all__ = ["DynamicTaskList", "TaskList"]

AnyTool = Tool[Any, Any]


@dataclass(slots=True)
class _Entry:
    id: str
    description: str
    state: Literal["pending", "in_progress", "completed"] = "pending"
    result: str = ""


@dataclass(slots=True)
class _Progress:
    entries: list[_Entry] = field(default_factory=lambda: [])
    started_at: int | None = None
    """Where the task in progress starts in the conversation (None: not seen yet)."""
    extra: dict[str, tuple[tuple[AnyTool, ...], str, tuple[Message, ...]]] = field(
        default_factory=lambda: {}
    )
    """task id → what its ``extend`` declared (tools, system text, messages)."""
    created: int = 0
    """Tasks the model created so far (the dynamic list's ids count them)."""
    finishing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a ``finish_task`` call validates and completes the current task."""


# -- the shared view -------------------------------------------------------------------------


def _status(entries: Sequence[_Entry]) -> str:
    lines: list[str] = []
    done = [e for e in entries if e.state == "completed"]
    current = [e for e in entries if e.state == "in_progress"]
    left = [e for e in entries if e.state == "pending"]
    if done:
        lines.append("Completed:")
        lines += [f"- [{e.id}] {e.description}: {one_line(e.result, 200)}" for e in done]
    if current:
        lines.append("In progress:")
        lines += [f"- [{e.id}] {e.description}" for e in current]
    if left:
        lines.append("Pending:")
        lines += [f"- [{e.id}] {e.description}" for e in left]
    return "\n".join(lines) if lines else "No tasks yet."


def _focused(
    request: StepRequest, progress: _Progress, note: str, extra: Sequence[Message] = ()
) -> StepRequest:
    """The request cut to the user's turn (with the status note, and messages the task
    declared, added to it: one user turn, as providers want), then the current task's
    work."""
    head = request.messages[: request.task_index + 1]
    length = len(request.messages)
    if progress.started_at is None or progress.started_at > length:
        progress.started_at = length
    work = request.messages[progress.started_at :]
    told = [note, *(f"({m.role}) {m.text_content()}" for m in extra)]
    turn = head[-1]
    added = TextContent("\n\n" + "\n\n".join(told))
    turn = dataclasses.replace(turn, content=(*turn.content, added))
    return dataclasses.replace(request, messages=(*head[:-1], turn, *work))


def _agent_step(request: StepView) -> StepRequest:
    """``request`` as the agent's step it is: task lists run only in agents, whose
    steps are ``StepRequest`` s (``Extension.before_step`` names the toolchain's view)."""
    if not isinstance(request, StepRequest):
        raise AgentTypeError(
            f"a task list runs in an agent's steps, not a {type(request).__name__}"
        )
    return request


def _summary(entries: Sequence[_Entry]) -> str:
    return "\n".join(f"{e.description}: {e.result}" for e in entries)


_LISTED = 10
"""Unfinished tasks a held-back answer's feedback names; the rest are counted."""


def _unfinished(entries: Sequence[_Entry]) -> str:
    """The tasks not completed, for feedback: ``[2] Double it (in progress), …``."""
    left = [e for e in entries if e.state != "completed"]
    named = [
        f"[{e.id}] {one_line(e.description, 120)} ({e.state.replace('_', ' ')})"
        for e in left[:_LISTED]
    ]
    more = len(left) - len(named)
    return ", ".join(named) + (f", and {more} more" if more > 0 else "")


_ANSWER_NOW = "All tasks are completed. Now give your final answer."


def _all_done(ctx: ExecutionContext, progress: _Progress, ends_run: bool) -> str:
    """The last task is done: the run ends with the summary, or the model answers."""
    if ends_run:
        ctx.finish(_summary(progress.entries))
        return "All tasks are completed."
    return _ANSWER_NOW


def _answer_now(progress: _Progress) -> str:
    """The note's last line once every task is done (a run that goes on wants an answer)."""
    done = progress.entries and all(e.state == "completed" for e in progress.entries)
    return f"\n\n{_ANSWER_NOW}" if done else ""


# -- the fixed list --------------------------------------------------------------------------


class FinishInput(BaseModel):
    result: str = Field(description="The current task's result, as asked.")


class TaskList(Extension):
    """``def_task_list``: an extension with the ``finish_task`` tool, a step hook that
    focuses each step on the current task, and an answer check (see the module text)."""

    name = "task_list"

    def __init__(self, tasks: Sequence[Task], *, ends_run: bool = True) -> None:
        self.tasks = list(tasks)
        self.ends_run = ends_run
        """The last task done ends the run, with the summary as its answer; without it
        (a typed answer is wanted), the model is asked for its answer instead."""
        self._key = StateKey[_Progress](f"agents.prompt.tasks.{id(self)}")
        self.chain: ToolChain | None = None
        """The run's chain: tools an ``extend`` declares are registered on it."""
        self._tools = (_FinishTask(self),)  # the same objects each time: registered once

    def tools(self) -> tuple[AnyTool, ...]:
        return self._tools

    def progress(self, ctx: ExecutionContext) -> _Progress:
        def fresh() -> _Progress:
            entries = [_Entry(str(n), t.task) for n, t in enumerate(self.tasks, 1)]
            entries[0].state = "in_progress"
            return _Progress(entries)

        return ctx.state.setdefault(self._key, fresh)

    def check_answer(self, ctx: ExecutionContext) -> str | None:
        """While a task is not done, an answer is held back with this feedback: the
        run ends when the last task is finished, not at a reply without a tool call."""
        progress = self.progress(ctx)
        current = next((e for e in progress.entries if e.state == "in_progress"), None)
        if current is None:
            return None
        return (
            "Not finished: a reply without a tool call does not complete a task. Tasks "
            f"left: {_unfinished(progress.entries)}. Call finish_task with the result of "
            f"task {current.id} ({one_line(current.description, 120)})."
        )

    async def finish(self, ctx: ExecutionContext, result: str) -> str:
        progress = self.progress(ctx)
        # Calls of one action run concurrently: each finishes the task current when its
        # turn comes, as if they had run one after another (an async validation awaits).
        async with progress.finishing:
            return await self._finish(ctx, progress, result)

    async def _finish(self, ctx: ExecutionContext, progress: _Progress, result: str) -> str:
        current = next((e for e in progress.entries if e.state == "in_progress"), None)
        if current is None:
            return "Every task is already completed."
        task = self.tasks[int(current.id) - 1]
        if task.validation is not None:
            verdict = task.validation(result)
            problem = await verdict if inspect.isawaitable(verdict) else verdict
            if problem:
                raise ToolError(f"task {current.id} is not done: {problem}")
        current.state, current.result = "completed", result
        progress.started_at = None  # the next step starts the next task's view
        following = next((e for e in progress.entries if e.state == "pending"), None)
        if following is None:
            return _all_done(ctx, progress, self.ends_run)
        following.state = "in_progress"
        return f"Task {current.id} is completed. Next, task {following.id}: {following.description}"

    async def before_step(self, ctx: ExecutionContext, request: StepView) -> StepRequest:
        """The step cut to the user's request, the task list's status and the current
        task's work, with the tools the task's ``extend`` declared."""
        request = _agent_step(request)
        progress = self.progress(ctx)
        current = next((e for e in progress.entries if e.state == "in_progress"), None)
        note = "Tasks (finish each with finish_task):\n" + _status(progress.entries)
        if current is None:
            return _focused(request, progress, note + _answer_now(progress))
        note += f"\n\nNow: task {current.id}: {current.description}"
        tools, system, messages = self._extension_of(progress, current, request)
        focused = _focused(request, progress, note, messages)
        # Tools an extend declared exist only while their task runs.
        others = {t.name for extra, _, _ in progress.extra.values() for t in extra}
        names = [n for n in focused.tools if n not in others]
        names += [t.name for t in tools if t.name not in names]
        changes: dict[str, Any] = {"tools": tuple(names)}
        if focused.described is not None:  # an earlier hook (tool discovery) chose these
            told = [n for n in focused.described if n not in others]
            changes["described"] = (*told, *(t.name for t in tools if t.name not in told))
        if system:
            changes["system_prompt"] = f"{focused.system_prompt}\n\n{system}"
        return dataclasses.replace(focused, **changes)

    def _extension_of(
        self, progress: _Progress, current: _Entry, request: StepRequest
    ) -> tuple[tuple[AnyTool, ...], str, tuple[Message, ...]]:
        task = self.tasks[int(current.id) - 1]
        if task.extend is None:
            return (), "", ()
        if current.id not in progress.extra:
            sub = Prompt()
            task.extend(sub, request.messages)
            tools = tuple(sub.tools.values())
            if self.chain is not None:
                for tool in tools:
                    self.chain.register_tool(tool)
            progress.extra[current.id] = (tools, sub.system_text(), tuple(sub.messages))
        return progress.extra[current.id]


class _FinishTask(Tool[FinishInput, str]):
    name = "finish_task"
    description = (
        "Finish the current task with its result. If the result is not accepted you are "
        "told why: fix it and call finish_task again."
    )

    def __init__(self, owner: TaskList) -> None:
        self.owner = owner

    async def call(self, ctx: ExecutionContext, input: FinishInput) -> ToolResult[str]:
        return ToolResult(await self.owner.finish(ctx, input.result))


# -- the dynamic list -----------------------------------------------------------------------


class CreateInput(BaseModel):
    description: str = Field(description="What the task is, in one sentence.")


class UpdateInput(BaseModel):
    task_id: str
    new_description: str


class TaskIdInput(BaseModel):
    task_id: str


class CompleteInput(BaseModel):
    task_id: str
    result: str = Field(description="What the task produced or found.")


class NoInput(BaseModel):
    pass


class DynamicTaskList(Extension):
    """``def_dynamic_task_list``: an extension with the six task tools, a step hook and
    an answer check (module text)."""

    name = "dynamic_task_list"

    def __init__(self, *, ends_run: bool = True) -> None:
        self._key = StateKey[_Progress](f"agents.prompt.dynamic.{id(self)}")
        self.ends_run = ends_run
        """As `TaskList.ends_run`."""
        self._tools = self._made_tools()  # the same objects each time: registered once

    def progress(self, ctx: ExecutionContext) -> _Progress:
        return ctx.state.setdefault(self._key, _Progress)

    def tools(self) -> tuple[AnyTool, ...]:
        return self._tools

    def _made_tools(self) -> tuple[AnyTool, ...]:
        return (
            _TaskTool("create_task", "Add a pending task to your plan.", CreateInput, self._create),
            _TaskTool("update_task", "Reword a pending task.", UpdateInput, self._update),
            _TaskTool("start_task", "Start a pending task.", TaskIdInput, self._start),
            _TaskTool(
                "complete_task",
                "Complete a pending or started task with its result.",
                CompleteInput,
                self._complete,
            ),
            _TaskTool("get_task_list", "Show every task and its state.", NoInput, self._list),
            _TaskTool("delete_task", "Delete a pending task.", TaskIdInput, self._delete),
        )

    def check_answer(self, ctx: ExecutionContext) -> str | None:
        """While a planned task is not completed, an answer is held back with this
        feedback (a plan with no tasks holds nothing back)."""
        entries = self.progress(ctx).entries
        if all(e.state == "completed" for e in entries):
            return None
        return (
            "Not finished: a reply without a tool call does not complete a task, and the "
            f"run ends when every task is completed. Tasks left: {_unfinished(entries)}. "
            "Call complete_task(task_id, result) for each, or delete_task for a pending "
            "task you no longer need."
        )

    def _find(self, ctx: ExecutionContext, task_id: str) -> _Entry:
        for entry in self.progress(ctx).entries:
            if entry.id == task_id.strip():
                return entry
        known = ", ".join(e.id for e in self.progress(ctx).entries) or "none yet"
        raise ToolError(f"no task {task_id!r}; the task ids are: {known}")

    def _create(self, ctx: ExecutionContext, input: BaseModel) -> str:
        assert isinstance(input, CreateInput)
        progress = self.progress(ctx)
        progress.created += 1  # never the number of tasks: a deleted task's id stays used
        entry = _Entry(str(progress.created), input.description.strip())
        progress.entries.append(entry)
        return f"created task {entry.id}: {entry.description}"

    def _update(self, ctx: ExecutionContext, input: BaseModel) -> str:
        assert isinstance(input, UpdateInput)
        entry = self._pending(ctx, input.task_id, "updated")
        entry.description = input.new_description.strip()
        return f"task {entry.id} is now: {entry.description}"

    def _start(self, ctx: ExecutionContext, input: BaseModel) -> str:
        assert isinstance(input, TaskIdInput)
        entry = self._pending(ctx, input.task_id, "started")
        entry.state = "in_progress"
        self.progress(ctx).started_at = None
        return f"started task {entry.id}: {entry.description}"

    def _complete(self, ctx: ExecutionContext, input: BaseModel) -> str:
        assert isinstance(input, CompleteInput)
        entry = self._find(ctx, input.task_id)
        if entry.state == "completed":
            raise ToolError(f"task {entry.id} is already completed")
        entry.state, entry.result = "completed", input.result
        progress = self.progress(ctx)
        progress.started_at = None
        if all(e.state == "completed" for e in progress.entries):
            return _all_done(ctx, progress, self.ends_run)
        return f"completed task {entry.id}"

    def _list(self, ctx: ExecutionContext, input: BaseModel) -> str:
        return _status(self.progress(ctx).entries)

    def _delete(self, ctx: ExecutionContext, input: BaseModel) -> str:
        assert isinstance(input, TaskIdInput)
        entry = self._pending(ctx, input.task_id, "deleted")
        self.progress(ctx).entries.remove(entry)
        return f"deleted task {entry.id}"

    def _pending(self, ctx: ExecutionContext, task_id: str, verb: str) -> _Entry:
        entry = self._find(ctx, task_id)
        if entry.state != "pending":
            state = entry.state.replace("_", " ")
            raise ToolError(f"task {entry.id} is {state}: only a pending task can be {verb}")
        return entry

    async def before_step(self, ctx: ExecutionContext, request: StepView) -> StepRequest:
        """The step cut to the user's request, the plan's status and the work of the
        task in progress (the conversation as it is while nothing is planned)."""
        request = _agent_step(request)
        progress = self.progress(ctx)
        if not progress.entries:
            return request  # nothing planned yet: the model sees the conversation as is
        note = "Your tasks (manage them with the task tools):\n" + _status(progress.entries)
        return _focused(request, progress, note + _answer_now(progress))


class _TaskTool(Tool[BaseModel, str]):
    def __init__(
        self,
        name: str,
        description: str,
        input_type: type[BaseModel],
        fn: Callable[[ExecutionContext, BaseModel], str],
    ) -> None:
        self.name = name
        self.description = description
        self.input_type = input_type
        self._fn = fn

    async def call(self, ctx: ExecutionContext, input: BaseModel) -> ToolResult[str]:
        return ToolResult(self._fn(ctx, input))
