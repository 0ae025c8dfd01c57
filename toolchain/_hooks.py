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

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolchain._content import ContentPart
from toolchain._errors import describe_exception, exception_text
from toolchain._result import ToolCall, ToolCallError, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["Hooks", "ToolCallRefused", "ToolHook", "guard_call", "refusal_error"]

_log = logging.getLogger("toolchain")

BeforeHook = Callable[
    ["ExecutionContext", ToolCall], "ToolCall | Awaitable[ToolCall | None] | None"
]
AfterHook = Callable[
    ["ExecutionContext", ToolCall, ToolResult[Any]],
    "ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None",
]
Shown: TypeAlias = "str | tuple[str, tuple[ContentPart, ...]]"
"""What an observation hook returns: the text, or the text and the parts shown beside it."""
ObservationHook = Callable[
    ["ExecutionContext", ToolCall, ToolResult[Any], str], "Shown | Awaitable[Shown | None] | None"
]
GuardHook = Callable[["ExecutionContext", ToolCall], "Awaitable[None] | None"]


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

    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> ToolCall | Awaitable[ToolCall | None] | None:
        """Return a replacement call, ``None`` to keep it, or raise ``ToolCallRefused``."""
        return None

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None:
        """Return a replacement result, or ``None`` to keep it."""
        return None

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> Shown | Awaitable[Shown | None] | None:
        """Return the text the model sees for this successful call (``text`` is the
        output as the chain serialised it, or an earlier hook's rewrite), or ``None``
        to keep it. Return ``(text, media)`` to replace the parts shown beside it too
        (``result.media`` until a hook replaces them; the relay boxes large text parts
        this way). ``raw`` results keep the real output and media either way."""
        return None

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


class Hooks:
    """A run's ordered tool hooks (``ctx.hooks``).

    ``parent`` is the hooks of the parent run (``ExecutionContext.child``): its guards
    watch this run's calls too (``guard_chain``); its other hooks do not.

    >>> hooks = Hooks()
    >>> remove = hooks.add(ToolHook())
    >>> len(hooks.before), len(hooks.after), len(hooks.observation)  # nothing overridden
    (0, 0, 0)
    """

    def __init__(self, *, parent: Hooks | None = None) -> None:
        self.parent = parent
        self._lock = threading.Lock()
        self.before: tuple[BeforeHook, ...] = ()
        """The before-tool-call hooks, in order (replaced, never mutated)."""
        self.after: tuple[AfterHook, ...] = ()
        """The after-tool-call hooks, in order (replaced, never mutated)."""
        self.observation: tuple[ObservationHook, ...] = ()
        """The observation rewriters, in order (replaced, never mutated)."""
        self.guards: tuple[GuardHook, ...] = ()
        """This run's own guards, in order (replaced, never mutated); see ``guard_chain``."""

    def add(self, hook: ToolHook) -> Callable[[], None]:
        """Append ``hook``'s overridden methods; returns a function that removes them."""
        before = after = observation = guard = None
        kind = type(hook)
        if kind.before_tool_call is not ToolHook.before_tool_call:
            before = hook.before_tool_call
        if kind.after_tool_call is not ToolHook.after_tool_call:
            after = hook.after_tool_call
        if kind.rewrite_observation is not ToolHook.rewrite_observation:
            observation = hook.rewrite_observation
        if kind.guard_tool_call is not ToolHook.guard_tool_call:
            guard = hook.guard_tool_call
        with self._lock:
            if before is not None:
                self.before = (*self.before, before)
            if after is not None:
                self.after = (*self.after, after)
            if observation is not None:
                self.observation = (*self.observation, observation)
            if guard is not None:
                self.guards = (*self.guards, guard)

        def remove() -> None:
            with self._lock:
                self.before = tuple(h for h in self.before if h != before)
                self.after = tuple(h for h in self.after if h != after)
                self.observation = tuple(h for h in self.observation if h != observation)
                self.guards = tuple(h for h in self.guards if h != guard)

        return remove

    @property
    def guarded(self) -> bool:
        """Whether any guard watches this run's calls (its own or a parent run's)."""
        hooks: Hooks | None = self
        while hooks is not None:
            if hooks.guards:
                return True
            hooks = hooks.parent
        return False

    def guard_chain(self) -> tuple[GuardHook, ...]:
        """Every guard that checks this run's calls, in the order they run: this run's
        own first, then its parent's, outwards."""
        chain = self.guards
        hooks = self.parent
        while hooks is not None:
            chain = (*chain, *hooks.guards)
            hooks = hooks.parent
        return chain

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.observation or self.guarded)


def refusal_error(call: ToolCall, refused: ToolCallRefused) -> ToolCallError:
    """The error a call refused by a hook or guard fails with (its message for the model)."""
    if refused.kind == "invalid_arguments":
        message = f"invalid arguments for {call.name}: {exception_text(refused)}"
    elif refused.kind == "unknown_tool":
        message = exception_text(refused)
    else:
        message = f"{call.name} was refused: {exception_text(refused)}"
    return ToolCallError(refused.kind, message, refused)


async def guard_call(ctx: ExecutionContext, call: ToolCall) -> ToolCallError | None:
    """Run every guard of ``ctx`` (its parents' first) on ``call``: the error it fails
    with, or None when all let it run. Whoever runs a tool calls this first."""
    for guard in ctx.hooks.guard_chain():
        try:
            checked = guard(ctx, call)
            if checked is not None and inspect.isawaitable(checked):
                await checked
        except ToolCallRefused as refused:
            return refusal_error(call, refused)
        except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError):
            raise
        except BaseException as error:
            _log.warning("a tool-call guard failed on %s", call.name, exc_info=error)
            message = f"a tool-call hook failed: {describe_exception(error)}"
            return ToolCallError("hook_error", message, error)
    return None
