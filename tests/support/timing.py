"""CPU times for the tests that check how work scales: always as a ratio of two
measurements, never against a time limit, so a slow or busy machine cannot fail them."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

__all__ = ["best_cpu_seconds", "costlier_than"]


def best_cpu_seconds(run: Callable[[], object]) -> float:
    """The best of three CPU times of ``run()``: other processes on the machine do not
    count, nor what the process held before (see below)."""
    best = float("inf")
    # The objects alive before are frozen out of the collector's passes while we
    # measure: a pass over the oldest generation costs in proportion to everything the
    # process holds, so in a whole suite a linear reader measured 49x for 20x the text
    # (22x alone). What ``run`` itself makes is still collected, and counted.
    gc.freeze()
    try:
        for _ in range(3):
            started = time.process_time()
            run()
            best = min(best, time.process_time() - started)
    finally:
        gc.unfreeze()
    return best


def costlier_than(
    factor: float, base: Callable[[], object], run: Callable[[], object], slack: float = 0.05
) -> str | None:
    """``None`` once ``run()`` costs less than ``factor`` times ``base()`` (plus ``slack``
    seconds, for timer noise on tiny times); else, after three tries (a busy machine
    blurs one measurement), the times every try saw."""
    seen: list[str] = []
    for _ in range(3):
        cheap, costly = best_cpu_seconds(base), best_cpu_seconds(run)
        if costly < factor * cheap + slack:
            return None
        seen.append(f"{cheap:.3f}s -> {costly:.3f}s")
    return ", ".join(seen)
