"""`python -m agents eval`, run as a user runs it: in a subprocess, offline, on the
ported cases' recordings."""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from agents.cli import main
from agents.evals import CaseResult, EvalReport, EvalSettings, load_case, parse_case
from agents.evals.cli import make_console
from agents.evals.runner import cassette_path
from tests.agents.evals.eval_command import ROOT, eval_cli
from tests.agents.evals.recording import MODEL_NAME, PROMPTS
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer

RELAY = str((PROMPTS / "relay" / "*.md").relative_to(ROOT))
AIRLINE = str((PROMPTS / "airline" / "*.md").relative_to(ROOT))


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


# -- hostile input (issue 17's review): usage errors, not tracebacks ---------------------

HOSTILE_REPLY = "[/b] openai:x: \x1b]0;pwned\x07\x1b[2J\x9b31m end"
HOSTILE_SHOWN = "[/b] openai:x: \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m end"


def cassette_for(case_file: Path, cassettes: Path) -> Path:
    """Where ``--replay --cassettes`` looks for ``case_file``'s recording on MODEL_NAME."""
    case = load_case(case_file)
    return cassette_path(case, MODEL_NAME, EvalSettings(cassette_dir=cassettes))


def one_cassette(usage: str) -> str:
    return (
        '{"version": 1, "interactions": [{"key": "k", "request": {"messages": []}, '
        f'"response": {{"text": "hi", "stop_reason": "stop", "usage": {usage}}}}}]}}'
    )


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("today: 2026-13-45", "today: expected a date such as 2026-03-05, got '2026-13-45'"),
        ("max_steps: " + "9" * 5000, "line 2, column 12: a number 5,000 characters long"),
        ("toolset: os:system", "toolset: toolset 'os:system' is not a toolset factory"),
        ("id: ..", "id: '..' cannot be a case id: it names a folder"),
        ("id: .", "id: '.' cannot be a case id: it names a folder"),
    ],
)
def test_a_hostile_case_file_is_a_usage_error(
    tmp_path: Path, frontmatter: str, message: str
) -> None:
    case = tmp_path / "case.md"
    case.write_text(f"---\n{frontmatter}\n---\nHi.\n")
    run = eval_cli("--file", str(case), "--model", MODEL_NAME, "--replay")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"error: {case}: {message}" in " ".join(run.stdout.split())
    assert run.stderr == ""
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize(
    ("cassette", "message"),
    [
        (one_cassette('{"input_tokens": 1e999}'), "usage.input_tokens must be a count of tokens"),
        ("[" * 100_000 + "]" * 100_000, "nested more than 200 levels deep"),
    ],
)
def test_a_hostile_cassette_is_a_setup_error(tmp_path: Path, cassette: str, message: str) -> None:
    case = tmp_path / "hi.md"
    case.write_text("Say hi.\n")
    recording = cassette_for(case, tmp_path / "cassettes")
    recording.parent.mkdir(parents=True)
    recording.write_text(cassette)
    run = eval_cli(
        "--file", str(case), "--model", MODEL_NAME, "--replay",
        "--cassettes", str(tmp_path / "cassettes"),
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    shown = " ".join(run.stdout.split())
    assert "the model could not be set up" in shown and message in shown
    assert run.stderr == ""


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_case_path_that_is_not_a_regular_file_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    if kind == "fifo":
        path = tmp_path / "case.md"
        os.mkfifo(path)  # opening it to read would wait for a writer forever
    else:
        path = Path(kind)
        if not path.exists():
            pytest.skip("no /dev/zero here")
    run = eval_cli("--file", str(path), "--model", MODEL_NAME, "--replay")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"error: {path}: not a regular file" in " ".join(run.stdout.split())


def test_a_model_reply_reaches_the_console_escaped_never_as_markup_or_controls() -> None:
    with LoopbackServer() as server:
        server.respond_with(chat_script([f"<answer>{HOSTILE_REPLY}</answer>"], chunk_size=5))
        run = eval_cli(
            "Say hi.", "--model", "openai:x", "--no-show-system-instruction",
            env={"OPENAI_API_KEY": "sk-loopback-test", "OPENAI_API_BASE": server.openai_base_url},
        )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert HOSTILE_SHOWN in run.stdout
    assert not any(control in run.stdout for control in ("\x1b", "\x07", "\x9b"))
    assert "openai:x" in run.stdout and "❌" not in run.stdout


def test_the_markdown_report_writes_control_characters_out() -> None:
    case = parse_case("Hi.", path="case0.md")
    failed = CaseResult(case, "m", EvalSettings(), (f"answer was {HOSTILE_REPLY}",), "answer")
    table = EvalReport([failed]).to_markdown()
    assert "\\x1b]0;pwned\\x07" in table and "\x1b" not in table


def single_run_cpu_seconds(reply_chars: int, monkeypatch: pytest.MonkeyPatch) -> float:
    """CPU time of one in-process ``eval`` of a prompt whose reply is ``reply_chars`` long."""
    reply = "<answer>" + "a line of a long answer\n" * (reply_chars // 24) + "</answer>"
    with LoopbackServer() as server:
        server.respond_with(chat_script([reply], chunk_size=1 << 20))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
        monkeypatch.setenv("OPENAI_API_BASE", server.openai_base_url)
        started = time.process_time()
        status = main(
            ["eval", "Say hi.", "--model", "openai:x", "--no-env-file"],
            console=Console(file=io.StringIO(), width=120),
        )
        spent = time.process_time() - started
    assert status == 0
    return spent


def test_the_single_run_view_grows_linearly_with_the_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    single_run_cpu_seconds(10_000, monkeypatch)  # imports and first calls, not measured
    # Sixteen times the reply: at most sixteen times the work (reading the reply is
    # linear; laying it out must not be more): rich laying all of it out cost twenty
    # times. About eight times here alone; ten and a half in a random-order run whose
    # earlier tests left more per-byte work on (capture of content in traces: 9.8 times
    # alone), still linear, so the bound is the linear one, not a guess below it. A
    # ratio, not a time limit, measured again when a busy machine blurs one measurement.
    ratios: list[str] = []
    for _ in range(3):
        small = single_run_cpu_seconds(125_000, monkeypatch)
        large = single_run_cpu_seconds(2_000_000, monkeypatch)
        if large < 16 * small + 0.05:
            return
        ratios.append(f"{small:.3f}s -> {large:.3f}s")
    raise AssertionError(f"super-linear every time: {', '.join(ratios)}")
