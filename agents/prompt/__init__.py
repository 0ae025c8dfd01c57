"""Prompts: the system prompt of an agent, and ``run_prompt``, the prompt builder.

- ``default_system_prompt`` / ``native_system_prompt`` write an agent's system prompt
  from a ``PromptContext`` (replace them with your own ``PromptBuilder``); they live
  in ``agents._system_prompt``, below the agents, and are re-exported here.
- ``run_prompt(build, model=...)`` runs an agentic prompt that ``build(prompt)``
  declares with ``def_*`` calls (lmthing's ``runPrompt``; see ``agents.prompt._run``).

What lives here, bottom up: ``_definitions`` (named values and their token budgets),
``_prompt_hooks`` (``def_hook``), ``_prompt`` (``Prompt`` and the tools and tasks it
declares), ``_tasks`` (task lists), ``_run`` (``run_prompt``, which builds a
``ReActAgent`` or ``ToolCallingAgent`` and runs it). Each imports only those before
it. The package sits above the agents: it may import ``agents.react``,
``agents.tool_calling`` and everything they stand on, ``toolchain`` and ``formats``;
of ``agents``, only its ``__init__.py`` imports it.
"""

from __future__ import annotations

from agents._system_prompt import (
    NATIVE_GUIDE,
    REACT_GUIDE,
    PromptBuilder,
    PromptContext,
    default_system_prompt,
    native_system_prompt,
)
from agents.prompt._definitions import Definition, Sampling
from agents.prompt._prompt import AgentTool, FunctionTool, Plugin, Prompt, Task
from agents.prompt._prompt_hooks import HookInput, HookResult, PromptHook
from agents.prompt._run import PromptOptions, PromptRun, run_prompt
from agents.prompt._tasks import DynamicTaskList, TaskList

__all__ = [
    "NATIVE_GUIDE",
    "REACT_GUIDE",
    "AgentTool",
    "Definition",
    "DynamicTaskList",
    "FunctionTool",
    "HookInput",
    "HookResult",
    "Plugin",
    "Prompt",
    "PromptBuilder",
    "PromptContext",
    "PromptHook",
    "PromptOptions",
    "PromptRun",
    "Sampling",
    "Task",
    "TaskList",
    "default_system_prompt",
    "native_system_prompt",
    "run_prompt",
]
