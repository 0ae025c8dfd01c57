"""A ``tool_search`` call through the chain over the 1,883 BFCL tools with their full
parameter schemas, for ``benchmarks.tool_retrieval``.

Each BFCL tool becomes a ``Tool`` whose input schema is the data's own (its ``dict``,
``float``, ``tuple`` and ``any`` types written as JSON Schema's ``object``, ``number``,
``array`` and no type; ids made valid tool names, and unique: the data's own
``tool_search`` becomes ``tool_search_2``). ``ToolSearch`` over them, with the
default backend (BM25), is timed while it is built (its index, and the o200k tokens of
every definition: a text of well over a million characters, counted in pieces), then
each sampled query is one ``tool_search`` call through ``JSONToolChain.execute``: the
call parsed and validated, the gate, the search, the answer (the best match described
with its schema, the others named) serialised into an observation. Each call runs in
a fresh run context (so each describes its best match, as a run's first search does),
with the extension already installed, as it is in a run.

Target (issue 20): p50 at or under 1 ms per call.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from benchmarks._timing import Settings, render_table, verdict
from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult
from toolchain._extension import install_extensions
from toolchain.discovery import ToolIndex, ToolSearch
from toolchain.mcp._schema import SchemaCodec

__all__ = ["run_search_calls"]

TARGET_P50_MS = 1.0
_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_INVALID = re.compile(r"[^A-Za-z0-9_.\-]")


class BfclTool(Tool[Any, object]):
    """One BFCL tool: its name, description and parameter schema (never called)."""

    def __init__(self, name: str, description: str, schema: dict[str, object]) -> None:
        self.name = name
        self.description = description or name
        vars(self)["_codec"] = SchemaCodec(schema, name)  # read by Tool.codec

    async def call(self, ctx: ExecutionContext, input: Any) -> ToolResult[object]:
        raise NotImplementedError("the benchmark only searches")


def _json_schema(node: object) -> object:
    """BFCL's schema types as JSON Schema's (the data is JSON: lists and str-keyed dicts)."""
    if isinstance(node, list):
        return [_json_schema(item) for item in cast("list[object]", node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, object] = {}
    for key, value in cast("dict[str, object]", node).items():
        if key == "type" and value == "any":
            continue
        if key == "type" and isinstance(value, str):
            out[key] = _TYPES.get(value, value)
        else:
            out[key] = _json_schema(value)
    return out


def bfcl_tools(path: Path) -> list[BfclTool]:
    tools: list[BfclTool] = []
    taken: set[str] = {"tool_search"}  # the data has one: it becomes tool_search_2
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            name = _INVALID.sub("_", str(row["id"]))
            if not re.match(r"[A-Za-z_]", name):
                name = f"_{name}"
            base, n = name, 2
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            schema = cast("dict[str, object]", _json_schema(row.get("parameters") or {}))
            schema.setdefault("type", "object")
            tools.append(BfclTool(name, str(row.get("description") or ""), schema))
    return tools


def run_search_calls(folder: Path, queries: Sequence[str], settings: Settings) -> None:
    """Build ToolSearch over the BFCL tools and time ``tool_search`` calls through the chain."""
    tools = bfcl_tools(folder / "tools.jsonl")
    characters = sum(len(json.dumps(t.input_schema())) + len(t.description) for t in tools)
    started = time.perf_counter()
    search = ToolSearch(ToolIndex(tools), defer=True)
    built = time.perf_counter() - started
    chain = JSONToolChain(extensions=[search])
    fmt = XMLFormat()
    calls = [json.dumps({"tool": "tool_search", "args": {"query": q}}) for q in queries]

    async def timed() -> list[float]:
        samples: list[float] = []
        for content in [calls[0], *calls]:  # the first once more, as a warm-up
            ctx = ExecutionContext()
            install_extensions(ctx, chain.extensions)
            begun = time.perf_counter_ns()
            result = await chain.execute(ctx, content, fmt)
            samples.append((time.perf_counter_ns() - begun) / 1e6)
            if result.raw.errors[0] is not None:
                raise RuntimeError(f"tool_search failed: {result.raw.errors[0].message}")
        return sorted(samples[1:])

    samples = asyncio.run(timed())
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, math.ceil(0.99 * len(samples)) - 1)]
    print(f"-- tool_search through JSONToolChain, {len(tools):,} BFCL tools with their schemas --")
    print(
        f"ToolSearch built in {built:.2f} s ({characters:,} characters of definitions, "
        f"{search.definition_tokens:,} o200k tokens, counted in pieces)"
    )
    rows = [
        [
            str(len(samples)),
            f"{p50:.3f}",
            f"{p99:.3f}",
            f"<= {TARGET_P50_MS:g}",
            verdict(p50 <= TARGET_P50_MS),
        ]
    ]
    print(render_table(["calls", "p50 ms", "p99 ms", "target p50", "verdict"], rows, "rrrrl"))
    del settings
    print()
