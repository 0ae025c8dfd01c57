"""Stage 3 of a chain, for one call: a `Checked` call run, and its result through the
after hooks: a `Ran`.

The arguments are validated into the tool's input type, the tool is called (``async``,
inline, or on a worker thread) and whatever goes wrong becomes the call's error, with a
message the model can act on: invalid arguments, a ``ToolError``, a tool that raises
anything at all (``SystemExit`` included), a timeout or the run's cancellation, an
output that is not a ``ToolResult``, a sync tool the worker pool refuses (too many
stuck calls: ``toolchain._concurrency``). Only ``KeyboardInterrupt`` goes through. The after
hooks may then replace the result.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final, cast

from toolchain._approvals import CallHeld, held_error
from toolchain._concurrency import WorkersStuck, run_in_worker
from toolchain._context import Cancelled, StateKey
from toolchain._errors import ToolError, describe_exception, exception_text
from toolchain._hooks import HookFailed, HookStage, hook_error, run_stage
from toolchain._input import ArgumentsError
from toolchain._redact import logger
from toolchain._result import ToolCallError, ToolResult
from toolchain.chain._config import ChainConfig
from toolchain.chain._stages import AnyTool, Checked, Ran, Signals

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = [
    "UNVALIDATED",
    "after_hooks",
    "arguments_error",
    "invoke",
    "not_a_result",
    "raised_error",
    "take_turn",
    "tool_turns",
]

_log = logger("toolchain")

UNVALIDATED: Final = object()
"""``invoke``'s input not given: the call's arguments are validated first."""

Invoked = tuple[ToolResult[object] | None, ToolCallError | None]
"""What a tool run gives: its result or its error (the durable step seam records this)."""


async def invoke(
    config: ChainConfig,
    ctx: ExecutionContext,
    checked: Checked,
    index: int,
    signals: Signals,
    value: object = UNVALIDATED,
) -> Invoked:
    """Validate the call's arguments and run its tool: its result, or the error the call
    fails with. ``value``: the input already validated (and approved as it is).

    ``signals`` tell a cancellation the chain made (a timeout, the run's cancellation)
    from one that came from outside, which goes through.
    """
    call, tool = checked.call, checked.tool
    try:
        if value is UNVALIDATED:
            value = tool.codec.validate(call.args)
    except Exception as error:
        return None, arguments_error(tool.name, error)
    result: object
    turns = tool_turns(ctx, tool) if tool.max_concurrency is not None else None
    taken = False
    try:
        if turns is not None:  # a rate-limited tool: its turn, untimed while it waits
            await take_turn(
                turns,
                functools.partial(signals.stop_clock, index),
                functools.partial(signals.start_clock, index),
            )
            taken = True
        if tool.is_async:
            result = await cast("Awaitable[object]", tool.call(ctx, value))
        elif tool.inline:
            result = tool.call(ctx, value)
        else:
            work = functools.partial(tool.call, ctx, value)
            result = await run_in_worker(work, tool=tool.name, call_id=call.id)
            if inspect.isawaitable(result):
                result = await result
    except asyncio.CancelledError as error:
        why = signals.why.get(index)
        if why == "timeout":
            limit = config.timeout_of(tool.name)
            message = f"{tool.name} did not finish within {limit:g} s"
            return None, ToolCallError("timeout", message, TimeoutError(message))
        if why is None and not ctx.cancelled:
            raise  # someone else cancelled the whole execution
        reason = ctx.cancel_reason or "cancelled"
        return None, ToolCallError("cancelled", f"{tool.name} was cancelled: {reason}", error)
    except (KeyboardInterrupt, GeneratorExit):  # GeneratorExit: a coroutine being closed
        raise
    except BaseException as error:  # SystemExit … from user code: this call's
        return None, raised_error(tool.name, error)
    finally:
        if taken:
            assert turns is not None
            turns.release()
    if not isinstance(result, ToolResult):
        return None, not_a_result(tool.name, result)
    # Any ToolResult: its text is an object to the chain (isinstance leaves it Unknown).
    return cast("ToolResult[object]", result), None


_TURNS = StateKey[dict[AnyTool, asyncio.Semaphore]]("toolchain.chain.tool_turns")


def tool_turns(ctx: ExecutionContext, tool: AnyTool) -> asyncio.Semaphore:
    """``tool``'s turns in the run ``ctx`` belongs to (its sub-agents' calls included)."""
    root = ctx
    while root.parent is not None:
        root = root.parent
    turns = root.state.setdefault(_TURNS, dict)
    found = turns.get(tool)
    if found is None:
        found = turns[tool] = asyncio.Semaphore(tool.max_concurrency or 1)
    return found


async def take_turn(
    turns: asyncio.Semaphore, stop_clock: Callable[[], None], start_clock: Callable[[], None]
) -> None:
    """Wait for a turn; the call's time limit stops while it waits."""
    if not turns.locked():
        await turns.acquire()  # free: taken without suspending
        return
    stop_clock()
    try:
        await turns.acquire()
    finally:
        start_clock()


# What a tool's failures come to, in the model's words: a chain's call and a composite's
# sub-call (``toolchain.composite``) both end in these. A cancellation or a timeout is
# each caller's own to read (whose it was), before these see the rest.


def arguments_error(name: str, error: Exception) -> ToolCallError:
    """The error a call fails with when validating its arguments raised ``error``."""
    if isinstance(error, ArgumentsError):
        return ToolCallError("invalid_arguments", f"invalid arguments for {name}: {error}", error)
    # A validator that raises something odd, deep nesting …
    _log.warning("validating arguments of %s raised", name, exc_info=error)
    message = f"invalid arguments for {name}: {describe_exception(error)}"
    return ToolCallError("invalid_arguments", message[:1000], error)


def raised_error(name: str, error: BaseException) -> ToolCallError:
    """The error a call fails with when its tool raised ``error`` (not a cancellation of
    the call, nor a timeout: the caller reads those first)."""
    if isinstance(error, WorkersStuck):  # not run at all
        _log.error("%s", error)
        return ToolCallError("limit", str(error), error)
    if isinstance(error, ToolError):
        return ToolCallError("tool_error", exception_text(error), error)
    if isinstance(error, CallHeld):  # a call the tool made waits for a person (a composite's)
        return held_error(error)
    if isinstance(error, Cancelled):
        return ToolCallError("cancelled", f"cancelled: {exception_text(error)}", error)
    _log.warning("tool %s raised", name, exc_info=error)
    message = f"{name} failed: {describe_exception(error)}"
    return ToolCallError("tool_error", message[:2000], error)


def not_a_result(name: str, returned: object) -> ToolCallError:
    """The error a call fails with when its tool returned something not a ``ToolResult``."""
    message = f"{name} returned {type(returned).__name__}, not a ToolResult"
    _log.error("%s: its call() must return ToolResult(...)", message)
    return ToolCallError("output_error", message)


def after_hooks(ctx: ExecutionContext, ran: Ran) -> Ran | Awaitable[Ran]:
    """``ran`` with the result as the after hooks left it, or the error a hook made of
    the call; an awaitable of that only once a hook is ``async`` (see ``run_stage``).
    Only a call with a result has after hooks run."""
    return run_stage(_AFTER, ctx.hooks.after, (ctx, ran.call), ran.result, ran)


def _a_result(
    returned: object, result: ToolResult[object] | None, ran: Ran
) -> ToolResult[object] | None:
    # Hooks are user code: check what they return, whatever their annotations say.
    return cast("ToolResult[object]", returned) if isinstance(returned, ToolResult) else None


def _ran(result: ToolResult[object] | None, ran: Ran) -> Ran:
    # Most after hooks only look (ToolSearch's gate on every call): the same `Ran` then.
    return ran if result is ran.result else Ran(ran.call, result, None)


def _failed(failure: HookFailed, result: ToolResult[object] | None, ran: Ran) -> Ran:
    during = "an after-tool-call hook"
    call = ran.call
    error = hook_error(failure, call, hook="a tool-call hook", during=during, takes="a ToolResult")
    return Ran(call, None, error)


_AFTER: HookStage[ToolResult[object] | None, Ran, Ran] = HookStage(_a_result, _ran, _failed)
