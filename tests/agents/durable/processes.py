"""Worker processes for the crash tests: start one, kill it where it blocks, read its
output and what the scenario's tools and model wrote (`tests.agents.durable.worker`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.guards import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parents[3]
RUN = "run-1"
IMPORTED = "from tests.agents.durable import worker; worker.cli()"
"""The worker imported as ``tests.agents.durable.worker`` (its classes then live there,
not in ``__main__``)."""


def worker(
    directory: Path,
    kind: str,
    scenario: str,
    command: str,
    release: str = "v1",
    *,
    imported: bool = False,
    database: str = "",
) -> subprocess.Popen[str]:
    """Start a worker on the run ``run-1`` of ``scenario`` (see the worker's docstring)."""
    entry = ["-c", IMPORTED] if imported else ["-m", "tests.agents.durable.worker"]
    env = {**os.environ, "DURABLE_TEST_DATABASE": database}
    return subprocess.Popen(
        [sys.executable, *entry, str(directory), kind, scenario, command, RUN, release],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finished(process: subprocess.Popen[str]) -> dict[str, Any]:
    """The last JSON line the worker printed, once it exited cleanly."""
    return finished_with_log(process)[0]


def finished_with_log(process: subprocess.Popen[str]) -> tuple[dict[str, Any], str]:
    """The worker's last JSON line and everything it wrote to stderr (its logs)."""
    try:
        out, err = process.communicate(timeout=HANG_GUARD_SECONDS)
    except subprocess.TimeoutExpired:  # a run nobody finishes: fail, saying where it was
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the worker did not exit in {HANG_GUARD_SECONDS:.0f} s\n{err[-4000:]}")
    assert process.returncode == 0, err
    return dict(json.loads(out.strip().splitlines()[-1])), err


def wait_for(process: subprocess.Popen[str], reached: Callable[[], bool], what: str) -> None:
    """Wait until ``reached()`` (the worker did ``what``); fail if it exits first."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not reached():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the worker exited before it got to {what}: {out}\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            process.communicate()
            pytest.fail(f"the worker did not {what} in {HANG_GUARD_SECONDS:.0f} s")
        time.sleep(0.02)


def kill_when_blocked(directory: Path, process: subprocess.Popen[str]) -> None:
    """SIGKILL the worker once it signals it reached its blocking point."""
    signalled = directory / "blocked"
    wait_for(process, signalled.exists, "block")
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    (directory / "block").unlink()
    signalled.unlink()


def start_and_kill(directory: Path, kind: str, scenario: str, **options: Any) -> None:
    """Start the run in a worker and SIGKILL it at the scenario's blocking point."""
    (directory / "block").write_text("")
    kill_when_blocked(directory, worker(directory, kind, scenario, "start", **options))


def crash_and_recover(directory: Path, kind: str, scenario: str) -> dict[str, Any]:
    start_and_kill(directory, kind, scenario)
    return finished(worker(directory, kind, scenario, "recover"))


def runs(directory: Path, tool: str) -> int:
    path = directory / f"tool_{tool}.log"
    return len(path.read_text().splitlines()) if path.exists() else 0


def model_calls(directory: Path) -> list[str]:
    """The last message of every model call made, in both processes."""
    path = directory / "model_calls.jsonl"
    return [json.loads(line)["last"] for line in path.read_text().splitlines()]
