"""Tool hooks: ordered code that may change a call, apart from read-only observers.

A ``ToolHook`` may rewrite a call before it is validated, refuse it, replace its
result before it is serialised, or rewrite the serialised text the model will see
(while ``raw`` keeps the real result: how the context relay boxes large outputs and
variables name them). Hooks run in the order they were added, before hooks
and after hooks alike. A hook that raises fails *that call* only (``hook_error``;
``refused`` for ``ToolCallRefused``); the other calls of the action go on. Hooks may
be plain or ``async`` methods.

A guard (``ToolHook.guard_tool_call``) is the one hook that sees every call of a tool,
however deep: the chain's calls, each sub-call of a composite tool, and the calls of
child runs (``ExecutionContext.child``: sub-agents), whose contexts consult their
parents' guards. Approvals and activation checks live there, so nesting a tool
cannot skip them.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Literal

from toolchain._errors import describe_exception, exception_text
from toolchain._hook_runner import HookFailed, run_hooks
from toolchain._hook_set import Hooks, Shown, hook_default
from toolchain._logs import logger
from toolchain._result import ToolCall, ToolCallError, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = [
    "Hooks",
    "Shown",
    "ToolCallRefused",
    "ToolHook",
    "check_guards",
    "guard_call",
    "refusal_error",
]

_log = logger("toolchain")

RefusalKind = Literal["refused", "invalid_arguments", "unknown_tool"]


class ToolCallRefused(Exception):
    """Raise from a before-tool-call hook to refuse the call; the message is for the model.

    ``kind`` is the error kind the call fails with: ``refused`` (a policy said no),
    ``invalid_arguments`` when the hook found the arguments unusable (a reference to
    a variable that does not exist, say), or ``unknown_tool`` when the tool cannot be
    called now (discovery has not activated it); that message is shown as it is.

    >>> str(ToolCallRefused("deleting bookings needs a human's approval"))
    "deleting bookings needs a human's approval"
    >>> ToolCallRefused("unknown variable $x", kind="invalid_arguments").kind
    'invalid_arguments'
    """

    def __init__(self, message: str, *, kind: RefusalKind = "refused"):
        super().__init__(message)
        self.kind: RefusalKind = kind


class ToolHook:
    """Override either method (or both). Returning ``None`` keeps what was given.

    ``before_tool_call`` sees the call as the model wrote it (after earlier hooks) and
    may return a replacement (new arguments); ``after_tool_call`` sees a successful
    call's ``ToolResult`` and may return another one.

    >>> from toolchain import ExecutionContext, ToolCall
    >>> class HomeCity(ToolHook):
    ...     def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
    ...         if call.args.get("city") == "$home":
    ...             return ToolCall(call.name, {**call.args, "city": "Lisbon"}, call.id)
    ...         return None
    >>> ctx = ExecutionContext()
    >>> remove = ctx.hooks.add(HomeCity())
    """

    @hook_default
    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> ToolCall | Awaitable[ToolCall | None] | None:
        """Return a replacement call, ``None`` to keep it, or raise ``ToolCallRefused``."""
        return None

    @hook_default
    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None:
        """Return a replacement result, or ``None`` to keep it."""
        return None

    @hook_default
    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> Shown | Awaitable[Shown | None] | None:
        """Return the text the model sees for this successful call (``text`` is the
        output as the chain serialised it, or an earlier hook's rewrite), or ``None``
        to keep it. Return ``(text, media)`` to replace the parts shown beside it too
        (``result.media`` until a hook replaces them; the relay boxes large text parts
        this way). ``raw`` results keep the real output and media either way."""
        return None

    @hook_default
    def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Awaitable[None] | None:
        """Raise ``ToolCallRefused`` to stop this call; return to let it run.

        Unlike the other methods, a guard sees every call of a tool in the run and in
        its child runs: the chain's calls (after the before hooks, as they will run), a
        composite's sub-calls (``call.name`` the sub-tool's own name, ``call.id``
        ``<id>/<index>``) and the calls a sub-agent makes, with ``ctx`` the context
        the call runs in (a child's, for a sub-agent). It cannot change the call.
        A run's own guards run first, then its parent's, outwards: what the run itself
        allows is settled before an outer policy (an approval) is asked.

        >>> from toolchain import ExecutionContext, ToolCall
        >>> class NoDeletes(ToolHook):
        ...     def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
        ...         if call.name.startswith("delete_"):
        ...             raise ToolCallRefused("deleting is not allowed here")
        >>> run = ExecutionContext()
        >>> remove = run.hooks.add(NoDeletes())
        >>> sub = run.child("cleaner")  # a sub-agent's context
        >>> len(sub.hooks.guard_chain())  # the run's guard watches its calls too
        1
        """
        return None


def refusal_error(call: ToolCall, refused: ToolCallRefused) -> ToolCallError:
    """The error a call refused by a hook or guard fails with (its message for the model)."""
    if refused.kind == "invalid_arguments":
        message = f"invalid arguments for {call.name}: {exception_text(refused)}"
    elif refused.kind == "unknown_tool":
        message = exception_text(refused)
    else:
        message = f"{call.name} was refused: {exception_text(refused)}"
    return ToolCallError(refused.kind, message, refused)


def check_guards(
    ctx: ExecutionContext, call: ToolCall
) -> ToolCallError | Awaitable[ToolCallError | None] | None:
    """Run every guard of ``ctx`` (its own first, then its parents') on ``call``: the
    error it fails with, or None when all let it run; an awaitable of that only once a
    guard is ``async`` (a chain's stage then awaits it; no coroutine otherwise)."""
    try:
        checked = run_hooks(ctx.hooks.guard_chain(), (ctx,), call, _keep, (ToolCallRefused,))
    except ToolCallRefused as refused:
        return refusal_error(call, refused)
    except HookFailed as failed:
        return _guard_failed(call, failed)
    if isinstance(checked, ToolCall):  # every guard was plain: no coroutine
        return None
    return _guarded(call, checked)


async def guard_call(ctx: ExecutionContext, call: ToolCall) -> ToolCallError | None:
    """`check_guards`, awaited: for whoever runs a tool outside a chain (a composite's
    sub-calls), which must call it first."""
    checked = check_guards(ctx, call)
    if checked is None or isinstance(checked, ToolCallError):
        return checked
    return await checked


async def _guarded(call: ToolCall, checked: Awaitable[ToolCall]) -> ToolCallError | None:
    try:
        await checked
    except ToolCallRefused as refused:
        return refusal_error(call, refused)
    except HookFailed as failed:
        return _guard_failed(call, failed)
    return None


def _keep(returned: object, call: ToolCall) -> ToolCall:
    """A guard's return is not used: it lets the call run by returning at all."""
    return call


def _guard_failed(call: ToolCall, failed: HookFailed) -> ToolCallError:
    error = failed.error if failed.error is not None else TypeError(repr(failed.returned))
    _log.warning("a tool-call guard failed on %s", call.name, exc_info=error)
    message = f"a tool-call hook failed: {describe_exception(error)}"
    return ToolCallError("hook_error", message, error)
