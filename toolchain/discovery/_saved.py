"""Discovery's part of ``extension_state``: saved after a run, taken up by the next.

What is saved: the tools found, named and used (``Discovery``), the calls held for
approval and the decisions that wait for their call (``Approvals``), each sealed.
``pending`` and ``decide`` read and change that saved form between runs, for the person
who decides; whatever they read is checked against the seal first.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Final, cast

import msgspec

from toolchain._context import ExecutionContext
from toolchain._errors import ToolchainLookupError, ToolchainValueError
from toolchain._redact import logger
from toolchain.discovery._activation import discovery
from toolchain.discovery._approval import Approval, ApprovalRequest
from toolchain.discovery._held import SavedDecision, SavedRequest, Seal, approvals, request_of

__all__ = ["MAX_SAVED", "decide", "load", "pending", "save"]

_log = logger("toolchain")


MAX_SAVED: Final = 1_000
"""The most held calls, and the most decisions, read from a saved state (the newest);
more are left out with a warning. Each is checked against its seal (an HMAC), so an
``extension_state`` of 200,000 forged entries cost seconds a run; a conversation
holds a handful."""


class _Saved(msgspec.Struct, kw_only=True):
    active: list[str] = msgspec.field(default_factory=list[str])
    named: list[str] = msgspec.field(default_factory=list[str])
    used: list[str] = msgspec.field(default_factory=list[str])
    pending: list[SavedRequest] = msgspec.field(default_factory=list[SavedRequest])
    decisions: list[SavedDecision] = msgspec.field(default_factory=list[SavedDecision])


def save(ctx: ExecutionContext) -> dict[str, object]:
    """The state of ``ctx``'s run to carry to the next one."""
    state, held = discovery(ctx), approvals(ctx)
    return {
        "active": list(state.active),
        "named": list(state.named),
        "used": list(state.used),
        "pending": [msgspec.to_builtins(entry) for entry in held.pending.values()],
        # A denial has been told during this run; an approval waits for its call.
        "decisions": [msgspec.to_builtins(d) for d in held.decisions if d.approved],
    }


def _read(state: object) -> _Saved:
    """A saved state, at most `MAX_SAVED` held calls and decisions of it (the newest:
    the rest is cut before it is read, so reading costs the same however much there is)."""
    if isinstance(state, Mapping):
        given = cast("Mapping[str, object]", state)
        state = dict(given)
        for field in ("pending", "decisions"):
            found = given.get(field)
            if not isinstance(found, list):
                continue  # msgspec says what is wrong with it
            entries = cast("list[object]", found)
            if len(entries) > MAX_SAVED:
                _log.warning(
                    "the saved ToolSearch state holds %d %s; only the newest %d are read",
                    len(entries),
                    field,
                    MAX_SAVED,
                )
                state[field] = entries[-MAX_SAVED:]
    return msgspec.convert(state, _Saved)


def load(ctx: ExecutionContext, state: object, tools: Container[str], seal: Seal) -> None:
    """Take up a saved state: found tools still in ``tools``, and the held calls and
    decisions ``seal`` sealed (the others are logged and left out; beyond `MAX_SAVED`,
    the oldest are left out too)."""
    saved = _read(state)
    current, held = discovery(ctx), approvals(ctx)
    current.active.update(dict.fromkeys(n for n in saved.active if n in tools))
    current.named.update(dict.fromkeys(n for n in saved.named if n in tools))
    current.used.update(dict.fromkeys(saved.used))
    for entry in seal.verified(saved.pending, "held call"):
        held.pending[entry.call_id] = entry
    known = {d.seal for d in held.decisions}
    held.decisions += [d for d in seal.verified(saved.decisions, "decision") if d.seal not in known]


def pending(state: object, seal: Seal) -> tuple[ApprovalRequest, ...]:
    """The held calls in a saved state that ``seal`` sealed."""
    saved = _read(state)
    return tuple(request_of(entry) for entry in seal.verified(saved.pending, "held call"))


def decide(state: object, call_id: str, decision: Approval, seal: Seal) -> object:
    """A saved state with the held call ``call_id`` decided (see ``ToolSearch.decide``)."""
    saved = _read(state)
    held = [data for data in saved.pending if data.call_id == call_id]
    if not held:
        raise ToolchainLookupError(f"no call {call_id!r} is waiting for approval")
    if not seal.matches(held[0]):
        raise ToolchainValueError(
            f"the held call {call_id!r} does not carry this ToolSearch's seal: the "
            "state was edited, or held by a process with another approval_key "
            "(give every process the same ToolSearch(approval_key=...))"
        )
    remaining = [data for data in saved.pending if data.call_id != call_id]
    decisions = [*saved.decisions, seal.decide(held[0], decision)]
    return msgspec.to_builtins(
        msgspec.structs.replace(saved, pending=remaining, decisions=decisions)
    )
