"""What both protocols read from a request and write about a run, the same way: the
task, a person's decision on a held call, the answer as JSON, and the run's figures
(tokens, savings, held calls) beside the sealed conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from agents._errors import AgentValueError
from agents.ui._runs import Ended
from toolchain import Approval

__all__ = ["BadRequest", "answer_json", "decision_of", "snapshot_of", "task_of"]


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
        "pending": [
            {"callId": request.call_id, "tool": request.tool, "args": dict(request.args)}
            for request in ended.held
        ],
    }
