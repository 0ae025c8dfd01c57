"""Timing helpers shared by the benchmarks: interleaved runs, medians, gc control, tables.

Figures that will be compared with each other (execute vs. its floor; one format at
10 KB, 100 KB and 1 MB) are measured together as a group of ``Job`` s:

1. warm-up: every job runs a few times (capped at ~20 % of the group's time budget),
   so caches, lazily built validators and worker threads exist before timing starts;
2. ``gc.collect()``, then (by default) the cyclic garbage collector is disabled, so a
   collection triggered by one run's garbage does not land in another run's time;
3. the jobs run round-robin: each round runs every job its share of runs back to back
   (a cheap job more often than an expensive one; microsecond-scale jobs in blocks of
   consecutive runs, so they stay as warm as in a plain loop), each run timed on its
   own with ``time.perf_counter_ns``. A busy host then slows all jobs of a group alike
   instead of whichever happened to run at the wrong moment, which keeps ratios stable;
4. rounds go on until every job has its runs or the budget is spent (but at least
   ``min_rounds``); the median of each job's runs is reported, with the interquartile
   range relative to it as a noise gauge.

Nothing here asserts anything: the figures are printed for a human to read.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = [
    "Job",
    "Settings",
    "Timing",
    "collector_paused",
    "load_note",
    "measure_jobs",
    "measure_jobs_sync",
    "render_table",
    "verdict",
]


@dataclass(frozen=True, slots=True)
class Settings:
    """How hard to measure: ``quick`` divides run counts and time budgets by 5."""

    quick: bool = False
    disable_gc: bool = True

    def runs(self, full: int) -> int:
        return max(1, full // 5) if self.quick else full

    def seconds(self, full: float) -> float:
        return full / 5 if self.quick else full

    def describe(self) -> str:
        mode = "quick (--quick: 1/5 of the runs and time)" if self.quick else "full"
        collector = (
            "gc disabled during timed loops (gc.collect() before each)"
            if self.disable_gc
            else "gc left enabled during timed loops (--keep-gc)"
        )
        return f"mode: {mode}; {collector}"


@dataclass(frozen=True, slots=True)
class Job:
    """One thing to time: a plain function, or a coroutine function to await."""

    runs: int
    call: Callable[[], object] | None = None
    acall: Callable[[], Awaitable[object]] | None = None
    warmup: int = 1

    @staticmethod
    def sync(fn: Callable[[], object], runs: int, warmup: int = 1) -> Job:
        return Job(runs, call=fn, warmup=warmup)

    @staticmethod
    def awaited(fn: Callable[[], Awaitable[object]], runs: int, warmup: int = 1) -> Job:
        return Job(runs, acall=fn, warmup=warmup)


@dataclass(frozen=True, slots=True)
class Timing:
    """The per-run durations of one job, in nanoseconds, sorted."""

    samples_ns: tuple[int, ...]

    @property
    def runs(self) -> int:
        return len(self.samples_ns)

    @property
    def median_ns(self) -> float:
        return float(statistics.median(self.samples_ns))

    @property
    def median_us(self) -> float:
        return self.median_ns / 1_000

    @property
    def median_ms(self) -> float:
        return self.median_ns / 1_000_000

    @property
    def iqr_percent(self) -> float:
        """The interquartile range as a percentage of the median (0 with < 4 runs)."""
        if self.runs < 4 or self.median_ns == 0:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_ns, n=4)
        return 100.0 * (q3 - q1) / self.median_ns


@contextmanager
def collector_paused(disable: bool) -> Iterator[None]:
    """A timed loop's garbage collection: a full collection first, then the collector
    off inside when ``disable`` (``Settings.disable_gc``), and back as it was after."""
    was_enabled = gc.isenabled()
    gc.collect()
    if disable:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def _run_once(job: Job) -> int:
    """One timed run of ``job``, in nanoseconds."""
    clock = time.perf_counter_ns
    if job.acall is not None:
        start = clock()
        await job.acall()
        return clock() - start
    if job.call is None:
        raise ValueError("a Job needs call or acall")
    start = clock()
    job.call()
    return clock() - start


async def measure_jobs(
    jobs: Sequence[Job],
    settings: Settings,
    *,
    seconds: float,
    block: int = 1,
    min_rounds: int = 3,
) -> list[Timing]:
    """Time ``jobs`` round-robin within ``seconds`` (both runs and time cut by --quick).

    The job wanting the fewest runs does ``block`` of them per round, which sets the
    number of rounds; the others run their share each round. A block of consecutive
    runs keeps a microsecond-scale job's caches as warm as in a plain loop. Must be
    awaited in a running event loop (``measure_jobs_sync`` runs one).
    """
    wanted = [max(min_rounds, settings.runs(job.runs)) for job in jobs]
    rounds = max(min_rounds, math.ceil(min(wanted) / block))
    per_round = [math.ceil(w / rounds) for w in wanted]
    budget_ns = int(settings.seconds(seconds) * 1e9)
    clock = time.perf_counter_ns

    warm_until = clock() + budget_ns // 5
    for job in jobs:
        for _ in range(max(1, job.warmup)):
            await _run_once(job)
            if clock() > warm_until:
                break

    samples: list[list[int]] = [[] for _ in jobs]
    with collector_paused(settings.disable_gc):
        deadline = clock() + budget_ns
        for done in range(1, rounds + 1):
            for job, count, out in zip(jobs, per_round, samples, strict=True):
                for _ in range(count):
                    out.append(await _run_once(job))
            if clock() > deadline and done >= min_rounds:
                break
    return [Timing(tuple(sorted(out))) for out in samples]


def measure_jobs_sync(
    jobs: Sequence[Job],
    settings: Settings,
    *,
    seconds: float,
    block: int = 1,
    min_rounds: int = 3,
) -> list[Timing]:
    """``measure_jobs`` from synchronous code (starts its own event loop)."""
    return asyncio.run(
        measure_jobs(jobs, settings, seconds=seconds, block=block, min_rounds=min_rounds)
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A plain-text table; ``align`` has one ``l`` or ``r`` per column."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(width) if how == "r" else cell.ljust(width)
            for cell, width, how in zip(cells, widths, align, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def load_note() -> str:
    """The load average against the CPU count, with a warning when the host is busy."""
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        return f"{cpus} CPUs"
    note = f"{cpus} CPUs, 1-minute load average {load:.2f}"
    if load > cpus * 0.5:
        note += " (busy host: expect noisier figures, see the IQR columns)"
    return note
