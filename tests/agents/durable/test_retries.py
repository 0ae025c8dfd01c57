"""A provider outage does not end a durable run for good (issue 26, item 7).

A real OpenAI-compatible server on loopback (`tests.support.loopback`) answers 503 for
a while, then normally; the model is the OpenAI adapter on the official SDK (which makes
its own retries first). A short outage is outlasted by the durable run's ``ModelRetries``;
a longer one ends the run, and ``resume`` makes the failed call again and goes on,
without running a finished tool call twice.
"""

from __future__ import annotations

import logging
import uuid

import pytest

pytest.importorskip("dbos")

from agents import ToolCallingAgent
from agents.durable import (
    DurableAgent,
    ModelRetries,
    NothingToResumeError,
    resume,
)
from agents.models import OpenAIChatModel
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_call, openai_calls, openai_completion, openai_error
from toolchain import tool

pytestmark = pytest.mark.usefixtures("launched")

QUICK = ModelRetries(attempts=3, first_delay=0.01)
"""Waits short enough for a test; the defaults wait seconds."""

looked_up: list[str] = []


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    looked_up.append(order_id)
    return f"{order_id}: paid 20 EUR, delivered damaged"


@pytest.fixture(autouse=True)
def _clear() -> None:
    looked_up.clear()


def refunds(
    server: LoopbackServer, name: str, retries: ModelRetries, sdk_retries: int
) -> DurableAgent[str]:
    model = OpenAIChatModel(
        "gpt-loopback", api_key="k", base_url=server.openai_base_url, max_retries=sdk_retries
    )
    agent = ToolCallingAgent(model, tools=[lookup_order])
    return DurableAgent(agent, name=name, retries=retries)


LOOKUP = openai_calls([openai_call("c1", "lookup_order", '{"order_id": "A17"}')])
ANSWER = openai_completion("A17 arrived damaged: refund it.")
OUTAGE = openai_error(503, "the server is overloaded")


async def test_a_short_outage_is_outlasted(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Six 503s: the SDK's own four tries fail, then our second try gets through after
    # two more (the SDK retrying inside it).
    loopback.enqueue(*[OUTAGE] * 6, LOOKUP, ANSWER)
    durable = refunds(loopback, "short-outage", QUICK, sdk_retries=3)

    with caplog.at_level(logging.WARNING, logger="agents"):
        result = await durable.run("What about order A17?")

    assert (result.stopped_by, result.answer) == ("answer", "A17 arrived damaged: refund it.")
    assert len(loopback.requests) == 8
    assert looked_up == ["A17"]
    retried = [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()]
    assert len(retried) == 1
    assert retried[0].startswith("model call of step 1 to openai:gpt-loopback failed (attempt 1): ")
    assert "HTTP 503" in retried[0]


async def test_a_long_outage_ends_the_run_and_resume_goes_on_from_the_failed_call(
    loopback: LoopbackServer,
) -> None:
    loopback.enqueue(LOOKUP, OUTAGE, OUTAGE, OUTAGE)
    durable = refunds(loopback, "long-outage", QUICK, sdk_retries=0)
    workflow_id = f"refund-{uuid.uuid4().hex}"

    failed = await durable.run("What about order A17?", workflow_id=workflow_id)
    again = await durable.run("What about order A17?", workflow_id=workflow_id)

    assert failed.stopped_by == again.stopped_by == "error"
    assert failed.error is not None and "HTTP 503" in failed.error
    assert len(loopback.requests) == 4  # the lookup's call, then three tries; none again

    loopback.enqueue(ANSWER)
    resumed = await (await resume(workflow_id)).result()

    assert (resumed.stopped_by, resumed.answer) == ("answer", "A17 arrived damaged: refund it.")
    assert looked_up == ["A17"]  # the finished call was replayed, not made again
    assert len(loopback.requests) == 5
    assert (await durable.run("What about order A17?", workflow_id=workflow_id)).answer == (
        resumed.answer
    )
    with pytest.raises(NothingToResumeError, match="its last step did not fail"):
        await resume(workflow_id)


async def test_a_failure_that_would_fail_again_is_not_retried(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    loopback.enqueue(openai_error(400, "messages: bad request", error_type="invalid_request"))
    durable = refunds(loopback, "bad-request", QUICK, sdk_retries=3)

    with caplog.at_level(logging.WARNING, logger="agents"):
        result = await durable.run("What about order A17?")

    assert result.stopped_by == "error"
    assert len(loopback.requests) == 1
    assert not [r for r in caplog.records if "trying again" in r.getMessage()]
