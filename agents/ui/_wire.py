"""What both protocols read from a request and write about a run, the same way: the
task, a person's decision on a held call or answer to a server's question, the answer
as JSON, and the run's figures (tokens, savings, held calls) beside the sealed
conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from agents._errors import AgentValueError
from agents.ui._runs import Ended
from toolchain import Approval, ApprovalRequest, ArgumentsError, Elicitation, ElicitationRequest

__all__ = [
    "BadRequest",
    "answer_json",
    "answer_of",
    "answer_schema",
    "decision_of",
    "snapshot_of",
    "task_of",
]


class BadRequest(AgentValueError):
    """A request no run can start from: no task, a malformed decision, a chat whose
    last message decides nothing. Told to the client as the protocol's error."""


def task_of(text: str) -> str:
    """The user's message as the run's task; `BadRequest` when it is empty."""
    if not text.strip():
        raise BadRequest("the user message is empty: nothing to run")
    return text


def decision_of(payload: object) -> Approval:
    """A person's decision on one held call: ``{"approved": true}`` grants it,
    ``{"approved": false, "reason": "..."}`` denies it. Anything else (``"false"`` as a
    string, say) is a `BadRequest`: a decision is never guessed.

    >>> decision_of({"approved": True}).approved
    True
    >>> decision_of({"approved": False, "reason": "not today"}).reason
    'not today'
    >>> decision_of({"approved": "false"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agents.ui._wire.BadRequest: a decision is ..., not {'approved': 'false'}
    """
    if isinstance(payload, dict):
        fields = cast(Mapping[str, object], payload)
        approved, reason = fields.get("approved"), fields.get("reason", "")
        if approved is True and set(fields) <= {"approved", "reason"}:
            return Approval.granted()
        if approved is False and isinstance(reason, str):
            return Approval.denied(reason or "the person denied this call")
    raise BadRequest(
        'a decision is {"approved": true} or {"approved": false, "reason": "..."}, '
        f"not {payload!r}"
    )


def answer_of(request: ApprovalRequest | None, payload: object) -> Approval:
    """A person's answer to the held ``request`` (None: nothing with its id is held, and
    the run refuses it as it refuses any decision for no held call).

    A server's question (`ElicitationRequest`) takes the MCP answer's own shape:
    ``{"action": "accept", "content": {...}}`` (the content checked against the
    question's schema first: `BadRequest` saying which field and why, and nothing is
    sent), ``{"action": "decline"}`` or ``{"action": "cancel"}``; bound to the question
    (``request.accept``). A held call takes `decision_of`'s.

    >>> question = ElicitationRequest("q/1", "ship", {}, message="Where to?", schema={
    ...     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    >>> answer = answer_of(question, {"action": "accept", "content": {"city": "Lyon"}})
    >>> answer.action, answer.data
    ('accept', {'city': 'Lyon'})
    >>> answer_of(question, {"action": "accept", "content": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agents.ui._wire.BadRequest: the answer does not fit the schema the question asked for: ...
    """
    asked = isinstance(request, ElicitationRequest)
    if not asked and (request is not None or not _answer_shaped(payload)):
        return decision_of(payload)
    fields: Mapping[str, object] = (
        cast(Mapping[str, object], payload) if isinstance(payload, dict) else {}
    )
    action, content = fields.get("action"), fields.get("content")
    if set(fields) <= {"action", "content"}:
        if action in ("decline", "cancel") and content is None:
            if isinstance(request, ElicitationRequest):
                return request.decline() if action == "decline" else request.cancel()
            return Elicitation.declined() if action == "decline" else Elicitation.cancelled()
        if action == "accept" and isinstance(content, dict):
            data = cast(dict[str, object], content)
            if isinstance(request, ElicitationRequest):
                return request.accept(_fitted(request, data))
            return Elicitation.accepted(data)
    raise BadRequest(
        'an answer to a question is {"action": "accept", "content": {...}}, '
        f'{{"action": "decline"}} or {{"action": "cancel"}}, not {payload!r}'
    )


def _answer_shaped(payload: object) -> bool:
    return isinstance(payload, dict) and "action" in cast(Mapping[str, object], payload)


def _fitted(request: ElicitationRequest, content: dict[str, object]) -> dict[str, object]:
    """``content`` as the question's schema reads it; `BadRequest` when it does not fit."""
    from toolchain.mcp import SchemaCodec  # a question comes from an MCP server only

    try:
        return SchemaCodec(request.schema, request.tool).validate(content)
    except ArgumentsError as error:
        raise BadRequest(
            f"the answer does not fit the schema the question asked for: {error}"
        ) from None


def answer_schema(question: ElicitationRequest) -> dict[str, object]:
    """The JSON Schema of an answer to ``question`` (`answer_of`): its ``content`` is
    the server's own schema, for a client to build its form from."""
    return {
        "type": "object",
        "properties": {
            "action": {"enum": ["accept", "decline", "cancel"]},
            "content": dict(question.schema),
        },
        "required": ["action"],
    }


def answer_json(answer: object) -> object:
    """The run's answer as plain JSON data (a typed answer's model dumped)."""
    dump = getattr(answer, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if answer is None or isinstance(answer, str | int | float | bool | list | dict):
        return cast(object, answer)
    return str(answer)


def snapshot_of(ended: Ended, sealed: dict[str, object]) -> dict[str, object]:
    """What the client keeps after a run: the sealed conversation (``gent``, sent back
    with the next request) and the run's figures, for showing."""
    result = ended.result
    return {
        "gent": sealed,
        "stoppedBy": result.stopped_by,
        "usage": {
            "inputTokens": result.usage.input_tokens,
            "outputTokens": result.usage.output_tokens,
        },
        "savings": {
            name: {"keptOut": saved.kept_out, "cost": saved.cost, "net": saved.net}
            for name, saved in result.savings.items()
        },
        "pending": [_pending(request) for request in ended.held],
    }


def _pending(request: ApprovalRequest) -> dict[str, object]:
    held: dict[str, object] = {
        "callId": request.call_id,
        "tool": request.tool,
        "args": dict(request.args),
    }
    if isinstance(request, ElicitationRequest):
        held.update(question=request.message, schema=dict(request.schema))
    return held
