"""Code mode (``toolchain.code``): tokens against the JSON chain, the type check's catch
rate, and the cost of a program.

**Tokens.** Each flow of ``benchmarks._code_flows`` (seed 000's weather comparison, seed
002's transcript → analysis, the 60-tool CMS task under ``ToolSearch``, a 20-record
aggregation) is played by a scripted model with ``JSONToolChain`` and with
``PythonToolChain``, in both agents (``ReActAgent``, text mode; ``ToolCallingAgent``,
native mode, where a program is the ``code`` of the one tool ``run_python``). Tokens are
o200k, counted as ``benchmarks.pass_by_reference`` counts them: every request's messages
and, in native mode, its tool specs (``run_python``'s description carries the stubs),
summed over the run (no prompt cache assumed); what the model writes beside it. Target
(issue 29): >= 60 % fewer input tokens on the transcript and aggregation flows, output
tokens beside them, and any flow where code mode costs more in total says so. A naive
model (one program per tool call, each result printed whole) plays the aggregation too,
against the same model in the JSON chain (one call per reply).

**Type check.** Thirty programs with a planted mistake each (``_planted_mistakes``): the
share the checker answers before any tool runs (target >= 90 %), and the misses.

**Cost per program.** ``execute`` of one program making one call of an instant tool
against one JSON-chain call, and of a program gathering 20 calls against one JSON action
of 20 calls, timed round-robin in one process (medians); the ratio is the figure (no
target). A program runs in a Monty worker subprocess; its first use starts the pool
(outside the timing: warm-up).

Run alone with ``python -m benchmarks.code_mode [--quick]``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from benchmarks._code_flows import FLOWS, MODES, NAIVE, Count, Flow, Mode, count_flow
from benchmarks._planted_mistakes import BLIND_SPOTS, MISTAKES, Checked, check_all
from benchmarks._record_flow import ScriptError
from benchmarks._timing import Job, Settings, measure_jobs_sync, render_table, verdict
from benchmarks.pass_by_reference import Tokens
from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, tool
from toolchain.code import PythonToolChain

__all__ = ["CATCH_TARGET", "Compared", "compare", "cost_rows", "run"]

CATCH_TARGET = 90.0  # % of planted mistakes caught before any tool ran (issue 29)
HEADERS = [
    "flow",
    "agent (mode)",
    "requests json / code",
    "input json / code",
    "input",
    "output json / code",
    "total json / code",
    "total",
    "target",
]


def _fewer(before: int, after: int) -> float:
    return 100.0 * (before - after) / before


def _change(before: int, after: int) -> str:
    saving = _fewer(before, after)
    return f"{saving:.1f} % fewer" if saving >= 0 else f"{-saving:.1f} % MORE"


@dataclass(frozen=True, slots=True)
class Compared:
    """One flow in one agent: the JSON chain's run and code mode's."""

    flow: Flow
    mode: Mode
    json: Count
    code: Count

    @property
    def input_fewer(self) -> float:
        return _fewer(self.json.read, self.code.read)

    @property
    def met(self) -> bool | None:
        """Whether the issue's target is met (None: the flow has none)."""
        if self.flow.target is None:
            return None
        return self.input_fewer >= self.flow.target

    def row(self) -> list[str]:
        j, c = self.json, self.code
        met = self.met
        target = "-" if met is None else f">= {self.flow.target:g} % fewer input: {verdict(met)}"
        return [
            self.flow.name,
            "ToolCallingAgent (native)" if self.mode == "native" else "ReActAgent (text)",
            f"{j.requests} / {c.requests}",
            f"{j.read:,} / {c.read:,}",
            _change(j.read, c.read),
            f"{j.written:,} / {c.written:,}",
            f"{j.total:,} / {c.total:,}",
            _change(j.total, c.total),
            target,
        ]


def compare(flow: Flow, mode: Mode, tokens: Tokens) -> Compared:
    """``flow`` in both chains under the ``mode`` agent; same answer, same tool inputs."""
    json_run = count_flow(flow, "json", mode, tokens)
    code_run = count_flow(flow, "code", mode, tokens)
    for run in (json_run, code_run):
        if run.answer != flow.answer:
            raise ScriptError(f"{flow.name} ({mode}): answered {run.answer!r}")
    if json_run.received != code_run.received:
        raise ScriptError(f"{flow.name} ({mode}): the tools received different inputs")
    return Compared(flow, mode, json_run, code_run)


def _tokens_part() -> None:
    print("== Code mode: whole-run tokens, JSON chain vs PythonToolChain ==")
    print("o200k tokens (offline) of every request (messages; native: tool specs too), and")
    print("what the model wrote; one program per task in code mode, the seed's steps in JSON")
    print()
    tokens = Tokens()
    compared = [compare(flow, mode, tokens) for flow in FLOWS for mode in MODES]
    print(render_table(HEADERS, [c.row() for c in compared], "llrrrrrll"))
    for each in compared:
        if each.code.total > each.json.total:
            print(
                f"  {each.flow.name} ({each.mode}): code mode costs "
                f"{_change(each.json.total, each.code.total)} in total. {_why(each.flow)}"
            )
    print()
    naive = [compare(NAIVE, mode, tokens) for mode in MODES]
    print("The naive model on the aggregation: one tool per reply (JSON), one program per tool")
    print("call printing each result whole (code); both copy ids and add up what they read")
    print(render_table(HEADERS, [c.row() for c in naive], "llrrrrrll"))
    capable = {c.mode: c for c in compared if c.flow is FLOWS[-1]}
    for each in naive:
        print(
            f"  {each.mode}: the naive program-per-call costs "
            f"{_change(each.json.total, each.code.total)} than the naive JSON model, and "
            f"{_change(capable[each.mode].json.total, each.code.total)} than the capable "
            "JSON model (20 calls in one action): code mode pays only when the model writes "
            "the program"
        )
    print()


def _why(flow: Flow) -> str:
    if flow.name.startswith("cms"):
        return (
            "ToolSearch defers the 60 tools' JSON definitions, but PythonToolChain lists "
            "every tool's stub in the prompt (text) or run_python's description (native) "
            "whether deferred or not; the gate still refuses a tool not found, so the "
            "program must search first anyway."
        )
    return "Its stubs and guidance outweigh what one program saves on this flow."


def _mistakes_part() -> list[Checked]:
    print("== Code mode: planted mistakes caught by the type check before any tool ran ==")
    planted, fixed = check_all()
    broken = [f for f in fixed if f.caught or f.runs == 0]
    if broken:  # the twin must run: otherwise the catch is not of the planted mistake
        raise ScriptError(f"fixed twins that did not run: {[f.mistake.fixed for f in broken]}")
    kinds = Counter(c.mistake.kind for c in planted)
    caught = Counter(c.mistake.kind for c in planted if c.caught)
    rows = [[kind, str(total), str(caught[kind])] for kind, total in kinds.items()]
    print(render_table(["mistake", "programs", "caught"], rows, "lrr"))
    share = 100.0 * sum(c.caught for c in planted) / len(MISTAKES)
    print(
        f"caught before any tool ran: {sum(c.caught for c in planted)} of {len(MISTAKES)} "
        f"({share:.0f} %); target >= {CATCH_TARGET:g} %: {verdict(share >= CATCH_TARGET)}"
    )
    misses = [c for c in planted if not c.caught]
    print("misses:" if misses else "misses: none")
    for miss in misses:
        print(f"  [{miss.mistake.kind}] {miss.mistake.planted!r}: {miss.runs} tool runs")
    print("outside the 30, what the stubs do not say (the checker cannot see it):")
    for blind in check_all(BLIND_SPOTS)[0]:
        said = blind.said.replace("\n", " ")
        print(f"  [{blind.mistake.kind}] {blind.runs} tool runs; the model read: {said}")
    print()
    return planted


# -- cost per program ---------------------------------------------------------------------

ONE_JSON = '[{"tool": "add", "args": {"a": 1, "b": 2}}]'
ONE_PROGRAM = "print(await add(a=1, b=2))"
TWENTY_JSON = (
    "[" + ", ".join(f'{{"tool": "add", "args": {{"a": {i}, "b": 1}}}}' for i in range(20)) + "]"
)
TWENTY_PROGRAM = (
    "import asyncio\n"
    "results = await asyncio.gather(*[add(a=i, b=1) for i in range(20)])\n"
    "print(sum(results))"
)


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def cost_rows(settings: Settings, seconds: float = 20.0) -> list[list[str]]:
    """The timed pairs, as table rows: JSON call(s), the program, the ratio."""
    fmt = XMLFormat()
    json_chain = JSONToolChain().register_tool(add)
    code_chain = PythonToolChain().register_tool(add)
    unchecked = PythonToolChain(type_check=False).register_tool(add)

    def job(chain: JSONToolChain | PythonToolChain, content: str) -> Job:
        async def once() -> None:
            result = await chain.execute(ExecutionContext(), content, fmt)
            if any(e is not None for e in result.raw.errors):
                raise ScriptError(f"the timed action failed: {result.text}")

        return Job.awaited(once, 200, warmup=5)

    pairs = [
        ("1 call", ONE_JSON, ONE_PROGRAM),
        ("20 calls (gathered)", TWENTY_JSON, TWENTY_PROGRAM),
    ]
    jobs = [
        each
        for _, as_json, program in pairs
        for each in (job(json_chain, as_json), job(code_chain, program), job(unchecked, program))
    ]
    timings = measure_jobs_sync(jobs, settings, seconds=seconds)
    rows: list[list[str]] = []
    for at, (label, _, _) in enumerate(pairs):
        plain, checked, bare = timings[3 * at : 3 * at + 3]
        rows.append(
            [
                label,
                f"{plain.median_us:,.0f}",
                f"{checked.median_us:,.0f}",
                f"{checked.median_ns / plain.median_ns:,.1f}x",
                f"{bare.median_us:,.0f}",
                f"{bare.median_ns / plain.median_ns:,.1f}x",
                f"{max(plain.iqr_percent, checked.iqr_percent, bare.iqr_percent):.0f}%",
                str(min(plain.runs, checked.runs, bare.runs)),
            ]
        )
    return rows


def _cost_part(settings: Settings) -> None:
    print("== Code mode: cost of a program against JSON-chain calls (one process) ==")
    print("execute() of an instant async tool; a program in a Monty worker, type-checked")
    print("(default) and not; medians, round-robin")
    headers = [
        "action",
        "JSON µs",
        "program µs",
        "ratio",
        "unchecked µs",
        "ratio",
        "worst IQR",
        "runs",
    ]
    print(render_table(headers, cost_rows(settings), "lrrrrrrr"))
    print("  no target (issue 29): reported")
    print()


def run(settings: Settings) -> None:
    """Tokens per flow, the type check's catch rate, the cost of a program."""
    _tokens_part()
    _mistakes_part()
    _cost_part(settings)


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.code_mode")
