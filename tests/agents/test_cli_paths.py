"""Paths named on the command line that cannot be written: one line, exit status 2.

``python -m agents demo --trace FILE`` and ``python -m agents eval --report-json FILE``
(and ``--report-md``, ``--report-html``, ``--cassettes``), run as a user runs them, in
a subprocess. Before, a FIFO made them wait forever for a reader, a directory ended in
an ``IsADirectoryError`` traceback and ``/dev/full`` in an ``OSError`` one. Now a path
that exists and is not a regular file is refused before anything runs (and before it is
opened, so a FIFO cannot block), and a write that fails (a full disk, played here by a
file-size limit, ``RLIMIT_FSIZE``, on the child process) is reported in one line.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.evals.eval_command import eval_cli
from tests.agents.evals.recording import MODEL_NAME
from tests.agents.evals.test_cli import cassette_for
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion

KINDS = ["fifo", "directory", "/dev/full"]
WHAT = {"fifo": "a FIFO", "directory": "a directory", "/dev/full": "a device"}


def _path(tmp_path: Path, kind: str) -> Path:
    if kind == "/dev/full":
        if not Path(kind).exists():
            pytest.skip("no /dev/full here")
        return Path(kind)
    path = tmp_path / "out"
    if kind == "fifo":
        os.mkfifo(path)  # opening it to write would wait for a reader forever
    else:
        path.mkdir()
    return path


def _small_files() -> None:
    """In the child: files may grow to 1 KB, then a write fails with EFBIG (Python
    ignores SIGXFSZ), as a full disk fails with ENOSPC."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def demo(*args: str, small_files: bool = False) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_COLOR")}
    environ["COLUMNS"] = "100"  # narrower than the messages: they must not wrap
    return subprocess.run(
        [sys.executable, "-m", "agents", "demo", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_small_files if small_files else None,
    )


def _last_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr == ""  # no traceback, no logged observer failures
    return run.stdout.splitlines()[-1]


@pytest.mark.parametrize("kind", KINDS)
def test_a_trace_path_that_is_no_regular_file_is_refused_before_the_run(
    tmp_path: Path, kind: str
) -> None:
    path = _path(tmp_path, kind)
    run = demo("--trace", str(path))
    assert _last_line(run) == f"error: --trace {path}: {WHAT[kind]}, not a regular file"
    assert run.stdout.count("\n") == 1  # nothing ran before it


def test_a_trace_that_fills_the_disk_ends_in_one_line_and_the_run_still_answers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    run = demo("--trace", str(path), small_files=True)
    assert _last_line(run) == f"error: --trace {path}: cannot be written: File too large"
    assert "stopped by answer after 5 steps" in run.stdout
    assert path.stat().st_size == 1024  # written up to the limit, then dropped


@pytest.mark.parametrize("option", ["--report-json", "--report-md", "--report-html"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_report_path_that_is_no_regular_file_is_refused_before_any_case_runs(
    tmp_path: Path, option: str, kind: str
) -> None:
    path = _path(tmp_path, kind)
    run = eval_cli("--suite", "airline", "--replay", option, str(path))
    assert _last_line(run) == f"error: {option} {path}: {WHAT[kind]}, not a regular file"
    assert "passed" not in run.stdout


def test_reports_that_fill_the_disk_end_in_one_line_each(tmp_path: Path) -> None:
    json_report, html = tmp_path / "r.json", tmp_path / "r.html"
    run = eval_cli(
        "--suite", "relay", "--replay",
        "--report-json", str(json_report), "--report-html", str(html),
        "--report-md", str(tmp_path / "r.md"),
        preexec_fn=_small_files,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr == ""
    assert run.stdout.splitlines()[-2:] == [
        f"error: --report-json {json_report}: cannot be written: File too large",
        f"error: --report-html {html}: cannot be written: File too large",
    ]
    assert "6 passed, 0 failed" in run.stdout
    assert (tmp_path / "r.md").read_text().count(" | ✅ | ") == 6  # the small one is whole


@pytest.mark.parametrize("kind", ["fifo", "file", "/dev/full"])
def test_a_cassettes_path_that_is_no_folder_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "file" if kind == "file" else _path(tmp_path, kind)
    if kind == "file":
        path.write_text("")
    run = eval_cli("--suite", "airline", "--replay", "--cassettes", str(path))
    assert _last_line(run) == f"error: --cassettes {path}: not a folder"


def test_a_fifo_where_a_cassette_should_be_fails_that_case_without_waiting(
    tmp_path: Path,
) -> None:
    case = tmp_path / "hi.md"
    case.write_text("Say hi.\n")
    recording = cassette_for(case, tmp_path / "cassettes")
    recording.parent.mkdir(parents=True)
    os.mkfifo(recording)
    run = eval_cli(
        "--file", str(case), "--model", MODEL_NAME, "--replay",
        "--cassettes", str(tmp_path / "cassettes"),
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{recording}: a FIFO, not a regular file" in " ".join(run.stdout.split())


def test_a_recording_that_cannot_be_written_fails_the_case_with_status_2(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    case = tmp_path / "hi.md"
    case.write_text("Say hi.\n")
    recording = cassette_for(case, tmp_path / "cassettes")
    recording.mkdir(parents=True)  # a folder where the cassette file goes
    loopback.enqueue(openai_completion("<answer>hi</answer>"))
    env = {"LOOPBACK_API_BASE": loopback.openai_base_url, "LOOPBACK_API_KEY": "sk-loopback"}
    run = eval_cli(
        "--file", str(case), "--model", MODEL_NAME, "--record",
        "--cassettes", str(tmp_path / "cassettes"),
        env=env,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr == ""
    shown = " ".join(run.stdout.split())
    assert f"the cassette could not be written: {recording}: a directory" in shown
    assert len(loopback.requests) == 1  # the model was called once, as recording does
