"""A durable run paused on held calls, and the decisions that resume it, across processes.

A call whose tool ``requires_approval``, in a run with no approver (or one that answers
``None``), is held: the run ends its step paused, as any run does (``agents._resume``).
A durable run's workflow does not end there: it publishes the paused result as its
event ``gent.paused`` (``{"n": pause number, "result": ...}``) and waits, inside the
workflow, for decisions on the topic ``gent.decisions``. ``DurableAgent.run`` (and
``DurableRun.result``) return that paused result; ``DurableAgent.resume(result,
decisions)``, in any process launched on the same database, checks the decisions
(`message`) and sends them; the workflow takes them (`taken`), resumes the run in
whichever process runs it (the one that paused it, or the one that took it over), and
the caller waits for its next pause or its end.

Each held call in the published result is sealed with the database's key
(``agents.durable._keys``) under the pause's number, so a result edited or forged on
its way to ``resume`` approves nothing, and a result of an earlier pause is refused. A
decision travels bound to the held call's tool and the digest of its arguments: the
workflow applies it only to the call that was shown (a message for another call, or
whose ``approved`` is not a JSON ``true`` / ``false``, is ignored and logged), and binds
it to the live call's id, run and digest before the core applies it. The approved call
runs as a step of the workflow: a crash after it ran replays its outcome. An answer to
an MCP server's question (an ``Elicitation``) travels with its action and data, and is
one again in the workflow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, cast

from agents._resume import ResumeError, paused_of
from agents.result import AgentResult
from toolchain import Approval, ApprovalError, ApprovalRequest, Elicitation, to_builtins
from toolchain.runtime import Seal, check_decisions, logger

__all__ = ["EVENT", "TOPIC", "message", "shown", "taken"]

_log = logger("agents.durable")

EVENT = "gent.paused"
"""The workflow event holding the run's latest pause: ``{"n": ..., "result": ...}``."""
TOPIC = "gent.decisions"
"""The topic decisions for a paused run are sent on."""


def shown(result: AgentResult[Any], pause: int, key: bytes) -> AgentResult[Any]:
    """``result`` as it is handed out: each held call sealed with ``key`` under the
    pause number ``pause`` (the seal the chain made is this process's alone)."""
    seal = Seal(key)
    pending = tuple(
        seal.hold(dataclasses.replace(request, seal=""), str(pause)) for request in result.pending
    )
    return dataclasses.replace(result, pending=pending)


def message(result: object, decisions: object, key: bytes) -> tuple[str, int, dict[str, object]]:
    """The run, the pause, and the message that decides it, once every decision was
    checked against ``result``'s held calls; `ResumeError` (approving nothing) else."""
    paused = paused_of(result)
    seal = Seal(key)
    try:
        decided = check_decisions(paused.pending, decisions, seal)
    except ApprovalError as error:
        raise ResumeError(error.refused) from None
    nonces = {seal.nonce_of(request) for request in paused.pending}
    runs = {request.run_id for request in paused.pending}
    if len(nonces) != 1 or len(runs) != 1:
        raise ResumeError({"*": "the held calls come from different pauses"})
    pause = nonces.pop()
    if pause is None or not pause.isdigit():
        raise ResumeError({"*": "the held calls were not sealed by a durable run"})
    held = {request.call_id: request for request in paused.pending}
    sent: dict[str, object] = {}
    for call_id, decision in decided.items():
        entry: dict[str, object] = {
            "approved": decision.approved,
            "reason": decision.reason,
            "tool": held[call_id].tool,
            "digest": held[call_id].digest,
        }
        if isinstance(decision, Elicitation):  # an answer to a server's question
            entry["action"] = decision.action
            if decision.data is not None:
                entry["data"] = to_builtins(dict(decision.data))
        sent[call_id] = entry
    return runs.pop(), int(pause), {"pause": int(pause), "decisions": sent}


def taken(
    sent: object, pause: int, pending: tuple[ApprovalRequest, ...]
) -> dict[str, Approval] | None:
    """The decisions of the message ``sent`` for the live held calls ``pending``, each
    bound to its call, run and arguments; None (logged) when the message is not one for
    this pause, or names a call that is not held with those arguments."""
    if not isinstance(sent, dict):
        _log.error("ignoring a message on %s that is not a JSON object of decisions", TOPIC)
        return None
    found = cast("dict[str, object]", sent)
    if found.get("pause") != pause:
        _log.warning(
            "ignoring decisions sent for pause %r of this run: it waits on pause %d "
            "(they were sent for a pause resumed already)",
            found.get("pause"),
            pause,
        )
        return None
    given = found.get("decisions")
    if not isinstance(given, dict) or not given:
        _log.error("ignoring a message on %s without decisions", TOPIC)
        return None
    held = {request.call_id: request for request in pending}
    decided: dict[str, Approval] = {}
    for call_id, body in cast("dict[object, object]", given).items():
        request = held.get(call_id) if isinstance(call_id, str) else None
        entry = cast("dict[str, object]", body) if isinstance(body, dict) else {}
        why = _refused(request, entry)
        if why is not None or request is None:
            _log.error(
                "ignoring decisions sent to a paused durable run: the one for call %r %s; "
                "nothing was approved",
                str(call_id)[:80],
                why,
            )
            return None
        decided[request.call_id] = _decision(request, entry)
    return decided


def _decision(request: ApprovalRequest, entry: Mapping[str, object]) -> Approval:
    """The checked ``entry`` as the decision it carries, bound to ``request``: an
    ``Elicitation`` when it answers a question (its action and data), else an
    ``Approval``."""
    reason = entry.get("reason")
    why = reason if isinstance(reason, str) else ""
    approved = cast(bool, entry["approved"])
    action = entry.get("action")
    if "action" not in entry:
        return Approval(approved, why, request.call_id, request.run_id, request.digest)
    data = entry.get("data")
    return Elicitation(
        approved,
        why,
        request.call_id,
        request.run_id,
        request.digest,
        action=cast("Literal['accept', 'decline', 'cancel']", action),
        data=cast("dict[str, object]", data) if isinstance(data, dict) else None,
    )


def _refused(request: ApprovalRequest | None, entry: Mapping[str, object]) -> str | None:
    if request is None:
        return "names no held call"
    if entry.get("tool") != request.tool or entry.get("digest") != request.digest:
        return "was made for another call (another tool, or other arguments)"
    approved = entry.get("approved")
    if approved is not True and approved is not False:
        return f"has an approved field that is not true or false ({type(approved).__name__})"
    if "action" in entry:
        action = entry.get("action")
        if action not in ("accept", "decline", "cancel") or (action == "accept") != approved:
            return "has an action that is not accept, decline or cancel as approved says"
        if "data" in entry and not isinstance(entry.get("data"), dict):
            return "has data that is not a JSON object"
    return None
