"""Keyword options of the agents and ``run_prompt``: what every agent takes
(`RunOptions`), unknown names refused, ``tools=`` made into a chain.

The options are typed (``Unpack`` of a ``TypedDict``), so mypy and pyright already reject
a misspelt keyword; these checks are for everyone else, at run time: a keyword the
callee does not know is a ``TypeError`` naming it, never an option quietly ignored.
"""

from __future__ import annotations

import datetime as dt
import difflib
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Final, TypedDict, cast

from agents._errors import AgentTypeError
from agents._system_prompt import PromptBuilder
from agents.models import GenerateOptions
from agents.steps import StepHook
from formats import TextFormat
from toolchain import Approver, Extension, JSONToolChain, Limits, Tool, ToolChain, tool

__all__ = ["AnyToolLike", "RunOptions", "agent_chain", "chain_of", "check_keywords"]

AnyToolLike = Tool[Any, Any] | Callable[..., Any]
"""What ``tools=[...]`` takes: a ``Tool`` (``@tool`` functions are ones) or a typed
function, which is wrapped with ``@tool``."""


class RunOptions(TypedDict, total=False):
    """Keyword options every agent takes, besides the model and the termination.

    Any other keyword is a ``TypeError`` naming it (with the closest known name).
    """

    tool_chain: ToolChain
    """Runs the tools and serialises their outputs (JSON or YAML)."""
    tools: Sequence[AnyToolLike]
    """Tools for a ``JSONToolChain`` built for the agent: ``Tool`` objects (``@tool``
    functions are ones) or typed functions, wrapped with ``@tool``. Give either
    ``tools`` or ``tool_chain`` (register the tools on your chain), not both."""
    text_format: TextFormat
    """The section convention of prompts and observations (default ``XMLFormat()``)."""
    behavior: str
    """Who the agent is and how it behaves: the start of the system prompt."""
    critical_rules: str
    """Rules the model must never break, given their own prompt section."""
    limits: Limits
    """Bounds on each run (steps, tool calls, tokens, errors, time)."""
    options: GenerateOptions
    """Sampling options for every model call."""
    prompt_builder: PromptBuilder
    """Builds the system prompt from a ``PromptContext``."""
    clock: Callable[[], dt.date]
    """Today's date for the prompt (default ``date.today``). Pass a fixed clock, such
    as ``toolchain.testing.fixed_clock``, to make prompts and transcripts reproducible."""
    name: str
    """The run's name in contexts and traces (default ``agent``)."""
    step_hooks: Sequence[StepHook]
    """Called in order before each model call; may change that step's request (see
    ``agents.steps``). Compactions (``agents.compaction``) are step hooks. To also
    hold back an answer while work is left, write an extension (its ``before_step``
    and ``check_answer``, as ``run_prompt``'s task lists do); a step hook's own
    ``check_answer`` is still asked, with a ``DeprecationWarning``, until the next
    release."""
    extensions: Sequence[Extension]
    """Installed on each run's context: their tools are offered beside the chain's (the
    chain given is never changed; ``agent.tool_chain`` is then a view of it, see
    ``JSONToolChain.with_tools``), their prompt sections reach the model each step,
    their text filters rewrite its answer, their ``before_step`` runs as a step hook
    before ``step_hooks`` and their ``check_answer`` may hold an answer back (see
    ``toolchain.Extension``; each must inherit from it, else a ``TypeError``)."""
    approve: Approver
    """Decides the calls of tools that need approval (``Tool.requires_approval``), sync
    or async: ``approve(ctx, request)`` returns ``Approval.granted()``,
    ``Approval.denied(reason)``, or ``None`` when nobody can decide now. Without it, or
    on ``None``, the call is held: the step's other calls finish, the run ends with
    ``stopped_by == "paused"`` and ``result.pending``, and ``agent.resume`` decides it.
    Sub-agents' calls are decided here too when they have no approver of their own."""


# What users of other agent libraries write first, and what it is here.
AGENT_PEERS: Final[Mapping[str, str]] = {
    "system_prompt": "behavior",
    "instructions": "behavior",
    "system": "behavior",
    "max_iterations": "limits=Limits(max_steps=...)",
    "max_steps": "limits=Limits(max_steps=...)",
    "max_turns": "limits=Limits(max_steps=...)",
    "output_type": "termination=TypedTermination(...)",
    "result_type": "termination=TypedTermination(...)",
    "response_model": "termination=TypedTermination(...)",
    "temperature": "options=GenerateOptions(temperature=...)",
    "model_settings": "options=GenerateOptions(...)",
    "toolchain": "tool_chain",
}


def check_keywords(
    callee: str,
    given: Iterable[str],
    known: Collection[str],
    *,
    peers: Mapping[str, str] = AGENT_PEERS,
) -> None:
    """Raise ``TypeError`` for each keyword in ``given`` that is not in ``known``.

    The message names each unknown keyword with what to write instead: ``peers`` maps
    other libraries' keywords to ours, else the closest known name is offered.

    >>> check_keywords("Agent()", ["tool_chian"], ["tool_chain", "behavior"])
    Traceback (most recent call last):
    ...
    agents._errors.AgentTypeError: \
Agent() got an unexpected keyword argument 'tool_chian' (did you mean 'tool_chain'?)
    """
    unknown = [name for name in given if name not in known]
    if not unknown:
        return
    shown: list[str] = []
    for name in unknown:
        alias = peers.get(name)
        close = difflib.get_close_matches(name, list(known), n=1)
        if alias is not None:
            suggestion = alias if any(c in alias for c in "=( ") else f"{alias}=..."
            shown.append(f"{name!r} (did you mean {suggestion}?)")
        elif close:
            shown.append(f"{name!r} (did you mean {close[0]!r}?)")
        else:
            shown.append(repr(name))
    noun = "an unexpected keyword argument" if len(unknown) == 1 else "unexpected keyword arguments"
    message = f"{callee} got {noun} {', '.join(shown)}"
    if all("(did you mean" not in text for text in shown):
        message += f"; it takes {', '.join(sorted(known))}"
    raise AgentTypeError(message)


def chain_of(tools: object, *, callee: str) -> JSONToolChain:
    """A new ``JSONToolChain`` holding ``tools``: ``Tool`` objects as they are, plain typed
    functions wrapped with ``@tool``. A tool class, or anything else, gets
    ``register_tool``'s own error, which says what to pass instead.

    >>> def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> list(chain_of([add], callee="ReActAgent()").tools)
    ['add']
    """
    if isinstance(tools, Tool) or not isinstance(tools, Iterable) or isinstance(tools, str):
        raise AgentTypeError(f"{callee}: tools= takes a list of tools, such as tools=[get_weather]")
    chain = JSONToolChain()
    for entry in cast("Iterable[object]", tools):  # whatever it holds is checked here
        if inspect.isfunction(entry) or inspect.ismethod(entry):
            chain.register_tool(tool(entry))
        else:  # a Tool, or not one: register_tool's error then says what to pass
            chain.register_tool(cast("Tool[Any, Any]", entry))
    return chain


def agent_chain(options: RunOptions, default: ToolChain, *, callee: str) -> ToolChain:
    """The chain an agent runs on: ``tool_chain=``, a JSON chain of ``tools=``, or
    ``default``; both given is a ``TypeError`` saying which to drop."""
    given = options.get("tool_chain")
    if "tools" in options:
        if given is not None:
            raise AgentTypeError(
                f"{callee} takes tools= or tool_chain=, not both: register the tools on "
                "your chain (chain.register_tool(...)), or drop tool_chain= for a JSON chain"
            )
        given = chain_of(options["tools"], callee=callee)
    return given or default
