"""The system prompt: sections formatted with the agent's own ``TextFormat``.

``default_system_prompt`` writes, in order: behaviour (with today's date), how the
ReAct cycle works, critical rules, the available tools and the output format. Pass
your own ``PromptBuilder`` to ``ReActAgent`` to replace it.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import Protocol

from formats import FormattedSection, TextFormat
from toolchain import ToolChain

__all__ = [
    "NATIVE_GUIDE",
    "REACT_GUIDE",
    "PromptBuilder",
    "PromptContext",
    "default_system_prompt",
    "native_system_prompt",
]

REACT_GUIDE = """\
Work in a cycle until you can answer:
1. Think: what do you know, what is missing, what will you do next?
2. Act: call one or more tools. Calls in the same action run in parallel, so batch
   independent lookups together.
3. Observe: the tool results come back in an observation. Read them before going on.

When a call fails, read the error, fix the call and try again, or work around it.
Write the answer section only once you have what the answer needs, and never in the
same response as an action: if a response holds an action, the answer is ignored."""

NATIVE_GUIDE = """\
Use the tools to find what you need. Calls you make in the same turn run in parallel,
so batch independent lookups together. Each result comes back as the answer to its call.

When a call fails, read the error, fix the call and try again, or work around it.
Answer only once you have what the answer needs."""


@dataclass(frozen=True, slots=True)
class PromptContext:
    """Everything a prompt builder may use.

    >>> from formats import XMLFormat
    >>> from toolchain import YAMLToolChain
    >>> def terse(context: PromptContext) -> str:
    ...     return context.behavior + " " + context.today.isoformat()
    >>> terse(PromptContext(XMLFormat(), YAMLToolChain(), "Be brief.", "", dt.date(2026, 1, 1)))
    'Be brief. 2026-01-01'
    """

    text_format: TextFormat
    tool_chain: ToolChain
    behavior: str
    critical_rules: str
    today: dt.date
    tools: tuple[str, ...] | None = None
    """The tools active in this step, when a step hook narrowed them; None: all."""


class PromptBuilder(Protocol):
    """Builds the system prompt of a run."""

    def __call__(self, context: PromptContext) -> str: ...


def default_system_prompt(context: PromptContext) -> str:
    """The default system prompt (see the module docstring).

    >>> from formats import Section, XMLFormat
    >>> from toolchain import YAMLToolChain
    >>> fmt = XMLFormat().register_section(Section("answer", "Your answer."))
    >>> prompt = default_system_prompt(
    ...     PromptContext(fmt, YAMLToolChain(), "You help travellers.", "", dt.date(2026, 3, 5))
    ... )
    >>> print(prompt.splitlines()[0:3])
    ['<behavior>', 'You help travellers.', '']
    >>> "Today is 2026-03-05 (Thursday)." in prompt
    True
    """
    sections = _opening(context, FormattedSection("react", REACT_GUIDE, escape=False))
    tools = context.tool_chain.available_tools_prompt(context.tools) or "(no tools)"
    sections.append(FormattedSection("available_tools", tools, escape=False))
    sections.append(
        FormattedSection("output_format", context.text_format.describe_structure(), escape=False)
    )
    return context.text_format.format_sections(sections)


def native_system_prompt(context: PromptContext) -> str:
    """The default system prompt of a native tool-calling agent.

    Behaviour (with today's date), how tool calls work and the critical rules; the
    tools themselves go to the API as specs, so they are not listed here.

    >>> from formats import XMLFormat
    >>> from toolchain import JSONToolChain
    >>> prompt = native_system_prompt(
    ...     PromptContext(XMLFormat(), JSONToolChain(), "You help.", "", dt.date(2026, 3, 5))
    ... )
    >>> "<tool_use>" in prompt and "available_tools" not in prompt
    True
    """
    sections = _opening(context, FormattedSection("tool_use", NATIVE_GUIDE, escape=False))
    return context.text_format.format_sections(sections)


def _opening(context: PromptContext, guide: FormattedSection) -> list[FormattedSection]:
    today = _today_line(context.today)
    behavior = f"{context.behavior.strip()}\n\n{today}" if context.behavior.strip() else today
    sections = [FormattedSection("behavior", behavior, escape=False), guide]
    if context.critical_rules.strip():
        sections.append(
            FormattedSection("critical_rules", context.critical_rules.strip(), escape=False)
        )
    return sections


@functools.lru_cache(maxsize=4)
def _today_line(today: dt.date) -> str:
    """The date line of every system prompt; kept, as ``strftime`` costs more than the
    rest of a short prompt and the date changes once a day."""
    return f"Today is {today.isoformat()} ({today.strftime('%A')})."
