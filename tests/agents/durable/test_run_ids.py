"""A workflow id names one agent's run of one task (issue 26, item 16).

Started again with its id, a run returns its result only to the agent that ran it, for
the same task and history; any other start under that id is refused with our error,
which shows nothing of the other run, and runs nothing.
"""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from agents import ToolCallingAgent
from agents.durable import DurableAgent, WorkflowIdTakenError
from agents.models import Message, ScriptedModel

pytestmark = pytest.mark.usefixtures("launched")

CARD = "4242 4242 4242 4242"


def fresh_id() -> str:
    return f"ticket-{uuid.uuid4().hex}"


def support(name: str, reply: str) -> tuple[DurableAgent[str], ScriptedModel]:
    model = ScriptedModel([reply] * 3, name=name)
    return DurableAgent(ToolCallingAgent(model), name=name), model


async def test_an_id_another_agent_used_is_refused_and_shows_nothing_of_its_run() -> None:
    alice, _ = support("alice-support", f"Alice, your card {CARD} is on file.")
    bob, bob_model = support("bob-support", "Hello Bob.")
    taken = fresh_id()
    await alice.run("What card do I have on file?", workflow_id=taken)

    with pytest.raises(WorkflowIdTakenError) as refused:
        await bob.run("What card do I have on file?", workflow_id=taken)

    assert str(refused.value) == (
        f"workflow id {taken!r} is taken: it names a run of durable 'alice-support'. A run "
        "started again with its id must be the same agent's, with the same task and "
        "history; give this run an id of its own."
    )
    assert CARD not in str(refused.value)
    assert bob_model.requests == []  # nothing ran for bob


async def test_an_id_taken_in_advance_with_another_task_is_refused() -> None:
    agent, model = support("squatted", "Refund sent to the squatter.")
    taken = fresh_id()
    await agent.run("Refund order 17 to account EVIL.", workflow_id=taken)

    with pytest.raises(WorkflowIdTakenError, match="'squatted' ran it with another task"):
        await agent.run("Refund order 17 to my account.", workflow_id=taken)
    history = [Message.text("user", "hi"), Message.text("assistant", "hello")]
    with pytest.raises(WorkflowIdTakenError, match="another task or history"):
        await agent.run("Refund order 17 to account EVIL.", history=history, workflow_id=taken)

    assert len(model.requests) == 1


async def test_the_same_run_started_again_returns_its_result() -> None:
    agent, model = support("again-ids", "Done.")
    taken = fresh_id()
    first = await agent.run("Do it.", workflow_id=taken)

    again = await (await agent.start("Do it.", workflow_id=taken)).result()

    assert first.answer == again.answer == "Done."
    assert len(model.requests) == 1


async def test_a_run_on_a_queue_is_refused_the_same_way() -> None:
    alice, _ = support("alice-queued", f"Alice, your card {CARD} is on file.")
    bob, bob_model = support("bob-queued", "Hello Bob.")
    queue = await DBOS.register_queue_async("ids", polling_interval_sec=0.05)
    taken = fresh_id()
    await (await alice.start("Card?", workflow_id=taken, queue=queue)).result()

    with pytest.raises(WorkflowIdTakenError, match="it names a run of durable 'alice-queued'"):
        await bob.start("Card?", workflow_id=taken, queue=queue)

    assert bob_model.requests == []
