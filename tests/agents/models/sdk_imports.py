"""Which provider SDKs a fresh interpreter has loaded, checkpoint by checkpoint.

The tests that need this run their code in a new interpreter: in the test process,
other tests have long imported the SDKs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["SDKS", "run_fresh"]

ROOT = Path(__file__).resolve().parents[3]
SDKS = ("openai", "anthropic", "httpx2")

# Prints the SDKs loaded so far, one line per checkpoint: "<label>: a,b".
_PRELUDE = f"""
import sys
def loaded(label):
    names = [name for name in {SDKS!r} if name in sys.modules]
    print(f"{{label}}: {{','.join(names)}}", flush=True)
"""


def run_fresh(code: str) -> dict[str, set[str]]:
    """Run ``code`` in a new interpreter; the SDKs loaded at each ``loaded(label)``."""
    script = _PRELUDE + textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    checkpoints: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        label, _, names = line.partition(": ")
        checkpoints[label] = set(filter(None, names.split(",")))
    return checkpoints
