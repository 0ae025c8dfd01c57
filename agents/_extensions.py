"""What an agent's extensions add to its runs, besides what they install on the context.

Their tools are offered beside the chain's (on a view of it: the chain an agent is
given is never changed, see ``ToolChainBase.with_tools``), a ``before_step`` is a step
hook and a ``check_answer`` may hold an answer back; each step, their prompt sections
ride on the latest message; their guidance closes the system prompt, and their text
filters rewrite what the model writes (the stream, and a text answer).

``Extension`` declares each of those hooks with a no-op default; which ones an
extension's class overrides is looked at once, here, when the agent is built, and only
those are called: a hook left at its default costs a step nothing (an extension that
brings only tools makes each step exactly as a plain run makes it).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from agents._errors import AgentTypeError
from agents._savings import note_sections
from agents._step_state import AnswerCheck
from agents.models import Message
from agents.steps import StepHook
from formats import FormattedSection, TextFormat
from toolchain import ExecutionContext, Extension, TextContent, TextFilter, Tool, ToolChain
from toolchain.chain import ToolChainBase
from toolchain.runtime import checked_extensions

__all__ = [
    "AgentExtensions",
    "feed",
    "flush",
]

AnswerT = TypeVar("AnswerT")


class AgentExtensions:
    """The extensions of one agent: the chain's own first, then those given to it."""

    __slots__ = (
        "all",
        "answer_checks",
        "chain",
        "filtering",
        "guiding",
        "sectioned",
        "step_hooks",
    )

    def __init__(
        self,
        chain: ToolChain,
        given: Sequence[Extension],
        hooks: Sequence[StepHook],
        *,
        callee: str,
    ) -> None:
        chain_extensions: Sequence[Extension] = getattr(chain, "extensions", ())
        self.all: tuple[Extension, ...] = checked_extensions(
            (*chain_extensions, *(e for e in given if e not in chain_extensions)), callee
        )
        tools = [tool for extension in self.all for tool in extension.tools()]
        self.chain: ToolChain = _offering(chain, tools, callee)
        """The chain the agent runs on: ``chain``, or a view of it with the tools."""
        # Each hook's overriders, found by identity with the base class's default: per
        # step, the hooks left at their default are never called.
        base = Extension
        self.guiding = tuple(e for e in self.all if type(e).instructions is not base.instructions)
        self.sectioned: tuple[Extension, ...] = tuple(
            e for e in self.all if type(e).prompt_section is not base.prompt_section
        )
        """The extensions with a prompt section: a step is plain without them."""
        self.filtering = tuple(e for e in self.all if type(e).text_filter is not base.text_filter)
        extension_hooks = [
            # before_step is typed on toolchain's StepView (it cannot name StepRequest):
            # what it returns is checked to be a StepRequest where the hooks run.
            cast(StepHook, e.before_step)
            for e in self.all
            if type(e).before_step is not base.before_step
        ]
        self.step_hooks: tuple[StepHook, ...] = (*extension_hooks, *hooks)
        """The extensions' ``before_step`` hooks, then ``hooks``: an agent's step hooks."""
        self.answer_checks: tuple[AnswerCheck, ...] = (
            *(e.check_answer for e in self.all if type(e).check_answer is not base.check_answer),
            *_hooks_checking_answers(hooks, callee),
        )

    def guides(self, prompt: str, fmt: TextFormat) -> str:
        """The system prompt with the extensions' ``instructions`` after it."""
        guides = [
            FormattedSection(extension.name, text, escape=False)
            for extension in self.guiding
            if (text := extension.instructions().strip())
        ]
        if guides:
            prompt = f"{prompt}\n\n{fmt.format_sections(guides)}"
        return prompt

    def with_sections(
        self, ctx: ExecutionContext, fmt: TextFormat, messages: list[Message]
    ) -> list[Message]:
        """The conversation with this step's extension sections added to a copy of its
        last message; ``messages`` itself when no extension has anything to say."""
        if not self.sectioned:
            return messages
        named: list[tuple[str, str]] = []
        for extension in self.sectioned:  # (a loop, not a comprehension: a call fewer a step)
            text = extension.prompt_section(ctx).strip()
            if text:
                named.append((extension.name, fmt.format_section(extension.name, text)))
        note_sections(ctx, named)  # what each extension's section costs the request
        if not named:
            return messages
        sections = [section for _, section in named]
        last = messages[-1]
        content = (*last.content, TextContent("\n\n" + "\n\n".join(sections)))
        if type(last) is not Message:  # a subclass: its own fields too
            return [*messages[:-1], dataclasses.replace(last, content=content)]
        # Every field, built directly: dataclasses.replace reads each field's definition
        # every step (about twice the instructions).
        sectioned = Message(last.role, content, last.tool_calls, last.tool_call_id, last.name)
        return [*messages[:-1], sectioned]

    def text_filters(self, ctx: ExecutionContext) -> list[TextFilter]:
        """Fresh filters for one reply of the model, from the extensions that have one."""
        return [f for e in self.filtering if (f := e.text_filter(ctx)) is not None]

    def filtered(self, ctx: ExecutionContext, answer: AnswerT) -> AnswerT:
        """A text answer through the text filters (typed answers as they are)."""
        filters = self.text_filters(ctx) if isinstance(answer, str) else []
        if not filters:
            return answer
        return cast(AnswerT, feed(filters, cast(str, answer)) + flush(filters))


def _hooks_checking_answers(hooks: Sequence[StepHook], callee: str) -> list[AnswerCheck]:
    """The ``check_answer`` of step hooks that have one: how an answer was held back
    before ``Extension`` declared the hook. Kept, with a warning, for one release."""
    checks: list[AnswerCheck] = []
    for hook in hooks:
        if isinstance(hook, Extension):
            raise AgentTypeError(
                f"{callee}: {type(hook).__name__} is an Extension: pass it in extensions=, "
                "where its before_step runs as a step hook and its check_answer is asked"
            )
        check: object = getattr(hook, "check_answer", None)  # a step hook, not an extension
        if callable(check):
            warnings.warn(
                f"{callee}: the step hook {type(hook).__name__} holds answers back with "
                "check_answer; make it a toolchain.Extension (check_answer and before_step "
                "are its hooks) and pass it in extensions=: step hooks are not asked from "
                "the next release",
                DeprecationWarning,
                stacklevel=4,
            )
            checks.append(cast(AnswerCheck, check))
    return checks


def _offering(chain: ToolChain, tools: Sequence[Tool[Any, Any]], callee: str) -> ToolChain:
    """``chain`` offering ``tools`` too, itself unchanged: another agent on the same chain
    must not see (or call) this agent's extension tools."""
    if isinstance(chain, ToolChainBase):
        return chain.with_tools(tools)
    offered = chain.tools
    missing = [tool.name for tool in tools if offered.get(tool.name) is not tool]
    if not missing:
        return chain
    raise AgentTypeError(
        f"{callee}: the extensions bring tools ({', '.join(missing)}) that "
        f"{type(chain).__name__} cannot offer without being changed: register them on "
        "the chain yourself, or build it on JSONToolChain, YAMLToolChain or DialectToolChain"
    )


def feed(filters: Sequence[TextFilter], text: str) -> str:
    """``text`` through each filter in turn."""
    for text_filter in filters:
        text = text_filter.feed(text)
    return text


def flush(filters: Sequence[TextFilter]) -> str:
    """The text every filter still holds, passed through the filters after it."""
    text = ""
    for text_filter in filters:
        text = text_filter.feed(text) + text_filter.flush() if text else text_filter.flush()
    return text
