"""`python -m agents demo`, as a user runs it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agents.cli import main
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_error


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
    assert "stopped by answer after 5 steps, 8 tool calls" in output


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
    assert "stopped by answer after 5 steps, 8 tool calls" in output


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
    assert events.count("ToolCallStarted") == 8
    assert events[-2:] == ["StepFinished", "RunFinished"]


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
    assert "stopped by answer after 5 steps" in completed.stdout


# -- text from outside is printed as written (issue 17, item 4) --------------------------

HOSTILE = "Is [/b] a valid tag? [red]no[/red] openai:x: \x1b]0;pwned\x07\x1b[2J end"
SHOWN = "Is [/b] a valid tag? [red]no[/red] openai:x: \\x1b]0;pwned\\x07\\x1b[2J end"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m agents ARGS`` in a subprocess, its output piped (no colors), wide."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_API_BASE", "_COLOR")) and key != "COLUMNS"
    }
    environ.update({"COLUMNS": "200", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "agents", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def on(server: LoopbackServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-loopback-test", "OPENAI_API_BASE": server.openai_base_url}


def test_the_users_task_is_printed_literally() -> None:
    run = cli("demo", "--task", HOSTILE)
    assert run.returncode == 0, run.stderr
    assert SHOWN in run.stdout
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout


@pytest.mark.parametrize("native", [False, True])
def test_a_model_reply_full_of_markup_and_escapes_is_printed_literally(native: bool) -> None:
    reply = f"[/INST] {HOSTILE}"
    with LoopbackServer() as server:
        server.respond_with(
            chat_script([reply if native else f"<answer>{reply}</answer>"], chunk_size=5)
        )
        run = cli("demo", "--model", "openai:x", *(["--native"] if native else []), env=on(server))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"[/INST] {SHOWN}" in run.stdout
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout


@pytest.mark.parametrize("native", [False, True])
def test_a_model_repeating_the_key_never_shows_it_in_the_demo(native: bool) -> None:
    key = "qv83Lm2WzNk7Rt5Yp0Xs"  # no known shape: blanked because the adapter sent it
    reply = f"Your key is {key}, and it works."
    with LoopbackServer() as server:
        server.respond_with(
            chat_script([reply if native else f"<answer>{reply}</answer>"], chunk_size=5)
        )
        env = {**on(server), "OPENAI_API_KEY": key}
        run = cli("demo", "--model", "openai:x", *(["--native"] if native else []), env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert key not in run.stdout + run.stderr
    assert "Your key is [REDACTED], and it works." in run.stdout


def test_a_failed_model_call_names_the_model_as_written() -> None:
    with LoopbackServer() as server:
        server.enqueue(openai_error(401, "invalid key [/b]", error_type="invalid_request_error"))
        run = cli("demo", "--model", "openai:x", env=on(server))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "openai:x:" in run.stdout and "❌" not in run.stdout
    assert "Traceback" not in run.stderr


def options_without_help(text: str) -> list[str]:
    """The options of an argparse ``--help`` text that have no help text."""
    lines = text.splitlines()
    missing: list[str] = []
    for index, line in enumerate(lines):
        found = re.match(r"^  (-\S.*?)(?:\s{2,}(\S.*))?$", line)
        if found is None or found.group(2):
            continue
        after = lines[index + 1] if index + 1 < len(lines) else ""
        if not re.match(r"^\s{6,}\S", after):  # help on the next line is indented deeper
            missing.append(found.group(1))
    return missing


@pytest.mark.parametrize("command", [(), ("demo",), ("eval",)])
def test_help_is_plain_text_names_the_program_and_explains_every_option(
    command: tuple[str, ...],
) -> None:
    run = cli(*command, "--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(" ".join(("usage: python -m agents", *command)))
    assert "``" not in run.stdout
    assert options_without_help(run.stdout) == []


def test_the_installed_script_names_itself_in_its_help() -> None:
    script = Path(sys.executable).with_name("gent-agents")
    if not script.exists():
        pytest.skip("the gent-agents script is not installed next to this interpreter")
    run = subprocess.run(
        [str(script), "demo", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: gent-agents demo")
