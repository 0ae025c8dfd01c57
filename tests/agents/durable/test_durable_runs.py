"""Durable runs in this process (no crash): what they record and what they return.

DBOS is launched once for the module on a SQLite file in a temporary directory and
shut down after it; the crash tests (``test_crash_recovery``) use worker processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import logging
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS, DBOSClient
from pydantic import BaseModel

from agents import ReActAgent, SummarizingCompaction, ToolCallingAgent, TypedTermination
from agents.durable import (
    MAX_RECORD_BYTES,
    DurableAgent,
    DurablePrompt,
    RecordError,
    client,
    launch,
    pending,
    retrieve,
    shutdown,
    wait_for_person,
)
from agents.models import Message, ScriptedModel
from agents.prompt import Prompt
from tests.support.agent_kinds import KINDS, Kind, agent, answer, call, chain_for
from toolchain import tool
from toolchain.discovery import ToolIndex, ToolInfo, ToolSearch

ran: list[tuple[str, object]] = []


@tool
def double(n: int) -> int:
    """Double a number."""
    ran.append(("double", n))
    return 2 * n


@pytest.fixture(scope="module", autouse=True)
def dbos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    database = tmp_path_factory.mktemp("durable") / "runs.sqlite"
    launch(f"sqlite:///{database}")
    yield database
    shutdown()


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def doubling(kind: Kind) -> list[Any]:
    return [call(kind, "double", n=21), answer(kind, "42")]


def fresh_id() -> str:
    return f"test-{uuid.uuid4().hex}"


@KINDS
async def test_a_durable_run_returns_what_the_plain_run_returns(kind: Kind) -> None:
    plain = await agent(kind, ScriptedModel(doubling(kind)), chain_for(kind, double)).run("2*21?")
    made = agent(kind, ScriptedModel(doubling(kind)), chain_for(kind, double))
    durable = await DurableAgent(made, name=f"same-{kind}").run("2*21?")

    assert durable.answer == plain.answer == "42"
    assert durable.stopped_by == plain.stopped_by == "answer"
    assert [m.text_content() for m in durable.messages] == [
        m.text_content() for m in plain.messages
    ]
    assert ran == [("double", 21), ("double", 21)]


@KINDS
async def test_each_model_call_and_tool_call_is_a_step_of_the_run(kind: Kind) -> None:
    made = agent(kind, ScriptedModel(doubling(kind)), chain_for(kind, double))
    workflow_id = fresh_id()
    await DurableAgent(made, name=f"steps-{kind}").run("2*21?", workflow_id=workflow_id)

    steps = await DBOS.list_workflow_steps_async(workflow_id)
    assert [step["function_name"] for step in steps] == [
        "start",
        "model:scripted",
        "tool-started:double",
        "tool:double",
        "model:scripted",
    ]


async def test_a_run_started_again_with_its_id_returns_its_result_without_running() -> None:
    model = ScriptedModel(doubling("react"))
    durable = DurableAgent(agent("react", model, chain_for("react", double)), name="again")
    workflow_id = fresh_id()

    first = await durable.run("2*21?", workflow_id=workflow_id)
    second = await durable.run("2*21?", workflow_id=workflow_id)

    assert first.answer == second.answer == "42"
    assert len(model.requests) == 2  # the first run's two steps, no more
    assert ran == [("double", 21)]


async def test_start_returns_a_handle_and_retrieve_finds_the_run() -> None:
    model = ScriptedModel(doubling("native"))
    durable = DurableAgent(agent("native", model, chain_for("native", double)), name="handle")

    started = await durable.start("2*21?", workflow_id=fresh_id())
    found = await retrieve(started.workflow_id)

    assert (await found.result()).answer == "42"
    assert await started.status() == "SUCCESS"


async def test_a_durable_prompt_runs_with_a_task_after_its_build() -> None:
    def build(prompt: Prompt) -> None:
        prompt.def_tool(double)

    model = ScriptedModel([ScriptedModel.call("double", {"n": 4}), "8"])
    durable = DurablePrompt(build, model=model, name="prompt-task")

    result = await durable.run("What is 2*4?")

    assert result.answer == "8"
    assert model.requests[0].messages[-1].text_content() == "What is 2*4?"
    assert ran == [("double", 4)]


def test_a_durable_prompt_without_a_name_is_refused() -> None:
    with pytest.raises(TypeError, match="needs name="):
        DurablePrompt(lambda prompt: None, model=ScriptedModel(["hi"]))


async def test_outside_a_durable_run_a_call_waiting_for_a_person_pauses_the_run() -> None:
    @tool
    def publish(page: str) -> str:
        """Publish a page."""
        ran.append(("publish", page))
        return "published"

    search = ToolSearch(
        ToolIndex([publish], [ToolInfo("publish", requires_confirmation=True)]),
        defer=False,
        approve=wait_for_person,
    )
    model = ScriptedModel([call("native", "publish", page="p1")])
    made = agent("native", model, chain_for("native"), extensions=[search])

    result = await made.run("Publish p1.")

    assert result.stopped_by == "paused"
    assert ran == []


def test_a_second_durable_agent_under_a_taken_name_replaces_it_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(["<answer>x</answer>"])
    DurableAgent(agent("react", model, chain_for("react")), name="taken")
    with caplog.at_level(logging.WARNING, logger="agents.durable"):
        DurableAgent(agent("react", model, chain_for("react")), name="taken")

    assert "a durable run named 'taken' was registered already" in caplog.text


async def test_a_result_that_cannot_be_recorded_fails_that_call_alone() -> None:
    @tool
    def make_lock() -> object:
        """Make a lock."""
        return threading.Lock()  # no pickle for it

    model = ScriptedModel([call("native", "make_lock"), answer("native", "ok")])
    made = agent("native", model, chain_for("native", make_lock))

    result = await DurableAgent(made, name="unpicklable").run("Lock?")

    assert result.answer == "ok"
    error = result.steps[0].tool_results[0].raw.errors[0]
    assert error is not None and error.kind == "output_error"
    assert error.message.startswith(
        "make_lock returned a result that cannot be recorded for a durable run"
    )


async def test_a_summary_made_by_compaction_is_a_step_of_the_run() -> None:
    summarizer = ScriptedModel(["SUMMARY"] * 5, name="summarizer")
    compaction = SummarizingCompaction(summarizer, keep_steps=0, trigger_steps=2)
    steps = [call("native", "double", n=n) for n in (1, 2, 3, 4)]
    model = ScriptedModel([*steps, answer("native", "2")])
    made = agent("native", model, chain_for("native", double), step_hooks=[compaction])
    workflow_id = fresh_id()

    result = await DurableAgent(made, name="compacted").run("1*2?", workflow_id=workflow_id)

    assert result.answer == "2"
    names = [step["function_name"] for step in await DBOS.list_workflow_steps_async(workflow_id)]
    assert names.count("summary:summarizer") == len(summarizer.requests) == 1


@dataclasses.dataclass(frozen=True)
class Booking:
    seat: str
    day: datetime.date


class Confirmation(BaseModel):
    booking: str
    seats: int


@tool
def book(seat: str) -> Booking:
    """Book a seat."""
    return Booking(seat, datetime.date(2026, 1, 27))


async def test_a_run_read_back_from_its_record_has_its_typed_answer_and_outputs(
    dbos: Path,
) -> None:
    model = ScriptedModel(
        [
            ScriptedModel.call("book", {"seat": "12A"}),
            ScriptedModel.call("final_answer", {"booking": "12A", "seats": 1}),
        ]
    )
    made = ToolCallingAgent(
        model, tool_chain=chain_for("native", book), termination=TypedTermination(Confirmation)
    )
    durable = DurableAgent(made, name="typed")
    run = await durable.start("Book 12A.", workflow_id=fresh_id())
    live = await run.result()
    web = client(f"sqlite:///{dbos}")
    try:
        # A process that did not run it reads the record (plain JSON), typed again by
        # the agent registered under the run's name.
        recorded = await (await retrieve(run.workflow_id, client=web)).result()
    finally:
        web.destroy()

    assert recorded.answer == live.answer == Confirmation(booking="12A", seats=1)
    output = recorded.steps[0].tool_results[0].raw.results[0]
    assert output is not None and output.output == Booking("12A", datetime.date(2026, 1, 27))
    assert recorded.messages == live.messages
    assert recorded.steps == live.steps
    # The action's whole observation (written when first read: here, as it was recorded).
    observation = (
        '<observation>\n<book>\n{"seat":"12A","day":"2026-01-27"}\n</book>\n</observation>'
    )
    assert recorded.steps[0].tool_results[0].text == observation
    assert live.steps[0].tool_results[0].text == observation
    assert (recorded.usage, recorded.stats) == (live.usage, live.stats)


def _rows(database: Path, workflow_id: str) -> list[tuple[str, str]]:
    """Every value the run wrote, as (serialization, text): its inputs, its result (DBOS
    3.4 keeps them apart from its status, which names their serializer), its steps."""
    with contextlib.closing(sqlite3.connect(database)) as connection:
        run = {"run": workflow_id}
        (serialization,) = connection.execute(
            "SELECT serialization FROM workflow_status WHERE workflow_uuid = :run", run
        ).fetchone()
        (inputs,) = connection.execute(
            "SELECT inputs FROM workflow_input WHERE workflow_uuid = :run", run
        ).fetchone()
        (output,) = connection.execute(
            "SELECT output FROM workflow_output WHERE workflow_uuid = :run", run
        ).fetchone()
        steps = connection.execute(
            "SELECT serialization, output FROM operation_outputs WHERE workflow_uuid = :run "
            "ORDER BY function_id",
            run,
        ).fetchall()
    found = [(serialization, inputs), (serialization, output), *steps]
    return [(str(kind), str(text)) for kind, text in found]


@KINDS
async def test_everything_a_run_records_is_plain_json(kind: Kind, dbos: Path) -> None:
    made = agent(kind, ScriptedModel(doubling(kind)), chain_for(kind, double))
    workflow_id = fresh_id()
    await DurableAgent(made, name=f"plain-{kind}").run("2*21?", workflow_id=workflow_id)

    rows = _rows(dbos, workflow_id)

    # the inputs, the result, and the steps: start, model, tool-started, tool, model
    assert len(rows) == 7
    assert {serialization for serialization, _ in rows} == {"gent_json"}
    documents = [json.loads(text)["v"] for _, text in rows]
    assert documents[0]["args"][1]["task"] == "2*21?"
    assert documents[1]["answer"] == "42"
    assert documents[4:6] == [True, {"result": {"output": 42}}]


async def test_no_log_holds_the_conversation_of_a_run_that_cannot_be_recorded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    card, key = "4111 1111 1111 1111", "sk-proj-Zq7Plk3VvXw9RtYuAbCdEfGh"
    history = [
        Message.text("user", f"My card is {card}, the key {key}."),
        Message.text("assistant", "ok"),
    ]
    model = ScriptedModel([answer("native", "paid")])
    made = agent("native", model, chain_for("native"))
    dbos_logger = logging.getLogger("dbos")  # DBOS's logs do not propagate to the root
    dbos_logger.addHandler(caplog.handler)
    refused: Exception | None = None
    try:
        with caplog.at_level(logging.DEBUG):
            await DurableAgent(made, name="unrecordable").run(
                "Pay.", history=history, extension_state={"session": threading.Lock()}
            )
    except Exception as error:  # its kind is checked after the logs: a leak matters first
        refused = error
    finally:
        dbos_logger.removeHandler(caplog.handler)

    for secret in (card, key):
        assert secret not in caplog.text
        assert secret not in str(refused)
    assert isinstance(refused, RecordError)
    assert "extension_state['session'] cannot be recorded" in str(refused)
    assert model.requests == []  # refused before the run started


async def test_a_result_over_the_record_limit_ends_the_run_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @tool
    def report() -> str:
        """A long report."""
        return "secret line of the report\n" * 400

    monkeypatch.setattr("agents.durable._serializer.MAX_RECORD_BYTES", 20_000)
    model = ScriptedModel([call("native", "report"), answer("native", "read")])
    made = agent("native", model, chain_for("native", report))
    run = await DurableAgent(made, name="too-long").start("Report?", workflow_id=fresh_id())

    with pytest.raises(RecordError) as failed:
        await run.result()

    assert "bytes cannot be recorded: a durable run records at most 20,000 bytes" in str(
        failed.value
    )
    assert "secret line" not in str(failed.value)
    assert await run.status() == "ERROR"


def test_a_limit_over_what_a_record_takes_is_refused() -> None:
    made = agent("native", ScriptedModel(["x"]), chain_for("native"))
    with pytest.raises(ValueError, match="max_output_bytes must be between 1 and"):
        DurableAgent(made, name="limitless", max_output_bytes=MAX_RECORD_BYTES + 1)


async def test_a_client_that_would_write_pickles_is_refused_saying_how_to_build_one(
    dbos: Path,
) -> None:
    plain = DBOSClient(system_database_url=f"sqlite:///{dbos}")  # writes pickles
    try:
        with pytest.raises(TypeError, match=r"build it with agents.durable.client\(database_url\)"):
            await pending("any-run", client=plain)
    finally:
        plain.destroy()


async def test_an_output_whose_type_changed_since_is_read_back_as_recorded_with_a_warning(
    dbos: Path, caplog: pytest.LogCaptureFixture
) -> None:
    @tool(name="book")
    def book_then(seat: str) -> dict[str, str]:
        """Book a seat."""
        return {"seat": seat}

    model = ScriptedModel([call("native", "book", seat="3C"), answer("native", "booked")])
    first = DurableAgent(agent("native", model, chain_for("native", book_then)), name="retyped")
    run = await first.start("Book 3C.", workflow_id=fresh_id())
    await run.result()
    # The next release: `book` returns a Booking, which needs a day the record lacks.
    later = agent("native", ScriptedModel([]), chain_for("native", book))
    with caplog.at_level(logging.WARNING, logger="agents.durable"):
        DurableAgent(later, name="retyped")
        web = client(f"sqlite:///{dbos}")
        try:
            recorded = await (await retrieve(run.workflow_id, client=web)).result()
        finally:
            web.destroy()

    found = recorded.steps[0].tool_results[0].raw.results[0]
    assert found is not None and found.output == {"seat": "3C"}
    assert "a recorded output of book does not load into Booking" in caplog.text
    assert "3C" not in caplog.text


@KINDS
async def test_a_durable_run_on_the_default_clock_writes_the_date_it_started_on(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The date the run's record holds (a run recovered the next day replays with it).
    started = datetime.date(2001, 2, 3)
    monkeypatch.setattr("agents.durable._workflow._today", lambda: started)
    model = ScriptedModel([answer(kind, "ok")])
    chain = chain_for(kind, double)
    made = (
        ReActAgent(model, tool_chain=chain)  # the default clock: today's date
        if kind == "react"
        else ToolCallingAgent(model, tool_chain=chain)
    )
    durable = DurableAgent(made, name=f"dated-{kind}")

    result = await durable.run("Which day is it?")

    assert result.answer == "ok"
    assert "Today is 2001-02-03 (Saturday)." in model.requests[0].messages[0].text_content()
