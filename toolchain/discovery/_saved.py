"""Discovery's part of ``extension_state``: saved after a run, taken up by the next.

What is saved: the tools found, named and used (``Discovery``). Calls held for approval
are not discovery's: they are in the paused result's ``pending`` (the core's
mechanism), and a state saved by an earlier version with held calls or decisions in it
is read without them, with a warning that says so.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import cast

import msgspec

from toolchain._context import ExecutionContext
from toolchain._redact import logger
from toolchain.discovery._activation import discovery

__all__ = ["load", "save"]

_log = logger("toolchain")

_RETIRED = ("pending", "decisions")
"""What states saved before approvals moved to the core held: read, never acted on."""


class _Saved(msgspec.Struct, kw_only=True):
    active: list[str] = msgspec.field(default_factory=list[str])
    named: list[str] = msgspec.field(default_factory=list[str])
    used: list[str] = msgspec.field(default_factory=list[str])


def save(ctx: ExecutionContext) -> dict[str, object]:
    """The state of ``ctx``'s run to carry to the next one."""
    state = discovery(ctx)
    return {"active": list(state.active), "named": list(state.named), "used": list(state.used)}


def load(ctx: ExecutionContext, state: object, tools: Container[str]) -> None:
    """Take up a saved state: found tools still in ``tools``."""
    if isinstance(state, Mapping):
        given = cast("Mapping[str, object]", state)
        retired = [field for field in _RETIRED if given.get(field)]
        if retired:
            _log.warning(
                "the saved ToolSearch state holds %s from an earlier version, which this "
                "one does not act on: a held call now waits in the paused result's "
                "`pending` and runs with agent.resume(result, decisions)",
                " and ".join(retired),
            )
        state = {key: value for key, value in given.items() if key not in _RETIRED}
    saved = msgspec.convert(state, _Saved)
    current = discovery(ctx)
    current.active.update(dict.fromkeys(n for n in saved.active if n in tools))
    current.named.update(dict.fromkeys(n for n in saved.named if n in tools))
    current.used.update(dict.fromkeys(saved.used))
