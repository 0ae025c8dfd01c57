"""Elicitation: a tool's server asks a person for input during a call (MCP).

An MCP server may ask the client for input while one of its tools runs ("confirm the
refund of 120 EUR", "which account?"), with a message and the JSON Schema of the answer
it wants. That question reaches the run's approver (``approve=``) as an
`ElicitationRequest`, the same callback and the same pause as an ``ApprovalRequest``
(of which it is one): the approver answers ``Elicitation.accepted(data)``,
``Elicitation.declined()`` or ``Elicitation.cancelled()`` (the protocol's accept,
decline and cancel), or ``None``: nobody can answer now, and the run pauses with the
question in ``result.pending``; ``resume(result, {call_id: Elicitation.accepted(...)})``
sends the answer and the tool call completes. ``Approval.granted()`` answers as an
accept with no data, ``Approval.denied(reason)`` as a decline.

>>> request = ElicitationRequest(
...     "call_1/confirm", "refund", {"order": "A7"}, message="Refund 120 EUR?",
...     schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
... )
>>> request.accept({"ok": True}).data, request.decline().action
({'ok': True}, 'decline')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from toolchain._errors import ToolchainTypeError
from toolchain._result import Approval, ApprovalRequest

__all__ = ["Elicitation", "ElicitationAction", "ElicitationRequest"]

ElicitationAction = Literal["accept", "decline", "cancel"]
"""The protocol's three answers: the data was given, the person said no, or dismissed
the question without answering."""


@dataclass(frozen=True, slots=True)
class ElicitationRequest(ApprovalRequest):
    """A question a tool's server asks during a call, waiting for an answer.

    - ``tool``, ``args``: the tool call it came during (its arguments as validated);
      ``via``: the sub-agents that call was made in.
    - ``message``: the server's question, as it wrote it (show it to the person).
    - ``schema``: the JSON Schema the answer's data must fit (an object of plain
      fields); an accepted answer is checked against it before it is sent.
    - ``call_id``: the key of its answer in ``resume(result, {call_id: ...})``
      (``<group>/<the server's key>``: not a call the model made).

    >>> ElicitationRequest("c/1", "refund", {}, message="Sure?").cancel().action
    'cancel'
    """

    message: str = ""
    schema: Mapping[str, object] = field(default_factory=dict[str, object])

    def accept(self, data: Mapping[str, object], reason: str = "") -> Elicitation:
        """``Elicitation.accepted(data)``, bound to this question (see
        ``ApprovalRequest.approve``)."""
        return Elicitation(
            True, reason, self.call_id, self.run_id, self.digest, "accept", dict(data)
        )

    def decline(self, reason: str = "") -> Elicitation:
        """``Elicitation.declined(reason)``, bound to this question."""
        return Elicitation(False, reason, self.call_id, self.run_id, self.digest, "decline")

    def cancel(self, reason: str = "") -> Elicitation:
        """``Elicitation.cancelled(reason)``, bound to this question."""
        return Elicitation(False, reason, self.call_id, self.run_id, self.digest, "cancel")


@dataclass(frozen=True, slots=True)
class Elicitation(Approval):
    """An answer to an `ElicitationRequest`: ``Elicitation.accepted(data)``,
    ``Elicitation.declined()`` or ``Elicitation.cancelled()``.

    It is an ``Approval`` (accepted: approved), so it goes wherever one goes: returned
    by the approver, or given to ``resume``. ``data`` is what the server asked for, as
    plain data fitting its schema.

    >>> Elicitation.accepted({"account": "ACME-1"}).approved
    True
    >>> Elicitation.declined("not now").action
    'decline'
    >>> Elicitation(True, action="cancel")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    toolchain._errors.ToolchainTypeError: Elicitation.approved must be True exactly when ...
    """

    action: ElicitationAction | Literal[""] = ""
    """``""`` is the action ``approved`` says: accept, or decline."""
    data: Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        Approval.__post_init__(self)  # slots: no zero-argument super() here
        action: object = self.action
        if action == "":
            object.__setattr__(self, "action", "accept" if self.approved else "decline")
        elif action not in ("accept", "decline", "cancel"):
            raise ToolchainTypeError(
                f"Elicitation.action must be 'accept', 'decline' or 'cancel', not {action!r}"
            )
        if self.approved != (self.action == "accept"):
            raise ToolchainTypeError(
                "Elicitation.approved must be True exactly when the action is 'accept'"
            )
        data = cast(object, self.data)  # whatever the caller passed
        if data is not None and not isinstance(data, Mapping):
            raise ToolchainTypeError(
                f"Elicitation.data must be a mapping of fields, not {type(data).__name__}"
            )

    @classmethod
    def accepted(cls, data: Mapping[str, object], reason: str = "") -> Elicitation:
        """The person answered with ``data`` (checked against the server's schema)."""
        return cls(True, reason, action="accept", data=dict(data))

    @classmethod
    def declined(cls, reason: str = "") -> Elicitation:
        """The person said no: the server is told ``decline``."""
        return cls(False, reason, action="decline")

    @classmethod
    def cancelled(cls, reason: str = "") -> Elicitation:
        """The person dismissed the question: the server is told ``cancel``."""
        return cls(False, reason, action="cancel")
