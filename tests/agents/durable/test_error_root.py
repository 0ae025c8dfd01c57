"""A durable run's errors are ``AgentError``s (so ``GentError``s), and still what they were
(issue 27): ``DurableError`` hangs under the agents' root, its builtin bases kept."""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("dbos")

from agents import AgentError, GentError, ToolCallingAgent
from agents.durable import DurableAgent, DurableError, WorkflowIdTakenError
from agents.models import ScriptedModel

pytestmark = pytest.mark.usefixtures("launched")


async def test_a_workflow_id_another_agent_took_is_an_agent_error() -> None:
    first = DurableAgent(ToolCallingAgent(ScriptedModel(["Done."])), name="root-first")
    second = DurableAgent(ToolCallingAgent(ScriptedModel(["Done."])), name="root-second")
    taken = f"ticket-{uuid.uuid4().hex}"
    await first.run("Do it.", workflow_id=taken)

    with pytest.raises(AgentError) as refused:
        await second.run("Do it.", workflow_id=taken)

    error = refused.value
    assert isinstance(error, WorkflowIdTakenError)
    assert isinstance(error, DurableError)
    assert isinstance(error, GentError)
    assert isinstance(error, ValueError)  # as callers caught it before the roots
    assert str(error).startswith(f"workflow id {taken!r} is taken: it names a run of durable")
