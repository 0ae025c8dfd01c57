"""``instrument`` and ``uninstrument``: the watcher that gives every run its spans.

The watcher is registered in the engine's seam (``_seam.WATCHERS``); at each run's
start it finds where the run's span belongs (under the tool call of the parent run
that started it, for a sub-agent; else in the caller's current context) and makes the
run's `RunSpans`, which watch its ``ctx.events`` from then on.
"""

from __future__ import annotations

import threading
import weakref
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from opentelemetry import trace

from agents.otel._ending import ENDER, ends_inline
from agents.otel._run import RunSpans
from agents.otel._seam import SETTLE_SECONDS, WATCHERS, Settle, WatchedAgent

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Tracer, TracerProvider

    from toolchain import ExecutionContext

__all__ = ["Watcher", "start", "stop"]

_lock = threading.Lock()


class Watcher:
    """Starts the spans of each run (see the module text)."""

    def __init__(
        self, tracer: Tracer, *, capture_content: bool, provider: object | None = None
    ) -> None:
        self.tracer = tracer
        self.capture_content = capture_content
        self.provider = provider
        """The tracer's provider, when known: one that never blocks ends spans inline."""
        self._runs: weakref.WeakKeyDictionary[ExecutionContext, RunSpans] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def __call__(
        self, ctx: ExecutionContext, agent: WatchedAgent, *, streaming: bool
    ) -> Settle | None:
        with self._lock:
            earlier = self._runs.pop(ctx, None)
        if earlier is not None:  # the context's last run never told its end
            earlier.abandon()
        parent = self._parent(ctx)
        inline = ends_inline(self.provider)  # each run: processors may be added any time
        spans = RunSpans(
            self.tracer,
            ctx,
            agent,
            capture=self.capture_content,
            streaming=streaming,
            parent=parent,
            ended=self._ended,
            inline=inline,
        )
        with self._lock:
            self._runs[ctx] = spans
        # A run waits for its spans' export as it ends; a child run (a sub-agent) leaves
        # that to the run it is part of, which waits for every span ended before it.
        return ENDER.settled if ctx.parent is None and not inline else None

    def _parent(self, ctx: ExecutionContext) -> Context | None:
        """Where a run's span goes: under the call of the nearest watched run it is a
        child of (a sub-agent), else in the current context (None)."""
        child = ctx
        while child.parent is not None:
            up = child.parent
            with self._lock:
                spans = self._runs.get(up)
            if spans is not None:
                return spans.context_for_run(child.name.removeprefix(up.name + "/"))
            child = up
        return None

    def _ended(self, ctx: ExecutionContext, spans: RunSpans) -> None:
        with self._lock:
            if self._runs.get(ctx) is spans:
                del self._runs[ctx]


def start(tracer_provider: TracerProvider | None, *, capture_content: bool) -> None:
    """Register a watcher (replacing any earlier one) with a tracer of ``tracer_provider``
    (the global provider when None)."""
    provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    tracer = provider.get_tracer("agents.otel", _version())
    with _lock:
        _remove()
        WATCHERS.append(Watcher(tracer, capture_content=capture_content, provider=provider))


def stop() -> None:
    """Remove the watcher: runs that start from now on are not traced. The spans that
    ended are handed to their processors first (for `SETTLE_SECONDS` at most)."""
    with _lock:
        _remove()
    ENDER.stop(SETTLE_SECONDS)


def _remove() -> None:
    for watcher in [w for w in WATCHERS if isinstance(w, Watcher)]:
        WATCHERS.remove(watcher)


def _version() -> str:
    try:
        return version("gent-py")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"
