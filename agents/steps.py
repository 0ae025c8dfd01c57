"""The step seam: what each model call is made with, and the hooks that may change it.

Before every model call an agent builds a `StepRequest` (the system prompt, the
conversation so far, the active tools, the model and its options) and hands it to its
step hooks in order. A hook returns a changed request (``dataclasses.replace``) or
``None`` to leave it as it is. Changes hold for that one call: the run keeps its whole
conversation in ``AgentResult.messages`` (its system message the one the first call
sent, when only the tools shown changed it), and the next step starts again from it, so a
hook computes its view from the full conversation each time (compaction does exactly
that, keeping what it computed in ``ctx.state``).

>>> import dataclasses
>>> from agents import ReActAgent, ScriptedModel
>>> def terse(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
...     return dataclasses.replace(step, system_prompt=step.system_prompt + "\\nBe terse.")
>>> model = ScriptedModel(["<answer>ok</answer>"])
>>> ReActAgent(model, step_hooks=[terse]).run_sync("Hi").answer
'ok'
>>> model.requests[0].messages[0].text_content().endswith("Be terse.")
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn, Self, TypeAlias, TypeVar

from agents._errors import AgentError
from agents.models import GenerateOptions, Message, Model
from toolchain import ExecutionContext
from toolchain.runtime import HookFailed, run_hooks, slot_init

__all__ = ["StepHook", "StepHookError", "StepRequest", "apply_step_hooks"]


class _Unchanged:
    """``StepRequest.replace``'s "not given": ``described=None`` means "as ``tools``"."""


_UNCHANGED: Final = _Unchanged()


@slot_init  # one or more per step: each slot set through its descriptor, frozen as before
@dataclass(frozen=True, slots=True)
class StepRequest:
    """One model call about to be made (a ``toolchain.StepView``: what an extension's
    ``before_step`` reads and changes).

    - ``index``: the step number, from 1.
    - ``system_prompt``: the system message's text.
    - ``messages``: the conversation after the system message, oldest first.
    - ``task_index``: where this run's task sits in ``messages``; each of the run's
      steps after it starts with an assistant message, followed by what answers it
      (tool messages, an observation or feedback), so cutting just before an
      assistant message never separates a call from its result.
    - ``tools``: the names of the tools the model may call in this step (all of the
      chain's by default). Calls to others are answered as unknown tools; in text mode
      the prompt's tool listing shows only these.
    - ``described``: the tools the model is told about, when they differ from ``tools``
      (None: the same). In text mode the prompt's listing shows these; in native mode
      their specs are sent, in this order. Tool discovery uses it to keep the listing
      stable while found tools become callable (their schemas come in observations).
    - ``model``, ``options``: who answers, and with what settings. A native agent sets
      ``options.tools`` itself, from ``described`` (or ``tools``).
    - ``protocol``: how this agent calls tools: ``text`` (ReAct) or ``native``.

    >>> from agents import ScriptedModel
    >>> step = StepRequest(1, "Be brief.", (), ("search",), ScriptedModel([]), GenerateOptions())
    >>> step.tools
    ('search',)
    """

    index: int
    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    model: Model
    options: GenerateOptions
    task_index: int = 0
    described: tuple[str, ...] | None = None
    protocol: Literal["text", "native"] = "text"

    @property
    def shown_tools(self) -> tuple[str, ...]:
        """The tools the model is told about: ``described``, or else ``tools``."""
        return self.tools if self.described is None else self.described

    def replace(
        self,
        *,
        tools: tuple[str, ...] | _Unchanged = _UNCHANGED,
        described: tuple[str, ...] | _Unchanged | None = _UNCHANGED,
    ) -> Self:
        """A copy with the tools (``tools``, ``described``) changed, as an extension's
        ``before_step`` changes them; a step hook may also ``dataclasses.replace`` any
        field.

        >>> from agents import ScriptedModel
        >>> step = StepRequest(1, "", (), ("a", "b"), ScriptedModel([]), GenerateOptions())
        >>> step.replace(described=("a",)).shown_tools
        ('a',)
        """
        return with_changes(
            self, tools=None if isinstance(tools, _Unchanged) else tools, described=described
        )


class PromptLater:
    """A system prompt made when first read: each step's ``StepRequest`` carries the
    run's plain prompt as one, so a run whose hooks never read it (tool discovery
    narrows the tools, and the prompt sent lists only those) never lists every tool.
    ``StepRequest.system_prompt`` reads it as its text (made once, kept); only the step
    engine sees the object itself (`raw_prompt`)."""

    __slots__ = ("_make", "_text")

    def __init__(self, make: Callable[[], str]) -> None:
        self._make = make
        self._text: str | None = None

    def text(self) -> str:
        """The prompt, made on the first call."""
        text = self._text
        if text is None:
            text = self._text = self._make()
        return text


# The field's own slot, read and set below through a property that makes a PromptLater
# into its text: hooks, observers, ``==``, ``repr`` and ``dataclasses.replace`` all read
# the field by name, so each of them sees the text; frozen as before (the dataclass's
# __setattr__ refuses the field first).
_PROMPT_SLOT: Any = StepRequest.__dict__["system_prompt"]


def _read_prompt(request: StepRequest) -> str:
    value: str | PromptLater = _PROMPT_SLOT.__get__(request, StepRequest)
    if isinstance(value, PromptLater):
        value = value.text()
        _PROMPT_SLOT.__set__(request, value)
    return value


setattr(  # noqa: B010 (the field's annotation stays what type checkers read)
    StepRequest,
    "system_prompt",
    property(_read_prompt, _PROMPT_SLOT.__set__, doc="The system message's text."),
)


def raw_prompt(request: StepRequest) -> str | PromptLater:
    """``request.system_prompt`` as it is held: a `PromptLater` not yet read stays one."""
    value: str | PromptLater = _PROMPT_SLOT.__get__(request, StepRequest)
    return value


StepRequestT = TypeVar("StepRequestT", bound=StepRequest)


def with_changes(
    request: StepRequestT,
    *,
    system_prompt: str | None = None,
    tools: tuple[str, ...] | None = None,
    described: tuple[str, ...] | _Unchanged | None = _UNCHANGED,
) -> StepRequestT:
    """``dataclasses.replace`` of the fields ``StepRequest.replace`` and the step engine
    change (None, or for ``described`` not given: as it is), built directly: a step with
    a ``before_step`` makes one or two a step, and ``dataclasses.replace`` reads every
    field's definition each time (about twice the instructions)."""
    if type(request) is not StepRequest:  # a hook's subclass: its own fields too
        return dataclasses.replace(
            request,
            system_prompt=request.system_prompt if system_prompt is None else system_prompt,
            tools=request.tools if tools is None else tools,
            described=request.described if isinstance(described, _Unchanged) else described,
        )
    return type(request)(
        request.index,
        # As held: a prompt made only when read (`PromptLater`) stays so in the copy.
        raw_prompt(request) if system_prompt is None else system_prompt,  # type: ignore[arg-type]
        request.messages,
        request.tools if tools is None else tools,
        request.model,
        request.options,
        request.task_index,
        request.described if isinstance(described, _Unchanged) else described,
        request.protocol,
    )


# No string forward reference: options that name StepHook (RunOptions) resolve at run
# time (typing.get_type_hints) in any module.
StepHook: TypeAlias = Callable[
    [ExecutionContext, StepRequest], StepRequest | Awaitable[StepRequest | None] | None
]
"""Called before each model call: return a changed ``StepRequest``, or ``None``.

A plain function or an ``async def``; an object with ``__call__`` works too (the
compactions in `agents.compaction` are such objects).
"""


class StepHookError(AgentError):
    """A step hook raised or returned something that is not a ``StepRequest``.

    The run ends with ``stopped_by == "error"``: a hook may enforce a policy, so
    going on without it would be wrong.
    """


async def apply_step_hooks(
    ctx: ExecutionContext, request: StepRequest, hooks: Sequence[StepHook]
) -> StepRequest:
    """Run ``hooks`` in order over ``request``; each sees the one before's changes.

    >>> import asyncio, dataclasses
    >>> from agents import ScriptedModel
    >>> def one_tool(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
    ...     return dataclasses.replace(step, tools=step.tools[:1])
    >>> step = StepRequest(1, "", (), ("a", "b"), ScriptedModel([]), GenerateOptions())
    >>> asyncio.run(apply_step_hooks(ExecutionContext(), step, [one_tool])).tools
    ('a',)
    """
    applied = run_step_hooks(ctx, request, hooks)
    return applied if isinstance(applied, StepRequest) else await applied


def run_step_hooks(
    ctx: ExecutionContext, request: StepRequest, hooks: Sequence[StepHook]
) -> StepRequest | Awaitable[StepRequest]:
    """`apply_step_hooks` for the step engine, sync-first: awaitable only once a hook
    is ``async`` (`toolchain`'s hook runner), so plain hooks cost no coroutine."""
    try:
        applied = run_hooks(hooks, (ctx,), request, _accept, (StepHookError,))
    except HookFailed as failed:
        _reraise(failed)
    return applied if isinstance(applied, StepRequest) else _finish(applied)


async def _finish(pending: Awaitable[StepRequest]) -> StepRequest:
    try:
        return await pending
    except HookFailed as failed:
        _reraise(failed)


def _accept(returned: object, request: StepRequest) -> StepRequest | None:
    return returned if isinstance(returned, StepRequest) else None  # user code: check it


def _reraise(failed: HookFailed) -> NoReturn:
    """The hook's failure as the run reports it: what it raised, or what it returned."""
    error, name = failed.error, _name_of(failed.hook)
    if error is None:
        raise StepHookError(
            f"the step hook {name} returned {type(failed.returned).__name__}, "
            "not a StepRequest or None"
        ) from None
    if not isinstance(error, Exception):
        raise error  # SystemExit and the like: no hook's failure
    raise StepHookError(f"the step hook {name} raised {error!r}") from error


def _name_of(hook: object) -> str:
    name = getattr(hook, "__qualname__", None) or type(hook).__qualname__
    return str(name)
