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


@pytest.mark.parametrize(
    "args",
    [(), ("--calls", "json"), ("--format", "markdown", "--calls", "json")],
)
def test_native_demo_runs_offline_and_moves_the_booking_to_aa102(args: tuple[str, ...]) -> None:
    status, output = run_cli("demo", "--native", *args)
    assert status == 0
    assert "native tool calls" in output
    # the model's calls, with the ids its replies gave them
    assert "→ get_customer_info(email='john.smith@email.com') [call_1]" in output
    assert "→ search_airline_policy(keyword='change') [call_3]" in output
    assert "→ reschedule_booking(booking_id='BK001', new_flight_number='AA102'" in output
    # each call answered by its own tool message, under the call's name and id
    assert "tool get_customer_info [call_1]" in output
    assert "tool reschedule_booking [call_8]" in output
    assert "Booking BK001 is now on flight AA102" in output
    assert output.count("Booking BK001 is now on flight AA102") == 1  # the answer, once
    assert "stopped by answer after 5 iterations, 8 tool calls" in output


def test_native_demo_shows_tool_outputs_in_the_chains_syntax() -> None:
    _, as_yaml = run_cli("demo", "--native")
    _, as_json = run_cli("demo", "--native", "--calls", "json")
    assert "tier: gold" in as_yaml
    assert '"tier":"gold"' in as_json
    rescheduled = as_yaml.split("tool reschedule_booking [call_8]", 1)[1]
    assert "  flight_number: AA102" in rescheduled  # the booking, as the tool returned it


def test_native_demo_with_an_unconfigured_model_says_which_variable_to_set() -> None:
    status, output = run_cli("demo", "--native", "--model", "nosuchprovider:some-model")
    assert status != 0
    assert "NOSUCHPROVIDER_API_KEY" in output


def test_demo_writes_a_trace(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    status, _ = run_cli("demo", "--trace", str(trace))
    assert status == 0
    events = [json.loads(line)["event"] for line in trace.read_text().splitlines()]
    assert events.count("BeforeToolCall") == 8
    assert events[-2:] == ["IterationFinished", "RunEnded"]


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


def test_module_entry_point_native() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agents", "demo", "--native"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "AA102" in completed.stdout
    assert "stopped by answer after 5 iterations" in completed.stdout
