"""Keyword options of the agents and ``run_prompt``: unknown names refused, ``tools=``
made into a chain.

The options are typed (``Unpack`` of a ``TypedDict``), so mypy and pyright already reject
a misspelt keyword; these checks are for everyone else, at run time: a keyword the
callee does not know is a ``TypeError`` naming it, never an option quietly ignored.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, cast

from toolchain import JSONToolChain, Tool, tool

__all__ = ["AnyToolLike", "chain_of", "check_keywords"]

AnyToolLike = Tool[Any, Any] | Callable[..., Any]
"""What ``tools=[...]`` takes: a ``Tool`` (``@tool`` functions are ones) or a typed
function, which is wrapped with ``@tool``."""

# What users of other agent libraries write first, and what it is here.
AGENT_PEERS: Final[Mapping[str, str]] = {
    "system_prompt": "behavior",
    "instructions": "behavior",
    "system": "behavior",
    "max_iterations": "limits=Limits(max_iterations=...)",
    "max_steps": "limits=Limits(max_iterations=...)",
    "max_turns": "limits=Limits(max_iterations=...)",
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
    TypeError: Agent() got an unexpected keyword argument 'tool_chian' (did you mean 'tool_chain'?)
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
    raise TypeError(message)


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
        raise TypeError(f"{callee}: tools= takes a list of tools, such as tools=[get_weather]")
    chain = JSONToolChain()
    for entry in cast("Iterable[object]", tools):  # whatever it holds is checked here
        if inspect.isfunction(entry) or inspect.ismethod(entry):
            chain.register_tool(tool(entry))
        else:  # a Tool, or not one: register_tool's error then says what to pass
            chain.register_tool(cast("Tool[Any, Any]", entry))
    return chain
