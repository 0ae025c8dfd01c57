"""``python -m agents eval``: run prompt cases against models, print and write reports.

python -m agents eval "Transcribe video_id='123' and pass it to Deep Check."
python -m agents eval --glob 'agents/evals/cases/relay/*.md' --model openai:gpt-4o-mini
python -m agents eval --glob 'prompts/*.md' --profile deepseek --profile local --no-few-shot
python -m agents eval --suite relay --replay
python -m agents eval --list-suites

The exit status is 0 when every case passed, 1 when one failed, 2 for a usage or setup
error (a malformed case file, an unconfigured profile or model, a cassette that cannot be
read). Everything models and files wrote is printed as written: no rich markup or emoji
codes, control characters as escapes (``\x1b``), and a long message's middle left out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, cast

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from agents._paths import PathError, check_regular, write_text
from agents._terminal import literal, print_error, visible
from agents.evals.cases import CaseFileError, PromptCase, load_cases
from agents.evals.profiles import (
    EnvFileError,
    ModelTarget,
    default_profile,
    eval_environment,
    resolve_profile,
)
from agents.evals.report import EvalReport
from agents.evals.runner import CaseResult, EvalSettings, RunMode, run_cases
from agents.evals.suites import SuiteError, shipped_suites, suite
from agents.evals.toolsets import ToolsetError, ToolsetOptions, describe_tools, resolve_toolset
from agents.models import ModelError, messages_to_json
from agents.result import render_transcript

__all__ = ["add_eval_command", "make_console", "run_eval"]

ColorChoice = Literal["auto", "always", "never"]
MAX_SHOWN_CHARS: Final = 20_000
"""The most of one message a single run's view prints (its start and its end)."""
MAX_CELL_CHARS: Final = 1_000


def add_eval_command(commands: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` sub-command to ``commands`` (an argparse sub-parsers object)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "eval",
        help="run prompt cases (Markdown with YAML frontmatter) against models",
        description="Run prompt cases against models; print and write reports.",
    )
    parser.add_argument("prompt", nargs="?", help="a prompt to run (no checks but an answer)")
    parser.add_argument("--file", action="append", default=[], help="a case file (repeatable)")
    parser.add_argument("--glob", action="append", default=[], help="case files by pattern")
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        help="a suite shipped in the package, by name (repeatable; see --list-suites)",
    )
    parser.add_argument(
        "--list-suites", action="store_true", help="name the shipped suites and stop"
    )
    parser.add_argument("--toolset", default="relay", help="the prompt's toolset (default relay)")
    parser.add_argument(
        "--profile", action="append", default=[], help="a model profile from the environment"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        help="provider:model_id or alias; with --profile, that profile's model id (repeatable)",
    )
    parser.add_argument(
        "--temperature", type=float, help="sampling temperature (ignored for reasoning models)"
    )
    parser.add_argument("--max-retries", type=_count, help="retries of each model call (0: none)")
    parser.add_argument(
        "--boxing",
        choices=["opaque", "json"],
        default="opaque",
        help="how the relay shows large outputs: internal://… or a resource_link JSON",
    )
    parser.add_argument(
        "--few-shot",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the relay guide's worked examples (default on)",
    )
    parser.add_argument(
        "--protocol",
        choices=["text", "native"],
        default="text",
        help="text: ReActAgent sections; native: ToolCallingAgent, the API's tool calls",
    )
    parser.add_argument("--concurrency", type=_positive, default=4, help="runs at a time")
    parser.add_argument("--print-tools", action="store_true", help="show the tools first")
    parser.add_argument(
        "--dump-context", action="store_true", help="print each run's final messages as JSON"
    )
    parser.add_argument(
        "--show-system-instruction",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="show the system prompt of a single run (default on)",
    )
    parser.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="color the output: auto (a terminal, unless NO_COLOR is set), always or never",
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--record", action="store_true", help="call the model and record cassettes")
    modes.add_argument("--replay", action="store_true", help="answer only from recorded cassettes")
    parser.add_argument(
        "--cassettes", type=Path, help="cassette folder (default: beside each case)"
    )
    parser.add_argument("--report-md", type=Path, help="write the Markdown table here")
    parser.add_argument("--report-json", type=Path, help="write the JSON report here")
    parser.add_argument("--report-html", type=Path, help="write the HTML report here")
    parser.add_argument(
        "--env-file",
        type=Path,
        help="read model profiles and keys from this file (default .env, if it is a file)",
    )
    parser.add_argument("--no-env-file", action="store_true", help="read no .env file")
    return parser


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def make_console(
    color: ColorChoice = "auto", *, env: Mapping[str, str] | None = None, file: Any = None
) -> Console:
    """A console that colors as asked: ``always`` and ``never`` win over the environment;
    ``auto`` honours ``NO_COLOR`` (no color) and ``FORCE_COLOR`` (color even when piped),
    else colors only a terminal.

    >>> make_console("never").no_color, make_console("always").is_terminal
    (True, True)
    """
    environ = os.environ if env is None else env
    # No markup and no emoji codes: what models and files wrote is printed as written.
    if color == "never" or (color == "auto" and environ.get("NO_COLOR", "")):
        return Console(
            file=file,
            markup=False,
            emoji=False,
            no_color=True,
            color_system=None,
            force_terminal=False,
        )
    if color == "always" or environ.get("FORCE_COLOR", ""):
        return Console(
            file=file,
            markup=False,
            emoji=False,
            no_color=False,
            force_terminal=True,
            color_system="standard",
        )
    return Console(file=file, markup=False, emoji=False)


def run_eval(args: argparse.Namespace, console: Console | None = None) -> int:
    """Run ``python -m agents eval`` with parsed ``args``; returns the exit status."""
    if console is None:
        console = make_console(cast(ColorChoice, args.color))
    reports = _reports(args)
    try:
        if args.list_suites:
            _list_suites(console)
            return 0
        # Where the run writes, checked before any case runs: a report path that cannot
        # be written (a FIFO would block, a directory fails) is a usage error up front.
        for option, path, _ in reports:
            check_regular(path, f"{option} ")
        if args.cassettes is not None:
            _check_folder(args.cassettes)
        env = eval_environment(None if args.no_env_file else _env_file(args.env_file))
        cases = _cases(args)
        targets = _targets(args, env)
    except (CaseFileError, EnvFileError, ModelError, ToolsetError, SuiteError, PathError) as error:
        return print_error(console, str(error))
    if not cases:
        return print_error(console, "give a prompt, --file, --glob or --suite")
    mode: RunMode = "record" if args.record else "replay" if args.replay else "live"
    settings = EvalSettings(
        protocol=args.protocol,
        boxing=args.boxing,
        few_shot=args.few_shot,
        temperature=args.temperature,
        max_retries=args.max_retries,
        mode=mode,
        cassette_dir=args.cassettes,
        env=env,
    )
    if args.print_tools:
        _print_tools(console, cases, settings)
    results = asyncio.run(_run(console, cases, targets, settings, args.concurrency))
    report = EvalReport(results)
    if len(results) == 1:
        _show_run(console, results[0], show_system=args.show_system_instruction)
    for note in dict.fromkeys(note for result in results for note in result.notes):
        console.print(literal(f"note: {note}", "yellow"))
    console.print(_table(report))
    console.print(f"{report.passed} passed, {report.failed} failed")
    status = report.exit_code
    for option, path, render in reports:
        try:
            write_text(path, render(report), f"{option} ")
        except PathError as error:  # a full disk: the others are still written
            status = print_error(console, str(error))
    if args.dump_context:
        console.file.write(_context_json(results) + "\n")  # as written: no rich layout
    return status


def _reports(args: argparse.Namespace) -> list[tuple[str, Path, Callable[[EvalReport], str]]]:
    """The reports asked for: the option, its path, and how the report is written."""
    asked: list[tuple[str, Path | None, Callable[[EvalReport], str]]] = [
        ("--report-md", args.report_md, lambda report: report.to_markdown() + "\n"),
        ("--report-json", args.report_json, EvalReport.to_json),
        ("--report-html", args.report_html, EvalReport.to_html),
    ]
    return [(option, path, render) for option, path, render in asked if path is not None]


def _env_file(given: Path | None) -> Path:
    """The ``.env`` file to read: one named with ``--env-file`` must be a file if it is
    there (the default ``.env`` is skipped when it is not: a virtualenv's folder is often
    called that)."""
    if given is None:
        return Path(".env")
    check_regular(given, "--env-file ")
    return given


def _check_folder(path: Path) -> None:
    """``--cassettes``: a folder, or a path where one can be made."""
    if path.exists() and not path.is_dir():  # is_dir and exists stat: neither opens
        raise PathError(f"--cassettes {path}: not a folder")


def _cases(args: argparse.Namespace) -> list[PromptCase]:
    cases: list[PromptCase] = []
    if args.prompt:
        resolve_toolset(args.toolset)  # a bad name is a usage error, before any run
        cases.append(PromptCase(id="prompt", prompt=args.prompt, toolset=args.toolset))
    cases += load_cases(args.file, args.glob)
    for name in args.suite:
        cases += load_cases([str(path) for path in suite(name).case_files()])
    return cases


def _list_suites(console: Console) -> None:
    for found in shipped_suites().values():
        count = len(found.case_files())
        console.print(literal(f"{found.name}: {count} cases; {found.description}"), soft_wrap=True)


def _targets(args: argparse.Namespace, env: Mapping[str, str]) -> list[ModelTarget]:
    models: list[str | None] = list(args.model)
    profiles: list[str] = list(args.profile)
    if profiles:
        return [
            ModelTarget.from_profile(resolve_profile(profile, model=model, env=env))
            for profile in profiles
            for model in (models or [None])
        ]
    if models:
        return [ModelTarget.from_string(model, env) for model in models if model is not None]
    if args.suite and args.replay:  # replayed as recorded: no model, profile or key needed
        recorded = dict.fromkeys(suite(name).recorded_model for name in args.suite)
        return [ModelTarget.from_string(model, env) for model in recorded]
    return [ModelTarget.from_profile(resolve_profile(default_profile(env), env=env))]


async def _run(
    console: Console,
    cases: Sequence[PromptCase],
    targets: Sequence[ModelTarget],
    settings: EvalSettings,
    concurrency: int,
) -> list[CaseResult]:
    total = len(cases) * len(targets)
    if total == 1:
        return await run_cases(cases, targets, settings, concurrency=concurrency)
    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("running cases", total=total)

        def done(result: CaseResult) -> None:
            mark = "✅" if result.passed else "❌"
            shown = visible(f"{mark} {result.case.id} · {result.model}")
            progress.update(task, advance=1, description=shown)

        return await run_cases(cases, targets, settings, concurrency=concurrency, on_result=done)


def _print_tools(console: Console, cases: Sequence[PromptCase], settings: EvalSettings) -> None:
    for name in dict.fromkeys(case.toolset for case in cases):
        try:
            toolset = resolve_toolset(name)(ToolsetOptions(settings.boxing, settings.few_shot))
        except ToolsetError as error:
            console.print(literal(f"toolset {name}: {error}", "red"))
            continue
        tools = [*toolset.tools, *(t for e in toolset.extensions for t in e.tools())]
        for tool_name, description, schema in describe_tools(tools):
            body = literal(description + "\n\n" + json.dumps(schema, indent=2, ensure_ascii=False))
            title = literal(f"{name} · {tool_name}")
            console.print(Panel(body, title=title, title_align="left"))


def _show_run(console: Console, result: CaseResult, *, show_system: bool) -> None:
    for message in result.messages:
        if message.role == "system" and not show_system:
            continue
        header, _, body = render_transcript([message]).partition("\n")
        style = {"system": "dim", "user": "cyan", "assistant": "green"}.get(message.role, "yellow")
        title = literal(_clip(header.strip("= "), MAX_CELL_CHARS))
        shown = literal(_clip(body, MAX_SHOWN_CHARS))
        console.print(Panel(shown, title=title, title_align="left", border_style=style))
    if result.passed:
        console.print(literal(f"✅ {result.case.id}: passed", "green"))
        return
    console.print(literal(f"❌ {result.case.id}: failed", "red"))
    for failure in result.failures:
        console.print(literal(f"  - {failure}", "red"))


def _clip(text: str, limit: int) -> str:
    """``text``, or its start and end around a note of how much is left out.

    rich lays a panel out in time that grows faster than its text (a 2 MB reply took
    seconds), so a terminal gets a bounded view; the reports and --dump-context keep
    everything.
    """
    if len(text) <= limit:
        return text
    half = limit // 2
    left_out = len(text) - 2 * half
    note = f"\n[... {left_out:,} characters not shown: see --dump-context or --report-html ...]\n"
    return text[:half] + note + text[-half:]


def _table(report: EvalReport) -> Table:
    table = Table(title=literal("prompt cases"))
    columns = ("Model", "Prompt Id", "Few-shot", "Validation", "Protocol", "Boxing", "Reason")
    for column in columns:  # the reason folds; the rest stay on one line
        wraps = column == "Reason"
        table.add_column(column, overflow="fold", no_wrap=not wraps, ratio=1 if wraps else None)
    for row in report.rows():
        model, case, few, verdict, protocol, boxing, _, _, reason = row
        cells = (model, case, few, verdict, protocol, boxing, reason)
        table.add_row(*(literal(_clip(cell, MAX_CELL_CHARS)) for cell in cells))
    return table


def _context_json(results: Sequence[CaseResult]) -> str:
    runs = [
        {
            "case": result.case.id,
            "model": result.model,
            "protocol": result.settings.protocol,
            "messages": json.loads(messages_to_json(result.messages))["messages"],
        }
        for result in results
    ]
    # json escapes C0 controls itself; DEL and C1 (a one-byte CSI) are escaped here.
    return visible(json.dumps({"runs": runs}, indent=2, ensure_ascii=False), json=True)
