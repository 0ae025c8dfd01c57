"""What a durable run records: plain data that travels between processes, a size it
checks before writing, never a pickle, and never a conversation in a log.

The runs are made by worker processes (`tests.agents.durable.worker`), killed with
SIGKILL where the scenario blocks and recovered by another worker; a test reads the
workers' output, their logs (stderr) and what the tools wrote down.
"""

from __future__ import annotations

import base64
import contextlib
import pickle
import sqlite3
from pathlib import Path

import pytest

from tests.agents.durable.processes import (
    finished_with_log,
    model_calls,
    runs,
    start_and_kill,
    worker,
)
from tests.agents.durable.worker import CARD, KEY
from tests.support.agent_kinds import KINDS, Kind

pytest.importorskip("dbos")


@KINDS
def test_a_tool_output_class_of_the_starting_script_loads_in_the_recovering_process(
    kind: Kind, tmp_path: Path
) -> None:
    # The run starts in `python -m ...worker` (Receipt is __main__.Receipt there) and is
    # recovered by a process that imports the worker (Receipt is ...worker.Receipt).
    start_and_kill(tmp_path, kind, "receipt")

    result, _ = finished_with_log(worker(tmp_path, kind, "receipt", "recover", imported=True))

    assert result == {
        "answer": "receipt for 20.50 EUR",
        "stopped_by": "answer",
        "output_type": "tests.agents.durable.worker.Receipt",
        "output": "Receipt(order='A17', amount=Decimal('20.50'), "
        "issued=datetime.date(2026, 1, 27))",
    }
    assert runs(tmp_path, "issue_receipt") == 1
    assert len(model_calls(tmp_path)) == 2


class _RunsCode:
    """A pickle that creates a file when it is loaded: what an attacker would write."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (str(self.path), "w")


PLACES = {
    # where DBOS 3.4 keeps a value, and where it keeps the serializer to read it with
    "a step's output": (
        "UPDATE operation_outputs SET output = :pickle, serialization = 'py_pickle' "
        "WHERE function_name = 'tool:refund'",
    ),
    "the run's inputs": (
        "UPDATE workflow_input SET inputs = :pickle WHERE workflow_uuid = 'run-1'",
        "UPDATE workflow_status SET serialization = 'py_pickle' WHERE workflow_uuid = 'run-1'",
    ),
}


def _write_pickle(database: Path, place: str, payload: object) -> None:
    pickled = base64.b64encode(pickle.dumps(payload)).decode()
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        for statement in PLACES[place]:
            assert connection.execute(statement, {"pickle": pickled}).rowcount == 1


@pytest.mark.parametrize("place", list(PLACES))
def test_a_pickle_written_into_the_run_database_is_refused_and_runs_nothing(
    place: str, tmp_path: Path
) -> None:
    start_and_kill(tmp_path, "native", "release")
    ran = tmp_path / "code-ran"
    _write_pickle(tmp_path / "runs.sqlite", place, _RunsCode(ran))

    result, log = finished_with_log(worker(tmp_path, "native", "release", "recover"))

    assert not ran.exists()
    assert result["error"] == "RecordError"
    assert result["status"] == "ERROR"
    assert (
        "is a Python pickle (DBOS's 'py_pickle'), and agents.durable never unpickles"
        in (result["message"])
    )
    assert "check who can write the run database" in result["message"]
    assert runs(tmp_path, "refund") == 1
    assert len(model_calls(tmp_path)) == 1  # the recovery made no call
    assert "never unpickles" in log  # the developer sees it in the logs too


def test_a_run_whose_inputs_are_not_plain_data_is_refused_and_no_log_holds_them(
    tmp_path: Path,
) -> None:
    # The run continues a conversation holding a card number and an API key, with an
    # extension state holding a lock (which no pickle, nor JSON, takes).
    result, log = finished_with_log(worker(tmp_path, "native", "secrets", "start"))

    assert CARD not in log + result["message"]
    assert KEY not in log + result["message"]
    assert "4111" not in log
    assert result["error"] == "RecordError"
    assert result["message"].startswith(
        "extension_state['session'] cannot be recorded: it is a lock holding something "
        "other than plain JSON data"
    )
    assert runs(tmp_path, "charge_card") == 0


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_an_output_over_the_limit_fails_its_call_alone_and_the_run_goes_on(
    database: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # DurableAgent(max_output_bytes=2000); the tool returns about 15 kB.
    url = request.getfixturevalue("postgres_url") if database == "postgres" else ""

    result, log = finished_with_log(worker(tmp_path, "native", "big", "start", database=url))

    message = result["error_message"]
    assert result["answer"] == f"Error: {message}"
    assert result["stopped_by"] == "answer"
    assert result["error_kind"] == "output_error"
    assert message.startswith("export returned 14,413 bytes of output;")  # as recorded
    assert "a durable run records at most 2,000 bytes of one call's output" in message
    assert "private table" not in message + log
    assert runs(tmp_path, "export") == 1


@pytest.mark.parametrize("status", [None, 504])
def test_a_recorded_model_timeout_reads_back_as_a_timeout(status: int | None) -> None:
    """A model call that timed out is recorded as its kind and message, and read back
    (by resume, or a recovering process) as the same class, still transient."""
    from agents.durable._serializer import RecordSerializer
    from agents.models import ModelTimeoutError

    serializer = RecordSerializer()
    read = serializer.deserialize(
        serializer.serialize(ModelTimeoutError("openai:m timed out", status_code=status))
    )
    assert isinstance(read, ModelTimeoutError)
    assert (str(read), read.status_code, read.transient) == ("openai:m timed out", status, True)
