"""Approvals that wait durably: a call held for a person waits in the workflow.

``wait_for_person`` is an ``Approver`` (``ToolSearch(approve=wait_for_person)``). In a
durable run it publishes the request as the workflow's event ``gent.approvals`` and
waits for a message on the call's topic: the process may exit meanwhile, and whichever
process recovers the workflow waits on. ``decide`` sends the decision from any process
that launched DBOS on the same database. Outside a durable run it answers ``None``: the
call is held and the run pauses, as without ``agents.durable``. A run cancelled while it
waits (``DBOS.cancel_workflow``) stops waiting within a second or so: the call is
refused and the run cancelled, so nothing waits for ever. As the agent's ``approve=``
or ``ToolSearch``'s, the wait does not count toward the call's time limit (the chain
stops the call's clock while it is asked).

A decision is bound to the call it was made for: ``decide`` sends the call's tool and
the digest of its arguments, and the waiting call takes only a message that names both
(another is ignored and logged: it was made for another call); an ``approved`` that is
not a JSON boolean (the string ``"false"``) is a refusal, never an approval.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from typing import Any, cast

from dbos import DBOS, DBOSClient

from agents.durable._launch import require_launched
from agents.durable._runner import StepRunner, in_workflow
from agents.durable._serializer import check_client
from agents.durable._workflow import cancellation, first_of
from toolchain import Approval, ApprovalError, ApprovalRequest, ExecutionContext, to_builtins
from toolchain.runtime import args_digest, current_step_runner, logger

__all__ = ["decide", "pending", "wait_for_person"]

_log = logger("agents.durable")

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
    digest = _digest_of(request)
    topic = _topic(request.call_id, request.via)
    cut_before = isinstance(runner, StepRunner) and runner.has_step(_CUT_STEP + topic)
    async with lock:  # one at a time, in the order calls ask (see StepRunner.approvals)
        await DBOS.set_event_async(EVENT, [_as_event(request, digest)])
        if cut_before:
            # The wait was cut before the process stopped, and the model was told so: a
            # replay sees the same, not a decision sent since. The ids the wait's recv
            # took (its own and its timeout's) are drawn, so later steps keep theirs.
            DBOS.reserve_step()
            DBOS.reserve_step()
            await _cut(topic)
            return Approval.denied(_CUT_SHORT)
        while True:
            answer = await _answer(topic)
            if answer is _CUT:
                # Recorded even as the call is cut off: the event lists the call no
                # more, and a replay reads the same outcome (above).
                await asyncio.shield(_cut(topic))
                return Approval.denied(_CUT_SHORT)
            if answer is _CANCELLED:
                root = ctx
                while root.parent is not None:
                    root = root.parent
                root.cancel("the durable run was cancelled while a call waited for approval")
                return Approval.denied("the run was cancelled")
            decision = _decision(answer, request, digest)
            if decision is not None:  # else a message for another call: wait on
                break
        await DBOS.set_event_async(EVENT, [])
    return decision


_CUT_STEP = "approval-cut:"
"""The step that records a wait cut short (by the run's cancellation), by its topic."""


async def _cut(topic: str) -> None:
    """A wait cut short, recorded: the event lists no call, and a step says so."""
    await DBOS.set_event_async(EVENT, [])

    def cut() -> bool:
        return True

    await DBOS.run_step_async({"name": _CUT_STEP + topic}, cut)


def _decision(answer: object, request: ApprovalRequest, digest: str) -> Approval | None:
    """The decision a message brings on ``request``, or None (logged) when it was made
    for another call: another tool, other arguments, or none named (a message sent by
    hand, or by an older ``decide``). A decision whose ``approved`` is not a JSON
    ``true`` / ``false`` (the string ``"false"``, say) approves nothing: it is read as
    a denial, saying why."""
    message = cast("dict[str, object]", answer) if isinstance(answer, dict) else {}
    if message.get("tool") != request.tool or message.get("digest") != digest:
        _log.error(
            "ignoring a decision sent for call %s of run %s: it was not made for this "
            "call of %s with these arguments; the call waits for its own decision",
            request.call_id[:80],
            DBOS.workflow_id,
            request.tool,
        )
        return None
    approved = message.get("approved")
    if approved is not True and approved is not False:
        _log.error(
            "the decision sent for call %s (%s) has an approved field that is not true or "
            "false (%s): the call is refused",
            request.call_id[:80],
            request.tool,
            type(approved).__name__,
        )
        return Approval.denied("its decision could not be read (approved was not true or false)")
    reason = message.get("reason")
    return Approval(approved, reason if isinstance(reason, str) else "")


def _digest_of(request: ApprovalRequest) -> str:
    """The digest of ``request``'s arguments: the one the core made, or (a request made
    by an extension's own check) of its arguments as plain data."""
    if request.digest:
        return request.digest
    try:
        return args_digest(to_builtins(dict(request.args)))
    except TypeError:  # not plain data: no decision can name it but by this text
        return args_digest(repr(sorted(request.args.items())))


_CANCELLED = object()
_CUT = object()
_CUT_SHORT = "the wait for a decision was cut short: the run was cancelled"


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
        # The chain cut the call (the run's cancellation): the call was never
        # approved. (Its time limit does not: the clock stops while a person decides.)
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
    given = cast(object, decision)  # whatever the caller passed: checked
    if not isinstance(given, Approval):
        raise ApprovalError({request.call_id[:80]: f"not an Approval but a {type(given).__name__}"})
    digest = _digest_of(dataclasses.replace(request, digest=""))
    if request.digest and request.digest != digest:
        raise ApprovalError(
            {
                request.call_id[:80]: "its arguments are not the ones listed by pending(): "
                "decide on the request pending() gave"
            }
        )
    if (decision.call_id and decision.call_id != request.call_id) or (
        decision.digest and decision.digest != digest
    ):
        raise ApprovalError(
            {request.call_id[:80]: "the decision was made for another call or other arguments"}
        )
    # Bound to the call's tool and arguments: the run applies it to that call only.
    message = {
        "approved": decision.approved,
        "reason": decision.reason,
        "tool": request.tool,
        "digest": digest,
    }
    topic = _topic(request.call_id, request.via)
    if client is None:
        require_launched("send a decision")
        await DBOS.send_async(workflow_id, message, topic)
    else:
        await check_client(client).send_async(workflow_id, message, topic)


def _as_event(request: ApprovalRequest, digest: str) -> dict[str, object]:
    try:
        args = to_builtins(dict(request.args))
    except TypeError:  # not plain data: listed as text
        args = {key: repr(value) for key, value in request.args.items()}
    return {
        "call_id": request.call_id,
        "tool": request.tool,
        "args": args,
        "risk": request.risk,
        "via": list(request.via),
        "digest": digest,
        "run_id": request.run_id,
    }


def _as_request(item: dict[str, Any]) -> ApprovalRequest:
    risk = item.get("risk", "safe")
    return ApprovalRequest(
        str(item.get("call_id", "")),
        str(item.get("tool", "")),
        dict(item.get("args", {})),
        risk if risk in ("safe", "moderate", "destructive") else "destructive",
        tuple(str(name) for name in item.get("via", ())),
        str(item.get("digest", "")),
        str(item.get("run_id", "")),
    )
