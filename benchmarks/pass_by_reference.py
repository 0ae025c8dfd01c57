"""Pass by reference: tokens the model reads and writes with and without it, and its cost.

Two extensions let a model pass tool outputs on by reference instead of copying them:
``ToolVariables`` (every output saved as ``$name``) and ``ContextRelay`` (outputs over
a threshold stored and shown as ``internal://<id>``). Each is judged on the tasks its
seed describes, run by both agents (``ReActAgent``, text mode; ``ToolCallingAgent``,
native mode) with a scripted model that reads each observation and plans the next step:

* the relay's prompt cases, in the PoC's world the relay's eval cases and tests use
  (``agents.evals.toolsets.RelayWorld``: its tools, video 123's ~70 KB transcript and
  its ~90 KB page): case1 (transcribe, deep_check), case2 (transcribe, save to Drive),
  case3 (transcribe, deep_check, the number at its end), case4 (transcribe, deep_check,
  save both), and web1 (fetch the HTML page, list its images);
* the mastra weather flow: get_weather NYC and London (mastra's weather tool output:
  temperature, feelsLike, humidity, windSpeed, windGust, conditions, location), then
  compare_weather of both, then an answer quoting both temperatures;
* a flow passing real data between tools (``benchmarks._record_flow``): a ~5 KB
  customer record fetched, enriched, and sent to a CRM with its enrichment.

Without the mechanism the model must copy what it passes on: deep_check gets the whole
transcript, compare_weather both whole dicts, enrich_customer and send_to_crm the record
as the model read it; it reads the transcript's end and the
page's images in the observation it was shown. With it, the model passes the reference
(``internal://…``, ``$weather_nyc``) and reads through the relay's reader tools. The
tools receive the same values in both runs (checked, as are the answers).

Tokens are o200k (``toolchain._tokens.count_tokens``, offline): for each request the
model receives, the texts of all its messages and of the tool calls in them (name and
arguments) and, in native mode, the JSON of the tool specs sent in ``options.tools``;
summed over the run (every request counted whole: no prompt cache assumed), plus the
tokens the model writes (its replies, and the name and arguments of each native call).
Per-message framing tokens of the providers' chat formats are left out (alike in both).

The weather flow runs three times with variables: with the default (``auto``) style,
whose guide and list come only once an output is large enough for them to pay, and
with ``instruction_style="full"`` and ``"minimal"`` (the guide in every system prompt,
the list on every step).

ToolVariables' time per iteration over a 100-iteration run, first iterations against
the last, with a run without it as the baseline (``benchmarks._variables_growth``).

Resolution overhead (``benchmarks._reference_overhead``): ``execute_calls`` of one call
on an instant async tool, with references against the values themselves, through a plain
chain and the extension's; for ToolVariables two weather dicts, for the relay a
2,500-character text and the long transcript.

The tasks and their scripts are in ``benchmarks._reference_tasks``.

The token counts do not depend on ``--quick`` (only the timing does); they vary by a
few tokens between runs, as the relay's reference ids are random. Targets
(reported, never asserted): the step carrying the long transcript costs >= 99 %
fewer tokens; the weather flow at most 2 % more tokens over the run with variables
than without (its reports are too small for references to save much: the mechanism
must not cost); the record flow >= 50 % fewer (the variables plan claims ~70 %);
resolution overhead < 20 µs per call; ToolVariables' last iterations of a
100-iteration run at most 1.1x its first.

Run alone with ``python -m benchmarks.pass_by_reference [--quick]``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from agents import ReActAgent, ToolCallingAgent
from agents.evals.toolsets import LONG_TRANSCRIPT, PAGE, RELAY_THRESHOLD
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from benchmarks._record_flow import RECORD
from benchmarks._reference_overhead import measure_overheads, report_overheads
from benchmarks._reference_tasks import (
    TASKS,
    WEATHER,
    ScriptError,
    Step,
    Task,
    new_world,
)
from benchmarks._timing import Settings, render_table, verdict
from benchmarks._variables_growth import ITERATIONS, measure_growth, report_growth
from toolchain import JSONToolChain
from toolchain._tokens import count_tokens
from toolchain.variables import ToolVariables
from toolchain.variables._listing import GUIDE_AT, STEP_GUIDE

__all__ = ["run"]

STEP_TARGET = 99.0  # % fewer tokens in the step that would carry the long transcript
WEATHER_MAX_MORE = 2.0  # % more tokens over the weather flow, at most, with variables
RECORD_TARGET = 50.0  # % fewer tokens over the record flow
COMPARE_REPLY = 3  # the model's reply that calls compare_weather (1-based)

Mode = Literal["text", "native"]
MODES: tuple[Mode, ...] = ("text", "native")

# -- counting ----------------------------------------------------------------------------


class Tokens:
    """o200k counts, cached by text (a conversation resends every earlier message)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def of(self, text: str) -> int:
        found = self._cache.get(text)
        if found is None:
            found = self._cache[text] = count_tokens(text)
        return found

    def message(self, message: Message) -> int:
        calls = sum(self.of(call.name) + self.of(call.arguments) for call in message.tool_calls)
        return self.of(message.text_content()) + calls

    def messages(self, messages: Sequence[Message]) -> int:
        return sum(self.message(message) for message in messages)

    def requests(self, model: ScriptedModel) -> int:
        """Input tokens of every request ``model`` received: the messages, and the tool
        specs as compact JSON (native runs send them with each request)."""
        read = 0
        for request in model.requests:
            read += self.messages(request.messages)
            if request.options.tools:
                specs = [
                    {"name": s.name, "description": s.description, "parameters": s.parameters}
                    for s in request.options.tools
                ]
                read += self.of(msgspec.json.encode(specs).decode())
        return read


class Player:
    """Plays a task's steps as the model, counting the tokens it writes."""

    def __init__(self, mode: Mode, steps: Sequence[Step], tokens: Tokens) -> None:
        self.mode: Mode = mode
        self.steps = iter(steps)
        self.tokens = tokens
        self.written = 0

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply:
        seen = "\n".join(m.text_content() for m in messages[-3:] if m.role != "assistant")
        try:
            planned = next(self.steps)(seen)
        except StopIteration:
            raise ScriptError("the agent asked for more steps than were scripted") from None
        if isinstance(planned, str):
            reply = planned if self.mode == "native" else f"<answer>{planned}</answer>"
            self.written += self.tokens.of(reply)
            return reply
        if self.mode == "native":
            calls = tuple(
                ToolCallRequest(f"c{i}", name, msgspec.json.encode(args).decode())
                for i, (name, args) in enumerate(planned)
            )
            self.written += sum(self.tokens.of(c.name) + self.tokens.of(c.arguments) for c in calls)
            return ScriptedReply("", calls)
        body = msgspec.json.encode([{"tool": n, "args": a} for n, a in planned]).decode()
        reply = f"<action>{body}</action>"
        self.written += self.tokens.of(reply)
        return reply


@dataclass(frozen=True, slots=True)
class Count:
    """One scripted run's tokens."""

    read: int
    written: int
    requests: int
    big_step: int
    """Tokens of the messages the first call's result added (its observation)."""
    answer: str
    received: dict[str, list[dict[str, object]]]

    @property
    def total(self) -> int:
        return self.read + self.written


def count_run(task: Task, mode: Mode, by_reference: bool, tokens: Tokens) -> Count:
    world = new_world(task.toolset)
    extensions = [task.extension()] if by_reference else []
    # The extension sits on the chain, its reader tools registered before the task's.
    chain = JSONToolChain(extensions=extensions)
    for each in world.tools():
        chain.register_tool(each)
    player = Player(mode, task.script(by_reference), tokens)
    model = ScriptedModel(player)
    agent: ReActAgent[str] | ToolCallingAgent[str] = (
        ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
        if mode == "native"
        else ReActAgent(model, tool_chain=chain, extensions=extensions)
    )
    result = agent.run_sync(task.prompt)
    if not result.ok or result.answer is None:
        raise ScriptError(f"{task.name} ({mode}) did not finish: {result.stopped_by}")
    read = tokens.requests(model)
    first, second = model.requests[0].messages, model.requests[1].messages
    added = [m for m in second[len(first) :] if m.role != "assistant"]
    return Count(
        read,
        player.written,
        len(model.requests),
        tokens.messages(added),
        result.answer,
        world.received,
    )


def _by_value(task: Task) -> Callable[[bool], list[Step]]:
    """``task``'s script that copies what it passes on, whatever it is given."""
    return lambda _: task.script(False)


def _saving(without: int, with_: int) -> float:
    return 100.0 * (without - with_) / without


def _change(saving: float) -> str:
    return f"{saving:.1f} % fewer" if saving >= 0 else f"{-saving:.1f} % more"


@dataclass(frozen=True, slots=True)
class Compared:
    task: Task
    mode: Mode
    without: Count
    with_: Count


def compare_all() -> list[Compared]:
    tokens = Tokens()
    compared: list[Compared] = []
    for task in TASKS:
        for mode in MODES:
            without = count_run(task, mode, False, tokens)
            with_ = count_run(task, mode, True, tokens)
            if without.answer != with_.answer or without.received != with_.received:
                raise ScriptError(
                    f"{task.name} ({mode}): the runs with and without the mechanism differ "
                    f"({without.answer!r} against {with_.answer!r})"
                )
            compared.append(Compared(task, mode, without, with_))
    return compared


def _agent_of(mode: Mode) -> str:
    return "ToolCallingAgent" if mode == "native" else "ReActAgent"


def report_tokens(compared: list[Compared]) -> None:
    tokens = Tokens()
    print(
        f"transcript: {len(LONG_TRANSCRIPT):,} characters, "
        f"{tokens.of(LONG_TRANSCRIPT):,} o200k tokens; page: {len(PAGE):,} characters, "
        f"{tokens.of(PAGE):,} tokens; relay threshold {RELAY_THRESHOLD:,} characters"
    )
    weather_json = msgspec.json.encode(WEATHER["NYC"]).decode()
    print(f"weather report: {len(WEATHER['NYC'])} fields, {tokens.of(weather_json)} tokens each")
    print()
    headers = [
        "task",
        "agent (mode)",
        "mechanism",
        "model calls",
        "read without",
        "written without",
        "total without",
        "read with",
        "written with",
        "total with",
        "saving",
        "seed's claim",
    ]
    rows: list[list[str]] = []
    for c in compared:
        mechanism = "relay" if c.task.toolset == "relay" else "variables"
        rows.append(
            [
                c.task.name,
                f"{_agent_of(c.mode)} ({c.mode})",
                mechanism,
                f"{c.without.requests} / {c.with_.requests}",
                f"{c.without.read:,}",
                f"{c.without.written:,}",
                f"{c.without.total:,}",
                f"{c.with_.read:,}",
                f"{c.with_.written:,}",
                f"{c.with_.total:,}",
                f"{_saving(c.without.total, c.with_.total):.1f} %",
                c.task.claim,
            ]
        )
    print("o200k tokens per run: read = every request summed, written = the model's replies")
    print(render_table(headers, rows, "lllrrrrrrrrl"))
    print()

    step_rows: list[list[str]] = []
    for c in compared:
        if c.task.big_output:
            step_rows.append(
                [
                    c.task.name,
                    f"{_agent_of(c.mode)} ({c.mode})",
                    f"{c.without.big_step:,}",
                    f"{c.with_.big_step:,}",
                    f"{_saving(c.without.big_step, c.with_.big_step):.2f} %",
                ]
            )
    print("the step carrying the large output: tokens of its observation / tool message")
    print(render_table(["task", "agent (mode)", "without", "with", "saving"], step_rows, "llrrr"))
    print()

    print("what the model writes to call compare_weather (its JSON arguments):")
    copied = {"a": WEATHER["NYC"], "b": WEATHER["London"]}
    named = {"a": "$weather_nyc", "b": "$weather_london"}
    copied_tokens = tokens.of(msgspec.json.encode(copied).decode())
    named_tokens = tokens.of(msgspec.json.encode(named).decode())
    print(
        f"  copied dicts {copied_tokens} tokens, variable names {named_tokens} tokens: "
        f"{_saving(copied_tokens, named_tokens):.1f} % fewer"
    )
    print()

    transcript_steps = [c for c in compared if c.task.big_output and c.task.name != "web1"]
    worst_step = min(_saving(c.without.big_step, c.with_.big_step) for c in transcript_steps)
    print(
        f"step carrying the {len(LONG_TRANSCRIPT) / 1000:.0f} KB transcript: at worst "
        f"{worst_step:.2f} % fewer tokens "
        f"(case1-4, both agents); target >= {STEP_TARGET:g} %: {verdict(worst_step >= STEP_TARGET)}"
    )
    relay_savings = [
        _saving(c.without.total, c.with_.total) for c in compared if c.task.toolset == "relay"
    ]
    print(
        f"whole runs with the relay: {min(relay_savings):.1f} to {max(relay_savings):.1f} % fewer "
        "tokens (relay seed: stops context bloat, no figure given; no target)"
    )
    for c in compared:
        if c.task.toolset != "weather":
            continue
        saving = _saving(c.without.total, c.with_.total)
        # The copied dicts leave the run entirely at best: the call that wrote them and
        # every later request that carried them. Nothing else in this flow can shrink.
        carried = copied_tokens * (1 + c.without.requests - COMPARE_REPLY)
        best = _saving(c.without.total, c.without.total - carried)
        if c.task.name == "weather":
            # No guide comes with reports this small: a model may copy them anyway.
            copies = dataclasses.replace(c.task, script=_by_value(c.task))
            copying = count_run(copies, c.mode, True, tokens)
            target = (
                f"target at most {WEATHER_MAX_MORE:g} % more: "
                f"{verdict(-saving <= WEATHER_MAX_MORE)} (a model that copies the reports "
                f"anyway: {_change(_saving(c.without.total, copying.total))}, the names "
                "beside the results)"
            )
        else:
            target = "no target (the guide in the system prompt, each step's list)"
        print(
            f"{c.task.name}, {_agent_of(c.mode)}: {_change(saving)} tokens over the run; "
            f"{target}; a mechanism costing nothing would save at most {best:.1f} %"
        )
    for c in compared:
        if c.task.toolset != "record":
            continue
        saving = _saving(c.without.total, c.with_.total)
        print(
            f"{c.task.name} ({len(msgspec.json.encode(RECORD)):,}-byte record through three "
            f"tools), {_agent_of(c.mode)}: {_change(saving)} tokens over the run; target >= "
            f"{RECORD_TARGET:g} % fewer: {verdict(saving >= RECORD_TARGET)}"
        )
    full = tokens.of(ToolVariables(instruction_style="full").instructions())
    minimal = tokens.of(ToolVariables(instruction_style="minimal").instructions())
    step = tokens.of(STEP_GUIDE)
    passed = _saving(copied_tokens, named_tokens)
    print(
        f"  the default (auto) guide is {step} tokens, shown with the step's list only from "
        f"the step after an output of {GUIDE_AT:,} bytes or more (the weather reports are "
        f"{len(msgspec.json.encode(WEATHER['NYC']))} bytes: there the model sees only each "
        f"result's name beside it); full and minimal put {full} / {minimal} tokens in every "
        "request's system prompt and list the variables every step. The plan's ~70 % "
        "compares the tokens that carry the data between tools ('full data repeated' "
        f"against 'reference only'): {passed:.1f} % fewer on the weather flow."
    )
    print()


def run(settings: Settings) -> None:
    """Count the tokens of every task with and without its mechanism; time resolution."""
    print("== Pass by reference: tokens with and without ToolVariables / ContextRelay ==")
    print("scripted runs of the relay's prompt cases, the mastra weather flow and a 5 KB record")
    print("o200k tokens (bpe-openai, offline) of every request and of every reply")
    print()
    report_tokens(compare_all())
    from benchmarks.reported_savings import reference_rows, report  # it imports this module

    report(reference_rows())
    print("== Pass by reference: resolution overhead per call ==")
    print("execute_calls of one call on an instant async tool, interleaved; median µs")
    print()
    report_overheads(asyncio.run(measure_overheads(settings)))
    print(f"== Pass by reference: ToolVariables per iteration over a {ITERATIONS}-iteration run ==")
    print("two calls a step on an instant model and tool; the time between two model calls")
    print()
    report_growth(measure_growth(settings))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.pass_by_reference")
