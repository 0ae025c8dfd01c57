"""How fast ``toolchain.dialects`` reads hostile model output.

A model stuck in a loop writes the same opener over and over and never closes it. Each
hostile output here is one unit repeated to exactly 1 MB (MB = 10^6 characters; all but
the DSML units are ASCII): ``[f(`` (a Python-style call list that never becomes one),
``<tool_call>`` (a block never closed), ``Action: x`` on every line (ReAct labels), and
the openers of the families issue 19 added, repeated and left open.

For each output, measured interleaved in one group (see ``benchmarks._timing``):

* one-shot: ``toolchain.dialects.parse(text)``; its throughput in MB/s, target >= 5;
* the regex pass: ``re.findall`` of the repeated marker (escaped) over the same text,
  one scan that finds every occurrence and keeps nothing else, the cheapest way to look
  at the text at all; the ratio parse / regex pass, target <= 5;
* the same output at 250 KB, for the growth ``(t(1 MB) / t(250 KB)) / 4``: 1.0 is
  linear, target <= 1.3 (250 KB rather than less: the shortest reads take about a
  millisecond there, long enough for a busy host not to blur the ratio);
* streamed: ``DialectStream`` fed 64-character chunks, then ``finish()``; MB/s, shown
  for context (no target: each chunk costs a try of the scanner, whatever it holds).

Before timing, the streamed result is checked to equal the one-shot result (a
``RuntimeError`` otherwise). Context rows (no verdict) show the same figures for plain
prose with no markup, the base cost of reading any text.

Run alone with ``python -m benchmarks.dialect_speed [--quick]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from benchmarks._timing import Job, Settings, Timing, measure_jobs_sync, render_table, verdict
from toolchain.dialects import DialectParse, DialectStream, parse

__all__ = ["run"]

SIZE = 1_000_000
SMALL = 250_000
CHUNK = 64
MIN_MB_PER_S = 5.0
MAX_RATIO = 5.0
MAX_GROWTH = 1.3
_RUNS = {"parse": 30, "small": 90, "regex": 60, "stream": 10}
_SECONDS = 1.5
_BAR = "\uff5c"  # DeepSeek's fullwidth bar


@dataclass(frozen=True, slots=True)
class Hostile:
    """One unit repeated to the size; ``marker`` is what the regex pass looks for."""

    name: str
    unit: str
    marker: str
    judged: bool = True

    def text(self, size: int) -> str:
        return (self.unit * (size // len(self.unit) + 1))[:size]


def _same(name: str, unit: str) -> Hostile:
    return Hostile(name, unit, unit)


HOSTILE = (
    _same("[f( repeated", "[f("),
    _same("<tool_call> repeated, never closed", "<tool_call>"),
    Hostile("Action: on every line", "Action: x\n", "Action:"),
    _same("DSML blocks opened", f"<{_BAR}DSML{_BAR}function_calls>"),
    Hostile(
        "DSML invokes opened", f'<{_BAR}DSML{_BAR}invoke name="f">', f"<{_BAR}DSML{_BAR}invoke"
    ),
    Hostile("<invoke> opened (plain, MiniMax)", '<invoke name="f">', "<invoke"),
    Hostile("<function_calls>f( (Olmo 3)", "<function_calls>f(", "<function_calls>"),
    Hostile("<seed:tool_call><function=f>", "<seed:tool_call><function=f>", "<seed:tool_call>"),
    _same("<seed:think> opened", "<seed:think>"),
    _same("function call<|role_sep|> (GigaChat 3)", "function call<|role_sep|>"),
    _same("<|function_call|> (GigaChat 3.1)", "<|function_call|>"),
    _same("<minimax:tool_call> opened", "<minimax:tool_call>"),
    Hostile("<|tool_call_start|>[f( (LFM2)", "<|tool_call_start|>[f(", "<|tool_call_start|>"),
    Hostile("<|tool_call>call:f{ (Gemma 4)", "<|tool_call>call:f{", "<|tool_call>"),
    _same("<|channel> opened (Gemma 4)", "<|channel>"),
    Hostile(
        "<start_function_call>call:f{a:<escape> (FunctionGemma)",
        "<start_function_call>call:f{a:<escape>",
        "<start_function_call>",
    ),
    Hostile("<tool_call>NAME then { (Laguna)", "<tool_call>f\n{", "<tool_call>"),
    Hostile(
        "context: prose, no markup",
        "The forecast says 12 C and light rain; pack a coat, check again at 18:00.\n",
        "<tool_call>",
        judged=False,
    ),
)


def streamed(text: str) -> DialectParse:
    """``text`` fed to a ``DialectStream`` in ``CHUNK``-character chunks."""
    stream = DialectStream()
    feed = stream.feed
    for start in range(0, len(text), CHUNK):
        feed(text[start : start + CHUNK])
    return stream.finish()


@dataclass(frozen=True, slots=True)
class _Figures:
    parse: Timing
    small: Timing
    regex: Timing
    stream: Timing

    def mb_per_s(self, timing: Timing) -> float:
        return (SIZE / 1e6) / (timing.median_ns / 1e9)

    @property
    def ratio(self) -> float:
        return self.parse.median_ns / self.regex.median_ns

    @property
    def growth(self) -> float:
        return (self.parse.median_ns / self.small.median_ns) / (SIZE / SMALL)


def _measure(settings: Settings, case: Hostile) -> _Figures:
    big, small = case.text(SIZE), case.text(SMALL)
    whole = parse(big)
    if streamed(big) != whole:
        raise RuntimeError(f"{case.name}: the streamed read differs from the one-shot read")
    pattern = re.compile(re.escape(case.marker))
    jobs = [
        Job.sync(partial(parse, big), _RUNS["parse"]),
        Job.sync(partial(parse, small), _RUNS["small"]),
        Job.sync(partial(pattern.findall, big), _RUNS["regex"]),
        Job.sync(partial(streamed, big), _RUNS["stream"]),
    ]
    timings = measure_jobs_sync(jobs, settings, seconds=_SECONDS)
    return _Figures(*timings)


def run(settings: Settings) -> None:
    """Measure every hostile output and print the table."""
    print("== Dialect parsing of hostile output (toolchain.dialects) ==")
    print(
        f"1 MB = 10^6 characters; targets: one-shot >= {MIN_MB_PER_S:g} MB/s, "
        f"<= {MAX_RATIO:g}x one re.findall of the repeated marker, growth "
        f"(1 MB / 250 KB) / 4 <= {MAX_GROWTH:g} (1.0 = linear); streamed in "
        f"{CHUNK}-character chunks (no target), checked equal to one-shot first"
    )
    print()
    rows: list[list[str]] = []
    for case in HOSTILE:
        figures = _measure(settings, case)
        rate, ratio, growth = figures.mb_per_s(figures.parse), figures.ratio, figures.growth
        judged = case.judged
        rows.append(
            [
                case.name,
                f"{figures.parse.median_ms:,.1f}",
                f"{rate:,.1f}",
                verdict(rate >= MIN_MB_PER_S) if judged else "-",
                f"{figures.regex.median_ms:,.2f}",
                f"{ratio:,.1f}",
                verdict(ratio <= MAX_RATIO) if judged else "-",
                f"{growth:.2f}",
                verdict(growth <= MAX_GROWTH) if judged else "-",
                f"{figures.mb_per_s(figures.stream):,.1f}",
            ]
        )
    headers = [
        "hostile output (1 MB)",
        "parse ms",
        "MB/s",
        f">= {MIN_MB_PER_S:g}",
        "regex ms",
        "x regex",
        f"<= {MAX_RATIO:g}",
        "growth",
        f"<= {MAX_GROWTH:g}",
        "streamed MB/s",
    ]
    print(render_table(headers, rows, "lrrlrrlrlr"))


if __name__ == "__main__":
    import sys

    from benchmarks.__main__ import main

    main(["--only", "dialects", *sys.argv[1:]])
