"""`python -m agents eval` run as a user runs it: in a subprocess, offline, with no key
set and a wide console."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "eval_cli"]

ROOT = Path(__file__).resolve().parents[3]
"""The repository, where the command runs."""


def eval_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the command with ``args`` (and ``env`` added); the finished process."""
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
