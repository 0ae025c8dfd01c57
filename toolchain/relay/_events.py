"""What the relay tells observers (``ctx.events``): an output it boxed and what that kept
out, references a call's arguments passed instead of values."""

from __future__ import annotations

from dataclasses import dataclass

from toolchain import ExecutionContext

__all__ = ["OutputBoxed", "ReferencesResolved"]


@dataclass(frozen=True, slots=True)
class OutputBoxed:
    """A call's output (or one of its text parts) was stored and the model sees a
    reference instead. ``original_tokens`` and ``shown_tokens`` are o200k counts of
    the text the chain wrote and of what the model reads in its place (the reference
    and any preview); the difference is kept out of every later request of the run.
    When the store failed, the output is shown unboxed with a note instead, and
    ``shown_tokens`` is not below ``original_tokens``. ``original`` and ``shown`` are
    those texts themselves (as the chain wrote them, before the agent's text format
    escapes them into its observation). Emitted only while something listens
    (counting costs)."""

    ctx: ExecutionContext
    call_id: str
    tool: str
    original_tokens: int
    shown_tokens: int
    original: str = ""
    shown: str = ""


@dataclass(frozen=True, slots=True)
class ReferencesResolved:
    """A call's arguments passed stored values by reference (``internal://...``) and
    the tool got the values: ``references`` counts them. ``ToolCallStarted`` then
    carries the arguments both as written (``raw_args``) and as the tool gets them.
    Emitted only while something listens."""

    ctx: ExecutionContext
    call_id: str
    tool: str
    references: int
