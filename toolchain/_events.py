"""A small typed event bus, and the tool-call events the chains emit.

Subscribers are plain callables keyed by event class. "Before" and "after" tool-call
subscribers may rewrite what they are given (``event.args``, ``event.result``): that is
how extensions such as variables or boxing plug in without special cases in chains.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from toolchain._result import ToolCallError, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["AfterToolCall", "BeforeToolCall", "EventBus", "ToolCallParseFailed"]

E = TypeVar("E")


class EventBus:
    """Subscribe handlers to event classes; ``emit`` calls them in subscription order.

    Handlers for a base class also receive its subclasses' events.

    >>> bus = EventBus()
    >>> seen: list[str] = []
    >>> unsubscribe = bus.subscribe(str, seen.append)
    >>> bus.emit("hello")
    >>> unsubscribe(); bus.emit("ignored"); seen
    ['hello']
    """

    def __init__(self) -> None:
        self._handlers: list[tuple[type[object], Callable[[object], object]]] = []
        self._lock = threading.Lock()

    def subscribe(self, event_type: type[E], handler: Callable[[E], object]) -> Callable[[], None]:
        """Call ``handler(event)`` for every emitted instance of ``event_type``.

        Returns a function that removes the subscription.
        """
        entry: tuple[type[object], Callable[[object], object]] = (
            event_type,
            handler,  # type: ignore[assignment]  # narrowed back by the isinstance in emit
        )
        with self._lock:
            self._handlers.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._handlers:
                    self._handlers.remove(entry)

        return unsubscribe

    def emit(self, event: object) -> None:
        """Deliver ``event`` to every matching handler; a handler's exception propagates."""
        with self._lock:
            handlers = [h for t, h in self._handlers if isinstance(event, t)]
        for handler in handlers:
            handler(event)

    def has_subscribers(self, event_type: type[object]) -> bool:
        """Whether anything listens for ``event_type`` (lets emitters skip building events)."""
        if not self._handlers:
            return False
        with self._lock:
            return any(issubclass(event_type, t) for t, _ in self._handlers)


@dataclass(slots=True)
class BeforeToolCall:
    """Emitted before a call's arguments are validated. Handlers may rewrite ``args``.

    ``index`` is the call's position in its action.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> def home_city(event: BeforeToolCall) -> None:
    ...     if event.args.get("city") == "$home":
    ...         event.args = {**event.args, "city": "Lisbon"}
    >>> _ = ctx.events.subscribe(BeforeToolCall, home_city)
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: dict[str, object]


@dataclass(slots=True)
class AfterToolCall:
    """Emitted after every call, failed or not. Handlers may replace ``result``.

    Exactly one of ``result`` and ``error`` is set. ``duration`` is in seconds.

    >>> from toolchain import ExecutionContext, ToolResult
    >>> ctx = ExecutionContext()
    >>> def shorten(event: AfterToolCall) -> None:
    ...     if event.result is not None and len(str(event.result.text)) > 10_000:
    ...         event.result = ToolResult("output too long; narrow the query")
    >>> _ = ctx.events.subscribe(AfterToolCall, shorten)
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: dict[str, object]
    result: ToolResult[object] | None
    error: ToolCallError | None
    duration: float


@dataclass(frozen=True, slots=True)
class ToolCallParseFailed:
    """Emitted when action content could not be read as tool calls."""

    ctx: ExecutionContext
    content: str
    message: str
