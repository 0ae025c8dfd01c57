"""Eager tasks: run a coroutine up to its first real suspension inside its own task.

Most tool calls and many model calls finish without ever suspending (an async tool
computing in memory, a scripted or cached model). Waiting on a plain ``Task`` costs
the caller event-loop round trips even then. ``eager_task`` does what Python 3.12's
eager task factory does, on 3.11 too: the task is created, made the current task, and
the coroutine stepped at once. If it finishes there, the caller has the result
without waiting; if it suspends, the same task carries it on. Because the coroutine
runs as its own task from the first step, task-bound state (anyio/httpx cancel
scopes, ``asyncio.current_task()``) stays consistent across the suspension.

On 3.12+ the task is a real eager task: one that finished in its first step is done
at once. On 3.11 such a task still has one empty step to take at the next loop turn;
`settle` waits for it, so that a run or a chain leaves no task scheduled behind it.
Inside work started by `SettleLater` (an agent's model call or chain execution), such
tasks are handed to it instead and settled together when that work ends: a chain
whose calls all finished at once then returns without a loop turn of its own.
"""

from __future__ import annotations

import asyncio
import asyncio.tasks
import contextvars
import sys
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar, cast

__all__ = ["EagerStart", "SettleLater", "eager_task", "settle"]

T = TypeVar("T")

# Documented only in 3.12 (as the eager task factory's internals), present since 3.7.
_enter_task = asyncio.tasks._enter_task  # pyright: ignore[reportPrivateUsage]  # see above
_leave_task = asyncio.tasks._leave_task  # pyright: ignore[reportPrivateUsage]  # see above


class _Forward:
    """Yields one value to the running task: what a suspended coroutine waits on."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self) -> Generator[object, None, None]:
        yield self.value


class EagerStart(Generic[T]):
    """What the eager first step produced: ``done`` with a ``value`` or an ``error``,
    or suspended on ``waiting_on``."""

    __slots__ = ("done", "error", "value", "waiting_on")

    def __init__(self) -> None:
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None
        self.waiting_on: object = None


async def _carry_on(step: Coroutine[Any, Any, T], first: EagerStart[T]) -> T:
    """The task's body: the eager step's outcome, or the rest of the coroutine."""
    if first.done:  # the caller read the outcome from `first` (errors too): just end
        return cast(T, first.value)
    waiting_on = first.waiting_on
    while True:
        try:
            await _Forward(waiting_on)
        except BaseException as error:  # a failed or cancelled future, or our cancellation
            ready = getattr(waiting_on, "done", None)
            if not (callable(ready) and ready()):
                try:
                    waiting_on = step.throw(error)
                except StopIteration as stop:
                    thrown: T = stop.value
                    return thrown
                continue
        try:
            waiting_on = step.send(None)
        except StopIteration as stop:
            result: T = stop.value
            return result


def eager_task(
    coro: Coroutine[Any, Any, T], *, context: contextvars.Context | None = None
) -> tuple[asyncio.Task[T], EagerStart[T]]:
    """``coro`` started now as a task; its first step has already run.

    Returns the task and the first step's outcome: when ``first.done`` the result (or
    ``first.error``) is there to read without awaiting, and the task is done (3.12+) or
    ends at the next loop turn (3.11; `settle` waits for that). Must be called from a
    running event loop.

    >>> async def main() -> tuple[bool, int | None, bool]:
    ...     async def instant() -> int:
    ...         return 42
    ...     task, first = eager_task(instant())
    ...     await settle(task)
    ...     return first.done, first.value, task.done()
    >>> asyncio.run(main())
    (True, 42, True)
    """
    return _start(coro, context)


def _stepped_task(
    coro: Coroutine[Any, Any, T], context: contextvars.Context | None
) -> tuple[asyncio.Task[T], EagerStart[T]]:
    """Python 3.11: a task made current by hand while its coroutine takes a first step."""
    loop = asyncio.get_running_loop()
    first: EagerStart[T] = EagerStart()
    run_in = context if context is not None else contextvars.copy_context()
    task = loop.create_task(_carry_on(coro, first), context=run_in)
    caller = asyncio.current_task(loop)
    if caller is not None:
        _leave_task(loop, caller)
    _enter_task(loop, task)
    try:
        first.waiting_on = run_in.run(coro.send, None)
    except StopIteration as stop:
        first.done, first.value = True, stop.value
    except BaseException as error:
        first.done, first.error = True, error
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
    finally:
        _leave_task(loop, task)
        if caller is not None:
            _enter_task(loop, caller)
    return task, first


# Chosen by version, so that each is type-checked only where it exists (eager_start: 3.12).
if sys.version_info >= (3, 12):

    def _native_eager_task(
        coro: Coroutine[Any, Any, T], context: contextvars.Context | None
    ) -> tuple[asyncio.Task[T], EagerStart[T]]:
        """Python 3.12's eager task, read into an `EagerStart`."""
        first: EagerStart[T] = EagerStart()
        loop = asyncio.get_running_loop()
        task = asyncio.Task(coro, loop=loop, context=context, eager_start=True)
        if task.done():
            first.done = True
            try:
                first.value = task.result()
            except BaseException as error:  # read here, as the 3.11 path does
                first.error = error
        return task, first

    _start = _native_eager_task
else:
    _start = _stepped_task


class SettleLater:
    """Collects the finished-at-once tasks of some work, to settle them in one loop turn.

    Work run in `context` hands such tasks here from `settle` (nested work too, as
    contexts are copied into the tasks it starts), until `settle` is called here.
    """

    __slots__ = ("_open", "_tasks")

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[Any]] = []
        self._open = True

    def context(self) -> contextvars.Context:
        """A copy of the current context in which `settle` hands tasks to this."""
        context = contextvars.copy_context()
        context.run(_SETTLE_LATER.set, self)
        return context

    def add(self, task: asyncio.Task[Any]) -> bool:
        """Take ``task`` to settle later; False once this has settled (settle it now)."""
        if self._open:
            self._tasks.append(task)
        return self._open

    async def settle(self) -> None:
        """Wait for every task taken to end; later ones are settled where they are made."""
        self._open = False
        tasks, self._tasks = self._tasks, []
        if all(task.done() for task in tasks):
            return
        await asyncio.sleep(0)  # their last steps were queued before this one: see settle
        pending = [task for task in tasks if not task.done()]
        if pending:
            await asyncio.wait(pending)


_SETTLE_LATER: contextvars.ContextVar[SettleLater | None] = contextvars.ContextVar(
    "toolchain_settle_later", default=None
)


async def settle(task: asyncio.Task[Any]) -> None:
    """Wait for a task whose coroutine already finished in its eager first step to end.

    On 3.12+ it has ended; on 3.11 it takes its last, empty step at the next loop turn.
    Its outcome was read from `EagerStart`: the task itself only returns.

    That step was queued when the task was made, so a bare yield (one loop turn, where
    ``asyncio.wait`` takes three) resumes us after it has run.
    """
    if task.done():
        return
    later = _SETTLE_LATER.get()
    if later is not None and later.add(task):
        return
    await asyncio.sleep(0)
    if not task.done():  # not one of ours after all: wait for it properly
        await asyncio.wait((task,))
