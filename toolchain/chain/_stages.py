"""What a chain's stages hand each other, one type per hand-off.

A chain's work, in order (`ToolChainBase.execute`), each stage taking one of these and
giving the next:

1. **read** (`CallSyntax.read`, in ``toolchain.chain._base``): the action's text becomes
   ``ToolCall | str`` items (a string: an item that is not a call), capped and given ids
   by ``toolchain.chain._check.plan``: a `Planned` each (a ``ToolCall``, or a `Problem`);
2. **check** (``toolchain.chain._check``): a ``ToolCall`` becomes `Checked` (the call as
   the before hooks left it, and its tool) or `Refused` (the error it ends with);
3. **run** (``toolchain.chain._run``; ``toolchain.chain._schedule`` runs an action's calls
   together): `Checked` becomes `Ran`, the tool's result or error after the after hooks;
4. **observe** (``toolchain.chain._observe``): `Ran` becomes `Outcome`, what the model
   reads of the call; the action's outcomes become its ``ToolChainResult``.

``toolchain.chain._pipeline.run_call`` takes one call through stages 2 to 4, in order.
Every stage reads the chain's settings from one frozen ``ChainConfig``, never from the
chain. `Signals` carry the chain's cancellations to the calls it runs.

The hand-offs are frozen msgspec structs without garbage-collector tracking: one of each
is made per call, and a struct is built in about a tenth of a NamedTuple's time. None can
be in a reference cycle: each is made after everything it holds, and never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from toolchain._content import ContentPart
from toolchain._result import ErrorKind, ToolCall, ToolCallError, ToolResult
from toolchain._tool import Tool

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext
    from toolchain.chain._config import ChainConfig

__all__ = [
    "AnyTool",
    "Checked",
    "Outcome",
    "Planned",
    "Problem",
    "Ran",
    "Refused",
    "Signals",
    "Start",
]

AnyTool = Tool[Any, Any]


class Problem(msgspec.Struct, frozen=True, gc=False):
    """An item of the action that is not a call (the reader's or the plan's words)."""

    message: str


Planned = ToolCall | Problem
"""An item of a planned action: a call with its id, or a problem."""


class Checked(msgspec.Struct, frozen=True, gc=False):
    """A call that may run: as the before hooks left it, with the tool it runs."""

    call: ToolCall
    tool: AnyTool
    written: Mapping[str, object]
    """The arguments as the model wrote them (``BeforeToolCall`` shows both)."""


class Refused(msgspec.Struct, frozen=True, gc=False):
    """A call that may not run, and why (unknown, a limit, a hook, a guard)."""

    call: ToolCall
    error: ToolCallError


class Ran(msgspec.Struct, frozen=True, gc=False):
    """What a call came to before it is observed: its result, or its error."""

    call: ToolCall
    result: ToolResult[object] | None
    error: ToolCallError | None


class Outcome(msgspec.Struct, frozen=True, gc=False):
    """How one call ended: its result or its error, and the text the model reads."""

    call: ToolCall
    result: ToolResult[object] | None
    error: ToolCallError | None
    text: str  # the serialised output, or the error line
    media: tuple[ContentPart, ...] | None = None  # shown instead of result.media (a hook's)


class Signals:
    """Which calls of one action the chain has cancelled, why, and when; which it does
    not time now (a call waiting for a person's decision, or for its turn)."""

    __slots__ = ("at", "rearm", "untimed", "why")

    def __init__(self) -> None:
        self.why: dict[int, ErrorKind] = {}
        self.at: dict[int, float] = {}
        self.untimed: set[int] = set()
        """Calls whose time limit does not run now: it starts afresh when they go on."""
        self.rearm: Callable[[int], None] | None = None
        """Set by the scheduler once it times the action's calls: times a call afresh."""

    def stop_clock(self, index: int) -> None:
        """Call ``index`` waits for something that is not its own work: do not time it."""
        self.untimed.add(index)

    def start_clock(self, index: int) -> None:
        """Call ``index`` goes on: its time limit counts from now."""
        self.untimed.discard(index)
        if self.rearm is not None:
            self.rearm(index)


Start = Callable[
    ["ChainConfig", "ExecutionContext", int, Planned, Signals],
    Coroutine[Any, Any, Outcome],
]
"""What the scheduler runs for one item of an action: `run_call` (the stages of a call),
or, when an action resumes, a held call's rest (``toolchain.chain._resume``)."""
