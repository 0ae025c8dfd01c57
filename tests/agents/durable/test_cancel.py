"""A durable run cancelled while a call waits for a person ends at once (issue 26,
item 18): ``result()`` raises our error instead of waiting for ever, the waiting call is
no longer listed, nothing ran, and ``resume`` takes the run up again where it was.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from agents import ToolCallingAgent
from agents.durable import (
    DurableAgent,
    RunCancelledError,
    decide,
    pending,
    resume,
    wait_for_person,
)
from agents.models import ScriptedModel
from toolchain import tool
from toolchain.discovery import Approval, ToolIndex, ToolInfo, ToolSearch

pytestmark = pytest.mark.usefixtures("launched")

HANG_GUARD_SECONDS = 120.0
"""A guard against a hang only (the bug this tests): far beyond the second it takes."""

published: list[str] = []


@tool
def publish(page: str) -> str:
    """Publish a page."""
    published.append(page)
    return f"published {page}"


def publisher(name: str) -> DurableAgent[str]:
    search = ToolSearch(
        ToolIndex([publish], [ToolInfo("publish", requires_confirmation=True)]),
        defer=False,
        approve=wait_for_person,
    )
    model = ScriptedModel([ScriptedModel.call("publish", {"page": "p1"}), "p1 is live."])
    return DurableAgent(ToolCallingAgent(model, extensions=[search]), name=name)


async def test_a_run_cancelled_while_it_waits_for_a_person_ends_and_can_be_resumed() -> None:
    run = await publisher("cancelled-publisher").start("Publish p1.", workflow_id="publish-p1")
    assert [request.tool for request in await pending(run.workflow_id, wait=60.0)] == ["publish"]

    await DBOS.cancel_workflow_async(run.workflow_id)

    with pytest.raises(RunCancelledError) as cancelled:
        await asyncio.wait_for(run.result(), HANG_GUARD_SECONDS)
    assert str(cancelled.value) == (
        "durable run 'publish-p1' was cancelled before it ended, so it has no result; "
        "agents.durable.resume(workflow_id) continues it from where it stopped"
    )
    assert await pending(run.workflow_id) == []
    assert published == []
    # The run's own task stopped waiting too: none of this loop's tasks is left over.
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    resumed = await resume(run.workflow_id)
    waiting = await pending(run.workflow_id, wait=60.0)
    await decide(run.workflow_id, waiting[0], Approval.granted())

    assert (await resumed.result()).answer == "p1 is live."
    assert published == ["p1"]
