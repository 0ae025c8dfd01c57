"""``def_hook``: what a prompt hook sees (`HookInput`) and may change (`HookResult`),
and `PromptHooks`, the step hook that runs a prompt's hooks before each step.

Variables a hook changes hold from that step on: they are kept in the run's state,
and the system prompt's definitions part is written again from them.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agents._errors import AgentTypeError
from agents.models import Message, Model
from agents.prompt._definitions import Definition
from agents.result import StepResult
from agents.steps import StepRequest
from toolchain import ExecutionContext, StateKey

__all__ = ["STEPS", "HookInput", "HookResult", "PromptHook", "PromptHooks"]

STEPS = StateKey[list[StepResult]]("agents.prompt.steps")
"""The run's finished steps, as its hooks see them (``HookInput.steps``)."""
_VARIABLES = StateKey[dict[str, Definition]]("agents.prompt.variables")


@dataclass(frozen=True, slots=True)
class HookInput:
    """What a ``def_hook`` function sees before each step.

    ``step_number`` counts from 0 (lmthing's convention); ``steps`` are the finished
    steps of the run (``agents.StepResult``); ``variables`` the definitions by name.
    """

    messages: tuple[Message, ...]
    model: Model
    steps: tuple[Any, ...]
    step_number: int
    variables: dict[str, Definition]
    system: str
    active_tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HookResult:
    """What a ``def_hook`` function may change for the step (None: leave it).

    ``variables`` replace the definitions from this step on (new names are added);
    the others hold for this step only, like every step hook's changes.
    """

    system: str | None = None
    active_tools: Sequence[str] | None = None
    messages: Sequence[Message] | None = None
    variables: Mapping[str, str | Definition] | None = None


PromptHook = Callable[[HookInput], "HookResult | Awaitable[HookResult | None] | None"]


class PromptHooks:
    """A prompt's ``def_hook`` functions run as one step hook.

    ``definitions`` are the prompt's named values, ``system_text(values)`` its system
    part showing ``values``, and ``head`` that part as the system prompt starts with it.
    """

    def __init__(
        self,
        hooks: Sequence[PromptHook],
        definitions: Mapping[str, Definition],
        system_text: Callable[[dict[str, Definition]], str],
        head: str,
    ) -> None:
        self.hooks = hooks
        self.definitions = definitions
        self.system_text = system_text
        self.head = head

    async def __call__(self, ctx: ExecutionContext, request: StepRequest) -> StepRequest:
        variables = ctx.state.setdefault(_VARIABLES, lambda: dict(self.definitions))
        done: list[StepResult] = ctx.state.setdefault(STEPS, list)
        steps = tuple(done)
        head = self.head  # the definitions part the system prompt starts with now
        defined = self.definitions
        if len(variables) != len(defined) or any(
            variables.get(name) is not value for name, value in defined.items()
        ):  # changed at an earlier step: they hold from then on
            request, head = self._with_head(request, head, variables)
        for fn in self.hooks:
            given = HookInput(
                messages=request.messages,
                model=request.model,
                steps=steps,
                step_number=request.index - 1,
                variables=dict(variables),
                system=request.system_prompt,
                active_tools=request.tools,
            )
            answer = fn(given)
            out = await answer if inspect.isawaitable(answer) else answer
            if out is None:
                continue
            if not isinstance(cast(object, out), HookResult):
                raise AgentTypeError(
                    f"a def_hook function returned {type(out).__name__}, not HookResult"
                )
            request, head = self._apply(request, head, out, variables)
        return request

    def _apply(
        self, request: StepRequest, head: str, out: HookResult, variables: dict[str, Definition]
    ) -> tuple[StepRequest, str]:
        changes: dict[str, Any] = {}
        if out.variables is not None:
            for name, value in out.variables.items():
                variables[name] = (
                    value
                    if isinstance(value, Definition)
                    else Definition(name, "text", value, value)
                )
            request, head = self._with_head(request, head, variables)
        if out.system is not None:
            changes["system_prompt"] = out.system
        if out.active_tools is not None:
            changes["tools"] = active = tuple(out.active_tools)
            if request.described is not None:  # told of no tool it may not call
                changes["described"] = tuple(n for n in request.described if n in active)
        if out.messages is not None:
            changes["messages"] = tuple(out.messages)
        return (dataclasses.replace(request, **changes) if changes else request), head

    def _with_head(
        self, request: StepRequest, head: str, variables: dict[str, Definition]
    ) -> tuple[StepRequest, str]:
        """``request`` with its system prompt's ``head`` (the definitions part) showing
        ``variables``, the rest kept (the text protocol's guide and tool listing); the
        new head. A system prompt a hook replaced becomes the new head alone."""
        new = self.system_text(variables)
        system = request.system_prompt
        if not system.startswith(head):
            system = new
        elif head:
            system = new + system[len(head) :]
        elif system:
            system = f"{new}\n\n{system}" if new else system
        else:
            system = new
        return dataclasses.replace(request, system_prompt=system), new
