"""`EventBus`: observers subscribed to event classes, called in order, never trusted.

Events tell; they never change a run. A handler that raises is logged and reported to
``on_error`` (an ``ExecutionContext`` counts it in ``Stats.OBSERVER_ERRORS``), and the
run goes on as if it had not been there. The bus knows nothing of runs or tools: the
events themselves (``toolchain._events``, ``agents.events``) say what happened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

from toolchain._logs import logger

__all__ = ["EventBus"]

E = TypeVar("E")
_log = logger("toolchain")


class EventBus:
    """Subscribe observers to event classes; ``emit`` calls them in subscription order.

    Handlers for a base class also receive its subclasses' events. ``emit`` never
    raises for a handler: a failing one is logged on the ``toolchain`` logger and
    reported to ``on_error`` (an ``ExecutionContext`` counts it in its stats).
    ``KeyboardInterrupt`` is the one exception that passes through.

    >>> bus = EventBus()
    >>> seen: list[str] = []
    >>> unsubscribe = bus.subscribe(str, seen.append)
    >>> bus.emit("hello")
    >>> unsubscribe(); bus.emit("ignored"); seen
    ['hello']
    """

    def __init__(self, on_error: Callable[[BaseException], None] | None = None) -> None:
        self._handlers: list[tuple[type[object], Callable[[object], object]]] = []
        self._lock = threading.Lock()
        self._on_error = on_error

    def subscribe(self, event_type: type[E], handler: Callable[[E], object]) -> Callable[[], None]:
        """Call ``handler(event)`` for every emitted instance of ``event_type``.

        Returns a function that removes the subscription.
        """
        # Stored untyped; emit only passes it instances of event_type.
        entry = (cast(type[object], event_type), cast(Callable[[object], object], handler))
        with self._lock:
            self._handlers = [*self._handlers, entry]

        def unsubscribe() -> None:
            with self._lock:
                self._handlers = [h for h in self._handlers if h is not entry]

        return unsubscribe

    def emit(self, event: object) -> None:
        """Deliver ``event`` to every matching handler; never raises for a handler."""
        handlers = self._handlers  # replaced, never mutated: safe to read without the lock
        for event_type, handler in handlers:
            if isinstance(event, event_type):
                try:
                    handler(event)
                except KeyboardInterrupt:
                    raise
                except BaseException as error:
                    self._failed(event, error)

    def has_subscribers(self, event_type: type[object]) -> bool:
        """Whether anything listens for ``event_type`` (lets emitters skip building events)."""
        handlers = self._handlers
        return bool(handlers) and any(issubclass(event_type, t) for t, _ in handlers)

    def _failed(self, event: object, error: BaseException) -> None:
        try:
            _log.error(
                "an observer of %s failed; the run goes on", type(event).__name__, exc_info=error
            )
            if self._on_error is not None:
                self._on_error(error)
        except Exception:  # logging itself must not end a run either
            pass
