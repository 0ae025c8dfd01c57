"""The events of a run, and the read-only `EventBus` (``ctx.events``) that delivers them.

Events tell; they never change a run. A handler that raises is logged and counted
(``Stats.OBSERVER_ERRORS``) and the run goes on as if it had not been there. To
*change* a call (rewrite its arguments, refuse it, replace its result) use a tool
hook on ``ctx.hooks`` instead (see ``toolchain.ToolHook``).

One fact, one event: a call starting is `ToolCallStarted` and its end
`ToolCallFinished`, built once by the chain where the call starts and ends. An agent's
stream (``ReActAgent.stream``) yields those very objects, so an observer and a stream
reader see the same event; ``step`` says which step of the agent's loop made the call.
The bus knows nothing of runs or tools: the events themselves (here, and
``agents.events``) say what happened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar, cast

from typing_extensions import deprecated

from toolchain._context import ExecutionContext
from toolchain._redact import logger
from toolchain._result import ApprovalRequest, ToolCallError, ToolResult

__all__ = [
    "ApprovalChecked",
    "DecidedBy",
    "EventBus",
    "Outcome",
    "ToolCallFinished",
    "ToolCallParseFailed",
    "ToolCallStarted",
]

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
        # has_subscribers' answers for the current handlers, replaced with them: a run
        # asks several times a call, and each answer walks every handler's class.
        self._listened: dict[type[object], bool] = {}
        self._lock = threading.Lock()
        self._on_error = on_error

    def subscribe(self, event_type: type[E], handler: Callable[[E], object]) -> Callable[[], None]:
        """Call ``handler(event)`` for every emitted instance of ``event_type``.

        Returns a function that removes the subscription.
        """
        # Stored untyped; emit only passes it instances of event_type. The casts are
        # strings: a subscripted Callable is built anew at each call (a run's ledger
        # subscribes several times per run).
        entry = (cast("type[object]", event_type), cast("Callable[[object], object]", handler))
        with self._lock:
            self._handlers = [*self._handlers, entry]
            self._listened = {}

        def unsubscribe() -> None:
            with self._lock:
                self._handlers = [h for h in self._handlers if h is not entry]
                self._listened = {}

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
        # Read first: (un)subscribe replaces the handlers, then these answers; an answer
        # worked out from newer handlers than it is filed with is only ever dropped.
        listened = self._listened
        handlers = self._handlers
        if not handlers:
            return False
        known = listened.get(event_type)
        if known is not None:
            return known
        # Worked out once per event class a run asks about (each run's context has its
        # own bus, and its ledger subscribes): a loop, not any(<generator>), which
        # costs a generator each time.
        known = False
        for listened_type, _ in handlers:
            if issubclass(event_type, listened_type):
                known = True
                break
        listened[event_type] = known
        return known

    def _failed(self, event: object, error: BaseException) -> None:
        try:
            _log.error(
                "an observer of %s failed; the run goes on", type(event).__name__, exc_info=error
            )
            if self._on_error is not None:
                self._on_error(error)
        except Exception:  # logging itself must not end a run either
            pass


class _OfAStep:
    """An event of a call, made in a step of an agent's loop."""

    __slots__ = ()

    step: int

    @property
    @deprecated("the event's `iteration` is its `step` now; the old name goes in the next release")
    def iteration(self) -> int:
        """``step``, under its old name (for one release)."""
        return self.step


@dataclass(frozen=True, slots=True)
class ToolCallStarted(_OfAStep):
    """A call is about to be validated and run (after the tool hooks).

    ``args`` are the arguments the tool will be validated with; ``raw_args`` what the
    model wrote (they differ when a hook rewrote them). ``index`` is the call's
    position in its action; ``id`` its call id; ``step`` the step of the loop that made
    it (``ctx.step``: 0 for a chain run outside a loop). ``BeforeToolCall`` until this
    release, when agents streamed a ``ToolCallStarted`` of their own beside it.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> started: list[str] = []
    >>> _ = ctx.events.subscribe(ToolCallStarted, lambda event: started.append(event.name))
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: Mapping[str, object]
    id: str = ""
    raw_args: Mapping[str, object] | None = None
    step: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", self.ctx.step)  # frozen: set once, here


@dataclass(frozen=True, slots=True)
class ToolCallFinished(_OfAStep):
    """A call ended, failed or not (every call ends with one of these).

    Exactly one of ``result`` and ``error`` is set. ``duration`` is in seconds;
    ``step`` as in `ToolCallStarted`. ``AfterToolCall`` until this release.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> failures: list[str] = []
    >>> def note(event: ToolCallFinished) -> None:
    ...     if event.error is not None:
    ...         failures.append(f"{event.name}: {event.error.kind}")
    >>> _ = ctx.events.subscribe(ToolCallFinished, note)
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: Mapping[str, object]
    result: ToolResult[object] | None
    error: ToolCallError | None
    duration: float
    id: str = ""
    step: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", self.ctx.step)  # frozen: set once, here


@dataclass(frozen=True, slots=True)
class ToolCallParseFailed:
    """Emitted when action content could not be read as tool calls."""

    ctx: ExecutionContext
    content: str
    message: str


Outcome = Literal["held", "approved", "denied"]
"""What became of a call that needed approval."""

DecidedBy = Literal["approver", "person", ""]
"""Who decided it: the run's approver (``approve=``) as the call was made, a person's
decision given to a resume, or nobody yet (held)."""


@dataclass(frozen=True, slots=True)
class ApprovalChecked:
    """A call that needs approval (``Tool.requires_approval``, or a tool an extension
    gates, as ``ToolSearch`` does those that ``requires_confirmation``) was checked: it
    is ``held`` (nobody could decide now; the run pauses), ``approved`` or ``denied``
    (with the ``reason`` given). ``call_id`` is the call's own id, as `ToolCallStarted`
    and `ToolCallFinished` carry it; ``request.call_id`` is the key of its decision in
    ``resume(result, {call_id: ...})``.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> checked: list[str] = []
    >>> _ = ctx.events.subscribe(ApprovalChecked, lambda event: checked.append(event.outcome))
    """

    ctx: ExecutionContext
    call_id: str
    request: ApprovalRequest
    outcome: Outcome
    decided_by: DecidedBy = ""
    reason: str = ""
