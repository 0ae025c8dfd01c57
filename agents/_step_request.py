"""`StepCalls`: each step's model call in a run whose step hooks, extensions or
observers have a say in it.

The step's `StepRequest` (the conversation with the extensions' prompt sections on its
last message) goes through the step hooks; what they return becomes the call: the
system prompt's tool listing follows the tools shown, and the options are made again
only when the tools or options changed. Unchanged, the run's one plain call is used,
so every step sends the same bytes (providers cache them). Plain hooks cost no
coroutine: the hooks run sync-first, and only an ``async`` hook makes one.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from agents._extensions import AgentExtensions
from agents._savings import note_request
from agents._step_log import log
from agents._step_state import RunStop, StepCall
from agents.events import StepReady
from agents.models import GenerateOptions, Message, Model
from agents.steps import (
    PromptLater,
    StepHook,
    StepHookError,
    StepRequest,
    raw_prompt,
    run_step_hooks,
    with_changes,
)
from formats import TextFormat
from toolchain import ExecutionContext, ToolChain

__all__ = ["StepCalls"]


UNSENT = Message.text("system", "")
"""The run's system message until a step's call is made (`StepCalls.messages`)."""


class StepCalls:
    """The calls of one run's steps, made from the run's conversation ``messages``."""

    __slots__ = (
        "_chain",
        "_extensions",
        "_format",
        "_hooks",
        "_message_for",
        "_narrowed",
        "_options",
        "_plain",
        "_plain_options",
        "_plain_system",
        "_prompt",
        "_prompt_for",
        "_system_prompt",
        "base_options",
        "messages",
        "model",
        "protocol",
        "task_index",
        "tools",
    )

    def __init__(
        self,
        model: Model,
        messages: list[Message],
        tools: tuple[str, ...],
        *,
        base_options: GenerateOptions,
        task_index: int,
        protocol: Literal["text", "native"],
        hooks: Sequence[StepHook],
        extensions: AgentExtensions,
        text_format: TextFormat,
        tool_chain: ToolChain,
        system_prompt: Callable[[Sequence[str] | None], str],
        options: Callable[[GenerateOptions, tuple[str, ...]], GenerateOptions],
    ) -> None:
        self.model = model
        self.messages = messages
        """The run's conversation: ``UNSENT`` first, until the first step's call is made
        and its system message takes that place (`keep_system`)."""
        self.tools = tools
        self.base_options = base_options
        self.task_index = task_index
        """Where the task sits in ``StepRequest.messages``."""
        self.protocol: Literal["text", "native"] = protocol
        self._hooks = tuple(hooks)
        self._extensions = extensions
        self._format = text_format
        self._chain = tool_chain
        self._system_prompt = system_prompt
        self._prompt = PromptLater(functools.partial(system_prompt, None))
        """The plain prompt (every tool listed), made only when a step sends it or a
        hook or observer reads it: a run whose hooks narrow the tools never needs it."""
        self._plain: StepCall | None = None
        self._plain_system: Message | None = None
        self._plain_options: GenerateOptions | None = None
        self._prompt_for: tuple[tuple[str, ...], str, Message] | None = None
        """The last tools shown, the system prompt listing them and its message (a run's
        steps mostly show the same tools: each step reuses them instead of building them
        again)."""
        self._message_for: tuple[str, Message] | None = None
        self._narrowed: StepCall | None = None
        """The last call a step's hooks changed (other tools shown, other options) that
        sends the run's conversation itself (`_call_of`)."""
        self._options = options

    @property
    def plain(self) -> StepCall:
        """The call a step makes when nothing changes it: the run's conversation itself
        (made on first use); a copy with the plain system message in a run whose first
        step sent another one."""
        call = self._plain
        if call is not None and self.messages[0] is self._plain_system:
            return call  # each step of a run without hooks
        system = self._plain_message()
        if call is None:
            call = self._plain = StepCall(self.model, self.messages, self._options_of(), self.tools)
        if self.messages[0] is system:
            return call
        return StepCall(call.model, [system, *self.messages[1:]], call.options, call.tools)

    def _plain_message(self) -> Message:
        """The plain system message, made on first use; the run's too when no step's
        call was made before (the conversation's own when its text is the same)."""
        system = self._plain_system
        if system is None:
            system = Message.text("system", self._prompt.text())
            first = self.keep_system(system)
            if first == system:
                system = first
            self._plain_system = system
        return system

    def keep_system(self, system: Message) -> Message:
        """The run's system message: ``system`` when no step's call was made before
        (the run's conversation keeps the system message its first step sent)."""
        messages = self.messages
        if messages[0] is UNSENT:
            messages[0] = system
        return messages[0]

    def conversation(self) -> list[Message]:
        """The run's messages at its end: a run that made no call keeps the plain
        system message."""
        if self.messages[0] is UNSENT:
            self._plain_message()
        return self.messages

    def call(
        self, ctx: ExecutionContext, index: int, messages: list[Message]
    ) -> StepCall | Awaitable[StepCall]:
        """Step ``index``'s call over the conversation ``messages``; awaitable only
        once a hook is ``async``. Raises ``RunStop`` when a hook failed, or cancelled
        or paused the run."""
        sent = self._extensions.with_sections(ctx, self._format, messages)
        request = StepRequest(
            index,
            self._prompt,  # type: ignore[arg-type]  # read as its text (PromptLater)
            tuple(sent[1:]),
            self.tools,
            self.model,
            self.base_options,
            self.task_index,
            protocol=self.protocol,
        )
        as_is = sent is messages is self.messages  # the run's conversation, no section
        if not self._hooks:
            return self._made(ctx, request, request, as_is=as_is)
        try:
            final = run_step_hooks(ctx, request, self._hooks)
        except StepHookError as error:
            raise _hook_failed(error) from error
        if isinstance(final, StepRequest):
            return self._made(ctx, request, final, as_is=as_is)
        return self._made_later(ctx, request, final, as_is=as_is)

    async def _made_later(
        self,
        ctx: ExecutionContext,
        request: StepRequest,
        pending: Awaitable[StepRequest],
        *,
        as_is: bool,
    ) -> StepCall:
        try:
            final = await pending
        except StepHookError as error:
            raise _hook_failed(error) from error
        return self._made(ctx, request, final, as_is=as_is)

    def _made(
        self, ctx: ExecutionContext, request: StepRequest, final: StepRequest, *, as_is: bool
    ) -> StepCall:
        """The call of ``final``, what the hooks made of ``request``; the plain call
        itself when nothing changed and the request is the conversation ``as_is``."""
        call = self._call_of(ctx, request, final, as_is=as_is)
        if ctx.cancelled:  # while the hooks ran (a summary call, say)
            raise RunStop("cancelled", ctx.cancel_reason)
        if ctx.pause_reason:  # a hook found a decision to wait for
            raise RunStop("paused", ctx.pause_reason)
        return call

    def _call_of(
        self, ctx: ExecutionContext, request: StepRequest, final: StepRequest, *, as_is: bool
    ) -> StepCall:
        # The tools first: what an extension's before_step changes (a new request whose
        # described differs answers at once, without comparing every field).
        changed = final is not request and (
            final.described != request.described or final.tools != request.tools or final != request
        )
        if not changed and as_is:
            _ready(ctx, final, changed)
            return self.plain
        tools = self.tools
        shown = final.shown_tools
        system: Message | None = None
        # The plain prompt as the request held it, not yet read (made only when sent), or
        # a hook's text that is the same (anything else makes it, to compare).
        if raw_prompt(final) is self._prompt or final.system_prompt == self._prompt.text():
            if shown != tools:  # the listing follows the tools shown
                prompt, system = self._showing(shown)
                final = with_changes(final, system_prompt=prompt)
                self.keep_system(system)  # the run's, if its first call: what the model saw
        else:
            prompt = final.system_prompt
            if shown != tools and self.protocol == "text":
                # A hook changed the prompt too (a task's system part, say): the listing
                # in it, wherever it kept it, still follows the tools shown.
                listed = self._chain.available_tools_prompt(tools)
                if listed and prompt.count(listed) == 1:
                    now = self._chain.available_tools_prompt(shown) or "(no tools)"
                    prompt = prompt.replace(listed, now)
                    final = with_changes(final, system_prompt=prompt)
            # A hook's own change holds for this call only: the run keeps the agent's
            # prompt (made already: the hook's text was compared with it).
            self._plain_message()
            system = self._system_message(prompt)
        _ready(ctx, final, changed)
        if system is None:  # the plain prompt, sent
            system = self._plain_message()
        options = (
            self._options_of()
            if final.options is request.options and shown == tools
            else self._options(final.options, shown)
        )
        if as_is and final.messages is request.messages and system is self.messages[0]:
            # The run's conversation itself, as the plain call sends it (its system
            # message the one this step sends: a run whose hooks narrow the tools keeps
            # the first step's): no copy of it a step, and the last step's call while
            # the model, options and tools are the same objects.
            known = self._narrowed
            if (
                known is not None
                and known.model is final.model
                and known.options is options
                and known.tools is final.tools
            ):
                return known
            call = self._narrowed = StepCall(final.model, self.messages, options, final.tools)
            return call
        return StepCall(final.model, [system, *final.messages], options, final.tools)

    def _options_of(self) -> GenerateOptions:
        """The plain options (every tool's spec, in native mode), made on first use."""
        options = self._plain_options
        if options is None:
            options = self._plain_options = self._options(self.base_options, self.tools)
        return options

    def _system_message(self, prompt: str) -> Message:
        """The system message of ``prompt``: the one of the last step when it is the same
        (a run whose hooks narrow the tools sends one prompt step after step)."""
        known = self._message_for
        if known is not None and known[0] == prompt:
            return known[1]
        message = Message.text("system", prompt)
        self._message_for = (prompt, message)
        return message

    def _showing(self, shown: tuple[str, ...]) -> tuple[str, Message]:
        """The system prompt listing ``shown`` and its message: the last step's when it
        showed the same tools (the same tuple, most steps: compared by identity first)."""
        known = self._prompt_for
        if known is not None and (known[0] is shown or known[0] == shown):
            return known[1], known[2]
        prompt = self._system_prompt(shown)
        system = self._system_message(prompt)
        self._prompt_for = (shown, prompt, system)
        return prompt, system


def _hook_failed(error: StepHookError) -> RunStop:
    log.exception("a step hook failed")
    return RunStop("error", str(error))


def _ready(ctx: ExecutionContext, request: StepRequest, changed: bool) -> None:
    """``request`` is what the model is called with: the run's ledger is told, and
    ``StepReady``'s observers (the event is made only for some)."""
    note_request(ctx, request)
    if ctx.events.has_subscribers(StepReady):
        ctx.events.emit(StepReady(ctx, request, changed))
