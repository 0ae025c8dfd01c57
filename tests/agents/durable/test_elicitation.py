"""An MCP server's question in a durable run: the run pauses with it, and the answer
resumes it (issue 28).

A real MCP server (``tests/toolchain/mcp/elicit_server.py``, the official SDK, over
stdio, MCP 2026-07-28: a question is an "input required" result, asked again with the
answer) asks during ``refund``. The durable run pauses with the question in
``pending``; read back from the database (as another process reads it), it is still an
``ElicitationRequest`` with the server's message and schema; ``DurableAgent.resume``
sends the answer (its action and data) through the workflow, the call made again with
it is a step of its own, and the server refunds once. DBOS runs on a SQLite file here.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

pytest.importorskip("dbos")
pytest.importorskip("mcp")

from agents import AgentResult, ToolCallingAgent
from agents.durable import DurableAgent, launch, retrieve, shutdown
from agents.models import ScriptedModel
from toolchain import Elicitation, ElicitationRequest, ExecutionContext, JSONToolChain
from toolchain.mcp import MCPServer

SHOP = Path(__file__).parents[2] / "toolchain" / "mcp" / "elicit_server.py"


@pytest.fixture(scope="module", autouse=True)
def dbos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    launch(f"sqlite:///{tmp_path_factory.mktemp('durable') / 'runs.sqlite'}")
    yield
    shutdown()


@pytest.fixture
async def shop() -> AsyncIterator[MCPServer]:
    async with MCPServer.stdio(sys.executable, [str(SHOP)], mode="auto") as server:
        yield server


async def refunds(shop: MCPServer) -> int:
    """How many refunds the server made (its own count)."""
    [counter] = [t for t in shop.tools() if t.name == "refunds"]
    counted = cast("dict[str, int]", (await counter.call(ExecutionContext(), {})).text)
    return counted["result"]


def tool_text(result: AgentResult[Any]) -> str:
    return [m.text_content() for m in result.messages if m.role == "tool"][-1]


async def paused_question(
    shop: MCPServer, model: ScriptedModel
) -> tuple[DurableAgent[str], AgentResult[str], ElicitationRequest]:
    """A durable run of ``refund`` paused on the server's question, the paused result
    read back from the database."""
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()))
    durable = DurableAgent(agent, name=f"elicit-{uuid.uuid4().hex[:8]}")
    workflow_id = f"test-{uuid.uuid4().hex}"
    paused = await durable.run("Refund A7", workflow_id=workflow_id)
    assert paused.stopped_by == "paused" and await refunds(shop) == 0

    read_back = await (await retrieve(workflow_id)).result()
    [question] = read_back.pending
    assert isinstance(question, ElicitationRequest)
    return durable, read_back, question


async def test_a_servers_question_pauses_a_durable_run_and_the_answer_resumes_it(
    shop: MCPServer,
) -> None:
    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Refunded."])
    durable, paused, question = await paused_question(shop, model)
    assert (question.tool, dict(question.args), question.message) == (
        "refund",
        {"order": "A7"},
        "Refund order A7?",
    )
    properties = cast("dict[str, dict[str, object]]", question.schema["properties"])
    assert properties["ok"]["type"] == "boolean"

    done = await durable.resume(paused, {question.call_id: question.accept({"ok": True})})

    assert done.answer == "Refunded." and '"refunded A7"' in tool_text(done)
    assert await refunds(shop) == 1
    assert len(model.requests) == 2  # the model was not asked to call refund again


async def test_a_declined_question_is_told_to_the_server_through_the_workflow(
    shop: MCPServer,
) -> None:
    model = ScriptedModel([ScriptedModel.call("refund", order="A7"), "Kept it."])
    durable, paused, question = await paused_question(shop, model)

    done = await durable.resume(paused, {question.call_id: Elicitation.declined()})

    assert done.answer == "Kept it." and await refunds(shop) == 0
    assert "kept A7: the customer answered decline" in tool_text(done)


def test_a_question_paused_in_one_process_is_answered_from_another(tmp_path: Path) -> None:
    """The process that paused exits; another, speaking to its own server process,
    takes the run over: the paused call (recorded as held, with no effect) is made
    again, asked again, and settled by the answer; the server refunds once."""
    from tests.agents.durable.processes import finished, model_calls, runs, worker

    paused = finished(worker(tmp_path, "native", "elicit", "start-paused"))
    assert paused == {"stopped_by": "paused", "pending": ["refund"]}
    assert runs(tmp_path, "refund") == 0

    result = finished(worker(tmp_path, "native", "elicit", "resume-answered"))

    assert result == {"answer": "refunded", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
    assert len(model_calls(tmp_path)) == 2


def test_a_crash_after_the_answered_call_does_not_refund_again(tmp_path: Path) -> None:
    """The call made again with the answer is a step of its own: the process killed in
    the model call after it, the run recovered, the server has refunded once."""
    from tests.agents.durable.processes import finished, kill_when_blocked, runs, worker

    assert finished(worker(tmp_path, "native", "elicit", "start-paused"))["pending"] == ["refund"]
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, "native", "elicit", "resume-answered"))
    assert runs(tmp_path, "refund") == 1

    result = finished(worker(tmp_path, "native", "elicit", "recover"))

    assert result == {"answer": "refunded", "stopped_by": "answer"}
    assert runs(tmp_path, "refund") == 1
