"""Approvals that wait durably: a call held for a person waits in the workflow.

``wait_for_person`` is an ``Approver`` (``ToolSearch(approve=wait_for_person)``). In a
durable run it publishes the request as the workflow's event ``gent.approvals`` and
waits for a message on the call's topic: the process may exit meanwhile, and whichever
process recovers the workflow waits on. ``decide`` sends the decision from any process
that launched DBOS on the same database. Outside a durable run it answers ``None``: the
call is held and the run pauses, as without ``agents.durable``. A run cancelled while it
waits (``DBOS.cancel_workflow``) stops waiting within a second or so: the call is
refused and the run cancelled, so nothing waits for ever. The wait counts toward the
call's time limit (the chain's, 60 s by default: the chain times a call's approval with
it); past it the call is refused, saying so: give the chain ``timeout=None`` to wait for
as long as a person takes.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any, cast

from dbos import DBOS, DBOSClient

from agents.durable._launch import require_launched
from agents.durable._runner import in_workflow
from agents.durable._serializer import check_client
from agents.durable._workflow import cancellation, first_of
from toolchain import ExecutionContext
from toolchain.discovery import Approval, ApprovalRequest
from toolchain.runtime import current_step_runner

__all__ = ["decide", "pending", "wait_for_person"]

_ENDED = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")

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
    runner = current_step_runner()
    if runner is None or not in_workflow():
        return None
    lock = getattr(runner, "approvals", None)
    if lock is None:
        return None
    async with lock:  # one at a time, in the order calls ask (see StepRunner.approvals)
        waiting = [_as_event(request)]
        await DBOS.set_event_async(EVENT, waiting)
        answer = await _answer(_topic(request.call_id, request.via))
        if answer is _CUT:
            return Approval.denied(_CUT_SHORT)
        if answer is _CANCELLED:
            root = ctx
            while root.parent is not None:
                root = root.parent
            root.cancel("the durable run was cancelled while a call waited for approval")
            return Approval.denied("the run was cancelled")
        await DBOS.set_event_async(EVENT, [])
    if not isinstance(answer, dict):
        return Approval.denied("no decision arrived")
    message = cast("dict[str, object]", answer)
    return Approval(bool(message.get("approved")), str(message.get("reason", "")))


_CANCELLED = object()
_CUT = object()
_CUT_SHORT = (
    "the wait for a decision was cut short: by the call's time limit (the tool's "
    "timeout, else the chain's, 60 s by default; give the chain timeout=None to wait "
    "longer) or by the run's cancellation"
)


async def _answer(topic: str) -> object:
    """The message on ``topic``, or ``_CANCELLED`` once the workflow is cancelled."""
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None

    async def status() -> str | None:
        found = await DBOS.get_workflow_status_async(workflow_id)
        return None if found is None else found.status

    received = asyncio.ensure_future(DBOS.recv_async(topic, _WAIT_SECONDS))
    # Outside the workflow's context: a status read made in it would be recorded as a
    # step, a different number of them on every replay.
    watched = contextvars.Context().run(asyncio.ensure_future, cancellation(status))
    try:
        answered = await first_of(received, watched)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the run's own task (a shutdown): the run stays pending, to recover
        # The chain cut the call (its timeout, the run's cancellation): the call was
        # never approved. The chain's timeout covers a call's checks, approvals too.
        return _CUT
    return received.result() if answered else _CANCELLED


async def pending(
    workflow_id: str, *, wait: float = 0.0, client: DBOSClient | None = None
) -> list[ApprovalRequest]:
    """The calls of the run ``workflow_id`` that wait for a person now (maybe none).

    ``wait``: seconds to wait for the run's first call to ask, if none asked yet. Call it
    from any process that launched DBOS on the run's database, or pass a client on that
    database (``agents.durable.client(url)``: a web app that runs no workflows).
    """
    if client is None:
        require_launched("list the calls waiting for a person")
    found: object = (
        await DBOS.get_event_async(workflow_id, EVENT, timeout_seconds=wait)
        if client is None
        else await check_client(client).get_event_async(workflow_id, EVENT, timeout_seconds=wait)
    )
    if not isinstance(found, list) or not found:
        return []
    # The event still lists the call of a run that ended (was cancelled) as it waited.
    ran = (
        await DBOS.get_workflow_status_async(workflow_id)
        if client is None
        else await (await client.retrieve_workflow_async(workflow_id)).get_status()
    )
    if ran is None or ran.status in _ENDED:
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
        require_launched("send a decision")
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
