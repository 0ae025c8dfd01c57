"""Observations in fewer tokens: each tool output of a benchmark set written as compact
JSON, YAML, TOON and ``auto`` (``observations=`` on the chains), its o200k tokens counted.

The set (built here, deterministic): uniform lists of records of 5, 20, 100 and 500
rows (users; order lines), nested objects (a service's configuration, an order with its
customer and lines), lists that are not uniform (search hits whose fields differ, a
mixed list of objects, scalars and lists), short outputs (a word, a number, a small
object), records heavy with text (support tickets with multi-line bodies), log lines,
and the offline demo's own tool outputs (``agents.demo``: each call of its scripted
run, in order). Every output is what a tool returns; each encoding writes it as the
chain would (``toolchain._observations``).

Targets, printed PASS/MISS and never asserted:

* TOON at least 30 % fewer tokens than compact JSON on every uniform list of records;
* ``auto`` never more tokens than compact JSON, on every output of the set.

Beside them: how often ``auto`` (YAML tried only on outputs of up to 4,096 characters
of JSON) chose the exact minimum of the three. Then what ``auto`` costs: the median time
to write one output as JSON, as TOON and with ``auto``, per group of the set,
interleaved in one process; and a one-call ``execute`` through ``JSONToolChain`` with
``observations="json"``, ``"toon"`` and ``"auto"`` on a tool returning 20 records.

Run alone with ``python -m benchmarks.observation_tokens [--quick]``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.demo import AirlineData
from agents.demo.script import STEPS
from agents.demo.tools import airline_tools
from benchmarks._timing import Job, Settings, measure_jobs, render_table, verdict
from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, ToolCall, to_json, to_toon, to_yaml, tool
from toolchain._observations import to_auto
from toolchain._tokens import count_tokens

__all__ = ["Payload", "payloads", "run"]

TOON_TARGET = 30.0  # % fewer tokens than compact JSON, on uniform lists of records
UNIFORM = "uniform records"

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
ROLES = ["admin", "editor", "viewer", "owner"]
WORDS = [
    "the", "invoice", "for", "march", "was", "charged", "twice", "and", "refund", "has",
    "not", "arrived", "yet,", "please", "check", "payment", "provider's", "log", "before",
    "closing", "this", "ticket",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Payload:
    """One tool output of the set: its group, a name, and the value a tool returns."""

    group: str
    name: str
    value: Any


def _users(count: int, rng: random.Random) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(count):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        rows.append(
            {
                "id": 1000 + i,
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}{i}@example.com",
                "role": rng.choice(ROLES),
                "active": rng.random() < 0.8,
                "score": round(rng.uniform(0, 100), 2),
                "joined": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            }
        )
    return rows


def _order_lines(count: int, rng: random.Random) -> list[dict[str, Any]]:
    return [
        {
            "sku": f"SKU-{rng.randint(10000, 99999)}",
            "qty": rng.randint(1, 12),
            "unit_price": round(rng.uniform(1, 250), 2),
            "currency": "EUR",
        }
        for _ in range(count)
    ]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _tickets(count: int, rng: random.Random) -> list[dict[str, Any]]:
    return [
        {
            "id": f"T-{4000 + i}",
            "subject": _sentence(rng, 6),
            "body": "\n".join(_sentence(rng, rng.randint(8, 20)) for _ in range(3)),
            "status": rng.choice(["open", "pending", "closed"]),
        }
        for i in range(count)
    ]


def _hits(count: int, rng: random.Random) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = []
    for i in range(count):
        hit: dict[str, Any] = {
            "url": f"https://docs.example.com/page/{i}",
            "title": _sentence(rng, 4),
        }
        if rng.random() < 0.5:
            hit["snippet"] = _sentence(rng, 12)
        if rng.random() < 0.3:
            hit["tags"] = rng.sample(["api", "billing", "auth", "limits"], 2)
        hits.append(hit)
    return hits


def _demo_outputs() -> list[Payload]:
    """The demo's tool outputs, from its scripted calls run through its own tools."""
    data = AirlineData.fresh()
    chain = JSONToolChain()
    for each in airline_tools(data):
        chain.register_tool(each)
    found: list[Payload] = []
    ctx = ExecutionContext()
    for step in STEPS:
        calls = [ToolCall(name, args) for name, args in step.calls]
        if not calls:
            continue
        result = asyncio.run(chain.execute_calls(ctx, calls, XMLFormat()))
        for call, raw in zip(calls, result.raw.results, strict=True):
            if raw is None:
                raise RuntimeError(f"the demo's {call.name} call failed")
            found.append(Payload("demo outputs", call.name, raw.output))
    return found


def payloads() -> list[Payload]:
    """The benchmark set (the same every run)."""
    rng = random.Random(20)
    users = _users(500, rng)
    lines = _order_lines(50, rng)
    config = {
        "service": "billing",
        "version": "2.4.1",
        "http": {"port": 8080, "timeouts": {"read": 30, "write": 30}, "cors": ["*.example.com"]},
        "database": {"host": "db.internal", "pool": {"min": 2, "max": 20}, "replicas": 2},
        "features": {"invoices_v2": True, "dunning": False, "tax_engine": "internal"},
    }
    order = {
        "order_id": "ORD-20931",
        "status": "shipped",
        "customer": {"id": "C-118", "name": "Ada Lovelace", "tier": "gold"},
        "shipping": {
            "address": {"street": "12 Analytical Row", "city": "London"},
            "eta": "2026-03-09",
        },
        "lines": lines[:4],
        "totals": {"subtotal": 412.5, "tax": 82.5, "total": 495.0},
    }
    mixed = [
        {"type": "note", "text": "Call back after 5pm"},
        42,
        "escalated",
        [1, 2, 3],
        {"type": "call", "duration_s": 312, "agent": {"id": 7, "name": "Bob"}},
        None,
    ]
    logs = [
        f"2026-03-0{1 + i % 9}T0{i % 10}:1{i % 6}:00Z INFO worker-{i % 4} processed batch {i} "
        f"({rng.randint(10, 999)} items)"
        for i in range(30)
    ]
    return [
        Payload(UNIFORM, "users x5", users[:5]),
        Payload(UNIFORM, "users x20", users[:20]),
        Payload(UNIFORM, "users x100", {"users": users[:100], "next_cursor": "c_100"}),
        Payload(UNIFORM, "users x500", users),
        Payload(UNIFORM, "order lines x50", lines),
        Payload("nested objects", "service config", config),
        Payload("nested objects", "order", order),
        Payload("non-uniform lists", "search hits x20", _hits(20, rng)),
        Payload("non-uniform lists", "mixed list", mixed),
        Payload("short outputs", "a word", "ok"),
        Payload("short outputs", "a number", 21.5),
        Payload("short outputs", "small object", {"temp_c": 21, "city": "Paris"}),
        Payload("short outputs", "flag object", {"ok": True}),
        Payload("text-heavy records", "tickets x10", _tickets(10, rng)),
        Payload("text-heavy records", "log lines x30", logs),
        *_demo_outputs(),
    ]


@dataclass(frozen=True, slots=True)
class Counted:
    payload: Payload
    json: int
    yaml: int
    toon: int
    auto: int

    @property
    def fewest(self) -> int:
        """The exact minimum of the three encodings (what auto would pick with YAML always
        tried)."""
        return min(self.json, self.yaml, self.toon)

    def saving(self, tokens: int) -> float:
        return 100.0 * (self.json - tokens) / self.json if self.json else 0.0


def count(payload: Payload) -> Counted:
    value = payload.value
    return Counted(
        payload,
        count_tokens(to_json(value)),
        count_tokens(to_yaml(value)),
        count_tokens(to_toon(value)),
        count_tokens(to_auto(value)),
    )


def report_tokens(counted: list[Counted]) -> None:
    rows: list[list[str]] = []
    for c in counted:
        uniform = c.payload.group == UNIFORM
        toon_ok = c.saving(c.toon) >= TOON_TARGET
        target = f"TOON>={TOON_TARGET:.0f}% {verdict(toon_ok)}; " if uniform else ""
        rows.append(
            [
                c.payload.group,
                c.payload.name,
                str(c.json),
                f"{c.yaml} ({-c.saving(c.yaml):+.0f}%)",
                f"{c.toon} ({-c.saving(c.toon):+.0f}%)",
                f"{c.auto} ({-c.saving(c.auto):+.0f}%)",
                f"{target}auto<=JSON {verdict(c.auto <= c.json)}",
            ]
        )
    print(
        render_table(
            ["group", "output", "JSON", "YAML", "TOON", "auto", "targets"],
            rows,
            "llrrrrl",
        )
    )
    print()
    groups: dict[str, list[Counted]] = {}
    for c in counted:
        groups.setdefault(c.payload.group, []).append(c)
    summary: list[list[str]] = []
    for group, members in groups.items():
        total = Counted(
            Payload(group, "", None),
            *(
                sum(getattr(m, field) for m in members)
                for field in ("json", "yaml", "toon", "auto")
            ),
        )
        summary.append(
            [
                group,
                str(len(members)),
                str(total.json),
                f"{-total.saving(total.yaml):+.1f}%",
                f"{-total.saving(total.toon):+.1f}%",
                f"{-total.saving(total.auto):+.1f}%",
            ]
        )
    print("summed per group (tokens against compact JSON):")
    print(render_table(["group", "outputs", "JSON", "YAML", "TOON", "auto"], summary, "lrrrrr"))
    print()
    records = [c for c in counted if c.payload.group == UNIFORM]
    worst = min(records, key=lambda c: c.saving(c.toon))
    toon_pass = all(c.saving(c.toon) >= TOON_TARGET for c in records)
    auto_pass = all(c.auto <= c.json for c in counted)
    print(
        f"target: TOON >= {TOON_TARGET:.0f}% fewer tokens than compact JSON on every uniform "
        f"list of records: least {worst.saving(worst.toon):.1f}% ({worst.payload.name}) "
        f"{verdict(toon_pass)}"
    )
    missed = [c for c in counted if c.auto > c.fewest]
    lost = sum(c.auto - c.fewest for c in missed)
    print(
        f"auto chose the fewest of the three on {len(counted) - len(missed)} of {len(counted)} "
        f"outputs; {lost} tokens over the exact minimum in all"
        + (f" ({', '.join(c.payload.name for c in missed)})" if missed else "")
    )
    over = [c.payload.name for c in counted if c.auto > c.json]
    print(
        f"target: auto never more tokens than compact JSON ({len(counted)} outputs): "
        f"{len(over)} over {verdict(auto_pass)}" + (f" ({', '.join(over)})" if over else "")
    )


async def measure_costs(counted: list[Counted], settings: Settings) -> None:
    """Median time to write one output of each group as JSON, TOON and auto."""
    groups: dict[str, list[Any]] = {}
    for c in counted:
        groups.setdefault(c.payload.group, []).append(c.payload.value)
    writers: dict[str, Callable[[object], str]] = {
        "JSON": to_json,
        "TOON": to_toon,
        "auto": to_auto,
    }
    rows: list[list[str]] = []
    for group, values in groups.items():

        def writing(
            write: Callable[[object], str], values: list[Any] = values
        ) -> Callable[[], object]:
            return lambda: [write(value) for value in values]

        jobs = [Job.sync(writing(write), runs=200, warmup=3) for write in writers.values()]
        json_t, toon_t, auto_t = await measure_jobs(jobs, settings, seconds=2.0, block=5)
        n = len(values)
        rows.append(
            [
                group,
                str(n),
                f"{json_t.median_us / n:.1f}",
                f"{toon_t.median_us / n:.1f}",
                f"{auto_t.median_us / n:.1f}",
                f"{(auto_t.median_us - json_t.median_us) / n:.1f}",
                f"{auto_t.median_us / json_t.median_us:.1f}x",
            ]
        )
    print(
        render_table(
            ["group", "outputs", "JSON µs", "TOON µs", "auto µs", "auto - JSON µs", "auto/JSON"],
            rows,
            "lrrrrrr",
        )
    )


async def measure_chain(settings: Settings) -> None:
    """One call through ``JSONToolChain`` writing 20 records as JSON, then with auto."""
    rows20 = _users(20, random.Random(20))

    @tool(inline=True)
    def list_users() -> list[dict[str, Any]]:
        """List users."""
        return rows20

    ctx, fmt = ExecutionContext(), XMLFormat()
    call = [ToolCall("list_users", {})]
    chains = {
        mode: JSONToolChain(observations=mode).register_tool(list_users)
        for mode in ("json", "toon", "auto")
    }
    for chain in chains.values():  # every call must succeed before it is timed
        result = await chain.execute_calls(ctx, call, fmt)
        assert result.raw.errors == (None,), result.text

    def executing(chain: JSONToolChain) -> Callable[[], Any]:
        return lambda: chain.execute_calls(ctx, call, fmt)

    jobs = [Job.awaited(executing(chain), runs=2000, warmup=50) for chain in chains.values()]
    json_t, toon_t, auto_t = await measure_jobs(jobs, settings, seconds=3.0, block=50)
    print(
        render_table(
            ["observations", "execute µs (median)", "IQR", "vs json"],
            [
                [
                    mode,
                    f"{t.median_us:.1f}",
                    f"{t.iqr_percent:.0f}%",
                    f"{t.median_us / json_t.median_us:.2f}x",
                ]
                for mode, t in (("json", json_t), ("toon", toon_t), ("auto", auto_t))
            ],
            "lrrr",
        )
    )
    print(
        f"auto costs {auto_t.median_us - json_t.median_us:.0f} µs per call here "
        f"(20 records, {count_tokens(to_json(rows20))} JSON tokens); "
        f"toon {toon_t.median_us - json_t.median_us:.0f} µs"
    )


def run(settings: Settings) -> None:
    """Tokens of every output of the set in each encoding; what auto costs."""
    print("== Observations: tokens per encoding (o200k, bpe-openai, offline) ==")
    print("each tool output of the set written as compact JSON, YAML, TOON and auto;")
    print("in brackets: tokens against compact JSON")
    print()
    counted = [count(payload) for payload in payloads()]
    report_tokens(counted)
    print()
    print("== Observations: time to write one output (median, interleaved) ==")
    print("auto writes JSON, TOON (and YAML up to 4,096 characters) and counts each; µs per output")
    print()
    asyncio.run(measure_costs(counted, settings))
    print()
    asyncio.run(measure_chain(settings))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.observation_tokens")
