"""Approvals that wait durably: a call held for a person waits in the workflow.

``wait_for_person`` is an ``Approver`` (``ToolSearch(approve=wait_for_person)``). In a
durable run it publishes the request as the workflow's event ``gent.approvals`` and
waits for a message on the call's topic: the process may exit meanwhile, and whichever
process recovers the workflow waits on. ``decide`` sends the decision from any process
that launched DBOS on the same database. Outside a durable run it answers ``None``: the
call is held and the run pauses, as without ``agents.durable``.
"""

from __future__ import annotations

from typing import Any, cast

from dbos import DBOS, DBOSClient

from agents.durable._runner import in_workflow
from agents.durable._serializer import check_client
from toolchain import ExecutionContext, _step_seam
from toolchain.discovery import Approval, ApprovalRequest

__all__ = ["decide", "pending", "wait_for_person"]

EVENT = "gent.approvals"
"""The workflow event that lists the calls waiting for a person."""

_WAIT_SECONDS = 10 * 365 * 24 * 3600.0
"""How long a call waits for its decision: for as long as anyone might decide."""


def _topic(call_id: str, via: tuple[str, ...]) -> str:
    return "gent.approval:" + "/".join((*via, call_id))


async def wait_for_person(ctx: ExecutionContext, request: ApprovalRequest) -> Approval | None:
    """An ``Approver`` that waits for ``decide`` in a durable run (``None`` elsewhere).

    >>> import asyncio
    >>> from toolchain.discovery import ApprovalRequest
    >>> asyncio.run(wait_for_person(ExecutionContext(), ApprovalRequest("c1", "t", {}, "safe")))
    """
    runner = _step_seam.current()
    if runner is None or not in_workflow():
        return None
    lock = getattr(runner, "approvals", None)
    if lock is None:
        return None
    async with lock:  # one at a time, in the order calls ask (see StepRunner.approvals)
        waiting = [_as_event(request)]
        await DBOS.set_event_async(EVENT, waiting)
        answer = await DBOS.recv_async(_topic(request.call_id, request.via), _WAIT_SECONDS)
        await DBOS.set_event_async(EVENT, [])
    if not isinstance(answer, dict):
        return Approval.denied("no decision arrived")
    message = cast("dict[str, object]", answer)
    return Approval(bool(message.get("approved")), str(message.get("reason", "")))


async def pending(
    workflow_id: str, *, wait: float = 0.0, client: DBOSClient | None = None
) -> list[ApprovalRequest]:
    """The calls of the run ``workflow_id`` that wait for a person now (maybe none).

    ``wait``: seconds to wait for the run's first call to ask, if none asked yet. Call it
    from any process that launched DBOS on the run's database, or pass a client on that
    database (``agents.durable.client(url)``: a web app that runs no workflows).
    """
    found: object = (
        await DBOS.get_event_async(workflow_id, EVENT, timeout_seconds=wait)
        if client is None
        else await check_client(client).get_event_async(workflow_id, EVENT, timeout_seconds=wait)
    )
    if not isinstance(found, list):
        return []
    items = cast("list[object]", found)
    return [_as_request(cast("dict[str, Any]", item)) for item in items if isinstance(item, dict)]


async def decide(
    workflow_id: str,
    request: ApprovalRequest,
    decision: Approval,
    *,
    client: DBOSClient | None = None,
) -> None:
    """Send a person's decision on ``request`` (from ``pending``) to the waiting run,
    through DBOS launched here or ``client``. The run resumes in whichever process runs
    or recovers its workflow."""
    message = {"approved": decision.approved, "reason": decision.reason}
    topic = _topic(request.call_id, request.via)
    if client is None:
        await DBOS.send_async(workflow_id, message, topic)
    else:
        await check_client(client).send_async(workflow_id, message, topic)


def _as_event(request: ApprovalRequest) -> dict[str, object]:
    return {
        "call_id": request.call_id,
        "tool": request.tool,
        "args": dict(request.args),
        "risk": request.risk,
        "via": list(request.via),
    }


def _as_request(item: dict[str, Any]) -> ApprovalRequest:
    risk = item.get("risk", "safe")
    return ApprovalRequest(
        str(item.get("call_id", "")),
        str(item.get("tool", "")),
        dict(item.get("args", {})),
        risk if risk in ("safe", "moderate", "destructive") else "destructive",
        tuple(str(name) for name in item.get("via", ())),
    )
