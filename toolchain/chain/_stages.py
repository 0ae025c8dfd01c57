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

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from toolchain._content import ContentPart
from toolchain._result import ErrorKind, ToolCall, ToolCallError, ToolResult
from toolchain._tool import Tool

__all__ = ["AnyTool", "ChainSettings", "Outcome", "Signals"]

AnyTool = Tool[Any, Any]


class Outcome(NamedTuple):  # one per call, built on every call: a tuple is cheaper to build
    """How one call ended: its result or its error, and the text the model reads."""

    call: ToolCall
    result: ToolResult[object] | None
    error: ToolCallError | None
    text: str  # the serialised output, or the error line
    media: tuple[ContentPart, ...] | None = None  # shown instead of result.media (a hook's)


class Signals:
    """Which calls of one action the chain has cancelled, why, and when."""

    __slots__ = ("at", "why")

    def __init__(self) -> None:
        self.why: dict[int, ErrorKind] = {}
        self.at: dict[int, float] = {}


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
