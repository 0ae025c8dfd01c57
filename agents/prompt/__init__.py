"""Prompts: the system prompt of an agent, and ``run_prompt``, the prompt builder.

- ``default_system_prompt`` / ``native_system_prompt`` write an agent's system prompt
  from a ``PromptContext`` (replace them with your own ``PromptBuilder``).
- ``run_prompt(build, model=...)`` runs an agentic prompt that ``build(prompt)``
  declares with ``def_*`` calls (lmthing's ``runPrompt``; see ``agents.prompt._run``).
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
from agents.prompt._agent_tool import AgentTool
from agents.prompt._prompt import (
    Definition,
    FunctionTool,
    HookInput,
    HookResult,
    Plugin,
    Prompt,
    PromptHook,
    Sampling,
)
from agents.prompt._run import PromptOptions, PromptRun, run_prompt
from agents.prompt._tasks import DynamicTaskList, Task, TaskList

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
