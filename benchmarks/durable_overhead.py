"""Durable runs: what recording every step in DBOS costs, against the same run made plain.

The loop benchmark's scenario (10 steps: 9 turns of two parallel ``lookup`` calls, then
an answer, on an instant model and trivial tools), for both agents, each run two ways
round-robin in one process: plain (``agent.run``) and durable (``DurableAgent.run``, a
DBOS workflow on a SQLite file in a temporary directory, DBOS launched in this process).
A durable run records the model call of each step and, for each tool call, a mark that
it started and its outcome, plus the workflow's own rows: nearly all its extra time is
those commits, so it is measured twice: with the SQLite file as ``agents.durable.launch``
sets it (write-ahead log) and as DBOS alone leaves it (rollback journal: each commit
syncs the file and its journal), DBOS then launched directly.
Reported: durable / plain, the extra µs per step and per recorded step. No target: the
figure is for judging when durability is worth its cost.

Two checks that the plain path is unchanged when ``agents.durable`` is not used:

- ``python -X importtime -c "import agents"`` in a fresh interpreter loads no module of
  DBOS, SQLAlchemy or psycopg, nor ``agents.durable`` (target: none);
- a plain run with the durable seam of ``toolchain`` on (as it stays in a process once a
  durable run has started there) against the seam never used, round-robin in this
  process once DBOS is shut down (target: within 5 %).

Needs the ``[durable]`` extra; skipped without it. Run last in ``python -m benchmarks``:
it launches DBOS in the process (shut down, and the seam switched back off, at the end).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks._timing import Job, Settings, Timing, measure_jobs_sync, render_table, verdict
from benchmarks.loop_overhead import (
    ITERATIONS,
    InstantModel,
    agent_run,
    build,
    build_native,
)
from toolchain.chain import _step_seam

if TYPE_CHECKING:
    from agents import AgentResult, ReActAgent, ToolCallingAgent
    from agents.durable import DurableAgent

SEAM_TARGET = 1.05
DURABLE_MODULES = ("dbos", "sqlalchemy", "psycopg")
_ROOT = Path(__file__).resolve().parent.parent


def modules_loaded_by_import_agents() -> list[str]:
    """The DBOS, SQLAlchemy and psycopg modules a fresh ``import agents`` loads (by
    ``python -X importtime``, which lists every module imported)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import agents"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    names = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    return sorted(
        name
        for name in names
        if name.split(".")[0] in DURABLE_MODULES or name.startswith("agents.durable")
    )


def durably(
    durable: DurableAgent[str], model: InstantModel
) -> Callable[[], Awaitable[AgentResult[str]]]:
    async def once() -> AgentResult[str]:
        model.turn = 0
        model.clock.runs += 1
        result = await durable.run("Find the answer.")
        if not result.ok or len(result.steps) != ITERATIONS:
            raise RuntimeError(f"the durable run did not finish as scripted: {result.stopped_by}")
        return result

    return once


def with_seam(
    on: bool, agent: ReActAgent[str] | ToolCallingAgent[str], model: InstantModel
) -> Callable[[], Awaitable[None]]:
    async def once() -> None:
        _step_seam.active = on
        await agent_run(agent, model)

    return once


def run(settings: Settings) -> None:
    """Measure and print the cost of durable runs, and check the plain path."""
    print(f"== Durable runs (DBOS on SQLite): the {ITERATIONS}-step loop run, durable and not ==")
    loaded = modules_loaded_by_import_agents()
    print(
        f"import agents loads DBOS/SQLAlchemy/psycopg modules: {', '.join(loaded) or 'none'} "
        f"(python -X importtime); target none: {verdict(not loaded)}"
    )
    try:
        from agents.durable import DurableAgent
    except ImportError as error:
        print(f"skipped: agents.durable needs the [durable] extra ({error})\n")
        return
    was_active = _step_seam.active
    text, text_model, _ = build()
    native, native_model, _ = build_native()
    plain_text, plain_text_model, text_clock = build()
    plain_native, plain_native_model, native_clock = build_native()
    durable_text = DurableAgent(text, name="bench-durable-react")
    durable_native = DurableAgent(native, name="bench-durable-native")
    groups: dict[str, tuple[list[Timing], int]] = {}
    try:
        for journal in ("WAL (as launch() sets it)", "rollback journal (DBOS's own default)"):
            with tempfile.TemporaryDirectory(prefix="gent-bench-durable-") as directory:
                database = Path(directory) / "runs.sqlite"
                groups[journal] = _measure(
                    settings,
                    database,
                    journal.startswith("WAL"),
                    [
                        Job.awaited(with_seam(False, plain_text, plain_text_model), 200, warmup=5),
                        Job.awaited(durably(durable_text, text_model), 20, warmup=2),
                        Job.awaited(
                            with_seam(False, plain_native, plain_native_model), 200, warmup=5
                        ),
                        Job.awaited(durably(durable_native, native_model), 20, warmup=2),
                    ],
                    durable_text,
                    text_model,
                )
        # DBOS is shut down now, its threads gone: the plain runs alone, as a process
        # that used durable runs earlier and no longer does runs them.
        seam = measure_jobs_sync(
            [
                Job.awaited(with_seam(on, agent, model), 300, warmup=5)
                for agent, model in (
                    (plain_text, plain_text_model),
                    (plain_native, plain_native_model),
                )
                for on in (False, True)
            ],
            settings,
            seconds=20.0,
        )
    finally:
        _step_seam.active = was_active
    for journal, (timings, steps) in groups.items():
        _report_durable(journal, timings, steps)
    _report_seam(seam, text_clock.per_run_ms(), native_clock.per_run_ms())


def _measure(
    settings: Settings,
    database: Path,
    through_launch: bool,
    jobs: list[Job],
    durable: DurableAgent[str],
    model: InstantModel,
) -> tuple[list[Timing], int]:
    """Launch DBOS on ``database`` (through ``launch`` or directly, leaving the file in
    its rollback journal), count one run's recorded steps, time ``jobs``."""
    from dbos import DBOS, DBOSConfig

    from agents.durable import launch, shutdown
    from agents.durable._serializer import record_settings

    url = f"sqlite:///{database}"
    if through_launch:
        launch(url, name="gent-bench")
    else:  # everything launch() sets but the journal: durable runs record in its format
        config: DBOSConfig = {"name": "gent-bench", "system_database_url": url}
        DBOS(config={**config, "log_level": "WARNING", **record_settings(None)})
        DBOS.launch()
    try:
        steps = asyncio.run(_recorded(durable, model))
        return measure_jobs_sync(jobs, settings, seconds=25.0), steps
    finally:
        shutdown()


async def _recorded(durable: DurableAgent[str], model: InstantModel) -> int:
    """How many DBOS steps one durable run records."""
    from dbos import DBOS

    model.turn = 0
    started = await durable.start("Find the answer.")
    await started.result()
    return len(await DBOS.list_workflow_steps_async(started.workflow_id))


def _report_durable(journal: str, timings: list[Timing], steps: int) -> None:
    plain_text, durable_text, plain_native, durable_native = timings[:4]
    rows = []
    for label, plain, durable in (
        ("ReActAgent (text)", plain_text, durable_text),
        ("ToolCallingAgent (native)", plain_native, durable_native),
    ):
        extra_ms = durable.median_ms - plain.median_ms
        rows.append(
            [
                label,
                f"{plain.median_ms:.3f}",
                f"{durable.median_ms:.3f}",
                f"{durable.median_ms / plain.median_ms:,.1f}x",
                f"{extra_ms * 1000 / ITERATIONS:,.0f}",
                f"{extra_ms * 1000 / steps:,.0f}",
                f"{plain.iqr_percent:.0f}% / {durable.iqr_percent:.0f}%",
                f"{plain.runs} / {durable.runs}",
            ]
        )
    headers = [
        "agent",
        "plain ms",
        "durable ms",
        "durable/plain",
        "extra µs/step",
        "extra µs/recorded step",
        "IQR",
        "runs",
    ]
    print(f"SQLite in {journal}: a durable ReActAgent run records {steps} DBOS steps")
    print(render_table(headers, rows, "lrrrrrrr"))
    print()


def _report_seam(timings: list[Timing], text_inside_ms: float, native_inside_ms: float) -> None:
    plain_text, seam_text, plain_native, seam_native = timings
    for label, off, on, inside_ms in (
        ("ReActAgent", plain_text, seam_text, text_inside_ms),
        ("ToolCallingAgent", plain_native, seam_native, native_inside_ms),
    ):
        ratio = on.median_ns / off.median_ns
        per_step_us = (on.median_ms - inside_ms) * 1000 / ITERATIONS
        print(
            f"{label}, plain run, durable seam on vs never used: {on.median_ms:.3f} vs "
            f"{off.median_ms:.3f} ms ({ratio:.3f}x, IQR {on.iqr_percent:.0f}% / "
            f"{off.iqr_percent:.0f}%; {per_step_us:,.0f} µs loop overhead per step); "
            f"target <= {SEAM_TARGET:g}x: {verdict(ratio <= SEAM_TARGET)}"
        )
    print()
