"""`SpanEnder`: spans end on a thread of their own, never on a run's event loop.

Ending a span hands it to the provider's span processors, and a ``SimpleSpanProcessor``
exports it there and then: an exporter that takes a second (a collector far away, one
that is down and retried) would stop the event loop for that second, for every span,
and no deadline or cancellation could fire meanwhile. So a span's end is dated when the
run ends it and queued here; one thread ends the spans in the order given, a batch at
a time (at a run's end, every `POLL_SECONDS`, or once `BATCH` wait). A run waits
for them as it ends (`settled`), so that they are exported when ``run`` returns, but
never past its deadline (`agents.otel._seam.run_ending`): a slow exporter costs a run
none of its time limit, and its spans are exported once the exporter gets to them.

A provider whose processors never block (the SDK's ``BatchSpanProcessor``, which only
queues a span in ``on_end``: `ends_inline`) has its spans ended where they are, with no
thread and nothing to wait for: that is the production set-up, and it costs a run no
more than it did. The thread starts with the first span, exits once idle for `IDLE_SECONDS`, and is
stopped (after the spans queued so far) by ``uninstrument()``. At the interpreter's
exit the spans still queued are ended first, for at most `EXIT_SECONDS`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = [
    "BATCH",
    "ENDER",
    "EXIT_SECONDS",
    "IDLE_SECONDS",
    "POLL_SECONDS",
    "SpanEnder",
    "ends_inline",
]

IDLE_SECONDS = 2.0
"""How long the thread waits for more spans before it exits (the next span starts it)."""
POLL_SECONDS = 0.1
"""How often the thread looks for spans to end. It is not woken for each one: waking a
thread hands it the GIL, and on a busy machine each hand-over costs the run more than
ending the span did; it is woken when `BATCH` spans wait, and when a run waits for its
spans (`settled`)."""
BATCH = 64
"""Spans queued that wake the thread at once."""
EXIT_SECONDS = 5.0
"""How long the interpreter's exit waits for the spans still queued."""

Failed = Callable[[str], None]
"""Told a span's name when ending it raised (a span processor's failure), inside the
``except`` block: it may log the traceback."""


class SpanEnder:
    """Ends spans on a thread of its own (see the module text)."""

    def __init__(self) -> None:
        self._reset()
        atexit.register(self._at_exit)
        if sys.platform != "win32":  # a forked child has no thread: it starts its own
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[tuple[Span, int, Failed]] = deque()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._queued = 0  # spans handed over, ever
        self._ended = 0  # spans ended (or failed to), ever
        self._waiters: list[tuple[int, Callable[[], None]]] = []

    def end(self, span: Span, end_time: int | None, failed: Failed) -> None:
        """End ``span`` at ``end_time`` (None: now) on the thread; ``failed`` if it raises."""
        when = time.time_ns() if end_time is None else end_time
        with self._lock:
            self._queue.append((span, when, failed))
            self._queued += 1
            if self._thread is None:
                self._start()
            full = len(self._queue) >= BATCH
        if full:
            self._wake.set()

    def _start(self) -> None:
        """Start the thread; under the lock."""
        self._stopping = False
        self._thread = threading.Thread(target=self._work, name="agents.otel spans", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        idle = 0.0
        while True:
            woken = self._wake.wait(POLL_SECONDS)
            self._wake.clear()
            ended = self._drain()
            with self._lock:
                if self._queue:
                    continue  # more came meanwhile
                idle = 0.0 if ended or woken else idle + POLL_SECONDS
                if self._stopping or idle >= IDLE_SECONDS:
                    self._thread = None  # the next span starts another
                    return

    def _drain(self) -> bool:
        """End the spans queued; whether there were any."""
        ended = False
        while True:
            with self._lock:
                if not self._queue:
                    return ended
                span, when, failed = self._queue.popleft()
            ended = True
            try:
                span.end(end_time=when)
            except Exception:  # a processor that raises fails that span alone
                failed(str(getattr(span, "name", "")))
            with self._lock:
                self._ended += 1
                ready = [wake for target, wake in self._waiters if target <= self._ended]
                self._waiters = [w for w in self._waiters if w[0] > self._ended]
            for wake in ready:
                wake()

    async def settled(self, seconds: float) -> bool:
        """Wait, at most ``seconds``, until every span queued so far has ended; whether
        they all had."""
        with self._lock:
            target = self._queued
            if self._ended >= target:
                return True
            loop = asyncio.get_running_loop()
            done = loop.create_future()

            def wake() -> None:
                # A loop closed meanwhile raises RuntimeError: nobody waits any more.
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_resolve, done)

            waiter = (target, wake)
            self._waiters.append(waiter)
        self._wake.set()  # now, rather than at the thread's next look
        try:
            await asyncio.wait_for(asyncio.shield(done), max(seconds, 0.0))
        except TimeoutError:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
            return False
        return True

    def wait(self, timeout: float) -> bool:
        """`settled` for a thread without an event loop: blocks, at most ``timeout``."""
        with self._lock:
            target = self._queued
            if self._ended >= target:
                return True
            event = threading.Event()
            waiter = (target, event.set)
            self._waiters.append(waiter)
        self._wake.set()
        if event.wait(timeout):
            return True
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
        return False

    def stop(self, timeout: float) -> bool:
        """End the spans queued so far (waiting at most ``timeout``), then let the
        thread exit now rather than when idle; whether they all ended."""
        ended = self.wait(timeout)
        with self._lock:
            thread = self._thread
            self._stopping = True
        self._wake.set()
        if ended and thread is not None:
            thread.join(timeout)
        return ended

    def _at_exit(self) -> None:
        self.wait(EXIT_SECONDS)


def ends_inline(provider: object) -> bool:
    """Whether ending a span of ``provider`` never blocks, so that it may end where it is:
    an SDK ``TracerProvider`` each of whose processors is a ``BatchSpanProcessor``
    (exactly: its ``on_end`` only queues the span for its own thread, and drops it when
    the queue is full). Anything else may export in ``on_end``, and ends on our thread.
    """
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:  # the API alone: some other SDK, of unknown ways
        return False
    if not isinstance(provider, TracerProvider):
        return False
    # The SDK keeps them here (a tuple, replaced as processors are added); read by name,
    # and anything else found there means "not known": end on the thread.
    active = getattr(provider, "_active_span_processor", None)
    processors: object = getattr(active, "_span_processors", None)
    if not isinstance(processors, tuple) or not processors:
        return False
    return all(type(each) is BatchSpanProcessor for each in cast("tuple[object, ...]", processors))


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


ENDER = SpanEnder()
"""The process's one thread of span ends."""
