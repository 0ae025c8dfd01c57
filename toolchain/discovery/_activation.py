"""Which tools a run has found and used: discovery's state in ``ctx.state``.

Searches activate the tools they return; a deferred tool can be called once it is
active, for the rest of the run and, saved with ``extension_state``, of the
conversation. ``WorkingMemory`` lists them each step (``found_tools``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolchain._context import ExecutionContext, StateKey

__all__ = ["Discovery", "ProtocolName", "discovery", "found_tools"]

ProtocolName = Literal["text", "native"]


@dataclass(slots=True)
class Discovery:
    """What discovery knows in one run (``ctx.state``); saved for the conversation."""

    active: dict[str, None] = field(default_factory=lambda: {})
    """Tools the searches found, in the order they were first found (or, for a named
    tool, first called)."""
    named: dict[str, None] = field(default_factory=lambda: {})
    """Tools a search named among its other matches: callable, and active from their
    first call (a model calls what it sees named)."""
    used: dict[str, None] = field(default_factory=lambda: {})
    described: dict[str, None] = field(default_factory=lambda: {})
    """Tools a search of this run described with their parameters (text mode): found
    again, they are named only. Not saved: a later run may not show the model them."""
    guided: dict[str, None] = field(default_factory=lambda: {})
    """Categories whose workflow guidance a search of this run gave."""
    protocol: ProtocolName = "text"
    """How this run's steps offer tools: found tools' schemas go in search results
    (text) or in the specs sent with the request (native)."""


_STATE = StateKey[Discovery]("toolchain.discovery")


def discovery(ctx: ExecutionContext) -> Discovery:
    """The discovery state of ``ctx``'s run, made on first use."""
    return ctx.state.setdefault(_STATE, Discovery)


def found_tools(ctx: ExecutionContext) -> tuple[str, ...]:
    """The tools searches activated in this run (empty without discovery)."""
    state = ctx.state.get(_STATE)
    return () if state is None else tuple(state.active)
