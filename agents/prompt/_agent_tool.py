"""``def_agent``: a sub-agent as a tool, run by ``run_prompt`` in a child context.

Each call builds a fresh prompt from the call's input and runs it to an answer in
``ctx.child(name)``: the sub-run has its own messages, tools and state, is cancelled
with the parent, and adds its tool calls and tokens to the parent's stats (so the
parent's limits count them). A ``response_model`` makes the answer typed: the
sub-agent must produce that model, validated, and the tool returns it.

The child context keeps the parent's guards (``ToolHook.guard_tool_call``), so a tool
that needs approval is held in a sub-agent as in the parent, whether the sub-agent
was given the parent's ``ToolSearch`` or registered the tool itself. A sub-agent that
pauses (a call held for approval) pauses the parent too: the call fails with the
reason, the parent run ends with ``stopped_by == "paused"``, and the held call waits
in the parent's ``extension_state``. After the decision, the parent's model calls the
sub-agent again, whose model makes the call again, and it runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from toolchain import ExecutionContext, Extension, Tool, ToolError, ToolResult

if TYPE_CHECKING:
    from agents.models import Model
    from agents.prompt._prompt import Plugin, Prompt

__all__ = ["AgentTool"]

InputT = TypeVar("InputT")


class AgentTool(Tool[InputT, object], Generic[InputT]):
    """The tool ``Prompt.def_agent`` registers (see the module text)."""

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

    async def call(self, ctx: ExecutionContext, input: InputT) -> ToolResult[object]:
        from agents.prompt._run import add_sub_usage, run_prompt

        model = self.model or self.parent_model
        if model is None:
            raise ToolError(f"the sub-agent {self.name} has no model")

        async def build(prompt: Prompt) -> None:
            done = self.build(input, prompt)
            if inspect.isawaitable(done):
                await done

        options: dict[str, Any] = {**self.options, "plugins": self.plugins}
        if self.system:
            options["system"] = self.system
        if self.response_model is not None:
            options["response_model"] = self.response_model
        child = ctx.child(self.name)
        run = run_prompt(build, model=model, ctx=child, name=self.name, **options)
        result = await run.result()
        add_sub_usage(ctx, await run.usage())
        if result.stopped_by == "paused":
            # It waits for a person: so does this run (a held approval already paused
            # it; a sub-agent's own pause reaches it here).
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
