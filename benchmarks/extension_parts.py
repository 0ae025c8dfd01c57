"""Where an extension's loop cost goes: the loop benchmark's extension rows, part by part.

``python -m benchmarks.extension_parts [--quick]``. The run is the one of the extension
rows (``_extension_overhead``: 9 turns of two ``lookup`` calls, then an answer). For
each extension that misses its 1.3x target there, one agent is built, and each round
runs it as it is and once more with each *part* of the extension's work replaced by a
stand-in that does nothing, the plain agent beside them, in an order that turns every
round. One agent instance takes every variant (two instances of one agent differ by a
few microseconds a step, as much as some parts cost), so each difference is the part's
own cost on the same objects.

The stand-ins make the run wrong (a value not stored, a call not gated): they only
measure. "All of these" replaces every part listed at once: what is left is the cost of
having the extension at all (installing it, the ledger that counts its savings, the
hook stages it brings) with its work free, a floor for any implementation of it.
Reported, never a target: it says where the time is, not what to aim at.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents import _savings, _step_request
from benchmarks import loop_overhead as loop
from benchmarks._cli import run_alone
from benchmarks._extension_overhead import EXTENSIONS, TARGET_RATIO, Built, agent_for
from benchmarks._timing import Settings, collector_paused, render_table
from toolchain import ToolHook, _approvals
from toolchain.discovery import _gate
from toolchain.stores import _results
from toolchain.variables import _keeping, _naming, _tool_variables
from toolchain.variables._tool_variables import (
    _snapshot,  # pyright: ignore[reportPrivateUsage]  # a stand-in copies the value as it does
    _VariablesHook,  # pyright: ignore[reportPrivateUsage]  # the hook whose methods are swapped
)

__all__ = ["PARTS", "Part", "Swap", "Swapped", "run"]


@dataclass(frozen=True, slots=True)
class Swap:
    """``owner.name`` replaced by ``stand_in`` while a part is measured."""

    owner: object
    name: str
    stand_in: object

    def check(self) -> None:
        """Refuse a name the library no longer has (setting it would measure nothing)."""
        if not hasattr(self.owner, self.name):
            raise AttributeError(f"{self.owner!r} has no {self.name!r}: update extension_parts")


@dataclass(frozen=True, slots=True)
class Part:
    """One part of an extension's work, and the swaps that make it free."""

    label: str
    swaps: tuple[Swap, ...]


def _plain_step(calls: _step_request.StepCalls, ctx: object, index: int, messages: object) -> Any:
    return calls.plain  # the step as a plain run makes it: no request, no step hook


def _named_only(
    hook: Any, ctx: object, call: Any, result: Any, text: str
) -> str:  # the output named and saved, nothing else (no store entry, type or preview)
    results: _results.RunResults = hook._results
    n = results.counts.get(call.name, 0) + 1
    results.counts[call.name] = n
    name = _naming.default_name(call.name, n)
    value = _snapshot(result.text)
    results.save(_results.Variable(name, call.name, value, call.id, size=len(text), entry="-"))
    return f"${name} = {text}"


def _no_entry(*args: object) -> str:
    return "-"


def _nothing(*args: object) -> None:
    return None


def _no_text(*args: object) -> str:
    return ""


_STEP_HOOKS = Part(
    "step hooks (prompt_section, before_step)",
    (Swap(_step_request.StepCalls, "call", _plain_step),),
)
_VARIABLES: tuple[Part, ...] = (
    _STEP_HOOKS,
    Part(
        "before-call hook (looks for $names)",
        (Swap(_VariablesHook, "before_tool_call", ToolHook.before_tool_call),),
    ),
    Part("store entry of each value", (Swap(_keeping, "put_at_once", _no_entry),)),
    Part(
        "type and preview of each value",
        (
            Swap(_keeping, "type_of", _no_text),
            Swap(_keeping, "one_line", _no_text),
        ),
    ),
    Part(
        "keeping each value (named only)",
        (Swap(_VariablesHook, "rewrite_observation", _named_only),),
    ),
    Part(
        "savings ledger's look at each output",
        (Swap(_savings.Ledger, "_outputs_shown", _nothing),),
    ),
    Part(
        "variables saved at the run's end",
        (Swap(_tool_variables, "saved_variables", _nothing),),
    ),
)
# Not its step hook: narrowing the step to the tools found is what the search is for
# (every step would show the 200 tools instead, a run of another kind).
_SEARCH: tuple[Part, ...] = (
    Part(
        "discovery gate: guard (tools not found)",
        (Swap(_gate.Gate, "guard_tool_call", ToolHook.guard_tool_call),),
    ),
    Part(
        "discovery gate: after hook (tools used)",
        (Swap(_gate.Gate, "after_tool_call", ToolHook.after_tool_call),),
    ),
    Part(
        "approval gate by name",
        (Swap(_approvals, "gate_by_name", _nothing),),
    ),
)


def _all_of(parts: tuple[Part, ...]) -> Part:
    """Every part free at once (each swap once)."""
    swaps = {(id(s.owner), s.name): s for part in parts for s in part.swaps}
    return Part("all of these", tuple(swaps.values()))


PARTS: dict[str, tuple[Part, ...]] = {
    "ToolVariables": (*_VARIABLES, _all_of(_VARIABLES)),
    "ToolSearch": (*_SEARCH, _all_of(_SEARCH)),
}
"""The parts measured, per extension row (a row's label starts with the key)."""


class Swapped:
    """The part's swaps applied while inside (the originals put back after)."""

    def __init__(self, part: Part | None) -> None:
        self._swaps = part.swaps if part is not None else ()
        self._saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> None:
        for swap in self._swaps:  # all checked before any is swapped
            swap.check()
        for swap in self._swaps:
            self._saved.append((swap.owner, swap.name, getattr(swap.owner, swap.name)))
            setattr(swap.owner, swap.name, swap.stand_in)
        if _approvals.gating and any(s.name == "gate_by_name" for s in self._swaps):
            _approvals.gating = False  # set by every earlier run's gate: as if none had

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()


@dataclass(frozen=True, slots=True)
class _Row:
    mode: str
    extension: str
    part: str
    us_per_step: float
    saved_us: float
    ratio: float


async def _measure(
    plain: Built, built: Built, parts: Sequence[Part | None], settings: Settings
) -> tuple[float, list[float]]:
    """µs per iteration (model and tool time taken out) of the plain run, and of the
    extension's with each of ``parts`` free (None: as it is)."""
    variants: list[tuple[Built, Part | None]] = [(plain, None), *((built, p) for p in parts)]

    async def once(which: tuple[Built, Part | None]) -> int:
        (agent, model, _), part = which
        with Swapped(part):
            started = time.thread_time_ns()
            await loop.agent_run(agent, model)
            return time.thread_time_ns() - started

    for which in variants:
        for _ in range(5):
            await once(which)
    times: list[list[int]] = [[] for _ in variants]
    with collector_paused(settings.disable_gc):
        deadline = time.perf_counter() + settings.seconds(20.0)
        for done in range(settings.runs(500)):
            shift = done % len(variants)  # each variant first in turn
            for at in (*range(shift, len(variants)), *range(shift)):
                times[at].append(await once(variants[at]))
            if time.perf_counter() > deadline and done >= 10:
                break

    def per_iteration(samples: list[int], clock: loop.Clock) -> float:
        return (statistics.median(samples) / 1e6 - clock.per_run_ms()) / loop.ITERATIONS * 1000

    plain_us = per_iteration(times[0], plain[2])
    return plain_us, [per_iteration(t, built[2]) for t in times[1:]]


def run(settings: Settings) -> None:
    """Each part's cost per loop step, for the extensions that miss 1.3x a plain run."""
    rows: list[_Row] = []
    for mode, native in (("text", False), ("native", True)):
        plain = agent_for(native=native, extensions=())
        for key, parts in PARTS.items():
            label = next(name for name in EXTENSIONS if name.startswith(key))
            built = agent_for(native=native, extensions=EXTENSIONS[label]())
            plain_us, measured = asyncio.run(_measure(plain, built, (None, *parts), settings))
            as_is = measured[0]
            rows.append(_Row(mode, label, "(as it is)", as_is, 0.0, as_is / plain_us))
            for part, us in zip(parts, measured[1:], strict=True):
                rows.append(_Row(mode, label, part.label, us, as_is - us, us / plain_us))
            rows.append(_Row(mode, "plain", "", plain_us, 0.0, 1.0))
    print("== Extension parts: each part of an extension's work made free, one agent ==")
    print("µs per loop iteration (CPU time, model and tool time out); the part's cost is")
    print("what the run saved without it; the ratio is to the plain run of the same rounds")
    table = [
        [
            row.mode,
            row.extension,
            row.part,
            f"{row.us_per_step:,.1f}",
            f"{row.saved_us:,.1f}" if row.part not in ("", "(as it is)") else "",
            f"{row.ratio:.2f}x",
        ]
        for row in rows
    ]
    headers = ["mode", "extension", "part made free", "µs/iteration", "part µs", "vs plain"]
    print(render_table(headers, table, "lllrrr"))
    print()
    print(
        f'(the extension rows\' target: <= {TARGET_RATIO:g}x a plain run. "all of these" is '
        "what is left with every part listed free: what having the extension costs)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    run_alone(run, "python -m benchmarks.extension_parts", argv)


if __name__ == "__main__":
    main()
