"""Where a run tells instrumentation that it starts: the process-wide list of watchers.

The step engine asks ``if WATCHERS:`` once per run and calls `run_started` only when one
is registered (``agents.otel.instrument`` registers one), so an uninstrumented run pays
one truthiness check; a watched run awaits `run_ending` as it ends (its spans exported,
within its deadline). A watcher only subscribes to the run's ``ctx.events``, which are
read-only: it cannot change the run, and one that raises is logged here and the run
goes on. Nothing here imports OpenTelemetry; the engine imports this module.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from toolchain.runtime import logger

if TYPE_CHECKING:
    from agents.models import Model
    from toolchain import ExecutionContext, ToolChain

__all__ = [
    "SETTLE_SECONDS",
    "WATCHERS",
    "RunWatcher",
    "Settle",
    "WatchedAgent",
    "run_ending",
    "run_started",
]

_log = logger("agents.otel")


class WatchedAgent(Protocol):
    """What a watcher reads of the agent whose run starts (both agents are one)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> Model: ...

    protocol: ClassVar[Literal["text", "native"]]

    @property
    def tool_chain(self) -> ToolChain: ...


Settle = Callable[[float], Awaitable[bool]]
"""What a watcher still does for the runs that ended (their spans being exported),
awaited as a run ends with the seconds it may take; whether it was done in time."""


class RunWatcher(Protocol):
    """Called as a run starts, before its first step, with the run's context; returns
    what to await as the run ends (`Settle`), if anything."""

    def __call__(
        self, ctx: ExecutionContext, agent: WatchedAgent, *, streaming: bool
    ) -> Settle | None: ...


WATCHERS: list[RunWatcher] = []
"""The registered watchers. Changed in place (the engine holds this very list), and
read through a copy, so a run starting while another thread registers one sees the
list before or after."""

SETTLE_SECONDS = 5.0
"""How long a run without a time limit waits, as it ends, for what its watchers still
do (its spans being exported); a run with one waits until its deadline at most."""

_slow = [False]  # whether a run has returned before its spans were exported


def run_started(ctx: ExecutionContext, agent: WatchedAgent, *, streaming: bool) -> list[Settle]:
    """Tell every watcher that a run of ``agent`` starts on ``ctx``; never raises. What
    to await as the run ends (`run_ending`)."""
    settles: list[Settle] = []
    for watcher in tuple(WATCHERS):
        try:
            settle = watcher(ctx, agent, streaming=streaming)
        except Exception:  # instrumentation must never end a run
            _log.warning("a run watcher failed; the run goes on unwatched", exc_info=True)
        else:
            if settle is not None:
                settles.append(settle)
    return settles


async def run_ending(settles: Sequence[Settle], deadline: float | None) -> None:
    """Wait for what the watchers still do for a run that ended, until the run's
    ``deadline`` (the event loop's time) or for `SETTLE_SECONDS`, whichever is sooner;
    never raises but for the run's own cancellation. A wait cut short is logged."""
    loop = asyncio.get_running_loop()
    for settle in settles:
        timeout = SETTLE_SECONDS
        if deadline is not None:
            timeout = max(0.0, min(timeout, deadline - loop.time()))
        try:
            done = await settle(timeout)
        except Exception:
            _log.warning("a run watcher failed as the run ended", exc_info=True)
            continue
        if not done:
            level = logging.DEBUG if _slow[0] else logging.WARNING
            _slow[0] = True
            _log.log(
                level,
                "the run returns before its spans were exported (it waited %.3g s): the "
                "span exporter is slower than the run; export them with a "
                "BatchSpanProcessor",
                timeout,
            )
