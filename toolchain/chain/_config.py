"""``ChainConfig``: what a chain's stages read of it, frozen when the chain changes.

A chain makes one when it is first asked after a change: a tool registered, an option
set, a view made (``with_tools``, ``narrowed``). An action takes the chain's config once,
as it starts, and every stage of every call in it reads that one: a tool registered while
the action runs (by one of its own tools, say) is the next action's, never this one's.
The stages never call back into the chain.

A module of its own: it is the one thing every stage takes, and nothing here runs.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping

import msgspec

from toolchain._approvals import Approver
from toolchain._extension import Extension
from toolchain._result import ToolCallError
from toolchain.chain._stages import AnyTool

__all__ = ["ChainConfig", "inactive_tool", "unknown_tool"]


class ChainConfig(msgspec.Struct, frozen=True):
    """A chain's tools and settings as one action runs with them (never changed).

    >>> from toolchain import JSONToolChain, tool
    >>> @tool
    ... def ping() -> str:
    ...     '''Check the service is up.'''
    ...     return "pong"
    >>> chain = JSONToolChain(timeout=5)
    >>> before = chain.config
    >>> after = chain.register_tool(ping).config
    >>> list(before.tools), list(after.tools), after.timeout_of("ping")
    ([], ['ping'], 5)
    """

    tools: Mapping[str, AnyTool]
    """Every tool the chain has, by name (a copy, never written): what its calls are read
    with, and whose names are safe section names."""
    offered: Mapping[str, AnyTool]
    """The tools a call may run: ``tools``, or a narrowed view's active ones."""
    names: tuple[str, ...]
    """``offered``'s names, in the chain's order."""
    timeout: float | None
    cancel_grace: float
    max_calls: int
    max_output_chars: int
    max_observation_chars: int
    encode_output: Callable[[object], str]
    """A successful call's output as the model reads it."""
    extensions: tuple[Extension, ...]
    approve: Approver | None
    """Decides calls that need approval when the run has no approver of its own."""
    max_concurrency: int | None
    """At most this many calls of an action run at once (``None``: all of them)."""
    section: str
    """The chain's section name, lower-cased (no observation may use it)."""
    version: int
    """The chain's registry version this was made at (see ``ToolChainBase.config``)."""

    def timeout_of(self, name: str) -> float | None:
        """Seconds a call of ``name`` may run: its tool's own ``timeout``, else the chain's."""
        tool = self.tools.get(name)
        if tool is None:
            return None
        return tool.timeout if tool.timeout is not None else self.timeout

    def refusal(self, name: str) -> ToolCallError:
        """The error of a call to ``name``, which the chain does not offer: a tool a
        narrowed view left out, or one it does not have at all."""
        if name in self.tools:
            return inactive_tool(name, self.names)
        return unknown_tool(name, self.offered)


def unknown_tool(name: str, tools: Mapping[str, AnyTool]) -> ToolCallError:
    """The error of a call to a tool the chain does not have: the closest name, then all.

    >>> unknown_tool("ping", {}).message
    "unknown tool 'ping'. Available tools: (none)"
    """
    known = list(tools)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    listing = ", ".join(known) or "(none)"
    shown = name if len(name) <= 80 else name[:77] + "..."
    return ToolCallError(
        "unknown_tool", f"unknown tool {shown!r}.{hint} Available tools: {listing}"
    )


def inactive_tool(name: str, active: tuple[str, ...]) -> ToolCallError:
    """The error of a call to a tool the chain has but a step turned off (both agents).

    >>> inactive_tool("mul", ("add",)).message
    "the tool 'mul' is not available now. Available tools: add"
    """
    listing = ", ".join(active) or "(none)"
    return ToolCallError(
        "unknown_tool", f"the tool {name!r} is not available now. Available tools: {listing}"
    )
