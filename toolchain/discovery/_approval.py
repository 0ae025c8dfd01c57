"""Approval of calls to tools that need a person's confirmation.

A tool whose ``ToolInfo.requires_confirmation`` is set does not run until an
``Approver`` says so. The approver answers each ``ApprovalRequest`` with
``Approval.granted()``, ``Approval.denied(reason)``, or ``None`` when nobody can
decide now: the call is then held, the run pauses (``stopped_by == "paused"``), and
the conversation resumes later with the decision (``ToolSearch.decide``). This holds
however deep the call is made: inside a composite tool, or in a sub-agent, whose held
call pauses its parent and waits in the parent's ``extension_state``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from toolchain._context import ExecutionContext
from toolchain.discovery._metadata import Risk

__all__ = ["Approval", "ApprovalRequest", "Approver"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A call waiting for approval: what would run, and how risky the tool is.

    ``call_id`` is the call's id, with ``~2``, ``~3`` … added when a call held in an
    earlier run of the conversation still waits under that id (text-protocol ids
    restart at ``call_1`` each run): the handle ``ToolSearch.decide`` takes. A
    composite's sub-call has the id ``<id>/<index>``. ``via`` names the sub-agents
    (``def_agent``) the call was made in, outermost first; ``()`` for a call of the
    run's own model.

    >>> ApprovalRequest("call_1", "publish_page", {"page_id": "p1"}, "moderate", ("publisher",)).via
    ('publisher',)
    """

    call_id: str
    tool: str
    args: Mapping[str, object]
    risk: Risk
    via: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's decision on one call.

    >>> Approval.denied("publishing waits for legal review").reason
    'publishing waits for legal review'
    """

    approved: bool
    reason: str = ""

    @classmethod
    def granted(cls, reason: str = "") -> Approval:
        return cls(True, reason)

    @classmethod
    def denied(cls, reason: str = "") -> Approval:
        return cls(False, reason)


Approver = Callable[
    [ExecutionContext, ApprovalRequest], "Awaitable[Approval | None] | Approval | None"
]
"""Decides a call, sync or async; ``None``: nobody can decide now (the run pauses)."""
