"""What a chain's stages hand each other, and what they need of the chain.

A chain's work, in order (`ToolChainBase.execute`):

1. read the action into calls (`CallSyntax.read`, in ``toolchain.chain._base``);
2. plan and check them (``toolchain.chain._check``): the action capped, ids given, each call
   checked before it runs (known tool, the run's limits, before hooks, guards);
3. run them (``toolchain.chain._run`` for one call, ``toolchain.chain._schedule`` for the
   action: concurrently, under timeouts, the run's cancellation and a grace period);
4. build the observation (``toolchain.chain._observe``): each output serialised or its error
   written, the observation hooks, and the action's ``ToolChainResult``.

``toolchain.chain._pipeline.run_call`` takes one call through stages 2 to 4, in that order.

Each call ends in one `Outcome`; `Signals` carry the chain's cancellations to the calls
it runs; `ChainSettings` is what the stages read of the chain (``ToolChainBase``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from toolchain._approvals import Approver
from toolchain._content import ContentPart
from toolchain._result import ErrorKind, ToolCall, ToolCallError, ToolResult
from toolchain._tool import Tool

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

__all__ = ["AnyTool", "ChainSettings", "Outcome", "Signals", "Start"]

AnyTool = Tool[Any, Any]


class Outcome(NamedTuple):  # one per call, built on every call: a tuple is cheaper to build
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


class ChainSettings(Protocol):
    """What the stages read of the chain they run for."""

    @property
    def registry(self) -> Mapping[str, AnyTool]:
        """The registered tools by name, not copied (``tools`` is the copy users get)."""
        ...

    @property
    def cancel_grace(self) -> float: ...

    def timeout_of(self, item: ToolCall | str) -> float | None:
        """Seconds a call may run: its tool's own timeout, else the chain's."""
        ...

    @property
    def encode_output(self) -> Callable[[object], str]:
        """A successful call's output as the model reads it."""
        ...

    @property
    def approve(self) -> Approver | None:
        """Decides calls that need approval when the run has no approver of its own."""
        ...

    @property
    def max_concurrency(self) -> int | None:
        """At most this many calls of an action run at once (None: all of them)."""
        ...


Start = Callable[
    [ChainSettings, "ExecutionContext", int, "ToolCall | str", Signals],
    Coroutine[Any, Any, Outcome],
]
"""What the scheduler runs for one item of an action: `run_call` (the stages of a call),
or, when an action resumes, a held call's rest (``toolchain.chain._resume``)."""
