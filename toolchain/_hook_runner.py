"""`run_hooks`: one runner for every stage's hooks, sync-first.

Each stage of a call (before, guard, after, observation) and each step of an agent runs
its hooks the same way: in order, each given what the one before returned, plain or
``async`` alike, and a hook that raises, or returns what the stage does not take, is
reported as that hook's failure. Most hooks are plain functions, so the runner makes no
coroutine until a hook hands it an awaitable: a stage of plain hooks costs no event-loop
work at all. Callers write::

    value = run_hooks(hooks, (ctx, call), value, accept)
    if isawaitable(value):
        value = await value

>>> def double(ctx: object, n: int) -> int:
...     return n * 2
>>> def accept(returned: object, n: int) -> int | None:
...     return returned if isinstance(returned, int) else None
>>> run_hooks((double, double), ("ctx",), 3, accept)
12
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

__all__ = ["HookFailed", "run_hooks"]

T = TypeVar("T")

Accept = Callable[[object, T], "T | None"]
"""What a stage takes from a hook: ``accept(returned, value)`` is the new value, or None
when ``returned`` is not of the stage's kind (the hook then fails)."""

# Never a hook's failure: they stop the program, close a coroutine or cancel the task.
_THROUGH = (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError)


class HookFailed(Exception):
    """A hook raised (``error``), or returned ``returned``, which its stage does not take."""

    def __init__(self, hook: object, error: BaseException | None, returned: object = None):
        self.hook = hook
        self.error = error
        self.returned = returned
        what = repr(error) if error is not None else f"returned {type(returned).__name__}"
        super().__init__(f"hook {hook!r} failed: {what}")


def run_hooks(
    hooks: Sequence[Callable[..., Any]],
    args: tuple[object, ...],
    value: T,
    accept: Accept[T],
    passthrough: tuple[type[BaseException], ...] = (),
) -> T | Awaitable[T]:
    """``value`` after each of ``hooks`` (``hook(*args, value)``) in order.

    A hook returning None keeps the value; an awaitable is awaited, from then on in a
    coroutine the caller awaits (only then is one made). A hook that raises an
    exception of ``passthrough`` (a refusal the stage understands) lets it through;
    any other raises `HookFailed` from it, and so does a return ``accept`` refuses.
    """
    for at, hook in enumerate(hooks):
        try:
            returned = hook(*args, value)
        except _THROUGH:
            raise
        except passthrough:
            raise
        except BaseException as error:
            raise HookFailed(hook, error) from error
        if returned is None:
            continue
        if type(returned) is not str and inspect.isawaitable(returned):
            return _finish(hooks, at, returned, args, value, accept, passthrough)
        value = _accepted(hook, returned, value, accept)
    return value


async def _finish(
    hooks: Sequence[Callable[..., Any]],
    at: int,
    pending: Awaitable[object],
    args: tuple[object, ...],
    value: T,
    accept: Accept[T],
    passthrough: tuple[type[BaseException], ...],
) -> T:
    """The rest of `run_hooks`, once hook ``at`` handed over ``pending``."""
    for index in range(at, len(hooks)):
        hook = hooks[index]
        try:
            returned = await pending if index == at else hook(*args, value)
            if returned is not None and inspect.isawaitable(returned):
                returned = await returned
        except _THROUGH:
            raise
        except passthrough:
            raise
        except BaseException as error:
            raise HookFailed(hook, error) from error
        if returned is not None:
            value = _accepted(hook, returned, value, accept)
    return value


def _accepted(hook: object, returned: object, value: T, accept: Accept[T]) -> T:
    taken = accept(returned, value)
    if taken is None:
        raise HookFailed(hook, None, returned)
    return taken
