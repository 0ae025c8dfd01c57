"""`Hooks`: a run's ordered tool hooks (``ctx.hooks``), kept apart from what they get.

The set holds the methods each hook overrides, one ordered tuple per stage (replaced,
never mutated, so the chain reads them without a lock). It is generic in the context
type its hooks are given, so it needs nothing of ``ExecutionContext``, which owns one;
``ToolHook`` (``toolchain._hooks``) marks its do-nothing methods with `hook_default`,
and the set leaves those out.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeAlias, TypeVar

from toolchain._content import ContentPart
from toolchain._result import ToolCall, ToolResult

__all__ = [
    "AfterHook",
    "BeforeHook",
    "GuardHook",
    "Hooks",
    "ObservationHook",
    "Shown",
    "hook_default",
]

C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., Any])

Shown: TypeAlias = "str | tuple[str, tuple[ContentPart, ...]]"
"""What an observation hook returns: the text, or the text and the parts shown beside it."""
BeforeHook: TypeAlias = Callable[[C, ToolCall], "ToolCall | Awaitable[ToolCall | None] | None"]
AfterHook: TypeAlias = Callable[
    [C, ToolCall, ToolResult[Any]], "ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None"
]
ObservationHook: TypeAlias = Callable[
    [C, ToolCall, ToolResult[Any], str], "Shown | Awaitable[Shown | None] | None"
]
GuardHook: TypeAlias = Callable[[C, ToolCall], "Awaitable[None] | None"]

_STAGES = ("before_tool_call", "after_tool_call", "rewrite_observation", "guard_tool_call")


def hook_default(method: F) -> F:
    """Mark a hook method that does nothing, so `Hooks.add` does not run it at all."""
    method.__hook_default__ = True  # type: ignore[attr-defined]  # a marker on a function
    return method


class Hooks(Generic[C]):
    """A run's ordered tool hooks (``ctx.hooks``).

    ``parent`` is the hooks of the parent run (``ExecutionContext.child``): its guards
    watch this run's calls too (``guard_chain``); its other hooks do not.

    >>> from toolchain import ToolHook
    >>> hooks: Hooks[object] = Hooks()
    >>> remove = hooks.add(ToolHook())
    >>> len(hooks.before), len(hooks.after), len(hooks.observation)  # nothing overridden
    (0, 0, 0)
    """

    def __init__(self, *, parent: Hooks[C] | None = None) -> None:
        self.parent = parent
        self._lock = threading.Lock()
        self.before: tuple[BeforeHook[C], ...] = ()
        """The before-tool-call hooks, in order (replaced, never mutated)."""
        self.after: tuple[AfterHook[C], ...] = ()
        """The after-tool-call hooks, in order (replaced, never mutated)."""
        self.observation: tuple[ObservationHook[C], ...] = ()
        """The observation rewriters, in order (replaced, never mutated)."""
        self.guards: tuple[GuardHook[C], ...] = ()
        """This run's own guards, in order (replaced, never mutated); see ``guard_chain``."""

    def add(self, hook: object) -> Callable[[], None]:
        """Append ``hook``'s overridden methods (a ``ToolHook``); returns a function that
        removes them. A ``TypeError`` says so when ``hook`` overrides none of them."""
        before, after, observation, guard = (_overridden(hook, stage) for stage in _STAGES)
        if before is after is observation is guard is None and not _is_tool_hook(hook):
            raise TypeError(
                f"{type(hook).__name__} is not a tool hook: subclass toolchain.ToolHook and "
                "override before_tool_call, after_tool_call, rewrite_observation or "
                "guard_tool_call"
            )
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
        hooks: Hooks[C] | None = self
        while hooks is not None:
            if hooks.guards:
                return True
            hooks = hooks.parent
        return False

    def guard_chain(self) -> tuple[GuardHook[C], ...]:
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


def _overridden(hook: object, stage: str) -> Any:
    """``hook``'s bound method for ``stage``, or None where it keeps the default."""
    method = getattr(type(hook), stage, None)
    if method is None or getattr(method, "__hook_default__", False):
        return None
    return getattr(hook, stage)


def _is_tool_hook(hook: object) -> bool:
    """A hook that overrides nothing is still welcome when it is a ToolHook (a no-op)."""
    return all(hasattr(type(hook), stage) for stage in _STAGES)
