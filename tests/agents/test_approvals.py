"""Approvals in an agent run: a call that needs approval holds the step, the run pauses
with it in ``result.pending``, and ``agent.resume`` runs it (or answers its denial) in
the same run, without asking the model again. Both agents, text and native calls, a
scripted model and a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agents import AgentResult, Prompt, ResumeError, ToolCallingAgent, run_prompt
from agents.models import OpenAIChatModel, ScriptedModel, ScriptedReply, ToolCallRequest
from tests.support.agent_kinds import KINDS, Agent, Kind, Output, agent, answer, call
from tests.support.chat_script import calls, chat_script
from tests.support.loopback import LoopbackServer
from toolchain import (
    Approval,
    ApprovalError,
    ApprovalRequest,
    CompositeTool,
    ExecutionContext,
    JSONToolChain,
    tool,
)


class Bank:
    """``transfer`` needs approval above 100 EUR; ``balance`` never does."""

    def __init__(self) -> None:
        self.done: list[tuple[str, int]] = []

        @tool(requires_approval=lambda move: move.amount > 100)
        def transfer(to: str, amount: int) -> str:
            """Transfer money."""
            self.done.append((to, amount))
            return f"sent {amount} EUR to {to}"

        @tool
        def balance() -> int:
            """The account's balance."""
            self.done.append(("balance", 0))
            return 900

        self.transfer, self.balance = transfer, balance

    def chain(self) -> JSONToolChain:
        return JSONToolChain().register_tool(self.transfer).register_tool(self.balance)


def several(kind: Kind, *pairs: tuple[str, dict[str, object]]) -> Output:
    """One step making several calls (one action, or one native turn)."""
    if kind == "native":
        requests = tuple(
            ToolCallRequest(f"c{n}", name, json.dumps(args))
            for n, (name, args) in enumerate(pairs, 1)
        )
        return ScriptedReply(tool_calls=requests)
    body = json.dumps([{"tool": name, "args": args} for name, args in pairs])
    return f"<action>{body}</action>"


def replies_to_step(result: AgentResult[Any], kind: Kind) -> dict[str, str]:
    """What the model was told of each call of the first step, by call id."""
    if kind == "native":
        return {m.tool_call_id: m.text_content() for m in result.messages if m.role == "tool"}
    [tools_result] = result.steps[0].tool_results
    return {o.id: o.text for o in tools_result.observations}


# -- paused, then resumed --------------------------------------------------------------------


@KINDS
def test_a_held_call_pauses_the_run_and_resume_runs_it_without_asking_the_model_again(
    kind: Kind,
) -> None:
    bank = Bank()
    model = ScriptedModel(
        [
            several(kind, ("transfer", {"to": "ana", "amount": 500}), ("balance", {})),
            answer(kind, "Sent 500 EUR to Ana; 900 EUR were there before."),
        ]
    )
    runner = agent(kind, model, bank.chain())

    paused = runner.run_sync("Send Ana 500 EUR")

    assert paused.stopped_by == "paused"
    assert bank.done == [("balance", 0)]  # the step's other call finished
    [held] = paused.pending
    assert (held.tool, dict(held.args), held.via) == ("transfer", {"to": "ana", "amount": 500}, ())
    assert paused.paused == f"waiting for approval: transfer ({held.call_id})"
    assert len(model.requests) == 1

    done = runner.resume_sync(paused, {held.call_id: Approval.granted()})

    assert done.ok and done.answer == "Sent 500 EUR to Ana; 900 EUR were there before."
    assert bank.done == [("balance", 0), ("ana", 500)]
    assert len(model.requests) == 2  # one after the decision: none to make the call again
    assert done.stats["model_calls"] == 2 and len(done.steps) == 2
    told = replies_to_step(done, kind)
    assert told[held.call_id] == "sent 500 EUR to ana"
    # The model's second request holds the whole step, answered; no new user message.
    users = [m for m in done.messages if m.role == "user"]
    assert len(users) == (1 if kind == "native" else 2)  # the task (and ReAct's observation)


@KINDS
def test_a_denied_call_is_answered_with_the_reason_and_the_run_goes_on(kind: Kind) -> None:
    bank = Bank()
    model = ScriptedModel(
        [call(kind, "transfer", to="bob", amount=300), answer(kind, "Not sent: too much.")]
    )
    runner = agent(kind, model, bank.chain())
    paused = runner.run_sync("Send Bob 300 EUR")

    done = runner.resume_sync(
        paused, {paused.pending[0].call_id: Approval.denied("over the daily limit")}
    )

    assert done.ok and bank.done == []
    told = replies_to_step(done, kind)
    assert "Error: transfer was not approved: over the daily limit" in told.values()
    assert "over the daily limit" in model.requests[-1].messages[-1].text_content()


@KINDS
def test_three_held_calls_of_one_step_are_decided_independently_in_reverse_order(
    kind: Kind,
) -> None:
    bank = Bank()
    model = ScriptedModel(
        [
            several(
                kind,
                ("transfer", {"to": "ana", "amount": 200}),
                ("transfer", {"to": "bob", "amount": 300}),
                ("transfer", {"to": "eve", "amount": 400}),
            ),
            answer(kind, "Two sent, one refused."),
        ]
    )
    runner = agent(kind, model, bank.chain())
    result = runner.run_sync("Pay them")
    first, second, third = (r.call_id for r in result.pending)

    result = runner.resume_sync(result, {third: Approval.granted()})
    assert result.stopped_by == "paused" and [r.call_id for r in result.pending] == [first, second]
    result = runner.resume_sync(result, {second: Approval.denied("Bob was paid already")})
    assert [r.call_id for r in result.pending] == [first]
    assert len(model.requests) == 1  # still paused: the model was not asked
    result = runner.resume_sync(result, {first: Approval.granted()})

    assert result.ok and len(model.requests) == 2
    assert bank.done == [("eve", 400), ("ana", 200)]
    assert replies_to_step(result, kind) == {
        first: "sent 200 EUR to ana",
        second: "Error: transfer was not approved: Bob was paid already",
        third: "sent 400 EUR to eve",
    }


# -- deciding in the run ------------------------------------------------------------------------


@KINDS
@pytest.mark.parametrize("is_async", [False, True])
def test_an_agents_approver_decides_in_the_run(kind: Kind, is_async: bool) -> None:
    bank = Bank()
    asked: list[ApprovalRequest] = []

    def grant(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.granted() if request.args["to"] == "ana" else Approval.denied("no")

    async def grant_later(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        return grant(ctx, request)

    model = ScriptedModel(
        [
            several(
                kind,
                ("transfer", {"to": "ana", "amount": 200}),
                ("transfer", {"to": "bob", "amount": 300}),
            ),
            answer(kind, "Ana paid, Bob not."),
        ]
    )
    approve = grant_later if is_async else grant
    result = agent(kind, model, bank.chain(), approve=approve).run_sync("Pay them")

    assert result.ok and result.pending == ()
    assert bank.done == [("ana", 200)]
    assert [r.args["to"] for r in asked] == ["ana", "bob"]
    assert "Error: transfer was not approved: no" in replies_to_step(result, kind).values()


# -- the decisions resume refuses --------------------------------------------------------------


def _paused(kind: Kind) -> tuple[Bank, Agent, AgentResult[str]]:
    bank = Bank()
    model = ScriptedModel(
        [
            several(
                kind,
                ("transfer", {"to": "ana", "amount": 200}),
                ("transfer", {"to": "bob", "amount": 300}),
            ),
            answer(kind, "done"),
        ]
    )
    runner = agent(kind, model, bank.chain())
    return bank, runner, runner.run_sync("Pay them")


@KINDS
def test_resume_refuses_every_wrong_decision_at_once_and_approves_nothing(kind: Kind) -> None:
    bank, runner, paused = _paused(kind)
    first, second = (r.call_id for r in paused.pending)
    _, _, other = _paused(kind)

    decisions: dict[str, object] = {
        first: other.pending[0].approve(),  # made for a call of another run
        second: {"approved": "false"},  # not an Approval
        "call_99": Approval.granted(),  # no such call
    }
    with pytest.raises(ResumeError) as raised:
        runner.resume_sync(paused, decisions)  # type: ignore[arg-type]  # the mistakes under test

    assert isinstance(raised.value, ApprovalError)
    assert raised.value.refused == {
        first: "was made for a call of another run",
        second: "not an Approval but a dict: pass Approval.granted() or Approval.denied(reason)",
        "call_99": f"no call with this id is held (held: {first}, {second})",
    }
    assert bank.done == []
    # Nothing was used up: the right decisions still resume the run.
    done = runner.resume_sync(paused, {first: Approval.granted(), second: Approval.granted()})
    assert done.ok and bank.done == [("ana", 200), ("bob", 300)]


@KINDS
def test_resume_refuses_a_result_whose_held_calls_were_edited(kind: Kind) -> None:
    bank, runner, paused = _paused(kind)
    first = paused.pending[0]
    args = first.args
    assert isinstance(args, dict)
    args["amount"] = 20  # what the person approves is not what was held
    with pytest.raises(ResumeError, match="the held call was edited or forged"):
        runner.resume_sync(paused, {first.call_id: Approval.granted()})

    forged = dataclasses.replace(paused, pending=(dataclasses.replace(first, tool="balance"),))
    with pytest.raises(ResumeError, match="the held call was edited or forged"):
        runner.resume_sync(forged, {first.call_id: Approval.granted()})
    assert bank.done == []


@KINDS
def test_a_paused_result_resumes_once_and_with_its_own_agent(kind: Kind) -> None:
    bank, runner, paused = _paused(kind)
    first, second = (r.call_id for r in paused.pending)
    stranger = agent(kind, ScriptedModel([answer(kind)]), bank.chain())
    with pytest.raises(ResumeError, match="paused by another agent"):
        stranger.resume_sync(paused, {first: Approval.granted()})

    runner.resume_sync(paused, {first: Approval.granted(), second: Approval.denied()})
    with pytest.raises(ResumeError, match="resumed already"):
        runner.resume_sync(paused, {first: Approval.granted()})
    assert bank.done == [("ana", 200)]  # a decision approves once

    with pytest.raises(ResumeError, match="no call of this result waits for a decision"):
        runner.resume_sync(
            dataclasses.replace(paused, stopped_by="answer"), {first: Approval.granted()}
        )


# -- where calls come from --------------------------------------------------------------------


class Site:
    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool
        def draft(page: str) -> str:
            """Save a draft."""
            self.ran.append(f"draft {page}")
            return "saved"

        @tool(requires_approval=True)
        def publish(page: str) -> str:
            """Publish a page."""
            self.ran.append(f"publish {page}")
            return f"{page} is live"

        self.cms = CompositeTool("cms", "Site operations.", [draft, publish])


@KINDS
def test_a_composites_held_sub_call_pauses_the_run_and_runs_alone_on_resume(kind: Kind) -> None:
    site = Site()
    sub_calls = [
        {"name": "draft", "args": {"page": "home"}},
        {"name": "publish", "args": {"page": "home"}},
    ]
    model = ScriptedModel([call(kind, "cms", calls=sub_calls), answer(kind, "home is live")])
    runner = agent(kind, model, JSONToolChain().register_tool(site.cms))

    paused = runner.run_sync("Publish home")
    [held] = paused.pending
    assert (held.tool, held.via, site.ran) == ("publish", ("cms",), ["draft home"])

    done = runner.resume_sync(paused, {held.call_id: Approval.granted()})

    assert done.ok and site.ran == ["draft home", "publish home"]  # the draft ran once
    assert len(model.requests) == 2
    [told] = replies_to_step(done, kind).values()
    assert json.loads(told) == {
        "results": [
            {"name": "draft", "result": "saved"},
            {"name": "publish", "result": "home is live"},
        ]
    }


class Topic(BaseModel):
    page: str


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_the_runs_approver_decides_a_sub_agents_calls(protocol: Literal["native", "text"]) -> None:
    site = Site()
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.granted()

    kind: Kind = "native" if protocol == "native" else "react"
    child = ScriptedModel(
        [
            call(kind, "cms", calls=[{"name": "publish", "args": {"page": "faq"}}]),
            answer(kind, "faq is live"),
        ]
    )

    def publisher(args: Topic, prompt: Prompt) -> None:
        prompt.def_tool(site.cms)
        prompt.user(f"Publish {args.page}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent(
            "publisher", "Publishes pages.", Topic, publisher, model=child, protocol=protocol
        )
        prompt.user("Publish the FAQ")

    parent = ScriptedModel([call(kind, "publisher", page="faq"), answer(kind, "The FAQ is live.")])
    result = run_prompt(build, model=parent, protocol=protocol, approve=approve).run_sync()

    assert result.ok and site.ran == ["publish faq"]
    assert [(r.tool, r.via) for r in asked] == [("publish", ("publisher", "cms"))]


# -- a real server -------------------------------------------------------------------------------


def test_a_native_run_on_an_openai_compatible_server_resumes_without_a_second_call(
    loopback: LoopbackServer,
) -> None:
    bank = Bank()
    loopback.respond_with(
        chat_script(
            [
                calls(("transfer", {"to": "ana", "amount": 500}), ("balance", {})),
                "Sent 500 EUR to Ana.",
            ]
        )
    )
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_base_url)
    runner = ToolCallingAgent(model, tool_chain=bank.chain())

    paused = runner.run_sync("Send Ana 500 EUR")
    assert paused.stopped_by == "paused" and len(loopback.requests) == 1
    [held] = paused.pending
    assert held.call_id == "call_1"

    done = runner.resume_sync(paused, {held.call_id: held.approve()})

    assert done.answer == "Sent 500 EUR to Ana." and len(loopback.requests) == 2
    assert bank.done == [("balance", 0), ("ana", 500)]
    sent = loopback.requests[-1].json()["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert answers == {"call_1": "sent 500 EUR to ana", "call_2": "900"}
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
