"""Calls held for a person's approval and the decisions made on them, sealed.

A held call waits in the outermost run's state (``Approvals``): a sub-agent's held
call belongs to the conversation a person continues. Held calls and decisions leave
the run in ``extension_state`` and come back with the next one, so each carries a
seal, an HMAC of every other field under the ``approval_key`` (``Seal``): an entry
edited outside ``ToolSearch.decide``, or sealed with another key, is ignored and
logged, and approves nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import msgspec

from toolchain._approvals import PROCESS_KEY
from toolchain._approvals import Seal as _CoreSeal
from toolchain._context import ExecutionContext, StateKey
from toolchain._redact import logger
from toolchain.discovery._approval import Approval, ApprovalRequest
from toolchain.discovery._quoting import args_text, shortened

__all__ = [
    "PROCESS_KEY",
    "Approvals",
    "SavedDecision",
    "SavedRequest",
    "Seal",
    "approvals",
    "decisions_listing",
    "held_id",
    "request_of",
    "take_decision",
]

_log = logger("toolchain")


class SavedRequest(msgspec.Struct, kw_only=True):
    """A held call, as ``extension_state`` keeps it."""

    call_id: str
    tool: str
    args: dict[str, Any]
    risk: Literal["safe", "moderate", "destructive"] = "safe"
    via: list[str] = msgspec.field(default_factory=list[str])
    nonce: str = ""
    """Minted when the call is held: two holds of the same call never share a seal."""
    seal: str = ""
    """HMAC (``approval_key``) of every other field."""


class SavedDecision(SavedRequest, kw_only=True):
    """A decision on a held call, applied to the next call with the same arguments."""

    approved: bool
    reason: str = ""


_Sealed = TypeVar("_Sealed", bound=SavedRequest)


@dataclass(slots=True)
class Approvals:
    """Held calls and decisions, kept in the outermost run's state (``approvals``):
    a sub-agent's held call belongs to the conversation a person continues."""

    pending: dict[str, SavedRequest] = field(default_factory=lambda: {})
    """call id → a call held until a person decides (sealed)."""
    decisions: list[SavedDecision] = field(default_factory=lambda: [])
    """Decisions made between runs (sealed), applied to the next call with the same
    arguments."""


_APPROVALS = StateKey[Approvals]("toolchain.discovery.approvals")


def approvals(ctx: ExecutionContext) -> Approvals:
    """The held calls and decisions of the conversation ``ctx``'s run belongs to."""
    return _outermost(ctx).state.setdefault(_APPROVALS, Approvals)


def _outermost(ctx: ExecutionContext) -> ExecutionContext:
    while ctx.parent is not None:
        ctx = ctx.parent
    return ctx


class Seal:
    """Seals entries with ``key``, and tells which entries it sealed (the HMAC is the
    core's: ``toolchain._approvals.Seal``)."""

    __slots__ = ("_core",)

    def __init__(self, key: bytes) -> None:
        self._core = _CoreSeal(key)

    def hold(self, request: ApprovalRequest) -> SavedRequest:
        """``request`` as a held call, sealed (a fresh nonce: no two holds share a seal)."""
        held = SavedRequest(
            call_id=request.call_id,
            tool=request.tool,
            args=dict(request.args),
            risk=request.risk,
            via=list(request.via),
            nonce=secrets.token_hex(8),
        )
        return self._sealed(held)

    def decide(self, held: SavedRequest, decision: Approval) -> SavedDecision:
        """The decision on ``held``, sealed."""
        decided = SavedDecision(
            call_id=held.call_id,
            tool=held.tool,
            args=held.args,
            risk=held.risk,
            via=held.via,
            nonce=held.nonce,
            approved=decision.approved,
            reason=decision.reason,
        )
        return self._sealed(decided)

    def matches(self, entry: SavedRequest) -> bool:
        """Whether ``entry`` carries this key's seal."""
        return self._core.signed(msgspec.structs.replace(entry, seal=""), entry.seal)

    def verified(self, entries: Sequence[_Sealed], what: str) -> list[_Sealed]:
        """The entries whose seal matches; the others are left out, and logged once
        (how many, and the first of them), however many there are."""
        kept: list[_Sealed] = []
        refused: list[_Sealed] = []
        for entry in entries:
            (kept if self.matches(entry) else refused).append(entry)
        if refused:
            first = refused[0]
            _log.warning(
                "ignoring %d %s(s) that this ToolSearch did not seal, the first for %s "
                "(call %r): the state was edited, or sealed with another approval_key",
                len(refused),
                what,
                shortened(first.tool, 80),
                shortened(first.call_id, 80),
            )
        return kept

    def _sealed(self, entry: _Sealed) -> _Sealed:
        """``entry`` with its seal: an HMAC of everything else in it."""
        return msgspec.structs.replace(
            entry, seal=self._core.sign(msgspec.structs.replace(entry, seal=""))
        )


def request_of(data: SavedRequest) -> ApprovalRequest:
    return ApprovalRequest(data.call_id, data.tool, data.args, data.risk, tuple(data.via))


def held_id(held: Approvals, call_id: str) -> str:
    """``call_id``, or a variant no held call has: each run numbers its calls from
    ``call_1`` again, and a call an earlier run held may still wait under that id."""
    found, count = call_id, 1
    while found in held.pending:
        count += 1
        found = f"{call_id}~{count}"
    return found


def take_decision(held: Approvals, request: ApprovalRequest) -> Approval | None:
    """The decision made for a call like ``request`` between runs, used up once."""
    for position, decided in enumerate(held.decisions):
        if decided.tool == request.tool and decided.args == dict(request.args):
            del held.decisions[position]
            return Approval(decided.approved, decided.reason)
    return None


def decisions_listing(ctx: ExecutionContext) -> str:
    """Decisions a person made on held calls since the run that held them, for the prompt."""
    held = _outermost(ctx).state.get(_APPROVALS)
    if held is None or not held.decisions:  # every step of nearly every run: nothing
        return ""
    lines = [
        f"- {d.tool} {args_text(d.args)}"
        + (f" (through {' > '.join(d.via)})" if d.via else "")
        + (": approved; call it again to run it" if d.approved else ": denied")
        + (f" ({d.reason})" if d.reason else "")
        for d in held.decisions
    ]
    return "Approval decisions:\n" + "\n".join(lines)
