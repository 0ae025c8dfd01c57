"""MCP elicitation is the approvals' pause: a real MCP server (``elicit_server.py``, the
official SDK's ``MCPServer``, started as a process over stdio) asks for input during a
tool call; the question reaches the run's ``approve`` callback as an
``ElicitationRequest``, is answered in the run, or pauses it with the question in
``result.pending`` until ``agent.resume`` sends the answer. Both protocol generations:
``auto`` negotiates 2026-07-28 (an "input required" result, retried with the answer),
``legacy`` 2025-11-25 (an ``elicitation/create`` request the server waits on)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel

from agents import AgentResult, Prompt, ReActAgent, ToolCallingAgent, run_prompt
from agents.models import ScriptedModel
from tests.support.agent_kinds import call
from toolchain import (
    Approval,
    ApprovalRequest,
    Elicitation,
    ElicitationRequest,
    ExecutionContext,
    JSONToolChain,
)
from toolchain.mcp import MCPServer

SHOP = Path(__file__).with_name("elicit_server.py")


@pytest.fixture(params=["auto", "legacy"])
async def shop(request: pytest.FixtureRequest) -> AsyncIterator[MCPServer]:
    server = MCPServer.stdio(sys.executable, [str(SHOP)], mode=request.param)
    async with server:
        yield server


class Task(BaseModel):
    task: str


def tool_text(result: AgentResult[Any]) -> str:
    return [m.text_content() for m in result.messages if m.role == "tool"][-1]


async def refunds(shop: MCPServer) -> int:
    """How many refunds the server made (its own count)."""
    [counter] = [t for t in shop.tools() if t.name == "refunds"]
    result = await counter.call(ExecutionContext(), {})
    counted = cast("dict[str, int]", result.text)
    return counted["result"]


async def test_a_servers_question_reaches_the_approver_and_its_answer_is_sent(
    shop: MCPServer,
) -> None:
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        assert isinstance(request, ElicitationRequest)
        return request.accept({"ok": True})

    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Refunded."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()), approve=approve)

    result = await agent.run("Refund A7")

    assert result.answer == "Refunded." and '"refunded A7"' in tool_text(result)
    [question] = asked
    assert isinstance(question, ElicitationRequest)
    assert (question.tool, dict(question.args), question.message) == (
        "refund",
        {"order": "A7"},
        "Refund order A7?",
    )
    properties = question.schema["properties"]
    assert isinstance(properties, dict) and properties["ok"]["type"] == "boolean"
    assert await refunds(shop) == 1


async def test_with_nobody_to_answer_the_run_pauses_and_resume_sends_the_answer(
    shop: MCPServer,
) -> None:
    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Refunded."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()))

    paused = await agent.run("Refund A7")

    assert paused.stopped_by == "paused" and await refunds(shop) == 0
    [question] = paused.pending
    assert isinstance(question, ElicitationRequest)
    assert (question.tool, question.message, question.via) == ("refund", "Refund order A7?", ())
    assert paused.paused == f"waiting for an answer: refund ({question.call_id})"

    done = await agent.resume(paused, {question.call_id: question.accept({"ok": True})})

    assert done.answer == "Refunded." and '"refunded A7"' in tool_text(done)
    assert len(model.requests) == 2  # the model was not asked to call refund again
    assert await refunds(shop) == 1  # and the server refunded once


@pytest.mark.parametrize("answer", [Elicitation.declined(), Elicitation.cancelled("later")])
async def test_a_declined_or_cancelled_question_is_told_to_the_server(
    shop: MCPServer, answer: Elicitation
) -> None:
    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Kept it."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()))
    paused = await agent.run("Refund A7")
    [question] = paused.pending

    done = await agent.resume(paused, {question.call_id: answer})

    assert done.answer == "Kept it." and await refunds(shop) == 0
    assert f"kept A7: the customer answered {answer.action}" in tool_text(done)


async def test_an_answer_that_does_not_fit_the_schema_fails_the_call_and_the_run_goes_on(
    shop: MCPServer,
) -> None:
    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        assert isinstance(request, ElicitationRequest)
        return Elicitation.accepted({"street": "Main St 1"})  # no city

    model = ScriptedModel([ScriptedModel.call("ship", order="A7"), "I need the city."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()), approve=approve)

    result = await agent.run("Ship A7")

    assert result.answer == "I need the city."
    told = tool_text(result)
    assert "does not fit the schema it asked for" in told
    assert "city: required field is missing" in told
    [error] = [e for e in result.steps[0].tool_results[0].raw.errors if e is not None]
    assert error.kind == "tool_error"


async def test_an_unfit_answer_given_to_resume_fails_the_call_the_same_way(
    shop: MCPServer,
) -> None:
    model = ScriptedModel([ScriptedModel.call("ship", order="A7"), "I need the city."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()))
    paused = await agent.run("Ship A7")
    [question] = paused.pending
    assert isinstance(question, ElicitationRequest) and question.message == (
        "Where should order A7 go?"
    )

    done = await agent.resume(paused, {question.call_id: question.accept({"street": 12})})

    assert done.answer == "I need the city."
    assert "street: 12 is not of type 'string'" in tool_text(done)
    assert len(model.requests) == 2


async def test_a_text_agent_answers_in_the_run_too(shop: MCPServer) -> None:
    model = ScriptedModel([call("react", "ship", order="A7"), "<answer>Shipped.</answer>"])

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        assert isinstance(request, ElicitationRequest)
        return Elicitation.accepted({"street": "Main St 1", "city": "Lyon"})

    agent = ReActAgent(model, tool_chain=shop.attach(JSONToolChain()), approve=approve)
    result = await agent.run("Ship A7")

    assert result.answer == "Shipped."
    observed = result.steps[0].tool_results[0].observations[0].text
    assert "shipped A7 to Main St 1, Lyon" in observed


async def test_a_question_asked_in_a_sub_agent_pauses_the_parent_with_its_path(
    shop: MCPServer,
) -> None:
    child = ScriptedModel([ScriptedModel.call("refund", order="A7"), "refunded A7"])
    parent = ScriptedModel([ScriptedModel.call("clerk", task="A7"), "Done."])
    refund = next(t for t in shop.tools() if t.name == "refund")

    def clerk(args: Task, prompt: Prompt) -> None:
        prompt.def_tool(refund)
        prompt.user(f"Refund {args.task}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent("clerk", "Handles refunds.", Task, clerk, model=child)
        prompt.user("Refund A7")

    run = run_prompt(build, model=parent)
    paused = await run.result()
    [question] = paused.pending
    assert isinstance(question, ElicitationRequest)
    assert (question.tool, question.via, question.message) == (
        "refund",
        ("clerk",),
        "Refund order A7?",
    )

    done = await run.resume({question.call_id: question.accept({"ok": True})})

    assert done.answer == "Done." and await refunds(shop) == 1
    assert [len(m.requests) for m in (parent, child)] == [2, 2]


async def test_on_an_older_connection_a_held_question_waits_at_most_its_timeout(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Before 2026-07-28 the server waits on its request: a pause keeps it waiting in this
    # process, for at most HOLD_TIMEOUT seconds; then the server is told cancel.
    monkeypatch.setattr("toolchain.mcp._elicit.HOLD_TIMEOUT", 0.2)
    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Kept it."])
    async with MCPServer.stdio(sys.executable, [str(SHOP)], mode="legacy") as server:
        agent = ToolCallingAgent(model, tool_chain=server.attach(JSONToolChain()))
        paused = await agent.run("Refund A7")
        [question] = paused.pending
        with caplog.at_level(logging.WARNING, logger="toolchain.mcp"):
            for _ in range(200):  # the timer is the server's wait; poll for its record
                if "waited 0.2 s for an answer" in caplog.text:
                    break
                await asyncio.sleep(0.02)
        assert "the question of refund waited 0.2 s for an answer" in caplog.text

        late = await agent.resume(paused, {question.call_id: Elicitation.accepted({"ok": True})})

        assert "kept A7: the customer answered cancel" in tool_text(late)
        assert await refunds(server) == 0
