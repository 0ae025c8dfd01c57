"""Tool-output variables across a conversation's runs, and their bounds, on both agents.

Seed 000's conversation: turn 1 fetches NYC's weather, turn 2 (a new run, continued with
``history=`` and ``extension_state=``) fetches London's and compares the two by name.
Then the bounds a conversation keeps (count, bytes, the per-step list), the programs'
API, and a ``$var`` fan-out in an answer and in arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import pytest

from agents import AgentResult, ReActAgent, ScriptedModel, ToolCallingAgent
from agents.models import ScriptedReply, messages_from_json, messages_to_json
from tests.support.agent_kinds import answer, call
from toolchain import ExecutionContext, Extension, JSONToolChain, ToolChain, tool
from toolchain.relay import ContextRelay
from toolchain.stores import MemoryStore, SQLiteStore, StoredEntry, StoreError
from toolchain.variables import ToolVariables

Mode = Literal["text", "native"]
MODES = pytest.mark.parametrize("mode", ["text", "native"])

WEATHER: dict[str, dict[str, object]] = {
    "nyc": {"temperature": 28.4, "humidity": 40, "location": "New York"},
    "london": {"temperature": 17.2, "humidity": 85, "location": "London"},
}
compared: list[tuple[object, object]] = []


@tool
def get_weather(location: str) -> dict[str, object]:
    """Current weather for a location (NYC or London)."""
    return WEATHER[location.strip().lower()]


@tool
def compare_weather(a: dict[str, object], b: dict[str, object]) -> str:
    """Compare two weather reports from get_weather."""
    compared.append((a, b))
    gap = float(str(a["temperature"])) - float(str(b["temperature"]))
    return f"{a['location']} is {gap:.1f} °C warmer than {b['location']}"


@tool
def echo(text: str) -> str:
    """Echo a text."""
    return text


@tool
def big() -> str:
    """One megabyte of text."""
    return "x" * 1_000_000


def name_output(tool: str, args: Mapping[str, object], output: object) -> str | None:
    return f"weather_{args['location']}" if tool == "get_weather" else None


def make_agent(
    mode: Mode,
    model: ScriptedModel,
    extensions: Sequence[Extension],
    chain: ToolChain | None = None,
) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = chain or JSONToolChain().register_tool(get_weather).register_tool(compare_weather)
    if mode == "native":
        return ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
    return ReActAgent(model, tool_chain=chain, extensions=extensions)


def tool_texts(result: AgentResult[Any]) -> list[str]:
    return [
        observation.text
        for step in result.steps
        for chain in step.tool_results
        for observation in chain.observations
    ]


def saved_of(result: AgentResult[Any]) -> dict[str, Any]:
    """What the variables left for the next run (plain JSON data)."""
    return cast("dict[str, Any]", result.extension_state["tool_variables"])


def errors(result: AgentResult[Any]) -> list[str]:
    return [
        error.message
        for step in result.steps
        for chain in step.tool_results
        for error in chain.raw.errors
        if error is not None
    ]


@MODES
def test_what_a_run_saves_is_plain_json_of_every_field(mode: Mode) -> None:
    """The saved state, field by field and in order (the next run checks each): the
    scope, each variable's name, tool, entry, bytes, kind, preview and sharing, the
    counts that number the next names, and why dropped ones are gone."""
    model = ScriptedModel(
        [
            call(mode, "get_weather", location="NYC"),
            call(mode, "get_weather", location="London"),
            answer(mode, "Done."),
        ]
    )
    agent = make_agent(mode, model, [ToolVariables(max_variables=1)])
    saved = saved_of(agent.run_sync("NYC, then London."))
    assert json.loads(json.dumps(saved)) == saved
    assert list(saved) == ["scope", "variables", "counts", "dropped"]
    (london,) = saved["variables"]
    assert london == {
        "name": "get_weather_2",
        "tool": "get_weather",
        "entry": london["entry"],
        "bytes": len(json.dumps(WEATHER["london"], separators=(",", ":"))),
        "kind": "object: temperature, humidity, location",
        "preview": '{"temperature":17.2,"humidity":85,"location":"London"}',
        "shared": False,
    }
    assert list(london) == ["name", "tool", "entry", "bytes", "kind", "preview", "shared"]
    assert isinstance(london["entry"], str) and len(london["entry"]) == 22
    assert saved["counts"] == {"get_weather": 2}
    assert saved["dropped"] == {
        "get_weather_1": "a conversation keeps its 1 most recent variables; "
        "call get_weather again for a fresh value"
    }
    assert isinstance(saved["scope"], str) and saved["scope"]


# -- seed 000's conversation ------------------------------------------------------------------


@MODES
@pytest.mark.parametrize("relay", [False, True], ids=["own store", "relay's store"])
def test_turn_two_compares_the_variables_turn_one_saved(mode: Mode, relay: bool) -> None:
    compared.clear()
    model = ScriptedModel(
        [
            call(mode, "get_weather", location="NYC"),
            answer(mode, "It's $weather_nyc.temperature °C in NYC."),
            call(mode, "get_weather", location="London"),
            call(mode, "compare_weather", a="$weather_nyc", b="$weather_london"),
            answer(mode, "NYC is warmer: $compare_weather_1"),
        ]
    )
    store = MemoryStore()
    extensions: list[Extension] = [ToolVariables(naming=name_output)]
    if relay:
        extensions.append(ContextRelay(threshold=10_000, store=store))
    agent = make_agent(mode, model, extensions)
    first = agent.run_sync("What's the weather in NYC?")
    assert first.ok and first.answer == "It's 28.4 °C in NYC.", first.error
    # What a program keeps between turns: plain JSON, as users store it.
    state = json.loads(json.dumps(first.extension_state))
    history = first.messages
    second = agent.run_sync(
        "What about London? Then compare them.", history=history, extension_state=state
    )
    assert second.ok, second.error
    assert errors(second) == []
    assert compared == [(WEATHER["nyc"], WEATHER["london"])]  # the tool got both dicts
    assert second.answer == "NYC is warmer: New York is 11.2 °C warmer than London"
    # The second run's first step already lists what the first saved, with the guide
    # (the model has not seen them named in this run).
    listed = model.requests[2].messages[-1].text_content()
    assert 'Pass a result on by its $name, not a copy: "$name"' in listed
    assert "- $weather_nyc (get_weather, object: temperature, humidity, location): {" in listed
    if relay:  # one store for both: the variable's value is in the relay's store
        (saved,) = [v for v in state["tool_variables"]["variables"] if v["name"] == "weather_nyc"]
        entry = agent_store_get(store, state["tool_variables"]["scope"], saved["entry"])
        assert json.loads(entry) == WEATHER["nyc"]


@MODES
def test_a_boxed_output_is_one_entry_and_both_names_reach_it_in_the_next_turn(mode: Mode) -> None:
    store = MemoryStore()
    extensions: list[Extension] = [ContextRelay(threshold=1_000, store=store), ToolVariables()]
    chain = JSONToolChain().register_tool(big).register_tool(echo)
    first_model = ScriptedModel([call(mode, "big"), answer(mode, "stored")])
    first = make_agent(mode, first_model, extensions, chain).run_sync("Make it.")
    (shown,) = tool_texts(first)
    assert shown.startswith("$big_1 = internal://")
    reference = shown.removeprefix("$big_1 = ")

    model = ScriptedModel(
        [call(mode, "echo", text="$big_1"), call(mode, "echo", text=reference), answer(mode, "ok")]
    )
    second = make_agent(mode, model, extensions, chain).run_sync(
        "Echo it both ways.", history=first.messages, extension_state=first.extension_state
    )
    assert second.ok and errors(second) == [], second.error
    outputs = [
        r.output
        for step in second.steps
        for chain_result in step.tool_results
        for r in chain_result.raw.results
        if r is not None
    ]
    assert outputs == ["x" * 1_000_000, "x" * 1_000_000]
    # Three outputs, each boxed and a variable: three entries, not six.
    scope: str = saved_of(first)["scope"]
    assert run_sync_value(store.clear(scope)) == 3


def agent_store_get(store: MemoryStore, scope: str, entry: str) -> bytes:
    from toolchain.runtime import run_sync

    found = run_sync(store.get(scope, entry))
    assert found is not None
    return found.data


@MODES
def test_a_conversation_continues_in_another_process_with_a_shared_store(
    mode: Mode, tmp_path: Path
) -> None:
    compared.clear()
    path = tmp_path / "variables.db"
    first_model = ScriptedModel([call(mode, "get_weather", location="NYC"), answer(mode, "ok")])
    variables = ToolVariables(naming=name_output, store=SQLiteStore(path))
    first = make_agent(mode, first_model, [variables]).run_sync("NYC?")
    saved = messages_to_json(first.messages)
    state = json.dumps(first.extension_state)

    # A new process: new objects, the same database file.
    model = ScriptedModel(
        [
            call(mode, "get_weather", location="London"),
            call(mode, "compare_weather", a="$weather_nyc", b="$weather_london"),
            answer(mode, "done"),
        ]
    )
    again = ToolVariables(naming=name_output, store=SQLiteStore(path))
    history = messages_from_json(saved)
    second = make_agent(mode, model, [again]).run_sync(
        "London, then compare.", history=history, extension_state=json.loads(state)
    )
    assert second.ok and errors(second) == [], second.error
    assert compared == [(WEATHER["nyc"], WEATHER["london"])]


# -- bounds -----------------------------------------------------------------------------------


@MODES
def test_the_oldest_variables_go_first_and_a_call_naming_one_is_told_why(mode: Mode) -> None:
    store = MemoryStore()
    variables = ToolVariables(max_variables=3, store=store)
    chain = JSONToolChain().register_tool(echo)
    steps: list[str | ScriptedReply] = [call(mode, "echo", text=f"t{n}") for n in range(5)]
    steps += [call(mode, "echo", text="$echo_1"), answer(mode, "$echo_5")]
    model = ScriptedModel(steps)
    first = make_agent(mode, model, [variables], chain).run_sync("Echo five times.")
    assert first.ok and first.answer == "t4"
    assert errors(first) == [
        "invalid arguments for echo: argument text: variable $echo_1 is no longer available: "
        "a conversation keeps its 3 most recent variables; call echo again for a fresh value"
    ]
    kept = [v.name for v in variables.list_variables(ExecutionContext())]
    assert kept == []  # a fresh context has none: they belong to the run
    saved = saved_of(first)
    assert [v["name"] for v in saved["variables"]] == ["echo_3", "echo_4", "echo_5"]
    # Dropped entries left the store too: three variables, three entries.
    scope: str = saved["scope"]
    assert run_sync_value(store.clear(scope)) == 3

    # The next run numbers on and still knows why $echo_1 is gone.
    model = ScriptedModel([call(mode, "echo", text="$echo_2"), answer(mode, "ok")])
    second = make_agent(mode, model, [variables], chain).run_sync(
        "Again.", history=first.messages, extension_state=first.extension_state
    )
    assert "variable $echo_2 is no longer available" in errors(second)[0]


def run_sync_value(work: Any) -> Any:
    from toolchain.runtime import run_sync

    return run_sync(work)


def test_a_long_lived_store_keeps_the_runs_of_one_time_to_live_not_every_run() -> None:
    # One agent serving run after run: each run's outputs are kept for the conversation's
    # time to live (a later turn may continue it), then go without anyone calling
    # cleanup(). Before, the store kept every run's entries: 1,000 runs, 1,000 scopes.
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    variables = ToolVariables(store=store, ttl=10.0)  # seconds: ten runs' worth here
    chain = JSONToolChain().register_tool(echo)
    counts: list[int] = []
    for n in range(1, 1001):
        model = ScriptedModel([call("native", "echo", text=f"t{n}"), answer("native", "ok")])
        result = make_agent("native", model, [variables], chain).run_sync("Echo.")
        assert result.ok
        now[0] += 1.0
        if n % 250 == 0:
            counts.append(int(repr(store).removeprefix("MemoryStore(scopes=").rstrip(")")))
    # Bounded, not growing with the runs: the same ceiling after 250 runs as after 1,000.
    assert max(counts) < 300 and counts[-1] <= counts[0] + 50
    # The newest run's output is still there for a later turn to continue with.
    saved = saved_of(result)
    last = ExecutionContext()
    variables.load_state(last, saved)
    assert run_sync_value(variables.get_variable(last, "echo_1")) == "t1000"


def test_a_conversation_keeps_at_most_max_bytes_of_variables() -> None:
    variables = ToolVariables(max_bytes=2_500_000)
    chain = JSONToolChain(extensions=[variables]).register_tool(big).register_tool(echo)
    ctx = ExecutionContext()
    from formats import XMLFormat

    for _ in range(3):
        chain.execute_sync(ctx, '{"tool": "big", "args": {}}', XMLFormat())
    assert [v.name for v in variables.list_variables(ctx)] == ["big_2", "big_3"]
    result = chain.execute_sync(ctx, '{"tool": "echo", "args": {"text": "$big_1"}}', XMLFormat())
    message = result.raw.errors[0]
    assert message is not None
    assert "variable $big_1 is no longer available: a conversation's variables may hold " in (
        message.message
    )


def test_the_per_step_list_shows_the_most_recent_few_and_counts_the_rest() -> None:
    from formats import XMLFormat

    variables = ToolVariables(instruction_style="full")  # the list on every step
    chain = JSONToolChain(extensions=[variables]).register_tool(echo)
    ctx = ExecutionContext()
    sizes: list[int] = []
    for batch in range(32):  # 2,048 outputs, 64 calls an action
        calls = [{"tool": "echo", "args": {"text": f"output {batch}.{n}"}} for n in range(64)]
        chain.execute_sync(ctx, json.dumps(calls), XMLFormat())
        sizes.append(len(variables.prompt_section(ctx)))
    listing = variables.prompt_section(ctx)
    lines = listing.splitlines()
    assert lines[0] == "Variables:"
    assert lines[1] == "(502 older variables not listed; still usable)"  # 512 kept, 10 shown
    assert len(lines) == 12
    assert lines[-1] == "- $echo_2048 (echo, str): output 31.63"
    assert max(sizes) < 1_000 and sizes[-1] <= sizes[0] + 100  # it does not grow


# -- the programs' API -------------------------------------------------------------------------


@MODES
def test_a_program_lists_reads_sets_and_resolves_variables(mode: Mode) -> None:
    variables = ToolVariables(naming=name_output)
    ctx = ExecutionContext()
    model = ScriptedModel(
        [
            call(mode, "get_weather", location="NYC"),
            call(mode, "compare_weather", a="$weather_nyc", b="$home"),
            answer(mode, "done"),
        ]
    )
    agent = make_agent(mode, model, [variables])

    async def prepare() -> None:
        assert await variables.set_variable(ctx, "Home", WEATHER["london"]) == "home"

    run_sync_value(prepare())
    compared.clear()
    result = agent.run_sync("Compare NYC with home.", ctx=ctx)
    assert result.ok and compared == [(WEATHER["nyc"], WEATHER["london"])], result.error
    infos = variables.list_variables(ctx)
    assert [(v.name, v.tool) for v in infos] == [
        ("home", "program"),
        ("weather_nyc", "get_weather"),
        ("compare_weather_1", "compare_weather"),
    ]
    assert infos[1].kind == "object: temperature, humidity, location"
    assert infos[1].preview.startswith('{"temperature":28.4')

    async def read() -> None:
        assert await variables.get_variable(ctx, "$weather_nyc") == WEATHER["nyc"]
        assert await variables.resolve(ctx, {"t": "$weather_nyc.temperature"}) == {"t": 28.4}
        text = await variables.resolve_text(ctx, "$home.location, $$5")
        assert text == "London, $5"

    run_sync_value(read())


# -- $var fan-out (the hostile list) -------------------------------------------------------------


@MODES
def test_a_fan_out_in_the_answer_is_capped_and_says_so(mode: Mode) -> None:
    chain = JSONToolChain().register_tool(big)
    model = ScriptedModel([call(mode, "big"), answer(mode, "$big_1 " * 5000)])
    result = make_agent(mode, model, [ToolVariables()], chain).run_sync("Repeat it.")
    assert result.ok and isinstance(result.answer, str)
    assert len(result.answer) < 16_000_000 + 5000 * 7 + 200  # not ~5 GB
    assert result.answer.count("x" * 1_000_000) == 16
    assert result.answer.endswith(
        "[Some $references were left as written: filling them in would have added more "
        "than 16,000,000 characters.]"
    )


@MODES
def test_a_fan_out_in_arguments_is_that_calls_error_the_model_can_act_on(mode: Mode) -> None:
    chain = JSONToolChain().register_tool(big).register_tool(echo)
    model = ScriptedModel(
        [
            call(mode, "big"),
            call(mode, "echo", text="$big_1 " * 5000),
            call(mode, "echo", text="$big_1"),
            answer(mode, "done"),
        ]
    )
    result = make_agent(mode, model, [ToolVariables()], chain).run_sync("Echo it many times.")
    assert result.ok, result.error
    (error,) = errors(result)
    assert error == (
        "invalid arguments for echo: argument text: filling in the references of these "
        "arguments would pass 16,000,000 "
        "characters ($big_1 is 1,000,000 characters here): pass a variable as a whole "
        'argument value ("$big_1") or a part of it, rather than repeating it inside text'
    )
    assert error in model.requests[2].messages[-1].text_content()  # the model reads it
    assert result.steps[2].tool_results[0].raw.ok  # the whole reference still works


# -- a failing store and edited state ---------------------------------------------------------


class DownStore(MemoryStore):
    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        raise StoreError("the store is down")


@MODES
def test_a_store_that_fails_loses_no_result_and_the_next_turn_says_why(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    compared.clear()
    variables = ToolVariables(naming=name_output, store=DownStore())
    model = ScriptedModel(
        [call(mode, "get_weather", location="NYC"), answer(mode, "$weather_nyc.temperature")]
    )
    with caplog.at_level("WARNING", logger="toolchain"):
        first = make_agent(mode, model, [variables]).run_sync("NYC?")
    assert first.ok and first.answer == "28.4"  # kept for this run
    assert tool_texts(first)[0].startswith("$weather_nyc = {")
    assert "the value of $weather_nyc could not be stored" in caplog.text
    assert "the store is down" not in tool_texts(first)[0]
    model = ScriptedModel(
        [call(mode, "compare_weather", a="$weather_nyc", b="$weather_nyc"), answer(mode, "ok")]
    )
    second = make_agent(mode, model, [variables]).run_sync(
        "Compare.", history=first.messages, extension_state=first.extension_state
    )
    assert errors(second) == [
        "invalid arguments for compare_weather: argument a: variable $weather_nyc is no "
        "longer available: its value could not be stored for later turns"
    ]


@MODES
def test_edited_state_is_logged_and_skipped_and_unknown_entries_are_gone(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([answer(mode, "fine")])
    with caplog.at_level("ERROR"):
        result = make_agent(mode, model, [ToolVariables()]).run_sync(
            "Hi", extension_state={"tool_variables": {"scope": "", "variables": "x"}}
        )
    assert result.ok and result.answer == "fine"
    assert "extension tool_variables failed to load its state" in caplog.text
    forged = {
        "scope": "another-conversation",
        "variables": [{"name": "weather_nyc", "tool": "get_weather", "entry": "../x", "bytes": 9}],
    }
    model = ScriptedModel(
        [call(mode, "compare_weather", a="$weather_nyc", b="$weather_nyc"), answer(mode, "ok")]
    )
    result = make_agent(mode, model, [ToolVariables()]).run_sync(
        "Compare.", extension_state={"tool_variables": forged}
    )
    assert result.ok
    assert errors(result) == [
        "invalid arguments for compare_weather: argument a: variable $weather_nyc is no "
        "longer available: its stored value has expired; call get_weather again for a fresh one"
    ]
