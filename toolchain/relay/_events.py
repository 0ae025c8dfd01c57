"""What the relay tells observers (``ctx.events``): an output it boxed, and what that kept out."""

from __future__ import annotations

from dataclasses import dataclass

from toolchain import ExecutionContext

__all__ = ["OutputBoxed"]


@dataclass(frozen=True, slots=True)
class OutputBoxed:
    """A call's output (or one of its text parts) was stored and the model sees a
    reference instead. ``original_tokens`` and ``shown_tokens`` are o200k counts of
    the text the chain wrote and of what the model reads in its place (the reference
    and any preview); the difference is kept out of every later request of the run.
    When the store failed, the output is shown unboxed with a note instead, and
    ``shown_tokens`` is not below ``original_tokens``. Emitted only while something
    listens (counting costs)."""

    ctx: ExecutionContext
    call_id: str
    tool: str
    original_tokens: int
    shown_tokens: int
