"""Durable runs used out of order get our own errors and a way back (issue 26, item 8).

A durable call before ``launch()`` says to launch, not DBOS's "No DBOS was created yet".
A process that launches before it builds an agent does not end that agent's recovered
runs in error: they wait, with a warning saying what to do, and go on once it is built.
A run that ended in DBOS's ``ERROR`` (its agent raised) is taken up again by ``resume``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from agents import ReActAgent
from agents.durable import (
    DurableAgent,
    DurablePrompt,
    NotLaunchedError,
    decide,
    launch,
    pending,
    recover,
    resume,
    retrieve,
    shutdown,
)
from agents.models import ScriptedModel
from agents.prompt import Prompt
from tests.agents.durable.processes import finished, kill_when_blocked, runs, worker
from toolchain.discovery import Approval, ApprovalRequest

NOT_LAUNCHED = (
    "agents.durable.launch() has not been called in this process (or shutdown() was). "
    "Build every DurableAgent and DurablePrompt, then call launch(database_url) once, "
    "before any durable run."
)


def calls() -> dict[str, Callable[[], Awaitable[object]]]:
    durable = DurableAgent(ReActAgent(ScriptedModel(["<answer>4</answer>"])), name="early")
    request = ApprovalRequest("c1", "publish", {}, "safe")
    return {
        "start a durable run": lambda: durable.run("2+2?"),
        "retrieve a durable run": lambda: retrieve("r1"),
        "resume a durable run": lambda: resume("r1"),
        "list the calls waiting for a person": lambda: pending("r1"),
        "send a decision": lambda: decide("r1", request, Approval.granted()),
        "recover runs": lambda: recover(["w1"]),
    }


WHAT = [
    "start a durable run",
    "retrieve a durable run",
    "resume a durable run",
    "list the calls waiting for a person",
    "send a decision",
    "recover runs",
]


@pytest.mark.parametrize("what", WHAT)
async def test_a_durable_call_before_launch_says_to_launch(what: str) -> None:
    with pytest.raises(NotLaunchedError) as refused:
        await calls()[what]()

    assert str(refused.value) == f"cannot {what}: {NOT_LAUNCHED}"


def test_a_run_recovered_before_its_agent_is_built_waits_for_it(tmp_path: Path) -> None:
    (tmp_path / "block").write_text("")
    kill_when_blocked(tmp_path, worker(tmp_path, "native", "between", "start"))

    result = finished(worker(tmp_path, "native", "between", "recover-built-late"))

    assert result["answer"] == "recorded once"
    assert result["stopped_by"] == "answer"
    assert runs(tmp_path, "record") == 1
    assert result["warned"].startswith("durable run run-1 needs the durable agent or prompt ")
    assert result["warned"].endswith(
        "named 'between', which this process has not built: the run waits until it is "
        "built here. Build every DurableAgent and DurablePrompt before "
        "agents.durable.launch(), as the process that started the run did"
    )


async def test_a_run_that_ended_in_error_is_resumed_from_its_first_step_not_recorded(
    tmp_path: Path,
) -> None:
    broken = [True]

    def build(prompt: Prompt) -> None:
        if broken:  # a bug, fixed in the code before the run is resumed
            raise RuntimeError("the prompt's template is missing")
        prompt.def_data("order", {"id": "A17"})

    model = ScriptedModel(["A17 is on its way."])
    durable = DurablePrompt(build, model=model, name="broken-prompt")
    launch(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        workflow_id = f"order-{uuid.uuid4().hex}"
        started = await durable.start("Where is my order?", workflow_id=workflow_id)
        with pytest.raises(RuntimeError, match="the prompt's template is missing"):
            await started.result()
        assert await started.status() == "ERROR"

        broken.clear()
        resumed = await resume(workflow_id)

        assert (await resumed.result()).answer == "A17 is on its way."
        assert await resumed.status() == "SUCCESS"
        steps = await DBOS.list_workflow_steps_async(workflow_id)
        assert [step["function_name"] for step in steps][-1] == "model:scripted"
    finally:
        shutdown()
    assert len(model.requests) == 1
