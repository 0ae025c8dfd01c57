"""Hostile action content through both tool chains: time must grow linearly with size.

Each case builds action content of about 100 KB, 300 KB and 990 KB (just under the
chains' 1,000,000-character content limit) and times a whole ``execute`` with an
``XMLFormat`` observation, or the ``ToolCallParseError`` it raises, whichever comes.
The growth column is (time ratio) / (size ratio) between consecutive sizes: about 1.0
is linear, 3.0 would mean quadratic. Each figure is the median of a few runs; nothing
is asserted. As in the other benchmarks the cyclic garbage collector is paused while
timing (``--keep-gc`` leaves it on): building ~100k YAML nodes or JSON objects at once
makes CPython 3.11's generational collector itself grow faster than linearly (1.3-1.8
per step on the largest inputs), which is the interpreter's cost, not the parsers'.

Run alone with ``python -m benchmarks.adversarial_chains [--quick]``.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks._timing import Settings, render_table, verdict
from formats import Section, XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCallParseError,
    ToolChain,
    YAMLToolChain,
    tool,
)

__all__ = ["run"]

SIZES = (100_000, 300_000, 990_000)
MAX_GROWTH = 1.5  # per size step, time ratio / size ratio


@tool(inline=True)
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool(inline=True)
def echo(text: str) -> str:
    """Echo a text."""
    return text


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    count = max(1, (size - len(head) - len(tail)) // len(unit))
    return head + unit * count + tail


@dataclass(frozen=True, slots=True)
class Case:
    chain: str
    name: str
    make: Callable[[int], str]


CASES = (
    Case("JSON", "array of non-calls [1,1,…]", lambda n: _fill("1,", n, "[", "1]")),
    Case(
        "JSON",
        "many valid calls (over the per-action cap)",
        lambda n: _fill('{"tool":"add","args":{"a":1}},', n, "[", '{"tool":"add"}]'),
    ),
    Case("JSON", "unclosed brackets [[[…", lambda n: "[" * n),
    Case(
        "JSON",
        "one call, one huge string argument",
        lambda n: _fill("a", n, '{"tool":"echo","args":{"text":"', '"}}'),
    ),
    Case("JSON", "unknown tool with a huge name", lambda n: _fill("x", n, '{"tool":"', '"}')),
    Case("JSON", "JSON lines of broken calls", lambda n: _fill('{"tool":1}\n', n)),
    Case("YAML", "flow sequence [1, 1, …]", lambda n: _fill("1, ", n, "[", "1]")),
    Case(
        "YAML",
        "many block calls (over the per-action cap)",
        lambda n: _fill("- tool: add\n  args: {a: 1}\n", n),
    ),
    Case("YAML", "unclosed flow brackets [[[…", lambda n: "[" * n),
    Case(
        "YAML",
        "aliases of one anchor",
        lambda n: _fill(", *a", n, "- tool: add\n  args: {a: 1, b: [&a 1", "]}\n"),
    ),
    Case(
        "YAML",
        "one call, one huge scalar",
        lambda n: _fill("a", n, "- tool: echo\n  args:\n    text: ", "\n"),
    ),
    Case(
        "YAML",
        "base-60 integer 1:1:1:… for an int",
        lambda n: _fill(":1", n, "- tool: add\n  args: {a: 1", "}\n"),
    ),
    Case(
        "YAML",
        "unconvertible ints {n: 0x_}",
        lambda n: _fill("  n: 0x_\n", n, "- tool: add\n  args:\n"),
    ),
)


def _chain(kind: str) -> ToolChain:
    chain: ToolChain = JSONToolChain() if kind == "JSON" else YAMLToolChain()
    return chain.register_tool(add).register_tool(echo)


async def _time_once(
    chain: ToolChain, content: str, fmt: XMLFormat, pause_gc: bool
) -> tuple[float, str]:
    gc.collect()
    if pause_gc:
        gc.disable()
    started = time.perf_counter()
    try:
        result = await chain.execute(ExecutionContext(), content, fmt)
    except ToolCallParseError:
        return time.perf_counter() - started, "parse error"
    finally:
        gc.enable()
    failed = sum(error is not None for error in result.raw.errors)
    return time.perf_counter() - started, f"{len(result.raw.calls)} calls, {failed} failed"


async def _measure(settings: Settings) -> list[list[str]]:
    fmt = XMLFormat()
    for name in ("thinking", "action", "answer"):
        fmt.register_section(Section(name))
    repeats = 1 if settings.quick else 3
    rows: list[list[str]] = []
    for case in CASES:
        chain = _chain(case.chain)
        times: list[float] = []
        outcome = ""
        for size in SIZES:
            content = case.make(size)
            runs = []
            for _ in range(repeats):
                elapsed, outcome = await _time_once(chain, content, fmt, settings.disable_gc)
                runs.append(elapsed)
            times.append(statistics.median(runs))
        growths = [
            (times[i + 1] / max(times[i], 1e-9)) / (SIZES[i + 1] / SIZES[i])
            for i in range(len(SIZES) - 1)
        ]
        rows.append(
            [
                case.chain,
                case.name,
                *(f"{t * 1000:,.1f}" for t in times),
                " / ".join(f"{g:.2f}" for g in growths),
                verdict(all(g <= MAX_GROWTH for g in growths)),
                outcome,
            ]
        )
    return rows


def run(settings: Settings) -> None:
    """Time hostile content through both chains and print the table."""
    print("== Hostile action content through the tool chains (execute, XML observation) ==")
    print(
        f"sizes {', '.join(f'{s // 1000} KB' for s in SIZES)}; growth = time ratio / size "
        f"ratio per step (1.0 = linear); linear if every step <= {MAX_GROWTH}"
    )
    print()
    rows = asyncio.run(_measure(settings))
    headers = [
        "chain",
        "content",
        "100 KB ms",
        "300 KB ms",
        "990 KB ms",
        "growth",
        "linear",
        "outcome",
    ]
    print(render_table(headers, rows, "llrrrlll"))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.adversarial_chains")
