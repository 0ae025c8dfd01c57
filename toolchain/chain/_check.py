"""Stage 2 of a chain: the calls of one action planned, and each checked before it runs.

Planning caps the action at ``max_calls`` (the rest become one problem the model reads)
and gives every call an id. Checking settles, in order, whether a call may run: a
problem the reader found, a call rejected before it got here, an unknown tool, the
run's limits, the before hooks (which may rewrite or refuse it) and the guards
(approvals, activation: they see the call as it will run). A call that may not run
ends here with the error it fails with.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING

from toolchain._context import Stats
from toolchain._errors import describe_exception
from toolchain._hooks import HookFailed, ToolCallRefused, refusal_error, run_hooks
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolCallError
from toolchain.chain._stages import AnyTool

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["before_hooks", "is_overflow", "plan", "precheck", "too_many", "unknown_tool"]

_log = logger("toolchain")
_OVERFLOW = "were not run: an action may hold at most"


def too_many(dropped: int, limit: int) -> str:
    """The problem standing for the ``dropped`` calls past an action's ``limit``.

    >>> too_many(3, 64)[:62]
    '3 more calls were not run: an action may hold at most 64 calls'
    """
    return (
        f"{dropped} more call{'s' if dropped != 1 else ''} {_OVERFLOW} {limit} calls; "
        "send the rest in a later action"
    )


def is_overflow(item: ToolCall | str) -> bool:
    """Whether ``item`` is the problem `too_many` wrote (a reader may have added it)."""
    if isinstance(item, ToolCall):  # a parse problem handed over as a rejected call
        return item.rejected is not None and _OVERFLOW in item.rejected.message
    return _OVERFLOW in item


def plan(ctx: ExecutionContext, items: list[ToolCall | str], max_calls: int) -> None:
    """Cap ``items`` (in place) at ``max_calls`` calls and give each call an id."""
    if len(items) > max_calls + 1 or (len(items) == max_calls + 1 and not is_overflow(items[-1])):
        dropped = len(items) - max_calls
        items[max_calls:] = [too_many(dropped, max_calls)]
    for index, item in enumerate(items):
        if type(item) is ToolCall and not item.id:
            items[index] = ToolCall(item.name, item.args, ctx.new_call_id(), item.rejected)


def unknown_tool(name: str, tools: Mapping[str, AnyTool]) -> ToolCallError:
    """The error of a call to a tool the chain does not have: the closest name, then all."""
    known = list(tools)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    listing = ", ".join(known) or "(none)"
    shown = name if len(name) <= 80 else name[:77] + "..."
    return ToolCallError(
        "unknown_tool", f"unknown tool {shown!r}.{hint} Available tools: {listing}"
    )


def precheck(
    ctx: ExecutionContext, call: ToolCall, tools: Mapping[str, AnyTool]
) -> AnyTool | ToolCallError:
    """The checks that need no hook: counted, rejected, known, within the run's limits."""
    stats = ctx.stats
    stats.count_call(Stats.TOOL_CALLS, call.name)
    if call.rejected is not None:
        return call.rejected
    tool = tools.get(call.name)
    if tool is None:
        return unknown_tool(call.name, tools)
    over = ctx.limits.tool_call_refused(stats, call.name)
    if over is not None:
        message = f"{call.name} was not run: the run's {over} limit is reached"
        return ToolCallError("limit", message)
    return tool


BeforeChecked = tuple[ToolCall, ToolCallError | None]


def before_hooks(ctx: ExecutionContext, call: ToolCall) -> BeforeChecked | Awaitable[BeforeChecked]:
    """The call as the before hooks left it, or the error a hook made of it (with the
    call as the hooks before it had left it); an awaitable of that only once a hook is
    ``async``."""
    latest = [call]

    def accept(returned: object, current: ToolCall) -> ToolCall | None:
        # Hooks are user code: check what they return, whatever their annotations say.
        if not isinstance(returned, ToolCall):
            return None
        latest[0] = returned if returned.id else ToolCall(returned.name, returned.args, current.id)
        return latest[0]

    try:
        replaced = run_hooks(ctx.hooks.before, (ctx,), call, accept, (ToolCallRefused,))
    except ToolCallRefused as refused:
        return latest[0], refusal_error(latest[0], refused)
    except HookFailed as failed:
        return latest[0], _before_failed(latest[0], failed)
    if isinstance(replaced, ToolCall):
        return replaced, None
    return _awaited(latest, replaced)


async def _awaited(latest: list[ToolCall], replaced: Awaitable[ToolCall]) -> BeforeChecked:
    try:
        return await replaced, None
    except ToolCallRefused as refused:
        return latest[0], refusal_error(latest[0], refused)
    except HookFailed as failed:
        return latest[0], _before_failed(latest[0], failed)


def _before_failed(call: ToolCall, failed: HookFailed) -> ToolCallError:
    if failed.error is None:
        message = f"a tool-call hook returned {type(failed.returned).__name__}, not a ToolCall"
        _log.error("%s (hook %r)", message, failed.hook)
        return ToolCallError("hook_error", message)
    _log.warning("a before-tool-call hook failed on %s", call.name, exc_info=failed.error)
    message = f"a tool-call hook failed: {describe_exception(failed.error)}"
    return ToolCallError("hook_error", message, failed.error)
