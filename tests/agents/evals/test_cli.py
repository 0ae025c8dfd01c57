"""`python -m agents eval`, run as a user runs it: in a subprocess, offline, on the
ported cases' recordings."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.text import Text

from agents.evals.cli import make_console
from tests.agents.evals.recording import MODEL_NAME, PROMPTS

ROOT = Path(__file__).resolve().parents[3]
RELAY = str((PROMPTS / "relay" / "*.md").relative_to(ROOT))
AIRLINE = str((PROMPTS / "airline" / "*.md").relative_to(ROOT))


def eval_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_COLOR")) and key != "COLUMNS"
    }
    environ.update({"COLUMNS": "160", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "agents", "eval", "--no-env-file", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_relay_cases_replay_and_write_reports(tmp_path: Path) -> None:
    run = eval_cli(
        "--glob", RELAY, "--model", MODEL_NAME, "--replay",
        "--report-md", str(tmp_path / "r.md"),
        "--report-json", str(tmp_path / "r.json"),
        "--report-html", str(tmp_path / "r.html"),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 passed, 0 failed" in run.stdout
    table = (tmp_path / "r.md").read_text().splitlines()
    assert [line.split(" | ")[1] for line in table[2:]] == [
        "case0", "case1", "case2", "case3", "case4", "web1",
    ]  # fmt: skip
    assert all(" | ✅ | text | opaque | " in line for line in table[2:])
    assert json.loads((tmp_path / "r.json").read_text())["passed"] == 6
    assert "6 passed, 0 failed" in (tmp_path / "r.html").read_text()


def test_the_airline_cases_replay_natively_and_dump_their_context() -> None:
    run = eval_cli(
        "--glob",
        AIRLINE,
        "--model",
        MODEL_NAME,
        "--replay",
        "--protocol",
        "native",
        "--dump-context",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    dump = json.loads(run.stdout[run.stdout.index('{\n  "runs"') :])
    baggage, reschedule = dump["runs"]
    assert (baggage["case"], reschedule["case"]) == ("baggage", "reschedule")
    assert reschedule["messages"][0]["role"] == "system"
    assert any(m.get("tool_calls") for m in reschedule["messages"])
    assert '"checked_bag_fee_usd": 35' in baggage["messages"][-1]["content"][0]["text"]


def test_a_single_run_shows_its_conversation() -> None:
    case = str(PROMPTS.relative_to(ROOT) / "relay" / "case3.md")
    shown = eval_cli("--file", case, "--model", MODEL_NAME, "--replay", "--protocol", "native")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "context_relay" in shown.stdout  # the system instruction (the relay's guide)
    assert "internal_resource_read_slice" in shown.stdout and "✅ case3: passed" in shown.stdout
    hidden = eval_cli(
        "--file", case, "--model", MODEL_NAME, "--replay", "--protocol", "native",
        "--no-show-system-instruction",
    )  # fmt: skip
    assert "context_relay" not in hidden.stdout and "✅ case3: passed" in hidden.stdout


def test_a_changed_prompt_fails_the_run_and_the_exit_status(tmp_path: Path) -> None:
    shutil.copytree(PROMPTS / "relay", tmp_path / "relay")
    case = tmp_path / "relay" / "case2.md"
    case.write_text(case.read_text().replace("'transcript.txt'", "'notes.txt'"))
    run = eval_cli(
        "--file", str(case), "--model", MODEL_NAME, "--replay", "--no-show-system-instruction"
    )
    assert run.returncode == 1
    assert "no recording for this request (prompt changed?)" in " ".join(run.stdout.split())
    assert "0 passed, 1 failed" in run.stdout


def test_usage_errors_exit_2_and_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("---\ntool_calls: [{opaque_id_input: true}]\n---\nGo.")
    run = eval_cli("--file", str(bad), "--model", MODEL_NAME, "--replay")
    assert run.returncode == 2
    assert f"{bad}: tool_calls[0].tool_name: missing" in " ".join(run.stdout.split())
    assert eval_cli("--model", MODEL_NAME).returncode == 2  # no prompt, no cases
    unconfigured = eval_cli("Hi.", "--profile", "bielik")
    assert unconfigured.returncode == 2 and "BIELIK_PROVIDER" in unconfigured.stdout


def test_print_tools_and_the_temperature_note() -> None:
    run = eval_cli(
        "Say hi.", "--model", "openai:gpt-5-mini", "--temperature", "0.2", "--replay",
        "--print-tools", "--no-show-system-instruction",
    )  # fmt: skip
    assert run.returncode == 1  # nothing recorded for this prompt: a failure, never a live call
    assert "relay · yt_transcribe" in run.stdout and "relay · internal_resource_grep" in run.stdout
    assert "temperature 0.2 ignored: openai:gpt-5-mini is a reasoning model" in run.stdout
    assert "there is no cassette" in " ".join(run.stdout.split())


def test_colors_follow_the_flag_then_the_environment() -> None:
    def styled(color: str, env: dict[str, str]) -> str:
        out = io.StringIO()
        make_console(color, env=env, file=out).print(Text("x", style="red"))  # type: ignore[arg-type]
        return out.getvalue()

    assert "\x1b[" in styled("always", {"NO_COLOR": "1"})
    assert "\x1b[" not in styled("never", {"FORCE_COLOR": "1"})
    assert "\x1b[" not in styled("auto", {"NO_COLOR": "1"})
    assert "\x1b[" in styled("auto", {"FORCE_COLOR": "1"})
    assert "\x1b[" not in styled("auto", {})  # a StringIO is no terminal


@pytest.mark.parametrize(("flag", "colored"), [("always", True), ("never", False)])
def test_the_color_flag_end_to_end(flag: str, colored: bool) -> None:
    run = eval_cli(
        "--glob", RELAY, "--model", MODEL_NAME, "--replay", "--color", flag, env={"NO_COLOR": "1"}
    )
    assert ("\x1b[" in run.stdout) is colored
