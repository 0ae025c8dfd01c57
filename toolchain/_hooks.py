"""Tool hooks: ordered code that may change a call, apart from read-only observers.

A ``ToolHook`` may rewrite a call before it is validated, refuse it, replace its
result before it is serialised, or rewrite the serialised text the model will see
(while ``raw`` keeps the real result: how the context relay boxes large outputs and
variables name them). Hooks run in the order they were added, before hooks
and after hooks alike. A hook that raises fails *that call* only (``hook_error``;
``refused`` for ``ToolCallRefused``); the other calls of the action go on. Hooks may
be plain or ``async`` methods.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolchain._content import ContentPart
from toolchain._result import ToolCall, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["Hooks", "ToolCallRefused", "ToolHook"]

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


class Hooks:
    """A run's ordered tool hooks (``ctx.hooks``).

    >>> hooks = Hooks()
    >>> remove = hooks.add(ToolHook())
    >>> len(hooks.before), len(hooks.after), len(hooks.observation)  # nothing overridden
    (0, 0, 0)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.before: tuple[BeforeHook, ...] = ()
        """The before-tool-call hooks, in order (replaced, never mutated)."""
        self.after: tuple[AfterHook, ...] = ()
        """The after-tool-call hooks, in order (replaced, never mutated)."""
        self.observation: tuple[ObservationHook, ...] = ()
        """The observation rewriters, in order (replaced, never mutated)."""

    def add(self, hook: ToolHook) -> Callable[[], None]:
        """Append ``hook``'s overridden methods; returns a function that removes them."""
        before = after = observation = None
        kind = type(hook)
        if kind.before_tool_call is not ToolHook.before_tool_call:
            before = hook.before_tool_call
        if kind.after_tool_call is not ToolHook.after_tool_call:
            after = hook.after_tool_call
        if kind.rewrite_observation is not ToolHook.rewrite_observation:
            observation = hook.rewrite_observation
        with self._lock:
            if before is not None:
                self.before = (*self.before, before)
            if after is not None:
                self.after = (*self.after, after)
            if observation is not None:
                self.observation = (*self.observation, observation)

        def remove() -> None:
            with self._lock:
                self.before = tuple(h for h in self.before if h != before)
                self.after = tuple(h for h in self.after if h != after)
                self.observation = tuple(h for h in self.observation if h != observation)

        return remove

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.observation)
