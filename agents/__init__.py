"""Agents: model adapters, the ReAct loop, terminations, limits, tracing and the CLI.

>>> from agents import ReActAgent, ScriptedModel
>>> agent = ReActAgent(ScriptedModel(["<answer>Paris</answer>"]))
>>> agent.run_sync("Capital of France?").answer
'Paris'

What lives here, bottom up: ``AgentError``, the root of every error raised here
(``_errors``); ``agents.models`` (the ``Model`` protocol and its adapters; it imports
no other part of ``agents`` but that root); the values of a run (``result``,
``events``, ``steps``, ``terminations``); the step engine (``_engine``, with the
private modules it delegates to: ``_step_request``, ``_model_call``, ``_race``,
``_replies``, ``_tool_runs``, ``_run_record``, ``_extensions``, ``_step_log``,
``_savings``, ``_resume``: a run paused on calls held for approval, and resumed) and
the two agents on it (``react``, ``tool_calling``); ``compaction``
and ``trace``;
``agents.prompt`` (``run_prompt``, above the agents); then ``agents.demo``,
``agents.evals`` and ``cli``. Each imports only what is below it.

It may import ``formats`` and ``toolchain`` (their public names, and a few of
toolchain's private helpers: redaction, one-line log text, the hook runner, token
counts); neither imports ``agents``.
"""

from typing import TYPE_CHECKING

from agents._errors import AgentError, AgentStateError, AgentTypeError, AgentValueError
from agents._options import RunOptions
from agents._renamed import renamed_names
from agents._resume import ResumeError
from agents.compaction import SlidingWindow, SummarizingCompaction
from agents.events import (
    AfterModelCall,
    AnswerReady,
    BeforeModelCall,
    LimitReached,
    ModelCallFailed,
    ModelTextDelta,
    ModelToolCallDelta,
    ObservationReady,
    OutputRejected,
    RunEvent,
    RunFinished,
    StepFinished,
    StepReady,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelError,
    ModelResponse,
    ScriptedModel,
    TextDelta,
    Usage,
    resolve_model,
)
from agents.prompt import (
    HookInput,
    HookResult,
    Prompt,
    PromptBuilder,
    PromptContext,
    PromptRun,
    default_system_prompt,
    native_system_prompt,
    run_prompt,
)
from agents.react import AgentOptions, ReActAgent
from agents.result import AgentResult, Savings, StepResult, StopKind, render_transcript
from agents.steps import StepHook, StepHookError, StepRequest
from agents.terminations import AnswerRejected, Termination, TextTermination, TypedTermination
from agents.tool_calling import ToolCallingAgent, ToolCallingOptions
from agents.trace import ConsoleTraceWriter, JSONLTraceWriter
from formats import GentError
from toolchain import Limits

if TYPE_CHECKING:
    from agents.models import AnthropicModel, OpenAIChatModel

    # The old names, for one release: typed as what they are; at run time they warn.
    Iteration = StepResult
    IterationFinished = StepFinished
    IterationStarted = StepStarted
    RunEnded = RunFinished

# Public objects keep the __module__ of the module that defines them (no httpx-style
# pass setting it to "agents"): typing.get_type_hints and pydantic resolve a class's
# string annotations in that module's namespace, and here most of those names are
# missing (AgentResult, StepResult, StepRequest, the events and the option TypedDicts).

__all__ = [
    "AfterModelCall",
    "AgentError",
    "AgentOptions",
    "AgentResult",
    "AgentStateError",
    "AgentTypeError",
    "AgentValueError",
    "AnswerReady",
    "AnswerRejected",
    "AnthropicModel",
    "BeforeModelCall",
    "ConsoleTraceWriter",
    "GenerateOptions",
    "GentError",
    "HookInput",
    "HookResult",
    "JSONLTraceWriter",
    "LimitReached",
    "Limits",
    "Message",
    "Model",
    "ModelCallFailed",
    "ModelError",
    "ModelResponse",
    "ModelTextDelta",
    "ModelToolCallDelta",
    "ObservationReady",
    "OpenAIChatModel",
    "OutputRejected",
    "Prompt",
    "PromptBuilder",
    "PromptContext",
    "PromptRun",
    "ReActAgent",
    "ResumeError",
    "RunEvent",
    "RunFinished",
    "RunOptions",
    "Savings",
    "ScriptedModel",
    "SlidingWindow",
    "StepFinished",
    "StepHook",
    "StepHookError",
    "StepReady",
    "StepRequest",
    "StepResult",
    "StepStarted",
    "StopKind",
    "SummarizingCompaction",
    "Termination",
    "TextDelta",
    "TextTermination",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolCallingAgent",
    "ToolCallingOptions",
    "TypedTermination",
    "Usage",
    "default_system_prompt",
    "native_system_prompt",
    "render_transcript",
    "resolve_model",
    "run_prompt",
]


def _adapter(name: str) -> object:
    """The provider adapters load on first use, as in ``agents.models`` (PEP 562)."""
    if name in ("AnthropicModel", "OpenAIChatModel"):
        import agents.models

        return getattr(agents.models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The names "iteration" had until this release are the "step" ones, and RunEnded (the
# bus's event for the fact RunFinished streams) is RunFinished: each with a warning.
__getattr__ = renamed_names(
    __name__,
    {
        "Iteration": "StepResult",
        "IterationFinished": "StepFinished",
        "IterationStarted": "StepStarted",
        "RunEnded": "RunFinished",
    },
    otherwise=_adapter,
)
