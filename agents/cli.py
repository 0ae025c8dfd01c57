"""python -m agents (or gent-agents): run the demo agent and show its trace; run evaluations.

Everything a model, a user, a tool or a file wrote is printed literally (see
``agents._terminal``): never read as rich markup or emoji codes, control characters
shown as escapes.

python -m agents demo                       # offline, on ScriptedModel
python -m agents demo --format markdown --calls json
python -m agents demo --model openai:gpt-4o-mini --trace run.jsonl
python -m agents demo --native              # ToolCallingAgent: native tool calls
python -m agents eval --glob 'prompts/*.md' --model openai:gpt-4o-mini   # prompt cases
python -m agents web                        # the playground page, on 127.0.0.1:8000
python -m agents web --agent myapp.agents:support --port 8080
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from agents._errors import AgentValueError
from agents._paths import OutputFile, PathError
from agents._terminal import literal, print_error
from agents.demo import build_demo
from agents.evals.cli import add_eval_command, run_eval
from agents.events import (
    AnswerReady,
    LimitReached,
    ModelTextDelta,
    ModelToolCallDelta,
    ObservationReady,
    RunFinished,
    ToolCallStarted,
)
from agents.models import ModelError
from agents.trace import JSONLTraceWriter
from formats import TextFormat
from toolchain import ExecutionContext

__all__ = ["main"]


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the demo agent and show its trace, or run prompt-case evaluations.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run the SkyWings customer-service agent",
        description="Run the SkyWings customer-service agent (offline on a scripted model "
        "unless --model is given) and show each step.",
    )
    demo.add_argument(
        "--format",
        choices=["xml", "markdown"],
        default="xml",
        help="the sections the model writes and reads: xml (default) or markdown",
    )
    demo.add_argument(
        "--calls",
        choices=["yaml", "json"],
        default="yaml",
        help="the syntax of tool calls and outputs: yaml (default) or json",
    )
    demo.add_argument(
        "--model", help="provider:model_id to run on a real endpoint (default: offline script)"
    )
    demo.add_argument("--trace", type=Path, help="write a JSON-lines trace of the run here")
    demo.add_argument("--task", help="the customer's request (default: the demo's)")
    demo.add_argument(
        "--native",
        action="store_true",
        help="run ToolCallingAgent: the model calls tools through its API's tool calling",
    )
    add_eval_command(commands)
    web = commands.add_parser(
        "web",
        help="serve the playground: a chat page for an agent (extra [ui])",
        description="Serve the playground page for the demo agent (offline on a scripted "
        "model unless --model is given; its booking change waits for your approval) or "
        "for the agent --agent names. Loopback only unless --host says otherwise.",
    )
    web.add_argument("--model", help="provider:model_id for the demo agent (default: offline)")
    web.add_argument(
        "--agent", metavar="MODULE:ATTRIBUTE", help="serve this agent (or factory) instead"
    )
    web.add_argument("--native", action="store_true", help="the demo as ToolCallingAgent")
    web.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    web.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    return parser


async def _run_demo(args: argparse.Namespace, console: Console) -> int:
    trace: OutputFile | None = None
    if args.trace:
        try:  # before any model call: a path that cannot be written is a usage error
            trace = OutputFile(args.trace, "--trace ")
        except PathError as error:
            return print_error(console, str(error))
    try:
        status = await _demo(args, console, trace)
    finally:
        if trace is not None:
            try:
                trace.close()
            except PathError as error:
                status = print_error(console, str(error))
    return status


async def _demo(args: argparse.Namespace, console: Console, trace: OutputFile | None) -> int:
    try:
        demo = build_demo(
            text_format=cast(Literal["xml", "markdown"], args.format),
            calls=cast(Literal["json", "yaml"], args.calls),
            model=args.model,
            native=args.native,
        )
    except ModelError as error:
        console.print(literal(str(error), "red"))
        return 2
    agent = demo.agent
    ctx = ExecutionContext(limits=agent.limits, name=agent.name)
    detach = None if trace is None else JSONLTraceWriter(trace.stream).attach(ctx)
    mode = f"native tool calls, outputs as {args.calls}" if args.native else f"{args.calls} calls"
    console.print(Rule(literal(f"SkyWings demo · {agent.model.name} · {args.format} + {mode}")))
    console.print(Panel(literal(args.task or demo.task), title="customer", border_style="cyan"))
    said: list[str] = []  # ReAct: the thinking section; native: the reply's text
    calls: list[str] = []  # ReAct: each call as the chain runs it
    native_calls: dict[int, _NativeCall] = {}  # native: the reply's calls by position
    status = 0
    try:
        async for event in agent.stream(args.task or demo.task, ctx=ctx):
            if isinstance(event, ModelTextDelta):
                if event.section == (None if args.native else "thinking"):
                    said.append(event.text)
            elif isinstance(event, ModelToolCallDelta):
                native_calls.setdefault(event.index, _NativeCall()).add(event)
            elif isinstance(event, ToolCallStarted) and not args.native:
                rendered = ", ".join(f"{k}={v!r}" for k, v in event.args.items())
                calls.append(f"{event.name}({rendered})")
            elif isinstance(event, ObservationReady):
                results = [literal(event.text, "dim")]
                if args.native:
                    calls = [native_calls[i].render() for i in sorted(native_calls)]
                    results = _native_results(event, agent.text_format)
                _print_step(console, event.step, said, calls, results)
                said, calls, native_calls = [], [], {}
            elif isinstance(event, AnswerReady):
                if args.native and "".join(said).strip() == str(event.answer).strip():
                    said = []  # a native reply without calls is the answer itself
                if "".join(said).strip() or calls:
                    _print_step(console, event.step, said, calls, [])
                answer = literal(str(event.answer))
                console.print(Panel(answer, title="answer", border_style="green"))
            elif isinstance(event, LimitReached):
                console.print(literal(f"limit reached: {event.limit}", "red"))
            elif isinstance(event, RunFinished):
                result = event.result
                stats = result.stats
                summary = (
                    f"stopped by {result.stopped_by} after {len(result.steps)} steps, "
                    f"{stats.get('tool_calls', 0)} tool calls, "
                    f"{result.usage.input_tokens} input / {result.usage.output_tokens} output "
                    "tokens"
                )
                console.print(literal(summary))
                if result.error:
                    console.print(literal(result.error, "red"))
                status = 0 if result.ok else 1
    except ModelError as error:
        console.print(literal(str(error), "red"))
        status = 2
    finally:
        if detach is not None:
            detach()
    return status


def _web(args: argparse.Namespace, console: Console) -> int:
    """Serve the playground until interrupted (Ctrl-C)."""
    try:
        import uvicorn

        from agents.ui import playground_app
        from agents.ui._playground import demo_agent, load_agent
    except ImportError as error:  # MissingExtra names the extra to install
        return print_error(console, str(error))
    try:
        agent = (
            load_agent(args.agent)
            if args.agent
            else demo_agent(native=args.native, model=args.model)
        )
    except (AgentValueError, ModelError) as error:
        return print_error(console, str(error))
    url = f"http://{args.host}:{args.port}/"
    console.print(literal(f"playground for {agent.name} ({agent.model.name}) on {url}"))
    uvicorn.run(playground_app(agent), host=args.host, port=args.port, log_level="warning")
    return 0


@dataclass
class _NativeCall:
    """A native call as it streams in: its id and name first, then its argument JSON."""

    id: str = ""
    name: str = ""
    arguments: str = ""

    def add(self, delta: ModelToolCallDelta) -> None:
        self.id += delta.id
        self.name += delta.name
        self.arguments += delta.arguments

    def render(self) -> str:
        """``name(key='value', …) [id]``; arguments that are not a JSON object as sent."""
        try:
            parsed: object = json.loads(self.arguments or "{}")
        except ValueError:
            parsed = None
        shown = self.arguments
        if isinstance(parsed, dict):
            items = cast(dict[str, object], parsed).items()
            shown = ", ".join(f"{key}={value!r}" for key, value in items)
        return f"{self.name}({shown})" + (f" [{self.id}]" if self.id else "")


def _native_results(event: ObservationReady, text_format: TextFormat) -> list[Text]:
    """Each call's tool message under a ``tool name [id]`` line, as transcripts show it.

    Feedback on a reply without usable calls (no tool results) is shown as it is.
    """
    shown: list[Text] = []
    for result in event.tool_results:
        for observation in result.observations:
            shown.append(literal(f"tool {observation.name} [{observation.id}]", "bold cyan"))
            text = observation.text
            if observation.instructions:
                text += "\n\n" + text_format.format_section(
                    "instructions", observation.instructions
                )
            shown.append(literal(text, "dim"))
    return shown or [literal(event.text, "dim")]


def _print_step(
    console: Console, index: int, said: list[str], calls: list[str], results: list[Text]
) -> None:
    parts: list[Text] = []
    if "".join(said).strip():
        parts.append(literal("".join(said).strip(), "italic"))
    for call in calls:
        parts.append(literal("→ " + call, "bold yellow"))
    parts.extend(results)
    console.print(Panel(Group(*parts), title=f"step {index}", title_align="left"))


def main(
    argv: Sequence[str] | None = None, *, console: Console | None = None, prog: str | None = None
) -> int:
    """Entry point of ``python -m agents`` and ``gent-agents``; returns the exit status.

    ``prog`` is the name ``--help`` and usage errors show (default: the name the
    program was started by).
    """
    args = _parser(prog or Path(sys.argv[0]).name or "gent-agents").parse_args(argv)
    if args.command == "eval":
        return run_eval(args, console)
    out = console or Console(markup=False, emoji=False)
    if args.command == "demo":
        return asyncio.run(_run_demo(args, out))
    if args.command == "web":
        return _web(args, out)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(prog="python -m agents"))
