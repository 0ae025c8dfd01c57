"""Running one sub-call of a composite: its arguments validated by its sub-tool's own
input type, the sub-tool run under its own timeout, and every failure made its error."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Mapping
from typing import Any, cast

from toolchain import (
    ExecutionContext,
    Tool,
    ToolCallError,
    ToolResult,
    to_json,
)
from toolchain._approvals import enclosing
from toolchain._concurrency import run_in_worker
from toolchain.chain._run import (
    UNVALIDATED,
    arguments_error,
    not_a_result,
    raised_error,
    take_turn,
    tool_turns,
)
from toolchain.runtime import describe_exception

__all__ = ["cancel_text", "invoke", "unshowable"]


async def invoke(
    ctx: ExecutionContext,
    sub: Tool[Any, Any],
    args: Mapping[str, object],
    call_id: str = "",
    value: object = UNVALIDATED,
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    """Validate and run one sub-call under its own timeout; failures become its error.
    ``value``: its input validated already (and approved as it is)."""
    try:
        if value is UNVALIDATED:
            value = sub.codec.validate(args)
    except Exception as error:
        return None, arguments_error(sub.name, error)
    scope = asyncio.timeout(sub.timeout)
    result: object
    turns = tool_turns(ctx, sub) if sub.max_concurrency is not None else None
    taken = False
    try:
        if turns is not None:  # a rate-limited sub-tool: its turn, untimed while it waits
            around = enclosing.get()
            await take_turn(
                turns,
                around.stop_clock if around is not None else _nothing,
                around.start_clock if around is not None else _nothing,
            )
            taken = True
        async with scope:
            result = await _call(ctx, sub, value, call_id)
    except asyncio.CancelledError as error:
        if not ctx.cancelled:
            raise  # the composite itself was stopped (its time limit, or its caller)
        return None, ToolCallError(
            "cancelled", f"{sub.name} was cancelled: {cancel_text(ctx)}", error
        )
    except TimeoutError as error:
        if scope.expired():
            message = f"{sub.name} did not finish within {sub.timeout:g} s"
            return None, ToolCallError("timeout", message, error)
        return None, raised_error(sub.name, error)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as error:  # SystemExit … from a sub-tool: this sub-call's
        return None, raised_error(sub.name, error)
    finally:
        if turns is not None and taken:
            turns.release()
    if not isinstance(result, ToolResult):
        return None, not_a_result(sub.name, result)
    return cast("ToolResult[object]", result), None


async def _call(ctx: ExecutionContext, sub: Tool[Any, Any], value: object, call_id: str) -> object:
    if sub.is_async:
        return await cast("Awaitable[object]", sub.call(ctx, value))
    if sub.inline:
        return sub.call(ctx, value)
    result = await run_in_worker(
        functools.partial(sub.call, ctx, value), tool=sub.name, call_id=call_id
    )
    if inspect.isawaitable(result):
        result = await result
    return result


def _nothing() -> None:
    return None


def unshowable(name: str, result: ToolResult[object]) -> ToolCallError | None:
    """An error when the output cannot be serialised: it would sink the whole composite."""
    try:
        to_json(result.text)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as error:
        message = f"{name} produced output that cannot be shown: {describe_exception(error)}"
        return ToolCallError("output_error", message[:500], error)
    return None


def cancel_text(ctx: ExecutionContext) -> str:
    return f"the run was cancelled ({ctx.cancel_reason or 'cancelled'})"
