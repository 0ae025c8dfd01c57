"""``AgentResult.savings``: what each extension kept out of a run's requests, checked
against the run itself. Each task runs twice on a scripted model, with the extension and
without it (the model copying what it would otherwise name), and the requests the model
received are counted; the reported ``net`` must match the measured difference.

Tolerance: one token per request of the two runs. Savings counts each replaced piece
apart (an output, a reference, a definition, a guide), while a request is one text, and
o200k may merge a character at a piece's edge with its neighbour; no other gap exists
on these tasks (the extensions' guides, tools and search steps are all counted as cost).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import pickle
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

import toolchain._tokens
import toolchain.runtime
import toolchain.stores._protocol
from agents import AgentResult, Prompt, Savings, run_prompt
from agents._step_request import StepCalls
from agents.events import StepReady
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from formats import FormattedSection, TextFormat, XMLFormat
from tests.support.agent_kinds import KINDS, Kind, agent, answer
from toolchain import ExecutionContext, Extension, JSONToolChain, Tool, tool
from toolchain._tokens import count_tokens
from toolchain.discovery import ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

REPORT = "\n".join(f"line {n}: sensor {n % 7} read {n * 37 % 1000} units" for n in range(300))
REFERENCE = re.compile(r"internal://[A-Za-z0-9_-]+")


@tool
def fetch_report(station: str) -> str:
    """Fetch a station's full sensor report."""
    return REPORT


@tool
def count_lines(text: str) -> int:
    """Count the lines of a text."""
    return text.count("\n") + 1


WEATHER: dict[str, dict[str, object]] = {
    "Oslo": {"temperature": 4.5, "humidity": 81, "wind": 19.4, "conditions": "Light drizzle"},
    "Rome": {"temperature": 21.0, "humidity": 55, "wind": 6.1, "conditions": "Clear sky"},
}


@tool
def get_weather(city: str) -> dict[str, object]:
    """Current weather of a city."""
    return WEATHER[city]


@tool
def compare_weather(a: dict[str, object], b: dict[str, object]) -> str:
    """Compare two weather reports."""
    return "warmer: b" if float(str(b["temperature"])) > float(str(a["temperature"])) else "a"


Step = Callable[[str], tuple[str, dict[str, object]] | str]
"""One step of a script: the last observation seen → a call (name, args) or an answer."""


def player(kind: Kind, steps: Sequence[Step]) -> Callable[[Sequence[Message]], str | ScriptedReply]:
    """A scripted model playing ``steps`` in order, each reading what the model last saw."""
    remaining = iter(steps)

    def play(messages: Sequence[Message]) -> str | ScriptedReply:
        seen = messages[-1].text_content()
        planned = next(remaining)(seen)
        if isinstance(planned, str):
            return answer(kind, planned)
        name, args = planned
        if kind == "native":
            return ScriptedModel.call(name, args)
        return f"<action>{msgspec.json.encode({'tool': name, 'args': args}).decode()}</action>"

    return play


def measured(model: ScriptedModel) -> int:
    """The o200k tokens of every request the model received: each message's text and
    tool calls, and the tool specs sent (native), summed."""
    total = 0
    for request in model.requests:
        for message in request.messages:
            total += count_tokens(message.text_content())
            total += sum(
                count_tokens(c.name) + count_tokens(c.arguments) for c in message.tool_calls
            )
        if request.options.tools:
            specs = [
                {"name": s.name, "description": s.description, "parameters": s.parameters}
                for s in request.options.tools
            ]
            total += count_tokens(msgspec.json.encode(specs).decode())
    return total


def run(
    kind: Kind,
    tools: Sequence[Tool[Any, Any]],
    steps: Sequence[Step],
    extension: Extension | None,
) -> tuple[AgentResult[str], int, int]:
    """The task's result, its requests' tokens and how many requests it made."""
    extensions = [extension] if extension is not None else []
    chain = JSONToolChain(extensions=extensions)
    if not isinstance(extension, ToolSearch):  # discovery brings the tools itself
        for each in tools:
            chain.register_tool(each)
    model = ScriptedModel(player(kind, steps))
    result = agent(kind, model, chain, extensions=extensions).run_sync("Go")
    assert result.ok, result.stopped_by
    return result, measured(model), len(model.requests)


def check_against_measured(
    kind: Kind,
    tools: Sequence[Tool[Any, Any]],
    with_steps: Sequence[Step],
    without_steps: Sequence[Step],
    extension: Extension,
) -> Savings:
    with_, tokens_with, requests_with = run(kind, tools, with_steps, extension)
    without, tokens_without, requests_without = run(kind, tools, without_steps, None)
    assert without.savings == {}
    [(name, saved)] = with_.savings.items()
    assert name == extension.name
    difference = tokens_without - tokens_with
    assert abs(saved.net - difference) <= requests_with + requests_without, (saved, difference)
    return saved


@KINDS
def test_the_relay_saving_is_the_measured_difference(kind: Kind) -> None:
    def passed(seen: str) -> tuple[str, dict[str, object]]:
        found = REFERENCE.search(seen)
        assert found is not None, "the output was not boxed"
        return "count_lines", {"text": found.group()}

    with_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        passed,
        lambda seen: "300 lines",
    ]
    without_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        lambda seen: ("count_lines", {"text": REPORT}),
        lambda seen: "300 lines",
    ]
    tools: list[Tool[Any, Any]] = [fetch_report, count_lines]
    saved = check_against_measured(kind, tools, with_steps, without_steps, ContextRelay(2_000))
    # The report left two requests (its output) and one (its copy in the arguments).
    assert saved.kept_out > 2 * count_tokens(REPORT)
    assert 0 < saved.cost < saved.kept_out


@KINDS
def test_a_read_of_a_boxed_output_is_a_cost_with_its_whole_request(kind: Kind) -> None:
    def read(seen: str) -> tuple[str, dict[str, object]]:
        found = REFERENCE.search(seen)
        assert found is not None
        return "internal_resource_read_slice", {
            "opaque_reference": found.group(),
            "start": 0,
            "length": 40,
        }

    with_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        read,
        lambda seen: "sensor 0",
    ]
    without_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        lambda seen: "sensor 0",
    ]
    check_against_measured(kind, [fetch_report], with_steps, without_steps, ContextRelay(2_000))


@KINDS
def test_a_plain_step_is_counted_as_its_request_would_be(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A step nothing has a say in (the relay alone: no step hook, no prompt section)
    # sends the run's plain call, and its ledger is told so without a StepRequest being
    # made; a StepReady observer makes the engine build one. The read's step is an
    # extra request, counted whole from what it sent: the same either way.
    built: list[int] = []
    made = StepCalls.call

    def call(self: StepCalls, ctx: ExecutionContext, index: int, messages: list[Message]) -> Any:
        built.append(index)
        return made(self, ctx, index, messages)

    monkeypatch.setattr(StepCalls, "call", call)

    def read(seen: str) -> tuple[str, dict[str, object]]:
        found = REFERENCE.search(seen)
        assert found is not None
        args: dict[str, object] = {"opaque_reference": found.group(), "start": 0, "length": 40}
        return "internal_resource_read_slice", args

    figures: list[Mapping[str, Savings]] = []
    for observed in (False, True):
        # The same reference id in both runs (seeded), for the same counts.
        monkeypatch.setattr(toolchain.stores._protocol, "secrets", _SeededIds(0))
        monkeypatch.setattr(toolchain.stores._protocol, "_drawn", collections.deque[str]())
        relay = ContextRelay(2_000)
        chain = JSONToolChain(extensions=[relay]).register_tool(fetch_report)
        steps: list[Step] = [
            lambda seen: ("fetch_report", {"station": "n"}),
            read,
            lambda seen: "0",
        ]
        runner = agent(kind, ScriptedModel(player(kind, steps)), chain, extensions=[relay])
        ctx = ExecutionContext()
        if observed:
            ctx.events.subscribe(StepReady, lambda event: None)
        result = runner.run_sync("Go", ctx=ctx)
        assert result.ok and len(result.steps) == 3, result.stopped_by
        assert built == ([1, 2, 3] if observed else [])
        figures.append(dict(result.savings))
    assert figures[0] == figures[1]
    assert figures[0]["context_relay"].cost > count_tokens(REPORT[:40])


def test_a_read_beside_another_call_is_carried_as_a_cost() -> None:
    # A step that calls a reader and a tool of the task together is no extra request
    # (the task needed it): the read, its arguments and what it showed are carried as
    # a cost in each later request. The ledger looks at a step's calls only where one
    # is an extension's own tool; this pins that it does so for a mixed step.
    def script(read: bool) -> Callable[[Sequence[Message]], ScriptedReply | str]:
        def play(messages: Sequence[Message]) -> ScriptedReply | str:
            seen = messages[-1].text_content()
            if len(messages) == 2:
                return ScriptedModel.call("fetch_report", {"station": "north"}, id="a")
            found = REFERENCE.search(seen)
            if found is not None and "count" not in seen:
                calls = [ToolCallRequest("b", "count_lines", '{"text":"x"}')]
                if read:
                    args = {"opaque_reference": found.group(), "start": 0, "length": 40}
                    encoded = msgspec.json.encode(args).decode()
                    calls.append(ToolCallRequest("c", "internal_resource_read_slice", encoded))
                return ScriptedReply("", tuple(calls))
            return "done"

        return play

    costs: list[int] = []
    for read in (False, True):
        relay = ContextRelay(2_000)
        chain = JSONToolChain(extensions=[relay])
        chain.register_tool(fetch_report).register_tool(count_lines)
        model = ScriptedModel(script(read))
        result = agent("native", model, chain, extensions=[relay]).run_sync("Go")
        assert result.ok and len(result.steps) == 3, result.stopped_by
        costs.append(result.savings["context_relay"].cost)
    without_read, with_read = costs
    # The read's name, arguments and slice, in the one request after its step.
    assert with_read - without_read >= count_tokens("internal_resource_read_slice") + 10


@KINDS
def test_a_guide_is_counted_as_each_run_shows_it(kind: Kind) -> None:
    # What a request costs is kept for the agent's next run only while the guides are
    # the same: a relay given worked examples between two runs costs the longer guide,
    # and a format of the user's own is asked to write it each time.
    def guide(relay: ContextRelay, fmt: TextFormat) -> int:
        text = relay.instructions().strip()
        return count_tokens(fmt.format_sections([FormattedSection(relay.name, text, escape=False)]))

    class Framed(XMLFormat):
        def __init__(self, frame: str = "") -> None:
            super().__init__()
            self.frame = frame

        def format_sections(self, sections: Sequence[FormattedSection]) -> str:
            return f"{self.frame}\n{super().format_sections(sections)}\n{self.frame}"

    relay = ContextRelay(2_000)
    chain = JSONToolChain(extensions=[relay])
    runner = agent(kind, ScriptedModel(lambda messages: answer(kind)), chain, extensions=[relay])
    first = runner.run_sync("Go").savings["context_relay"].cost  # one request
    relay.few_shot = True
    second = runner.run_sync("Go").savings["context_relay"].cost
    assert second - first == guide(relay, XMLFormat()) - guide(ContextRelay(2_000), XMLFormat())
    assert second - first > 0
    frame = Framed("(a frame of several words)")
    framed = agent(
        kind,
        ScriptedModel(lambda messages: answer(kind)),
        chain,
        extensions=[relay],
        text_format=frame,
    )
    third = framed.run_sync("Go").savings["context_relay"].cost
    assert third - second == guide(relay, frame) - guide(relay, XMLFormat()) > 0
    # The agent's own format changed between its runs: its guide is written again.
    before = guide(relay, frame)
    frame.frame = "(a longer frame, of a good many more words than before)"
    fourth = framed.run_sync("Go").savings["context_relay"].cost
    assert fourth - third == guide(relay, frame) - before > 0


@KINDS
def test_the_variables_saving_is_the_measured_difference(kind: Kind) -> None:
    with_steps: list[Step] = [
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("get_weather", {"city": "Rome"}),
        lambda seen: ("compare_weather", {"a": "$weather_oslo", "b": "$weather_rome"}),
        lambda seen: "Rome is warmer.",
    ]
    without_steps: list[Step] = [
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("get_weather", {"city": "Rome"}),
        lambda seen: ("compare_weather", {"a": WEATHER["Oslo"], "b": WEATHER["Rome"]}),
        lambda seen: "Rome is warmer.",
    ]
    tools: list[Tool[Any, Any]] = [get_weather, compare_weather]
    copies = count_tokens(json.dumps([WEATHER["Oslo"], WEATHER["Rome"]], separators=(",", ":")))
    # The default style shows no guide for reports this small: only the names beside the
    # outputs cost, and the copies kept out outweigh them.
    variables = ToolVariables(naming=_weather_name)
    saved = check_against_measured(kind, tools, with_steps, without_steps, variables)
    assert 0 < saved.kept_out <= copies  # the copies, in the one request after the call
    assert 0 < saved.cost < saved.kept_out
    # The full guide, in every request, outweighs them: the ledger says so too.
    full = ToolVariables(naming=_weather_name, instruction_style="full")
    saved = check_against_measured(kind, tools, with_steps, without_steps, full)
    assert 0 < saved.kept_out <= copies
    assert saved.cost > saved.kept_out


@KINDS
def test_the_names_beside_outputs_are_counted_when_the_savings_are_read(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[str] = []
    real = toolchain.runtime.count_tokens

    def counting(text: str, *, minus: str | None = None) -> int:
        counted.append(text)
        return real(text, minus=minus)

    monkeypatch.setattr(toolchain.runtime, "count_tokens", counting)
    steps: list[Step] = [
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("get_weather", {"city": "Rome"}),
        lambda seen: "Rome is warmer.",
    ]
    result, _, _ = run(kind, [get_weather], steps, ToolVariables(naming=_weather_name))
    assert counted == []  # a run whose savings nobody reads counts nothing
    saved = result.savings["tool_variables"]
    assert saved.cost > 0 and saved.kept_out == 0  # two names, nothing passed by reference
    assert len(counted) == 2  # one count a name
    assert result.savings == {"tool_variables": saved}  # counted once, then kept
    assert repr(result.savings) == repr({"tool_variables": saved})
    assert len(counted) == 2


@KINDS
def test_the_relay_and_the_variables_together_save_the_measured_difference(kind: Kind) -> None:
    # The report is boxed and named (the name beside its reference), the weather only
    # named; the report goes on by its name. Each extension counts its own part.
    with_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("count_lines", {"text": "$fetch_report_1"}),
        lambda seen: "300 lines",
    ]
    without_steps: list[Step] = [
        lambda seen: ("fetch_report", {"station": "north"}),
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("count_lines", {"text": REPORT}),
        lambda seen: "300 lines",
    ]
    tools: list[Tool[Any, Any]] = [fetch_report, get_weather, count_lines]
    extensions: list[Extension] = [ContextRelay(2_000), ToolVariables()]
    chain = JSONToolChain(extensions=extensions)
    for each in tools:
        chain.register_tool(each)
    model = ScriptedModel(player(kind, with_steps))
    with_ = agent(kind, model, chain, extensions=extensions).run_sync("Go")
    assert with_.ok, with_.stopped_by
    shown = "\n".join(message.text_content() for message in with_.messages)
    assert "$fetch_report_1 = internal://" in shown and "$get_weather_1 = {" in shown
    _, tokens_without, requests_without = run(kind, tools, without_steps, None)
    difference = tokens_without - measured(model)
    relay, variables = with_.savings["context_relay"], with_.savings["tool_variables"]
    assert relay.kept_out > 2 * count_tokens(REPORT)
    assert variables.cost > 0  # the names beside both outputs, in every later request
    tolerance = len(model.requests) + requests_without
    assert abs(relay.net + variables.net - difference) <= tolerance, (relay, variables, difference)


def _weather_name(tool: str, args: Mapping[str, Any], value: object) -> str:
    return f"weather_{args['city']}".lower() if "city" in args else tool


def _topic_tool(topic: str) -> Tool[Any, Any]:
    def lookup(query: str) -> str:
        return f"{topic}: nothing new about {query}"

    description = f"Look up the latest {topic} figures for a query, with sources and dates."
    return tool(name=f"lookup_{topic}", description=description)(lookup)


TOPICS = [
    "weather", "traffic", "stocks", "flights", "hotels", "recipes", "movies", "books",
    "football", "tennis", "elections", "vaccines", "earthquakes", "tides", "pollen",
    "concerts", "museums", "trains", "ferries", "housing",
]  # fmt: skip


@KINDS
def test_the_discovery_saving_is_the_measured_difference(kind: Kind) -> None:
    tools = [_topic_tool(topic) for topic in TOPICS]
    with_steps: list[Step] = [
        lambda seen: ("tool_search", {"query": "latest tides figures"}),
        lambda seen: ("lookup_tides", {"query": "Bergen"}),
        lambda seen: "No news.",
    ]
    without_steps: list[Step] = [
        lambda seen: ("lookup_tides", {"query": "Bergen"}),
        lambda seen: "No news.",
    ]
    saved = check_against_measured(
        kind, tools, with_steps, without_steps, ToolSearch(tools, defer=True)
    )
    assert saved.kept_out > saved.cost > 0  # the search step is a cost, whole


def test_a_run_without_such_extensions_counts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[str] = []

    def counting(text: str) -> int:
        counted.append(text)
        return 0

    monkeypatch.setattr(toolchain._tokens, "count_tokens", counting)

    class Audit(Extension):
        name = "audit"

        def prompt_section(self, ctx: object) -> str:
            return "Every call is audited."

    for extensions in ([], [Audit()]):
        model = ScriptedModel([ScriptedModel.call("get_weather", city="Oslo"), "4.5"])
        chain = JSONToolChain().register_tool(get_weather)
        result = agent("native", model, chain, extensions=extensions).run_sync("Go")
        assert result.ok and result.savings == {}
    assert counted == []


class Station(BaseModel):
    station: str


def _with_summariser(finished: list[AgentResult[Any]]) -> Callable[[Prompt], None]:
    """A prompt whose sub-agent boxes a station's report (it has a relay)."""
    child_model = ScriptedModel(
        [ScriptedModel.call("fetch_report", station="north"), "300 lines of readings"]
    )

    def build_child(args: Station, prompt: Prompt) -> None:
        prompt.def_tool(fetch_report)
        prompt.user(f"Summarise the report of {args.station}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent(
            "summariser",
            "Summarise a station's report.",
            Station,
            build_child,
            model=child_model,
            plugins=[ContextRelay(2_000)],
            on_finish=finished.append,
        )
        prompt.user("What does the north station report?")

    return build


def test_a_sub_agents_savings_add_up_into_its_parent() -> None:
    finished: list[AgentResult[Any]] = []
    parent = ScriptedModel([ScriptedModel.call("summariser", station="north"), "Readings."])
    result = run_prompt(_with_summariser(finished), model=parent).run_sync()
    [child] = finished
    assert child.savings["context_relay"].kept_out > 0
    assert result.savings == child.savings  # the parent has no extension of its own

    finished.clear()
    parent = ScriptedModel([ScriptedModel.call("summariser", station="north"), "Readings."])
    build = _with_summariser(finished)
    result = run_prompt(build, model=parent, plugins=[ContextRelay(2_000)]).run_sync()
    [child] = finished
    total, its = result.savings["context_relay"], child.savings["context_relay"]
    assert total.kept_out == its.kept_out  # the parent boxed nothing itself
    assert total.cost > its.cost  # the parent's own guide and readers, added to the child's


def test_savings_pickle_and_travel_as_json() -> None:
    model = ScriptedModel([ScriptedModel.call("fetch_report", station="north"), "done"])
    chain = JSONToolChain().register_tool(fetch_report)
    result = agent("native", model, chain, extensions=[ContextRelay(2_000)]).run_sync("Go")
    saved = result.savings["context_relay"]
    assert saved.kept_out > 0
    assert pickle.loads(pickle.dumps(result)).savings == result.savings
    text = json.dumps({name: dataclasses.asdict(s) for name, s in result.savings.items()})
    back = {name: Savings(**fields) for name, fields in json.loads(text).items()}
    assert back == result.savings


# -- savings beside usage: two counts, said apart (issue 26, item 15) ----------------------

LOG = "\n".join(f"{n:05d} GET /api/items/{n} {500 if n % 250 == 0 else 200}" for n in range(2000))


@tool
def fetch_log(day: str) -> str:
    """The server's access log of one day."""
    return LOG


@tool
def count_errors(log: str) -> int:
    """Count the failed requests (status 500) in an access log."""
    return sum(line.endswith(" 500") for line in log.splitlines())


def _log_player(messages: Sequence[Message]) -> str | ScriptedReply:
    """The README's model ("What a run saved"): fetch the log, pass it on as shown, answer."""
    seen = messages[-1].text_content()
    if messages[-1].role == "user":
        return ScriptedModel.call("fetch_log", day="monday")
    if seen.startswith("internal://") or "GET /api/items" in seen:
        return ScriptedModel.call("count_errors", log=seen)
    return f"{seen} failed requests on Monday."


def _log_run(extensions: list[Extension]) -> tuple[AgentResult[str], ScriptedModel]:
    chain = JSONToolChain().register_tool(fetch_log).register_tool(count_errors)
    model = ScriptedModel(_log_player)
    result = agent("native", model, chain, extensions=extensions).run_sync(
        "How many requests failed on Monday?"
    )
    assert result.answer == "8 failed requests on Monday."
    return result, model


class _SeededIds:
    """``secrets`` for `new_id`, from a seeded generator: reference ids as random-looking as
    the real ones, the same on every run (their o200k counts differ by id: with ids left
    random the relayed run's count moved by more than the figures' tolerance, 1 run in ~20)."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def token_bytes(self, nbytes: int) -> bytes:
        return self._random.randbytes(nbytes)


def test_the_readme_figures_of_savings_beside_usage_are_what_the_runs_give(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README and ``Savings`` say how ``net`` (o200k) and ``usage.input_tokens`` (the
    model's count) differ on the README's example; these are those figures. Reference ids
    are seeded here, so the o200k counts are the same on every run; ScriptedModel's are."""
    monkeypatch.setattr(toolchain.stores._protocol, "secrets", _SeededIds(0))
    # None drawn yet: the first id comes from the seeded generator.
    monkeypatch.setattr(toolchain.stores._protocol, "_drawn", collections.deque[str]())
    relayed, with_relay = _log_run([ContextRelay()])
    plain, without = _log_run([])
    o200k_with, o200k_without = measured(with_relay), measured(without)
    net = relayed.savings["context_relay"].net
    assert (relayed.usage.input_tokens, plain.usage.input_tokens) == (986, 45_000)
    assert plain.usage.input_tokens - relayed.usage.input_tokens == 44_014
    assert abs(o200k_with - 3_890) <= 10 and abs(o200k_without - 69_590) <= 10
    assert abs(net - 65_700) <= 20
    assert abs(net - (o200k_without - o200k_with)) <= 6  # a token per request, as above
    # What ScriptedModel leaves out: the tool definitions of the three requests (the two
    # tools and the relay's five readers), counted one by one as the ledger counts them.
    definitions = sum(
        count_tokens(
            json.dumps(
                {"name": s.name, "description": s.description, "parameters": s.parameters},
                separators=(",", ":"),
            )
        )
        for request in with_relay.requests
        for s in request.options.tools
    )
    assert definitions == 2_979
