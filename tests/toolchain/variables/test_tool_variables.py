"""ToolVariables on a bare chain: naming, resolution, errors the model can act on, events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from formats import XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCall,
    ToolCallStarted,
    ToolChainResult,
    ToolResult,
    tool,
)
from toolchain.stores import MemoryStore, StoredEntry
from toolchain.variables import ToolVariables


class Forecast(BaseModel):
    city: str
    temps: list[int]


@tool
def forecast(city: str) -> dict[str, object]:
    """A three-day forecast."""
    return {"city": city, "temps": [21, 23, 19], "note": "$HOME is not a reference here"}


@tool
def summarise(data: Forecast, title: str) -> str:
    """Summarise a forecast."""
    return f"{title}: {data.city} peaks at {max(data.temps)}"


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


@tool
def big(size: int) -> str:
    """A large output."""
    return "x" * size


def chain(extension: ToolVariables | None = None) -> JSONToolChain:
    made = JSONToolChain(extensions=[extension or ToolVariables()])
    return made.register_tool(forecast).register_tool(summarise).register_tool(echo)


def run(made: JSONToolChain, ctx: ExecutionContext, call: str) -> ToolChainResult:
    return made.execute_sync(ctx, call, XMLFormat())


def test_outputs_are_named_and_shown_with_their_name() -> None:
    made, ctx = chain(), ExecutionContext()
    first = run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    second = run(made, ctx, '{"tool": "forecast", "args": {"city": "Rome"}}')
    assert first.observations[0].text.startswith('$forecast_1 = {"city":"Oslo"')
    assert second.observations[0].text.startswith('$forecast_2 = {"city":"Rome"')
    assert first.raw.output(0, dict)["city"] == "Oslo"  # raw keeps the real output


def test_a_whole_reference_keeps_its_type_and_text_is_interpolated() -> None:
    made, ctx = chain(), ExecutionContext()
    run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    args = '{"data": "$forecast_1", "title": "Days: $forecast_1.temps"}'
    result = run(made, ctx, f'{{"tool": "summarise", "args": {args}}}')
    assert result.raw.output(0, str) == "Days: [21,23,19]: Oslo peaks at 23"


def test_events_keep_what_the_model_wrote_and_what_the_tool_got() -> None:
    made, ctx = chain(), ExecutionContext()
    seen: list[ToolCallStarted] = []
    ctx.events.subscribe(ToolCallStarted, seen.append)
    run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    run(made, ctx, '{"tool": "echo", "args": {"text": "$forecast_1.temps[-1]"}}')
    assert seen[-1].raw_args == {"text": "$forecast_1.temps[-1]"}
    assert seen[-1].args == {"text": 19}  # a whole reference keeps the value's type


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("$forcast_1", "unknown variable $forcast_1; did you mean $forecast_1?"),
        ("$forecast_1.tmps", "has no field 'tmps'"),
        ("$forecast_1.temps[7]", "out of range"),
    ],
)
def test_a_bad_reference_is_that_calls_error_naming_what_exists(text: str, message: str) -> None:
    made, ctx = chain(), ExecutionContext()
    run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    result = run(made, ctx, f'{{"tool": "echo", "args": {{"text": "{text}"}}}}')
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert message in error.message
    assert result.observations[0].text.startswith("Error: invalid arguments for echo:")


def test_a_naming_function_names_outputs_and_a_reused_name_is_replaced() -> None:
    def naming(tool: str, args: Any, output: object) -> str | None:
        return f"weather {args['city']}" if tool == "forecast" else None

    made, ctx = chain(ToolVariables(naming)), ExecutionContext()
    run(made, ctx, '{"tool": "forecast", "args": {"city": "New York"}}')
    shown = run(made, ctx, '{"tool": "forecast", "args": {"city": "New York"}}')
    assert shown.observations[0].text.startswith("$weather_new_york = ")
    echo_ = run(made, ctx, '{"tool": "echo", "args": {"text": "$weather_new_york.city"}}')
    assert echo_.observations[0].text == "$echo_1 = New York"


def test_a_naming_function_that_raises_keeps_the_default_name() -> None:
    def broken(tool: str, args: Any, output: object) -> str:
        raise KeyError("oops")

    made, ctx = chain(ToolVariables(broken)), ExecutionContext()
    shown = run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    assert shown.observations[0].text.startswith("$forecast_1 = ")


def test_a_subclass_name_for_names_every_output() -> None:
    """The default names are written without calling ``name_for``; a subclass's own is
    still called for each output."""

    class ByCity(ToolVariables):
        def name_for(self, tool: str, args: Any, output: object, n: int) -> str:
            return f"{tool}_{args.get('city', n)}".lower()

    made, ctx = chain(ByCity()), ExecutionContext()
    shown = run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    assert shown.observations[0].text.startswith('$forecast_oslo = {"city":"Oslo"')
    echo_ = run(made, ctx, '{"tool": "echo", "args": {"text": "$forecast_oslo.city"}}')
    assert echo_.observations[0].text == "$echo_1 = Oslo"


def test_cycles_and_huge_values_are_harmless() -> None:
    made, ctx = chain(), ExecutionContext()
    run(made, ctx, '{"tool": "echo", "args": {"text": "$$echo_1"}}')  # the output is "$echo_1"
    looped = run(made, ctx, '{"tool": "echo", "args": {"text": "$echo_1"}}')
    assert looped.raw.output(0, str) == "$echo_1"  # substituted once, never again
    made.register_tool(big)
    run(made, ctx, '{"tool": "big", "args": {"size": 10000000}}')
    passed = run(made, ctx, '{"tool": "echo", "args": {"text": "$big_1"}}')
    assert passed.raw.output(0, str) == "x" * 10_000_000


def test_the_prompt_section_lists_variables_compactly() -> None:
    extension = ToolVariables(instruction_style="full")  # the list on every step
    made, ctx = chain(extension), ExecutionContext()
    assert extension.prompt_section(ctx) == ""
    run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    listing = extension.prompt_section(ctx)
    # Name, tool, type and an 80-character preview, as the README says.
    assert listing == (
        "Variables:\n- $forecast_1 (forecast, object: city, temps, note): "
        '{"city":"Oslo","temps":[21,23,19],"note":"$HOME is not a reference here"}'
    )
    run(made, ctx, '{"tool": "echo", "args": {"text": "' + "long text " * 20 + '"}}')
    last = extension.prompt_section(ctx).splitlines()[-1]
    assert last == "- $echo_1 (echo, str): " + ("long text " * 8)[:79] + "…"
    assert "$$ is a literal $" in extension.instructions()
    assert len(ToolVariables(instruction_style="minimal").instructions()) < 200


def test_the_answer_filter_resolves_references_split_across_chunks() -> None:
    extension = ToolVariables()
    made, ctx = chain(extension), ExecutionContext()
    run(made, ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}')
    text_filter = extension.text_filter(ctx)
    pieces = ["It is $fore", "cast_1.temps[0", "] degrees in $forecast_1.ci", "ty. Cost: $$5"]
    shown = "".join(text_filter.feed(piece) for piece in pieces) + text_filter.flush()
    assert shown == "It is 21 degrees in Oslo. Cost: $5"


def test_an_output_is_named_at_once_when_the_store_answers_at_once() -> None:
    made, ctx = chain(), ExecutionContext()
    run(made, ctx, '{"tool": "echo", "args": {"text": "warm up"}}')  # installs the hook
    [rewrite] = ctx.hooks.observation
    shown = rewrite(ctx, ToolCall("echo", {"text": "hi"}, "c2"), ToolResult("hi"), '"hi"')
    # A MemoryStore (the default) never suspends: the text itself, no coroutine to await.
    assert shown == '$echo_2 = "hi"'


class _SlowStore(MemoryStore):
    """A store that suspends before each put (as a server's would), noting what ends it."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.ended: list[str] = []

    async def put(self, scope: str, entry: StoredEntry, *, ttl: float | None = None) -> str:
        self.entered.set()
        try:
            await self.release.wait()
        except BaseException as error:
            self.ended.append(type(error).__name__)
            raise
        return await super().put(scope, entry, ttl=ttl)


async def test_a_store_that_suspends_keeps_the_value_and_names_the_output() -> None:
    store = _SlowStore()
    variables = ToolVariables(store=store)
    made, ctx = chain(variables), ExecutionContext()
    running = asyncio.create_task(
        made.execute(ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}', XMLFormat())
    )
    await store.entered.wait()
    store.release.set()
    result = await running
    assert result.observations[0].text.startswith('$forecast_1 = {"city":"Oslo"')
    value = await variables.get_variable(ctx, "forecast_1")
    assert value == {"city": "Oslo", "temps": [21, 23, 19], "note": "$HOME is not a reference here"}
    assert await store.clear(ctx.run_id) == 1  # the value's entry, written after the wait


async def test_a_run_cancelled_while_the_store_writes_ends_the_write() -> None:
    store = _SlowStore()
    made, ctx = chain(ToolVariables(store=store)), ExecutionContext()
    running = asyncio.create_task(
        made.execute(ctx, '{"tool": "forecast", "args": {"city": "Oslo"}}', XMLFormat())
    )
    await store.entered.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert store.ended == ["CancelledError"]  # the write saw the cancellation, and ended


class _OwnDeleteStore(MemoryStore):
    """A store with a delete of its own that suspends (as a server's would)."""

    def __init__(self) -> None:
        super().__init__()
        self.deleted: list[str] = []

    async def delete(self, scope: str, id: str) -> bool:
        await asyncio.sleep(0)
        self.deleted.append(id)
        return await super().delete(scope, id)


@pytest.mark.parametrize("store", [MemoryStore(), _OwnDeleteStore()], ids=["memory", "own delete"])
async def test_a_reused_name_deletes_the_replaced_value_from_the_store(store: MemoryStore) -> None:
    # A MemoryStore deletes at once; a store whose delete is its own is awaited.
    def naming(tool: str, args: Any, output: object) -> str:
        return "latest"

    variables = ToolVariables(naming, store=store)
    made, ctx = chain(variables), ExecutionContext()
    for city in ("Oslo", "Lima"):
        call = f'{{"tool": "forecast", "args": {{"city": "{city}"}}}}'
        result = await made.execute(ctx, call, XMLFormat())
        assert result.observations[0].text.startswith(f'$latest = {{"city":"{city}"')
    latest = await variables.get_variable(ctx, "latest")
    assert latest == {
        "city": "Lima",
        "temps": [21, 23, 19],
        "note": "$HOME is not a reference here",
    }
    if isinstance(store, _OwnDeleteStore):
        assert len(store.deleted) == 1
    assert await store.clear(ctx.run_id) == 1  # Oslo's entry went with its name


def test_the_hooks_first_look_leaves_only_flat_arguments_without_a_dollar_alone() -> None:
    # The hook's fast path answers for a flat dict of scalars and strings without "$";
    # a nested value or any "$" goes to the full scan, which finds references anywhere.
    extension = ToolVariables()
    ctx = ExecutionContext()
    extension.install(ctx)
    asyncio.run(extension.set_variable(ctx, "x", 5))
    (hook,) = ctx.hooks.before
    assert hook(ctx, ToolCall("t", {"a": "no reference", "n": 1, "f": None}, "c1")) is None
    nested = hook(ctx, ToolCall("t", {"a": ["$x"], "b": {"c": "$x"}, "n": 2}, "c2"))
    assert isinstance(nested, ToolCall)
    assert nested.args == {"a": [5], "b": {"c": 5}, "n": 2}
    flat = hook(ctx, ToolCall("t", {"a": "$x", "n": 1}, "c3"))
    assert isinstance(flat, ToolCall)
    assert flat.args == {"a": 5, "n": 1}


def test_the_observation_hook_keeps_in_the_record_of_the_context_it_is_called_with() -> None:
    # The hook keeps its run's record from install; called with another context, or with
    # its own whose state bag was replaced, it uses that context's record, not its own.
    extension = ToolVariables()
    ctx = ExecutionContext()
    extension.install(ctx)
    (hook,) = ctx.hooks.observation
    result = ToolResult({"temp": 21})
    assert hook(ctx, ToolCall("weather", {}, "c1"), result, '{"temp":21}') == (
        '$weather_1 = {"temp":21}'
    )
    other = ExecutionContext()
    assert hook(other, ToolCall("weather", {}, "c1"), result, '{"temp":21}') == (
        '$weather_1 = {"temp":21}'  # the other run's first output
    )
    assert [v.name for v in extension.list_variables(other)] == ["weather_1"]
    ctx.state = type(ctx.state)()
    assert hook(ctx, ToolCall("weather", {}, "c2"), result, '{"temp":21}') == (
        '$weather_1 = {"temp":21}'  # the new bag's first
    )
    assert extension.named(ctx, "c2") == "weather_1"
    assert extension.named(ctx, "c1") is None
