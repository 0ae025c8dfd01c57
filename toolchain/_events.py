"""The tool-call events the chains emit on a run's read-only `EventBus` (``ctx.events``).

Events tell; they never change a run. A handler that raises is logged and counted
(``Stats.OBSERVER_ERRORS``) and the run goes on as if it had not been there. To
*change* a call (rewrite its arguments, refuse it, replace its result) use a tool
hook on ``ctx.hooks`` instead (see ``toolchain.ToolHook``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolchain._result import ToolCallError, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["AfterToolCall", "BeforeToolCall", "ToolCallParseFailed"]


@dataclass(frozen=True, slots=True)
class BeforeToolCall:
    """A call is about to be validated and run (after the tool hooks).

    ``args`` are the arguments the tool will be validated with; ``raw_args`` what the
    model wrote (they differ when a hook rewrote them). ``index`` is the call's
    position in its action; ``id`` its call id.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> started: list[str] = []
    >>> _ = ctx.events.subscribe(BeforeToolCall, lambda event: started.append(event.name))
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: Mapping[str, object]
    id: str = ""
    raw_args: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class AfterToolCall:
    """A call ended, failed or not (every call ends with one of these).

    Exactly one of ``result`` and ``error`` is set. ``duration`` is in seconds.

    >>> from toolchain import ExecutionContext
    >>> ctx = ExecutionContext()
    >>> failures: list[str] = []
    >>> def note(event: AfterToolCall) -> None:
    ...     if event.error is not None:
    ...         failures.append(f"{event.name}: {event.error.kind}")
    >>> _ = ctx.events.subscribe(AfterToolCall, note)
    """

    ctx: ExecutionContext
    index: int
    name: str
    args: Mapping[str, object]
    result: ToolResult[object] | None
    error: ToolCallError | None
    duration: float
    id: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallParseFailed:
    """Emitted when action content could not be read as tool calls."""

    ctx: ExecutionContext
    content: str
    message: str
