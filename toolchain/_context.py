"""``ExecutionContext``: the per-run state every tool call sees."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, overload

from typing_extensions import deprecated

from toolchain._errors import ToolchainError, ToolchainTypeError
from toolchain._hooks import Hooks

if TYPE_CHECKING:
    from toolchain._events import EventBus

__all__ = ["Cancelled", "ExecutionContext", "Limits", "StateBag", "StateKey", "Stats"]

T = TypeVar("T")
D = TypeVar("D")


class StateKey(Generic[T]):
    """A typed key into a run's ``StateBag``. Keys compare by identity.

    >>> ATTEMPTS = StateKey[int]("attempts")
    >>> ctx = ExecutionContext()
    >>> ctx.state.set(ATTEMPTS, 2)
    >>> ctx.state.get(ATTEMPTS, 0) + 1
    3
    """

    __slots__ = ("__orig_class__", "_name")

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"StateKey({self._name!r})"


class StateBag:
    """Typed per-run storage for tools and extensions."""

    def __init__(self) -> None:
        self._values: dict[StateKey[Any], Any] = {}  # each value a T of its StateKey[T]

    @overload
    def get(self, key: StateKey[T]) -> T | None: ...

    @overload
    def get(self, key: StateKey[T], default: D) -> T | D: ...

    def get(self, key: StateKey[T], default: object = None) -> object:
        """The value stored under ``key``, or ``default``."""
        return self._values.get(key, default)

    def set(self, key: StateKey[T], value: T) -> None:
        """Store ``value`` under ``key``."""
        self._values[key] = value

    def setdefault(self, key: StateKey[T], factory: Callable[[], T]) -> T:
        """The value under ``key``, storing ``factory()`` first if there is none."""
        values = self._values
        if key not in values:
            values[key] = factory()
        # Stored under a StateKey[T]: a T (annotated, not cast(), a call on a path that
        # extensions take every step).
        found: T = values[key]
        return found

    def __contains__(self, key: StateKey[object]) -> bool:
        return key in self._values


class _RenamedCounter:
    """``Stats.ITERATIONS``: ``Stats.STEPS`` under its old name, with a warning."""

    def __get__(self, instance: object, owner: type[object] | None = None) -> str:
        warnings.warn(
            "Stats.ITERATIONS is Stats.STEPS now (the counter 'steps'); the old name goes "
            "in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return Stats.STEPS


class Stats:
    """Thread-safe named counters (tool calls, errors, tokens …).

    A child run's stats (``Stats(parent=...)``, made by `ExecutionContext.child`) add
    every increment up into the parent's too, and so on to the root, so a run's
    counters include its sub-agents' tool calls and tokens. The counters in
    `LOCAL_COUNTERS` (steps and error streaks, which describe one loop and
    which ``set`` resets) stay in the child, as does ``set`` itself. The parent's
    increments never reach the child.

    >>> stats = Stats()
    >>> stats.increment("tool_calls", 2)
    >>> stats.get("tool_calls"), stats.get("missing")
    (2, 0)
    >>> child = Stats(parent=stats)
    >>> child.increment("tool_calls")
    >>> child.get("tool_calls"), stats.get("tool_calls")
    (1, 3)
    """

    TOOL_CALLS = "tool_calls"
    TOOL_ERRORS = "tool_errors"
    CONSECUTIVE_TOOL_ERRORS = "consecutive_tool_errors"
    PARSE_ERRORS = "parse_errors"
    CONSECUTIVE_PARSE_ERRORS = "consecutive_parse_errors"
    STEPS = "steps"
    """The steps (model calls of the loop) a run started."""
    ITERATIONS = _RenamedCounter()  # the old name of STEPS, for one release
    INPUT_TOKENS = "input_tokens"
    OUTPUT_TOKENS = "output_tokens"
    CACHED_INPUT_TOKENS = "cached_input_tokens"
    """Input tokens the provider read from its prompt cache (part of ``input_tokens``)."""
    MODEL_CALLS = "model_calls"
    OBSERVER_ERRORS = "observer_errors"
    LOCAL_COUNTERS: frozenset[str] = frozenset(
        {STEPS, CONSECUTIVE_TOOL_ERRORS, CONSECUTIVE_PARSE_ERRORS}
    )
    """Counters a child keeps to itself: its own loop's, not the run's."""

    @staticmethod
    def per_tool(counter: str, tool: str) -> str:
        """The key of a per-tool counter, e.g. ``tool_calls:get_weather``."""
        return f"{counter}:{tool}"

    def __init__(self, *, parent: Stats | None = None) -> None:
        # A plain dict, read with .get: a Counter's item access is a subclass's (slower
        # paths, and __missing__ in Python), and a run counts several times a step.
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._parent = parent

    @property
    def parent(self) -> Stats | None:
        """The stats this one adds up into, if it belongs to a child run."""
        return self._parent

    # The lock is taken with acquire/release around try/finally, not `with`: the with
    # statement's __exit__ takes its three arguments as a tuple, half the instructions
    # of a count. The same guarantee: released whatever happens inside.

    def increment(self, key: str, amount: int = 1) -> None:
        """Add ``amount`` to one counter (and to the parent's, see the class)."""
        counts, lock = self._counts, self._lock
        lock.acquire()
        try:
            counts[key] = counts.get(key, 0) + amount
        finally:
            lock.release()
        # Outside the lock: a parent's lock is never taken while a child's is held.
        if self._parent is not None and key not in Stats.LOCAL_COUNTERS:
            self._parent.increment(key, amount)

    def count_call(self, counter: str, tool: str) -> int:
        """Add one to ``counter`` and to its per-tool counter; returns this one's new total."""
        counts, lock = self._counts, self._lock
        per_tool = f"{counter}:{tool}"  # Stats.per_tool, written out: once per call and counter
        lock.acquire()
        try:
            total = counts[counter] = counts.get(counter, 0) + 1
            counts[per_tool] = counts.get(per_tool, 0) + 1
        finally:
            lock.release()
        if self._parent is not None and counter not in Stats.LOCAL_COUNTERS:
            self._parent.count_call(counter, tool)
        return total

    def count_model_call(
        self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
    ) -> None:
        """Add one model call and its tokens (and to the parent's, see the class): the
        counters of one reply change together, under one lock, not one each. Cached
        tokens are counted when there are some.

        >>> stats = Stats()
        >>> stats.count_model_call(100, 20)
        >>> stats.snapshot()
        {'input_tokens': 100, 'model_calls': 1, 'output_tokens': 20}
        """
        counts, lock = self._counts, self._lock
        lock.acquire()
        try:
            get = counts.get
            counts[Stats.MODEL_CALLS] = get(Stats.MODEL_CALLS, 0) + 1
            counts[Stats.INPUT_TOKENS] = get(Stats.INPUT_TOKENS, 0) + input_tokens
            counts[Stats.OUTPUT_TOKENS] = get(Stats.OUTPUT_TOKENS, 0) + output_tokens
            if cached_input_tokens:
                cached = get(Stats.CACHED_INPUT_TOKENS, 0) + cached_input_tokens
                counts[Stats.CACHED_INPUT_TOKENS] = cached
        finally:
            lock.release()
        if self._parent is not None:  # none of these is a local counter
            self._parent.count_model_call(input_tokens, output_tokens, cached_input_tokens)

    def set(self, key: str, value: int) -> None:
        lock = self._lock
        lock.acquire()
        try:
            self._counts[key] = value
        finally:
            lock.release()

    def get(self, key: str) -> int:
        lock = self._lock
        lock.acquire()
        try:
            return self._counts.get(key, 0)
        finally:
            lock.release()

    def first_over(self, bounds: Iterable[tuple[str, int | None, str]]) -> str | None:
        """The name of the first ``(name, bound, counter)`` whose counter is past its
        bound (``None``: no bound), or None; read under one lock.

        >>> stats = Stats(); stats.increment(Stats.TOOL_CALLS, 3)
        >>> stats.first_over([("steps", 5, Stats.STEPS), ("calls", 2, Stats.TOOL_CALLS)])
        'calls'
        """
        counts, lock = self._counts, self._lock
        lock.acquire()
        try:
            for name, bound, key in bounds:
                if bound is not None and counts.get(key, 0) > bound:
                    return name
        finally:
            lock.release()
        return None

    def snapshot(self) -> dict[str, int]:
        """A copy of every counter, sorted by name."""
        with self._lock:
            return dict(sorted(self._counts.items()))


_DEFAULT_MAX_STEPS: Final = 20


class _NotGiven:
    """A keyword not given (``None`` is a value: no bound)."""


_NOT_GIVEN: Final = _NotGiven()


@dataclass(frozen=True, slots=True, init=False)  # __init__ below: it takes the old name too
class Limits:
    """Bounds on a run. ``None`` means unbounded.

    One rule for every limit: a limit of N allows N. Reaching it is fine; the run
    stops only when something would go past it. With ``max_tool_calls=2`` a run
    may make two calls and still answer; a third call is refused (reported to the
    model as that call's error) and the run then stops. With ``max_steps=3`` the
    fourth model call is never made; ``max_consecutive_tool_errors=2`` ends the run
    at the third failed action in a row.

    >>> Limits(max_steps=5).exceeded(Stats()) is None
    True
    >>> stats = Stats(); stats.increment(Stats.TOOL_CALLS, 2)
    >>> Limits(max_tool_calls=2).exceeded(stats) is None  # reached, not passed
    True
    """

    max_steps: int | None
    """Model calls of the run's loop (its steps); ``max_iterations`` until this release."""
    max_tool_calls: int | None
    max_tool_calls_per_tool: Mapping[str, int]
    max_input_tokens: int | None
    max_output_tokens: int | None
    max_consecutive_parse_errors: int | None
    max_consecutive_tool_errors: int | None
    timeout: float | None
    """Wall-clock seconds for the whole run."""
    _bounds: tuple[tuple[str, int | None, str], ...] = field(init=False, repr=False, compare=False)
    # The bounds a step about to start is checked against, in the order `exceeded`
    # reports them (max_steps first, less that step): a loop asks before each step, and
    # the fields are frozen, so they are read into checks once.

    def __init__(
        self,
        max_steps: int | None = _DEFAULT_MAX_STEPS,
        max_tool_calls: int | None = None,
        max_tool_calls_per_tool: Mapping[str, int] | None = None,
        max_input_tokens: int | None = None,
        max_output_tokens: int | None = None,
        max_consecutive_parse_errors: int | None = 3,
        max_consecutive_tool_errors: int | None = 5,
        timeout: float | None = None,
        *,
        max_iterations: int | _NotGiven | None = _NOT_GIVEN,
    ) -> None:
        if not isinstance(max_iterations, _NotGiven):
            if max_steps != _DEFAULT_MAX_STEPS:
                raise ToolchainTypeError(
                    "Limits() takes max_steps or max_iterations (its old name), not both"
                )
            warnings.warn(
                "Limits(max_iterations=...) is Limits(max_steps=...) now; the old name goes "
                "in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            max_steps = max_iterations
        # Frozen: the fields are set as the generated __init__ would set them.
        init = object.__setattr__
        init(self, "max_steps", max_steps)
        init(self, "max_tool_calls", max_tool_calls)
        init(
            self,
            "max_tool_calls_per_tool",
            {} if max_tool_calls_per_tool is None else max_tool_calls_per_tool,
        )
        init(self, "max_input_tokens", max_input_tokens)
        init(self, "max_output_tokens", max_output_tokens)
        init(self, "max_consecutive_parse_errors", max_consecutive_parse_errors)
        init(self, "max_consecutive_tool_errors", max_consecutive_tool_errors)
        init(self, "timeout", timeout)
        bounds = (
            ("max_tool_calls", max_tool_calls, Stats.TOOL_CALLS),
            ("max_input_tokens", max_input_tokens, Stats.INPUT_TOKENS),
            ("max_output_tokens", max_output_tokens, Stats.OUTPUT_TOKENS),
            (
                "max_consecutive_parse_errors",
                max_consecutive_parse_errors,
                Stats.CONSECUTIVE_PARSE_ERRORS,
            ),
            (
                "max_consecutive_tool_errors",
                max_consecutive_tool_errors,
                Stats.CONSECUTIVE_TOOL_ERRORS,
            ),
        )
        starting = ("max_steps", None if max_steps is None else max_steps - 1, Stats.STEPS)
        init(self, "_bounds", (starting, *((n, b, k) for n, b, k in bounds if b is not None)))

    @property
    @deprecated(
        "Limits.max_iterations is Limits.max_steps now; the old name goes in the next release"
    )
    def max_iterations(self) -> int | None:
        """``max_steps``, under its old name (for one release)."""
        return self.max_steps

    def exceeded(
        self, stats: Stats, *, starting_step: bool = False, starting_iteration: bool = False
    ) -> str | None:
        """The name of the first limit ``stats`` has gone past, or None.

        With ``starting_step`` the step about to start is counted too, so a loop asks
        before each model call whether it may make it (``starting_iteration`` is its old
        name, for one release).
        """
        if starting_iteration:
            warnings.warn(
                "Limits.exceeded(starting_iteration=...) is exceeded(starting_step=...) now; "
                "the old name goes in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            starting_step = True
        bounds = self._bounds  # the step about to start counts too
        if not starting_step:
            bounds = (("max_steps", self.max_steps, Stats.STEPS), *bounds[1:])
        if self.max_tool_calls_per_tool:  # read at each call: the mapping may be a dict
            bounds += tuple(
                (f"max_tool_calls_per_tool[{tool}]", bound, Stats.per_tool(Stats.TOOL_CALLS, tool))
                for tool, bound in self.max_tool_calls_per_tool.items()
            )
        return stats.first_over(bounds)

    def tool_call_refused(self, stats: Stats, tool: str) -> str | None:
        """The limit a call of ``tool`` (already counted in ``stats``) goes past, if any.

        >>> stats = Stats(); stats.increment(Stats.TOOL_CALLS, 3)
        >>> Limits(max_tool_calls=2).tool_call_refused(stats, "add")
        'max_tool_calls=2'
        """
        if self.max_tool_calls is not None and stats.get(Stats.TOOL_CALLS) > self.max_tool_calls:
            return f"max_tool_calls={self.max_tool_calls}"
        per_tool = self.max_tool_calls_per_tool.get(tool)
        if per_tool is not None and stats.get(Stats.per_tool(Stats.TOOL_CALLS, tool)) > per_tool:
            return f"max_tool_calls_per_tool[{tool}]={per_tool}"
        return None


def _uuid4_hex() -> str:
    """``uuid.uuid4().hex``, the same 32 hex digits (random, with the version and variant
    bits of a version 4 UUID), without building a ``UUID``: its Python ``__init__``
    cost a run that stores a value some twenty times what this does.

    >>> import uuid; uuid.UUID(hex=_uuid4_hex()).version
    4
    """
    drawn = bytearray(os.urandom(16))
    drawn[6] = drawn[6] & 0x0F | 0x40  # version 4
    drawn[8] = drawn[8] & 0x3F | 0x80  # the RFC 4122 variant
    return drawn.hex()


def _observer_failed(stats: Stats) -> Callable[[BaseException], None]:
    """What a context's event bus does when an observer fails: counts it on ``stats``."""

    def count(error: BaseException) -> None:
        stats.increment(Stats.OBSERVER_ERRORS)

    return count


class Cancelled(ToolchainError):
    """Raised by ``ExecutionContext.raise_if_cancelled`` once the run was cancelled."""


class ExecutionContext:
    """One per run: cancellation, a typed state bag, stats, limits, hooks and events.

    ``hooks`` (``Hooks``) may change tool calls, in order; ``events`` (``EventBus``)
    only observe: an observer that raises is logged and counted in
    ``stats[Stats.OBSERVER_ERRORS]``, never changes or ends the run.

    ``ExecutionContext()`` with no arguments is valid. Sub-agents get ``child()``
    contexts: cancelling a parent cancels its children, and a child's stats add up
    into its parent's (see `Stats`).

    >>> ctx = ExecutionContext()
    >>> ctx.cancelled
    False
    >>> ctx.cancel("user pressed stop"); ctx.cancelled, ctx.cancel_reason
    (True, 'user pressed stop')
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        name: str = "run",
        parent: ExecutionContext | None = None,
    ) -> None:
        self.name = name
        self._run_id: str | None = None  # made when first read: most runs never read it
        self.parent: ExecutionContext | None = parent
        self.limits = limits if limits is not None else Limits()
        self.limits_given = limits is not None
        """False when the defaults are in use: an agent then applies its own limits."""
        self.state = StateBag()
        self.stats: Stats = Stats(parent=parent.stats if parent is not None else None)
        # A child run's calls pass its parents' guards too (approvals, say).
        self.hooks: Hooks[ExecutionContext] = Hooks(
            parent=parent.hooks if parent is not None else None
        )
        # Imported here: the events name ExecutionContext in their fields, so their module
        # imports this one (typing.get_type_hints resolves them), not the other way round.
        from toolchain._events import EventBus

        # Counted on the stats, not through a method of this context: the bus would hold
        # the context that holds it, a cycle only the garbage collector frees (every run).
        self.events: EventBus = EventBus(on_error=_observer_failed(self.stats))
        self._cancelled = False  # set once, under the lock; read anywhere
        self._cancel_reason = ""
        self.pause_reason = ""
        """Set by ``pause``: the run stops before its next model call, for a person to
        decide something (an approval); ``""`` while the run goes on."""
        self.finish_text: str | None = None
        """Set by ``finish``: the answer the run ends with after its current step."""
        self.step = 0
        """The step of the agent loop running on this context, from 1, set as each step
        starts (0 while no loop runs one: a chain executed on its own). The events of a
        call carry it (``ToolCallStarted.step``)."""
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._call_ids = itertools.count(1)
        if parent is not None:
            parent.on_cancel(lambda: self.cancel(parent.cancel_reason))

    def new_call_id(self) -> str:
        """A call id unique within this run: ``call_1``, ``call_2`` …

        >>> ctx = ExecutionContext()
        >>> ctx.new_call_id(), ctx.new_call_id()
        ('call_1', 'call_2')
        """
        return f"call_{next(self._call_ids)}"  # count() is atomic under the GIL

    def child(self, name: str, *, limits: Limits | None = None) -> ExecutionContext:
        """A context for a sub-run: cancelled with this one, its stats added into this one's.

        The child has its own state, hooks, events, limits and call ids; its stats
        count on their own and forward each increment here (see `Stats`), so this
        run's limits and totals include the sub-run's tool calls and tokens. This
        run's guards (``ToolHook.guard_tool_call``: approvals) check the child's calls
        too.

        >>> run = ExecutionContext()
        >>> sub = run.child("researcher")
        >>> sub.stats.count_call(Stats.TOOL_CALLS, "search")
        1
        >>> sub.name, run.stats.get(Stats.TOOL_CALLS), run.stats.get("tool_calls:search")
        ('run/researcher', 1, 1)
        """
        return ExecutionContext(limits=limits, name=f"{self.name}/{name}", parent=self)

    @property
    def run_id(self) -> str:
        """This run's id (a random hex string), unique across processes."""
        run_id = self._run_id
        if run_id is None:
            with self._lock:  # two threads reading it first see the same id
                if self._run_id is None:
                    self._run_id = _uuid4_hex()
                run_id = self._run_id
        return run_id

    @run_id.setter
    def run_id(self, run_id: str) -> None:
        self._run_id = run_id

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def cancel_reason(self) -> str:
        return self._cancel_reason

    def pause(self, reason: str) -> None:
        """Stop the run before its next model call, letting running tools finish; the
        agent ends with ``stopped_by == "paused"`` and the conversation can continue.

        >>> ctx = ExecutionContext()
        >>> ctx.pause("publish_post needs approval"); ctx.pause_reason, ctx.cancelled
        ('publish_post needs approval', False)
        """
        if not self.pause_reason:
            self.pause_reason = reason

    def finish(self, text: str) -> None:
        """End the run after its current step with ``text`` as the answer (through the
        agent's termination), without another model call: a task list whose last task
        is done, say.

        >>> ctx = ExecutionContext()
        >>> ctx.finish("All three tasks are done."); ctx.finish_text
        'All three tasks are done.'
        """
        if self.finish_text is None:
            self.finish_text = text

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel the run; safe to call from any thread, more than once."""
        with self._lock:
            if self._cancelled:
                return
            self._cancel_reason = reason
            self._cancelled = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` once on cancellation (at once if already cancelled).

        Returns a function that removes it.
        """
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def raise_if_cancelled(self) -> None:
        """For long-running tools: raise ``Cancelled`` once the run is cancelled."""
        if self._cancelled:
            raise Cancelled(self._cancel_reason)

    async def wait_cancelled(self) -> None:
        """Return once the run is cancelled (from any thread)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def resolve() -> None:
            if not done.done():
                done.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(resolve)

        remove = self.on_cancel(wake)
        try:
            await done
        finally:
            remove()
