"""`python -m agents demo`, as a user runs it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agents.cli import main


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(args), console=Console(file=out, width=100, color_system=None))
    return status, out.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--format", "markdown"),
        ("--calls", "json"),
        ("--format", "markdown", "--calls", "json"),
    ],
)
def test_demo_runs_offline_and_answers(args: tuple[str, ...]) -> None:
    status, output = run_cli("demo", *args)
    assert status == 0
    assert "→ get_customer_info(email='john.smith@email.com')" in output
    assert "→ reschedule_booking(booking_id='BK001', new_flight_number='AA102'" in output
    assert "Booking BK001 is now on flight AA102" in output
    assert "stopped by answer after 5 iterations, 8 tool calls" in output


def test_demo_writes_a_trace(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    status, _ = run_cli("demo", "--trace", str(trace))
    assert status == 0
    events = [json.loads(line)["event"] for line in trace.read_text().splitlines()]
    assert events.count("BeforeToolCall") == 8
    assert events[-1] == "IterationFinished"


def test_demo_with_an_unconfigured_model_says_which_variable_to_set() -> None:
    status, output = run_cli("demo", "--model", "nosuchprovider:some-model")
    assert status != 0
    assert "NOSUCHPROVIDER_API_KEY" in output


def test_module_entry_point() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agents", "demo", "--calls", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "stopped by answer" in completed.stdout
