"""How section parsing scales with the size of a model output.

The outputs are realistic: a thinking section of prose and fenced Python code (with
``<``, ``&&``, inline ``<b>`` tags, ``# comment`` lines, and a mention of the answer
section in prose), an action holding one JSON tool call, and a short answer. Only the
thinking grows; each output is cut to exactly 10 KB, 100 KB and 1 MB (KB = 1000
characters, all ASCII, so characters = bytes).

For ``XMLFormat`` and ``MarkdownFormat`` (sections ``thinking``, ``action``, ``answer``):

* one-shot: ``fmt.parse(text)``;
* streamed: ``s = fmt.stream()``, ``s.feed(chunk)`` for each 4-character chunk, then
  ``s.close()``. Each chunk is sliced just before it is fed, as chunks arrive one at a
  time from a model; the chunk-loop baseline below times that loop alone.

Printed: the median time in ms, the throughput in MB/s, and the growth ratios
``(t(1 MB) / t(100 KB)) / 10`` and ``(t(100 KB) / t(10 KB)) / 10``. A linear parser
gives 1.0; the target is <= 1.3 for both (PASS/MISS, not asserted). Baselines timed in
the same process put the figures in context: ``re.findall`` of the XML tag pattern
and of Markdown heading lines over the same texts (a regex scan with no state kept),
and the streaming loop with a no-op function in place of ``feed`` (the per-chunk
floor any streaming parser written in Python pays).

Each series (one format and mode at the three sizes) is measured interleaved, so the
growth ratios compare runs made under the same host load (see ``benchmarks._timing``).

A degenerate case guards the same linearity on input models do produce when they
loop: a thinking section holding 5,000 and then 50,000 blank lines in a row, parsed
one-shot and streamed, with its growth ratio ``(t(50k) / t(5k)) / 10``.

A last table feeds adversarial outputs of 100 KB, 300 KB and 1 MB, each made to hit
one place a parser could go super-linear, parsed one-shot and streamed:

* XML: ``<thinking>`` then ``<answer>`` x n then ``</action>`` x n (inner opening tags
  that a closing tag of another name must search); ``<answer>`` x n never closed; a
  section per line (``<answer>`` alone on each line); ``<answe&am`` x n (a tag and an
  entity cut short, over and over: what a streamed parser must hold back);
* Markdown: a ``# answer`` line padded with spaces to the size and ending in ``x`` (not
  a heading: a backtracking heading pattern is quadratic here); a section per line
  (``# answer``); lines of only ``#``; lines of only backslashes.

Its growth ratios are ``(t(300 KB) / t(100 KB)) / 3`` and ``(t(1 MB) / t(300 KB)) /
(10 / 3)``: 1.0 is linear, a quadratic parser gives about 3 and 3.3. The runs are few
(the 1 MB output is timed once per round, and one round can be enough), so read these
as "linear or not", not as precise figures.

A headline figure opens the report: ``MarkdownFormat.parse`` of a 1 MB output holding
a ``# answer`` heading on every line (111,111 sections), in ms per MB and as a ratio to
one ``re.findall`` of heading lines over the same text, the two timed interleaved in the
same process. Target: the parse within 5x the regex pass (PASS/MISS, not asserted).

Run alone with ``python -m benchmarks.parse_scaling [--quick]``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from benchmarks._timing import Job, Settings, Timing, measure_jobs_sync, render_table, verdict
from formats import MarkdownFormat, Section, TextFormat, XMLFormat, markdown_decode

__all__ = ["run"]

SIZES = (10_000, 100_000, 1_000_000)
CHUNK = 4
MAX_GROWTH = 1.3
MAX_HEADING_RATIO = 5.0  # Markdown parse of a heading per line, against a regex pass
SECTIONS = ("thinking", "action", "answer")

# Runs wanted per size, before --quick: a round of the interleaved measurement runs the
# 10 KB text 25 times, the 100 KB text 5 times and the 1 MB text once.
_RUNS = {10_000: 300, 100_000: 60, 1_000_000: 12}
# Time budget (s) per measured series, before --quick: streaming 1 MB takes up to ~1 s.
_SECONDS_STREAM = 6.0
_SECONDS_OTHER = 1.5
# Degenerate cases: a long run inside a section, two lengths 10x apart.
BLANK_LINES = (5_000, 50_000)
FILLERS = {
    "blank lines": lambda n: "\n" * n,
    "one line of spaces": lambda n: "\n" + " " * n + "\n",
    "one line after '#'": lambda n: "\n#" + "x" * n + "\n",
}
_BLANK_RUNS = (30, 3)
_BLANK_SECONDS = 2.0

# -- realistic model outputs ----------------------------------------------------------

_PROSE = (
    "The user wants the cheapest flight from Paris to New York next week and the\n"
    "weather on arrival. I should search flights first, then check the forecast for\n"
    "the arrival date. Fares under $500 & direct flights are preferred; if a < b for\n"
    "two fares I pick a unless b is direct. The API sometimes returns <b>bold</b> HTML\n"
    "in descriptions, which I will strip before quoting anything back to the user.\n",
    "Looking at the last result: 3 options, two with a layover in Reykjavik. The\n"
    "direct one costs 612 USD, more than the limit, so the layover at 389 USD wins\n"
    "unless the connection is under 1 hour. I'll put the final pick in the answer\n"
    "section once the forecast is back; nothing else needs a tool call.\n",
    "Edge cases: a date like 2026-01-27 must stay text, not a timestamp; amounts such\n"
    "as 0123 keep their leading zero. For currency conversion I use the mid-market\n"
    "rate and round to 2 decimals, e.g. 120.50 EUR -> 130.14 USD at 1.08.\n",
)

_CODE = (
    "```python\n"
    "# pick the cheapest fare that fits the constraints\n"
    "def cheapest(fares: list[dict[str, object]], limit: int = 500) -> dict | None:\n"
    "    # direct flights first, then by price\n"
    "    ok = [f for f in fares if 0 < int(f['price']) <= limit and f['seats'] > 0]\n"
    "    return min(ok, key=lambda f: (not f['direct'], f['price'])) if ok else None\n"
    "```\n",
    "```python\n"
    "if temp_c < 10 and wind_kmh > 30 && not raining:  # pseudo-code, not Python\n"
    "    advice = '<b>coat</b> & scarf'\n"
    "```\n",
)

_ACTION = '{"tool": "search_flights", "args": {"origin": "CDG", "destination": "JFK"}}'
_ANSWER = "The cheapest fit is the 389 USD flight via Reykjavik; expect 4 C and wind."


def _prose(length: int) -> str:
    """``length`` characters of thinking: prose paragraphs with code blocks between."""
    blocks = itertools.cycle((*_PROSE[:2], _CODE[0], _PROSE[2], _CODE[1]))
    parts: list[str] = []
    total = 0
    while total < length:
        block = next(blocks) + "\n"
        parts.append(block)
        total += len(block)
    return "".join(parts)[:length]


def xml_output(size: int) -> str:
    head, tail = "<thinking>\n", f"\n</thinking>\n<action>\n{_ACTION}\n</action>\n"
    tail += f"<answer>\n{_ANSWER}\n</answer>\n"
    return head + _prose(size - len(head) - len(tail)) + tail


def markdown_output(size: int) -> str:
    head, tail = "# thinking\n", f"\n\n# action\n{_ACTION}\n\n# answer\n{_ANSWER}\n"
    return head + _prose(size - len(head) - len(tail)) + tail


def _format(fmt: TextFormat) -> TextFormat:
    for name in SECTIONS:
        fmt.register_section(Section(name))
    return fmt


def streamed(fmt: TextFormat, text: str) -> dict[str, list[str]]:
    """Feed ``text`` in ``CHUNK``-character chunks, cut as they are fed (as they arrive)."""
    stream = fmt.stream()
    feed = stream.feed
    for start in range(0, len(text), CHUNK):
        feed(text[start : start + CHUNK])
    return stream.close()


# Section names are ASCII in both formats. The heading pattern backtracks quadratically
# over a long blank run after a name; it is a baseline for the realistic texts only.
_XML_TAG = re.compile(r"<(/?)([A-Za-z_][A-Za-z0-9_.\-]*)>")
_MD_HEADING = re.compile(r"^#[ \t]*[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*:?[ \t]*$", re.MULTILINE)


def _sink(chunk: str) -> None:
    """The no-op a chunk is handed to in the chunk-loop baseline."""


def chunk_loop(text: str) -> None:
    """The streaming loop with a no-op in place of the parser."""
    sink = _sink
    for start in range(0, len(text), CHUNK):
        sink(text[start : start + CHUNK])


# -- measurements ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Series:
    """One thing measured at every size."""

    group: str
    mode: str
    timings: tuple[Timing, ...]  # one per SIZES entry
    judged: bool  # baselines get growth figures but no verdict

    def growth(self) -> tuple[float, float]:
        """((t(100K)/t(10K)) / 10, (t(1M)/t(100K)) / 10), sizes normalised exactly."""
        t10, t100, t1000 = (t.median_ns for t in self.timings)
        return (t100 / t10) / (SIZES[1] / SIZES[0]), (t1000 / t100) / (SIZES[2] / SIZES[1])


_Make = Callable[[int], Callable[[], object]]  # size -> the function to time at that size


def _time_series(settings: Settings, make: _Make, seconds: float) -> tuple[Timing, ...]:
    """One series: every size, interleaved round-robin (see ``benchmarks._timing``)."""
    jobs = [Job.sync(make(size), _RUNS[size], warmup=2) for size in SIZES]
    return tuple(measure_jobs_sync(jobs, settings, seconds=seconds))


def _check(name: str, fmt: TextFormat, text: str) -> None:
    whole = fmt.parse(text)
    if sorted(whole) != sorted(SECTIONS) or any(len(v) != 1 for v in whole.values()):
        raise RuntimeError(f"{name}: parsed sections {sorted(whole)}")
    if streamed(fmt, text) != whole:
        raise RuntimeError(f"{name}: streamed parse differs from the one-shot parse")
    if len(whole["thinking"][0]) < len(text) * 0.9:
        raise RuntimeError(f"{name}: the thinking section was cut short")


def _measure(settings: Settings) -> list[Series]:
    xml_texts = {size: xml_output(size) for size in SIZES}
    md_texts = {size: markdown_output(size) for size in SIZES}
    xml, markdown = _format(XMLFormat()), _format(MarkdownFormat())
    for name, fmt, texts in (("XML", xml, xml_texts), ("Markdown", markdown, md_texts)):
        for size, text in texts.items():
            if len(text) != size:
                raise RuntimeError(f"{name}: output is {len(text)} chars, not {size}")
            _check(name, fmt, text)

    series: list[Series] = []

    def add(
        group: str, mode: str, make: _Make, *, stream: bool = False, judged: bool = True
    ) -> None:
        seconds = _SECONDS_STREAM if stream else _SECONDS_OTHER
        series.append(Series(group, mode, _time_series(settings, make, seconds), judged))

    chunked = f"stream ({CHUNK}-char chunks)"
    add("XML", "parse (one-shot)", lambda n: partial(xml.parse, xml_texts[n]))
    add("XML", chunked, lambda n: partial(streamed, xml, xml_texts[n]), stream=True)
    add("Markdown", "parse (one-shot)", lambda n: partial(markdown.parse, md_texts[n]))
    add("Markdown", chunked, lambda n: partial(streamed, markdown, md_texts[n]), stream=True)
    add(
        "baseline",
        "re.findall(XML tag)",
        lambda n: partial(_XML_TAG.findall, xml_texts[n]),
        judged=False,
    )
    add(
        "baseline",
        "re.findall(^# heading, M)",
        lambda n: partial(_MD_HEADING.findall, md_texts[n]),
        judged=False,
    )
    add(
        "baseline",
        f"{CHUNK}-char chunk loop, no-op call",
        lambda n: partial(chunk_loop, xml_texts[n]),
        judged=False,
    )
    return series


# -- report ------------------------------------------------------------------------------


def _label(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1000} KB"


def _report(series: list[Series]) -> None:
    rows: list[list[str]] = []
    for s in series:
        for size, timing in zip(SIZES, s.timings, strict=True):
            mb_per_s = (size / 1e6) / (timing.median_ns / 1e9)
            rows.append(
                [
                    s.group,
                    s.mode,
                    _label(size),
                    f"{timing.median_ms:,.3f}",
                    f"{mb_per_s:,.1f}",
                    f"{timing.iqr_percent:.0f}%",
                    str(timing.runs),
                ]
            )
    headers = ["format", "mode", "size", "median ms", "MB/s", "IQR", "runs"]
    print(render_table(headers, rows, "lllrrrr"))
    print()
    print(
        "Growth vs linear (1.0 = linear; target <= "
        f"{MAX_GROWTH:g} for both steps, reported, not asserted):"
    )
    growth_rows: list[list[str]] = []
    for s in series:
        small, large = s.growth()
        ok = small <= MAX_GROWTH and large <= MAX_GROWTH
        growth_rows.append(
            [s.group, s.mode, f"{small:.2f}", f"{large:.2f}", verdict(ok) if s.judged else "-"]
        )
    headers = ["format", "mode", "(100KB/10KB)/10", "(1MB/100KB)/10", f"<= {MAX_GROWTH:g}"]
    print(render_table(headers, growth_rows, "llrrl"))


# -- degenerate output: a long run of blank lines -----------------------------------------


def blank_run_output(kind: str, lines: int, filler: str = "blank lines") -> str:
    """A thinking section holding a long ``filler`` run between two words, and an answer."""
    blank = FILLERS[filler](lines)
    if kind == "XML":
        return f"<thinking>\nHmm.{blank}Done.\n</thinking>\n<answer>\n{_ANSWER}\n</answer>\n"
    return f"# thinking\nHmm.{blank}Done.\n\n# answer\n{_ANSWER}\n"


def _measure_blank_runs(settings: Settings) -> list[list[str]]:
    small, large = BLANK_LINES
    rows: list[list[str]] = []
    formats = (("XML", _format(XMLFormat())), ("Markdown", _format(MarkdownFormat())))
    for filler, (name, fmt) in ((f, pair) for f in FILLERS for pair in formats):
        texts = [blank_run_output(name, lines, filler) for lines in BLANK_LINES]
        for lines, text in zip(BLANK_LINES, texts, strict=True):
            if fmt.parse(text)["thinking"] != ["Hmm." + FILLERS[filler](lines) + "Done."]:
                raise RuntimeError(f"{name}: the {filler} output parsed wrongly")
        one_shot = [partial(fmt.parse, text) for text in texts]
        chunked = [partial(streamed, fmt, text) for text in texts]
        for mode, fns in (
            ("parse (one-shot)", one_shot),
            (f"stream ({CHUNK}-char chunks)", chunked),
        ):
            jobs = [Job.sync(fn, runs) for fn, runs in zip(fns, _BLANK_RUNS, strict=True)]
            t_small, t_large = measure_jobs_sync(jobs, settings, seconds=_BLANK_SECONDS)
            growth = (t_large.median_ns / t_small.median_ns) / (large / small)
            rows.append(
                [
                    filler,
                    name,
                    mode,
                    f"{t_small.median_ms:,.2f}",
                    f"{t_large.median_ms:,.2f}",
                    f"{growth:.2f}",
                    verdict(growth <= MAX_GROWTH),
                ]
            )
    return rows


def _report_blank_runs(rows: list[list[str]]) -> None:
    small, large = BLANK_LINES
    print(
        "Degenerate output: a long run inside the thinking section (models in a repetition "
        "loop emit these); the runs are 5,000 and 50,000 lines or characters long"
    )
    headers = [
        "run",
        "format",
        "mode",
        f"{small:,} ms",
        f"{large:,} ms",
        f"({large // 1000}k/{small // 1000}k)/{large // small}",
        f"<= {MAX_GROWTH:g}",
    ]
    print(render_table(headers, rows, "lllrrrl"))


# -- adversarial output: each built to hit one possible super-linear path ---------------

ADVERSARIAL_SIZES = (100_000, 300_000, 1_000_000)
# Runs per size before --quick (1 MB streamed takes about a second: a round of the
# interleaved measurement runs it once, and one round is enough).
_ADVERSARIAL_RUNS = (50, 15, 3)
_ADVERSARIAL_SECONDS = 3.0


def _fill(unit: str, length: int) -> str:
    """``unit`` repeated and cut to exactly ``length`` characters."""
    return (unit * (length // len(unit) + 1))[:length]


def _per_line(unit: str) -> Callable[[int], str]:
    """Whole ``unit`` s, then blanks up to the size (they end the last section)."""
    return lambda size: unit * (size // len(unit)) + " " * (size % len(unit))


@dataclass(frozen=True, slots=True)
class Adversarial:
    """One adversarial output: how to build it at a size, and what it must parse to."""

    name: str
    kind: str  # "XML" or "Markdown"
    build: Callable[[int], str]
    expected: Callable[[str], dict[str, list[str]]]


def _nested_then_stray(size: int) -> str:
    head = "<thinking>"
    pairs = (size - len(head)) // 17
    text = head + "<answer>" * pairs + "</action>" * pairs
    return text + " " * (size - len(text))


def _padded_heading(size: int) -> str:
    head, tail = "# thinking\n# answer", "x\n# answer\n42\n"
    return head + " " * (size - len(head) - len(tail)) + tail


def _thinking_is_the_rest(head: str) -> Callable[[str], dict[str, list[str]]]:
    return lambda text: {"thinking": [text[len(head) :].strip()]}


def _one_answer_per_line(unit: str) -> Callable[[str], dict[str, list[str]]]:
    return lambda text: {"answer": [""] * (len(text) // len(unit))}


ADVERSARIAL = (
    Adversarial(
        "<answer> x n, </action> x n",
        "XML",
        _nested_then_stray,
        _thinking_is_the_rest("<thinking>"),
    ),
    Adversarial(
        "<answer> x n, never closed",
        "XML",
        lambda n: "<thinking>" + _fill("<answer>", n - 10),
        _thinking_is_the_rest("<thinking>"),
    ),
    Adversarial(
        "a section per line",
        "XML",
        _per_line("<answer>\n"),
        _one_answer_per_line("<answer>\n"),
    ),
    Adversarial(
        "'<answe&am' x n",
        "XML",
        lambda n: "<thinking>" + _fill("<answe&am", n - 10),
        _thinking_is_the_rest("<thinking>"),
    ),
    Adversarial(
        "'# answer' + spaces + 'x'",
        "Markdown",
        _padded_heading,
        lambda text: {"thinking": [text.split("\n")[1]], "answer": ["42"]},
    ),
    Adversarial(
        "a section per line",
        "Markdown",
        _per_line("# answer\n"),
        _one_answer_per_line("# answer\n"),
    ),
    Adversarial(
        "lines of '#' x 79",
        "Markdown",
        lambda n: "# thinking\n" + _fill("#" * 79 + "\n", n - 11),
        _thinking_is_the_rest("# thinking\n"),
    ),
    Adversarial(
        "lines of '\\' x 79",
        "Markdown",
        lambda n: "# thinking\n" + _fill("\\" * 79 + "\n", n - 11),
        lambda text: {"thinking": [markdown_decode(text[11:]).strip()]},
    ),
)


def _measure_adversarial(
    settings: Settings, sizes: tuple[int, ...] = ADVERSARIAL_SIZES
) -> list[list[str]]:
    """One row per case, mode and size; growth ratios against the previous size."""
    formats = {"XML": _format(XMLFormat()), "Markdown": _format(MarkdownFormat())}
    rows: list[list[str]] = []
    for case in ADVERSARIAL:
        fmt = formats[case.kind]
        texts = [case.build(size) for size in sizes]
        for size, text in zip(sizes, texts, strict=True):
            if len(text) != size:
                raise RuntimeError(f"{case.name}: output is {len(text)} chars, not {size}")
            if fmt.parse(text) != case.expected(text):
                raise RuntimeError(f"{case.kind} {case.name}: parsed wrongly at {size}")
        if streamed(fmt, texts[0]) != case.expected(texts[0]):
            raise RuntimeError(f"{case.kind} {case.name}: streamed parse differs")
        modes: tuple[tuple[str, Callable[[str], object]], ...] = (
            ("parse (one-shot)", fmt.parse),
            (f"stream ({CHUNK}-char chunks)", partial(streamed, fmt)),
        )
        for mode, parse in modes:
            jobs = [
                Job.sync(partial(parse, text), runs)
                for text, runs in zip(texts, _ADVERSARIAL_RUNS, strict=True)
            ]
            timings = measure_jobs_sync(jobs, settings, seconds=_ADVERSARIAL_SECONDS, min_rounds=1)
            previous: tuple[int, Timing] | None = None
            for size, timing in zip(sizes, timings, strict=True):
                growth = "-"
                ok = "-"
                if previous is not None:
                    ratio = (timing.median_ns / previous[1].median_ns) / (size / previous[0])
                    growth, ok = f"{ratio:.2f}", verdict(ratio <= MAX_GROWTH)
                mb_per_s = (size / 1e6) / (timing.median_ns / 1e9)
                rows.append(
                    [
                        case.kind,
                        case.name,
                        mode,
                        _label(size),
                        f"{timing.median_ms:,.2f}",
                        f"{mb_per_s:,.2f}",
                        growth,
                        ok,
                    ]
                )
                previous = (size, timing)
    return rows


def _report_adversarial(rows: list[list[str]]) -> None:
    print(
        "Adversarial output: each case aims at one path that could be super-linear; growth "
        "= (time ratio) / (size ratio) against the size above (1.0 = linear)"
    )
    headers = [
        "format",
        "input",
        "mode",
        "size",
        "median ms",
        "MB/s",
        "growth",
        f"<= {MAX_GROWTH:g}",
    ]
    print(render_table(headers, rows, "llllrrrl"))


# -- headline: a heading on every line, against a regex pass -----------------------------

_HEADING_SIZE = 1_000_000


def _measure_heading_per_line(settings: Settings) -> tuple[Timing, Timing]:
    """``MarkdownFormat.parse`` and the heading regex over one 1 MB heading-per-line text."""
    fmt = _format(MarkdownFormat())
    text = _per_line("# answer\n")(_HEADING_SIZE)
    if fmt.parse(text) != _one_answer_per_line("# answer\n")(text):
        raise RuntimeError("Markdown: the heading-per-line output parsed wrongly")
    jobs = [
        Job.sync(partial(fmt.parse, text), 30),
        Job.sync(partial(_MD_HEADING.findall, text), 30),
    ]
    parse, regex = measure_jobs_sync(jobs, settings, seconds=6.0, min_rounds=3)
    return parse, regex


def _report_heading_per_line(parse: Timing, regex: Timing) -> None:
    ratio = parse.median_ns / regex.median_ns
    per_mb = 1e6 / _HEADING_SIZE
    print(
        "Markdown parse, a '# answer' heading on every line (1 MB, 111,111 sections): "
        f"{parse.median_ms * per_mb:,.1f} ms per MB; re.findall(^# heading, M) over the same "
        f"text {regex.median_ms * per_mb:,.1f} ms per MB; ratio {ratio:.1f}x "
        f"(target <= {MAX_HEADING_RATIO:g}x: {verdict(ratio <= MAX_HEADING_RATIO)}; "
        f"IQR {parse.iqr_percent:.0f}% / {regex.iqr_percent:.0f}%, "
        f"{parse.runs} / {regex.runs} runs)"
    )


def run(settings: Settings) -> None:
    """Measure both formats at every size and print the tables."""
    print("== Parse scaling: thinking (prose + code) + action + answer ==")
    print(f"sizes: {', '.join(_label(s) for s in SIZES)} (KB = 1000 ASCII characters)")
    print()
    _report_heading_per_line(*_measure_heading_per_line(settings))
    print()
    _report(_measure(settings))
    print()
    _report_blank_runs(_measure_blank_runs(settings))
    print()
    _report_adversarial(_measure_adversarial(settings))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.parse_scaling")
