"""Approval of calls to tools that need a person's confirmation.

A tool whose ``ToolInfo.requires_confirmation`` is set does not run until an
``Approver`` says so: ``ToolSearch(approve=...)``, else the run's ``approve=``. The
approver answers each ``ApprovalRequest`` with ``Approval.granted()``,
``Approval.denied(reason)``, or ``None`` when nobody can decide now: the call is then
held, the run pauses (``stopped_by == "paused"``, the call in ``result.pending``), and
``agent.resume(result, {call_id: Approval.granted()})`` runs it. This holds however
deep the call is made: inside a composite tool, or in a sub-agent, whose held call
pauses its parent and is listed in the parent's ``pending``.

These are the core's types (``toolchain.Approval``, ``toolchain.ApprovalRequest``), the
same classes under a second name.

>>> ApprovalRequest("call_1", "publish_page", {"page_id": "p1"}, "moderate", ("publisher",)).via
('publisher',)
>>> Approval.denied("publishing waits for legal review").reason
'publishing waits for legal review'
"""

from __future__ import annotations

# The core's types (toolchain._approvals): one Approval, one ApprovalRequest, whoever
# holds the call. Discovery fills in ``risk`` from its ``ToolInfo``.
from toolchain._approvals import Approval, ApprovalRequest, Approver

__all__ = ["Approval", "ApprovalRequest", "Approver"]
