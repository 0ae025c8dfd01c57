"""``python -m agents``: run the demo agent and show its trace.

python -m agents demo                       # offline, on ScriptedModel
python -m agents demo --format markdown --calls json
python -m agents demo --model openai:gpt-4o-mini --trace run.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, cast

from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from agents.demo import build_demo
from agents.events import (
    AnswerReady,
    LimitReached,
    ModelTextDelta,
    ObservationReady,
    RunFinished,
    ToolCallStarted,
)
from agents.models import ModelError
from agents.trace import JSONLTraceWriter
from toolchain import ExecutionContext

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents", description=(__doc__ or "").split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the SkyWings customer-service agent")
    demo.add_argument("--format", choices=["xml", "markdown"], default="xml")
    demo.add_argument("--calls", choices=["yaml", "json"], default="yaml")
    demo.add_argument(
        "--model", help="provider:model_id to run on a real endpoint (default: offline script)"
    )
    demo.add_argument("--trace", type=Path, help="write a JSON-lines trace of the run here")
    demo.add_argument("--task", help="the customer's request (default: the demo's)")
    return parser


async def _run_demo(args: argparse.Namespace, console: Console) -> int:
    try:
        demo = build_demo(
            text_format=cast(Literal["xml", "markdown"], args.format),
            calls=cast(Literal["json", "yaml"], args.calls),
            model=args.model,
        )
    except ModelError as error:
        console.print(f"[red]{error}[/red]")
        return 2
    agent = demo.agent
    ctx = ExecutionContext(limits=agent.limits, name=agent.name)
    detach = None
    trace_file = None
    if args.trace:
        trace_file = args.trace.open("w", encoding="utf-8")
        detach = JSONLTraceWriter(trace_file).attach(ctx)
    console.print(Rule(f"SkyWings demo · {agent.model.name} · {args.format} + {args.calls}"))
    console.print(Panel(args.task or demo.task, title="customer", border_style="cyan"))
    thinking: list[str] = []
    calls: list[str] = []
    status = 0
    try:
        async for event in agent.stream(args.task or demo.task, ctx=ctx):
            if isinstance(event, ModelTextDelta) and event.section == "thinking":
                thinking.append(event.text)
            elif isinstance(event, ToolCallStarted):
                rendered = ", ".join(f"{k}={v!r}" for k, v in event.args.items())
                calls.append(f"{event.name}({rendered})")
            elif isinstance(event, ObservationReady):
                _print_iteration(console, event.iteration, thinking, calls, event.text)
                thinking, calls = [], []
            elif isinstance(event, AnswerReady):
                _print_iteration(console, event.iteration, thinking, calls, "")
                console.print(Panel(str(event.answer), title="answer", border_style="green"))
            elif isinstance(event, LimitReached):
                console.print(f"[red]limit reached: {event.limit}[/red]")
            elif isinstance(event, RunFinished):
                result = event.result
                stats = result.stats
                console.print(
                    f"stopped by {result.stopped_by} after {len(result.iterations)} iterations, "
                    f"{stats.get('tool_calls', 0)} tool calls, "
                    f"{result.usage.input_tokens} input / {result.usage.output_tokens} output "
                    "tokens"
                )
                if result.error:
                    console.print(f"[red]{result.error}[/red]")
                status = 0 if result.ok else 1
    except ModelError as error:
        console.print(f"[red]{error}[/red]")
        status = 2
    finally:
        if detach is not None:
            detach()
        if trace_file is not None:
            trace_file.close()
    return status


def _print_iteration(
    console: Console, index: int, thinking: list[str], calls: list[str], observation: str
) -> None:
    parts: list[Text] = []
    if thinking:
        parts.append(Text("".join(thinking).strip(), style="italic"))
    for call in calls:
        parts.append(Text("→ " + call, style="bold yellow"))
    if observation:
        parts.append(Text(observation, style="dim"))
    console.print(Panel(Group(*parts), title=f"iteration {index}", title_align="left"))


def main(argv: Sequence[str] | None = None, *, console: Console | None = None) -> int:
    """Entry point of ``python -m agents``; returns the exit status."""
    args = _parser().parse_args(argv)
    out = console or Console()
    if args.command == "demo":
        return asyncio.run(_run_demo(args, out))
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
