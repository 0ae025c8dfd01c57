"""Import cost: how long ``import formats`` / ``toolchain`` / ``agents`` take, and what they weigh.

Each case runs in a fresh interpreter (``sys.executable``, same environment), so no
module is cached from an earlier case. The child times its own import with
``time.perf_counter`` and reads its resident set size before and after
(``/proc/self/statm``; the peak from ``resource.getrusage`` where there is no
``/proc``), so the figures exclude interpreter start-up; the parent also times
the whole process, compared with a ``python -c pass`` baseline run in the same rounds.
Cases run round-robin (one of each per round), so a busy moment slows all alike;
medians are reported. The last column says whether the ``openai``, ``anthropic`` or
``httpx2`` SDKs were loaded: plain ``import agents`` should load none of them.

Run alone with ``python -m benchmarks.import_time [--quick]`` or as the ``imports``
part of ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks._timing import Settings, render_table

__all__ = ["CASES", "Case", "Sample", "main", "measure", "run"]

HEAVY = ("openai", "anthropic", "httpx2", "dbos", "sqlalchemy")
_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Case:
    """One thing to import in a fresh interpreter: a label and the statements to time."""

    label: str
    code: str


CASES: tuple[Case, ...] = (
    Case("python -c pass (baseline)", "pass"),
    Case("import formats", "import formats"),
    Case("import toolchain", "import toolchain"),
    Case("import agents", "import agents"),
    Case(
        "import agents + OpenAIChatModel(...)",
        "import agents\n"
        "agents.OpenAIChatModel('m', api_key='unused', base_url='http://127.0.0.1:9/v1')",
    ),
)

# Runs in the child: times ``code`` and reports the figures as one JSON line on stdout.
_CHILD = """\
import json, os, resource, sys, time

def rss():
    try:  # Linux: the resident set now
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # elsewhere: the peak so far (bytes on macOS, KiB on other systems)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024

code = sys.argv[1]
before_rss, before_modules = rss(), len(sys.modules)
started = time.perf_counter()
exec(compile(code, "<case>", "exec"), {"__name__": "__case__"})
elapsed = time.perf_counter() - started
after_rss = rss()
heavy = sorted(name for name in sys.argv[2:] if name in sys.modules)
print(json.dumps({
    "seconds": elapsed,
    "rss_growth": after_rss - before_rss,
    "modules": len(sys.modules) - before_modules,
    "heavy": heavy,
}))
"""


@dataclass(frozen=True, slots=True)
class Sample:
    """One fresh-interpreter run of a case."""

    wall_s: float
    import_s: float
    rss_growth_bytes: int
    modules: int
    heavy: tuple[str, ...]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(_ROOT) if not path else os.pathsep.join([str(_ROOT), path])
    return env


def _run_case(case: Case, env: dict[str, str]) -> Sample:
    command = [sys.executable, "-c", _CHILD, case.code, *HEAVY]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{case.label!r} failed in a fresh interpreter:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return Sample(
        wall_s=wall,
        import_s=float(figures["seconds"]),
        rss_growth_bytes=int(figures["rss_growth"]),
        modules=int(figures["modules"]),
        heavy=tuple(figures["heavy"]),
    )


def measure(
    cases: Sequence[Case], *, rounds: int, seconds: float, min_rounds: int = 3
) -> list[list[Sample]]:
    """``rounds`` round-robin runs of every case (fewer past ``seconds``, never < min_rounds)."""
    env = _environment()
    samples: list[list[Sample]] = [[] for _ in cases]
    deadline = time.perf_counter() + seconds
    for done in range(1, max(rounds, min_rounds) + 1):
        for case, out in zip(cases, samples, strict=True):
            out.append(_run_case(case, env))
        if done >= min_rounds and time.perf_counter() > deadline:
            break
    return samples


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def run(settings: Settings) -> None:
    """Print the import-cost table (one of the ``python -m benchmarks`` parts)."""
    print("## Import cost (fresh interpreter per run)")
    print()
    samples = measure(CASES, rounds=settings.runs(15), seconds=settings.seconds(60.0))
    baseline_wall = _median([s.wall_s for s in samples[0]])
    rows: list[list[str]] = []
    for case, runs in zip(CASES, samples, strict=True):
        wall = _median([s.wall_s for s in runs])
        rows.append(
            [
                case.label,
                f"{_median([s.import_s for s in runs]) * 1000:,.0f}",
                f"{wall * 1000:,.0f}",
                f"{(wall - baseline_wall) * 1000:+,.0f}",
                f"{_median([s.rss_growth_bytes for s in runs]) / 2**20:.1f}",
                f"{_median([s.modules for s in runs]):.0f}",
                ", ".join(runs[-1].heavy) or "-",
                str(len(runs)),
            ]
        )
    headers = [
        "case",
        "import ms",
        "process ms",
        "vs baseline ms",
        "RSS +MiB",
        "modules",
        "SDKs loaded",
        "runs",
    ]
    print(render_table(headers, rows, "lrrrrrll"))
    print()
    print(
        "import ms: timed inside the child around the statements; process ms: the whole "
        "child process, wall clock; RSS +MiB: growth of the resident set across the statements; "
        "medians"
    )
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.import_time", description="Import time and memory."
    )
    parser.add_argument("--quick", action="store_true", help="a short run (1/5 of the runs)")
    args = parser.parse_args(argv)
    run(Settings(quick=args.quick))


if __name__ == "__main__":
    main()
