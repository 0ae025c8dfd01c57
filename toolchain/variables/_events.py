"""What the variables tell observers (``ctx.events``): the references a call's arguments named."""

from __future__ import annotations

from dataclasses import dataclass

from toolchain import ExecutionContext

__all__ = ["VariablesResolved"]


@dataclass(frozen=True, slots=True)
class VariablesResolved:
    """A call's arguments named variables (``$weather_1.temp``), and the tool got their
    values: ``names`` lists the variables read, in the order first read. Emitted only
    while something listens."""

    ctx: ExecutionContext
    call_id: str
    tool: str
    names: tuple[str, ...]
