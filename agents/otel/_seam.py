"""Where a run tells instrumentation that it starts: the process-wide list of watchers.

The step engine asks ``if WATCHERS:`` once per run and calls `run_started` only when one
is registered (``agents.otel.instrument`` registers one), so an uninstrumented run pays
one truthiness check. A watcher only subscribes to the run's ``ctx.events``, which are
read-only: it cannot change the run, and one that raises is logged here and the run
goes on. Nothing here imports OpenTelemetry; the engine imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from toolchain._logs import logger

if TYPE_CHECKING:
    from agents.models import Model
    from toolchain import ExecutionContext, ToolChain

__all__ = ["WATCHERS", "RunWatcher", "WatchedAgent", "run_started"]

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


class RunWatcher(Protocol):
    """Called as a run starts, before its first step, with the run's context."""

    def __call__(self, ctx: ExecutionContext, agent: WatchedAgent, *, streaming: bool) -> None: ...


WATCHERS: list[RunWatcher] = []
"""The registered watchers. Changed in place (the engine holds this very list), and
read through a copy, so a run starting while another thread registers one sees the
list before or after."""


def run_started(ctx: ExecutionContext, agent: WatchedAgent, *, streaming: bool) -> None:
    """Tell every watcher that a run of ``agent`` starts on ``ctx``; never raises."""
    for watcher in tuple(WATCHERS):
        try:
            watcher(ctx, agent, streaming=streaming)
        except Exception:  # instrumentation must never end a run
            _log.warning("a run watcher failed; the run goes on unwatched", exc_info=True)
