"""`python -m agents eval` run as a user runs it: in a subprocess, offline, with no key
set and a wide console."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["ROOT", "eval_cli"]

ROOT = Path(__file__).resolve().parents[3]
"""The repository, where the command runs."""


def eval_cli(
    *args: str,
    env: dict[str, str] | None = None,
    env_file: bool = False,
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the command with ``args`` (and ``env`` added); the finished process. No
    ``.env`` file is read unless ``env_file`` (then ``args`` name one); ``preexec_fn``
    runs in the child before the command (to set a resource limit, say)."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_COLOR")) and key != "COLUMNS"
    }
    environ.update({"COLUMNS": "160", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "agents", "eval", *([] if env_file else ["--no-env-file"]), *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=preexec_fn,
    )
