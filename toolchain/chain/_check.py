"""Stage 2 of a chain: an action's calls planned, and each call checked before it runs.

`plan` caps the action at ``max_calls`` (the rest become one problem the model reads)
and gives every call an id. Checking settles, in order, whether a call may run: a call
rejected before it got here, a tool the chain does not offer (unknown, or left out of a
narrowed view), the run's limits (`precheck`), the before hooks, which may rewrite or
refuse it (`before_hooks`), and the guards (approvals, activation: they see the call as
it will run; ``toolchain._hooks.check_guards``). A call ends this stage `Checked` (it
runs) or `Refused` (with the error it fails with).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from toolchain._context import Stats
from toolchain._hooks import HookFailed, HookStage, hook_error, run_stage
from toolchain._result import ToolCall, ToolCallError
from toolchain.chain._config import ChainConfig
from toolchain.chain._stages import Checked, Planned, Problem, Refused

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["before_hooks", "is_overflow", "plan", "precheck", "too_many"]

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


def plan(ctx: ExecutionContext, items: list[ToolCall | str], max_calls: int) -> list[Planned]:
    """``items`` capped at ``max_calls`` calls, each call with an id, each problem a `Problem`.

    >>> from toolchain import ExecutionContext
    >>> plan(ExecutionContext(), [ToolCall("ping"), "not a call"], 64)
    [ToolCall(name='ping', args={}, id='call_1', rejected=None), Problem(message='not a call')]
    """
    if len(items) > max_calls + 1 or (len(items) == max_calls + 1 and not is_overflow(items[-1])):
        items = [*items[:max_calls], too_many(len(items) - max_calls, max_calls)]
    return [
        Problem(item)
        if isinstance(item, str)
        else item
        if item.id
        else ToolCall(item.name, item.args, ctx.new_call_id(), item.rejected)
        for item in items
    ]


def precheck(config: ChainConfig, ctx: ExecutionContext, call: ToolCall) -> Checked | Refused:
    """The checks that need no hook: counted, rejected, offered, within the run's limits."""
    stats = ctx.stats
    stats.count_call(Stats.TOOL_CALLS, call.name)
    if call.rejected is not None:
        return Refused(call, call.rejected)
    tool = config.offered.get(call.name)
    if tool is None:
        return Refused(call, config.refusal(call.name))
    over = ctx.limits.tool_call_refused(stats, call.name)
    if over is not None:
        message = f"{call.name} was not run: the run's {over} limit is reached"
        return Refused(call, ToolCallError("limit", message))
    return Checked(call, tool, call.args)


def before_hooks(
    config: ChainConfig, ctx: ExecutionContext, checked: Checked
) -> Checked | Refused | Awaitable[Checked | Refused]:
    """``checked`` as the before hooks left it (its tool looked up again when a hook
    renamed the call), or refused by one, with the call as the hooks before it had left
    it; an awaitable of that only once a hook is ``async`` (see ``run_stage``)."""
    return run_stage(_BEFORE, ctx.hooks.before, (ctx,), checked.call, (config, checked))


_Before = tuple[ChainConfig, Checked]


def _a_call(returned: object, current: ToolCall, extra: _Before) -> ToolCall | None:
    # Hooks are user code: check what they return, whatever their annotations say.
    if not isinstance(returned, ToolCall):
        return None
    return returned if returned.id else ToolCall(returned.name, returned.args, current.id)


def _checked(call: ToolCall, extra: _Before) -> Checked | Refused:
    config, checked = extra
    if call is checked.call:
        return checked
    tool = config.offered.get(call.name)
    if tool is None:
        return Refused(call, config.refusal(call.name))
    return Checked(call, tool, checked.written)


def _refused(failure: HookFailed, call: ToolCall, extra: _Before) -> Refused:
    during = "a before-tool-call hook"
    hook, takes = "a tool-call hook", "a ToolCall"
    error = hook_error(failure, call, hook=hook, during=during, takes=takes, refusable=True)
    return Refused(call, error)


_BEFORE: HookStage[ToolCall, _Before, Checked | Refused] = HookStage(_a_call, _checked, _refused)
