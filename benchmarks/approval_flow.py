"""Approvals: the requests and tokens of a run whose one call waits for a person, before
(the conversation continued by a new run: the model is asked again and makes the call
again) and after (``agent.resume`` runs the held call itself).

The task: look order A17 up, then refund it; the refund needs a person's approval.
A scripted model plays it in both agents (``ReActAgent``, text mode;
``ToolCallingAgent``, native mode):

* before: the way approvals went before ``resume`` (``ToolSearch``'s own flow until it
  moved onto the core's): the call is held and the run pauses; a new run continues the
  conversation ("Approved.", with the person's decision as its approver), in which the
  model must make the call again, and then answers: four requests.
* after: the refund has ``requires_approval=True``. The call is held and the run
  pauses; ``agent.resume`` runs it and the model answers: three requests.
* after, ToolSearch: the refund is a ``ToolInfo(requires_confirmation=True)`` of a
  ``ToolSearch`` index (every tool shown, no search needed), held and resumed the same
  way: three requests.

Tokens are o200k (offline), as in ``benchmarks.discovery_tokens``: each request's
messages and, in native mode, its tool specs, summed over the whole flow (no prompt
cache assumed). Expected: one request fewer per approval, and the tokens of that request.

Run alone with ``python -m benchmarks.approval_flow``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from agents import AgentResult, ReActAgent, ToolCallingAgent
from agents.models import Message, ScriptedModel, ScriptedReply
from benchmarks._timing import Settings, render_table, verdict
from toolchain import Approval, ApprovalRequest, Approver, Extension, JSONToolChain, tool
from toolchain.discovery import ToolIndex, ToolInfo, ToolSearch
from toolchain.runtime import count_tokens

Mode = Literal["text", "native"]
Flow = Literal["before", "after", "after, ToolSearch"]

TASK = "Order A17 arrived broken: refund it."
ANSWER = "Refunded 80 EUR on order A17."


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up."""
    return {"order_id": order_id, "paid_eur": 80, "status": "delivered damaged"}


def _refund(order_id: str, amount_eur: int) -> str:
    """Refund an order."""
    return f"refunded {amount_eur} EUR on {order_id}"


def _player(mode: Mode) -> ScriptedModel:
    """The model: look the order up, refund it (again when told it was approved), answer."""

    def act(name: str, args: dict[str, object]) -> str | ScriptedReply:
        if mode == "native":
            return ScriptedModel.call(name, args)
        return f"<action>{json.dumps({'tool': name, 'args': args})}</action>"

    def reply(messages: Sequence[Message]) -> str | ScriptedReply:
        said = [m.text_content() for m in messages if m.role in ("user", "tool")]
        if any("refunded 80 EUR" in text for text in said):
            return ANSWER if mode == "native" else f"<answer>{ANSWER}</answer>"
        if "Approved." in said[-1] or any("paid_eur" in text for text in said):
            return act("refund", {"order_id": "A17", "amount_eur": 80})
        return act("lookup_order", {"order_id": "A17"})

    return ScriptedModel(reply)


@dataclass(frozen=True, slots=True)
class Counted:
    """One flow's requests, how many refunds ran, and whether the run answered."""

    requests: list[int]
    """Input tokens of each request."""
    refunds: int
    answered: bool


def run_flow(mode: Mode, flow: Flow) -> Counted:
    """The task in ``mode`` the ``before`` or the ``after`` way, its requests counted."""
    model = _player(mode)
    refunds: list[int] = []

    def refund(order_id: str, amount_eur: int) -> str:
        """Refund an order."""
        refunds.append(amount_eur)
        return _refund(order_id, amount_eur)

    chain = JSONToolChain().register_tool(lookup_order)
    result: AgentResult[str]
    if flow == "before":
        chain.register_tool(tool(requires_approval=True)(refund))
        paused = _agent(mode, model, chain).run_sync(TASK)
        (held,) = paused.pending
        decided = {(held.tool, json.dumps(dict(held.args), sort_keys=True)): Approval.granted()}

        def person(ctx: object, request: ApprovalRequest) -> Approval | None:
            """The person's decision, applied when the model makes the same call again."""
            return decided.pop((request.tool, json.dumps(dict(request.args), sort_keys=True)), None)

        runner = _agent(mode, model, chain, approve=person)
        result = runner.run_sync("Approved.", history=paused.messages)
    else:
        if flow == "after":
            chain.register_tool(tool(requires_approval=True)(refund))
            runner = _agent(mode, model, chain)
        else:
            info = [ToolInfo("refund", requires_confirmation=True)]
            runner = _agent(
                mode, model, chain, [ToolSearch(ToolIndex([tool(refund)], info), defer=False)]
            )
        paused = runner.run_sync(TASK)
        result = runner.resume_sync(paused, {r.call_id: Approval.granted() for r in paused.pending})
    requests = [
        _tokens(mode, request.messages, request.options.tools) for request in model.requests
    ]
    return Counted(requests, len(refunds), result.answer == ANSWER)


def _agent(
    mode: Mode,
    model: ScriptedModel,
    chain: JSONToolChain,
    extensions: Sequence[Extension] = (),
    approve: Approver = lambda ctx, request: None,  # nobody decides in the run: held
) -> ReActAgent[str] | ToolCallingAgent[str]:
    if mode == "native":
        return ToolCallingAgent(model, tool_chain=chain, extensions=extensions, approve=approve)
    return ReActAgent(model, tool_chain=chain, extensions=extensions, approve=approve)


def _tokens(mode: Mode, messages: Sequence[Message], specs: Sequence[object]) -> int:
    parts = [msgspec.json.encode(specs).decode()] if mode == "native" else []
    for message in messages:
        calls = "".join(f"{c.name}{c.arguments}" for c in message.tool_calls)
        parts.append(f"{message.role}:{message.text_content()}{calls}")
    return count_tokens("\n".join(parts))


def run(settings: Settings) -> None:
    """The approved refund's requests and tokens, before and after, in both agents."""
    del settings  # token counts do not depend on timing settings
    print("== Approvals: a call approved by a person, before (asked again) and after (resume) ==")
    print(f"task: {TASK!r}; the refund waits for a person, who approves it")
    print("o200k tokens (offline) of every request (messages, and native tool specs)")
    print()
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for mode in ("text", "native"):
        agent = "ReActAgent (text)" if mode == "text" else "ToolCallingAgent (native)"
        before, after = run_flow(mode, "before"), run_flow(mode, "after")
        searched = run_flow(mode, "after, ToolSearch")
        for name, counted in (
            ("before: a new run, asked again", before),
            ("after: resume", after),
            ("after: resume, ToolSearch", searched),
        ):
            rows.append(
                [
                    agent,
                    name,
                    str(len(counted.requests)),
                    ", ".join(f"{n:,}" for n in counted.requests),
                    f"{sum(counted.requests):,}",
                    str(counted.refunds),
                    "yes" if counted.answered else "NO",
                ]
            )
        fewer = len(before.requests) - len(after.requests)
        saved = sum(before.requests) - sum(after.requests)
        ok = (
            fewer == 1
            and len(searched.requests) == len(after.requests)
            and before.refunds == after.refunds == searched.refunds == 1
            and after.answered
            and searched.answered
        )
        verdicts.append(
            f"{agent}: {fewer} request(s) fewer, {saved:,} input tokens fewer "
            f"({100.0 * saved / sum(before.requests):.1f} %); ToolSearch's the same "
            f"({len(searched.requests)} requests); the refund ran once in each "
            f"(target: one request fewer per approval): {verdict(ok)}"
        )
    headers = [
        "agent (mode)",
        "flow",
        "requests",
        "input tokens per request",
        "in all",
        "refunds",
        "answered",
    ]
    print(render_table(headers, rows, "llrlrrl"))
    print()
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.approval_flow")
