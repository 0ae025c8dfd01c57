"""A program's calls are the chain's calls: what runs, what the model reads, what raw keeps."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from pydantic import BaseModel

from formats import MarkdownFormat, XMLFormat
from toolchain import (
    ExecutionContext,
    ToolCall,
    ToolCallFinished,
    ToolCallRefused,
    ToolCallStarted,
    ToolChainResult,
    ToolHook,
    ToolResult,
    tool,
)
from toolchain.code import ProgramOutput, PythonToolChain


class Weather(BaseModel):
    city: str
    temp_c: float


runs: Counter[str] = Counter()


@tool
async def get_weather(city: str) -> Weather:
    """Current weather for a city."""
    runs["get_weather"] += 1
    return Weather(city=city, temp_c=len(city) * 2.5)


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers."""
    runs["add"] += 1
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    runs["explode"] += 1
    raise ValueError(reason)


def chain(**options: object) -> PythonToolChain:
    made = PythonToolChain(**options)  # type: ignore[arg-type]  # options spread for brevity
    return made.register_tool(get_weather).register_tool(add).register_tool(explode)


@pytest.fixture(autouse=True)
def _counted() -> None:
    runs.clear()


def run(
    program: str, made: PythonToolChain | None = None, ctx: ExecutionContext | None = None
) -> ToolChainResult:
    return (made or chain()).execute_sync(ctx or ExecutionContext(), program, XMLFormat())


def body(text: str) -> str:
    """The program's section of an XML observation."""
    return text.split("<run_python>\n", 1)[1].rsplit("\n</run_python>", 1)[0]


def test_the_model_reads_only_what_the_program_printed_and_its_last_value() -> None:
    result = run(
        "import asyncio\n"
        'paris, oslo = await asyncio.gather(get_weather("Paris"), get_weather("Oslo"))\n'
        'print("difference", paris["temp_c"] - oslo["temp_c"])\n'
        '{"warmer": paris["city"]}'
    )
    assert body(result.text) == 'difference 2.5\n{"warmer":"Paris"}'
    assert "Oslo" not in result.text  # the results themselves never reach the model
    # raw: the two calls (typed outputs), then the program.
    assert [c.name for c in result.raw.calls] == ["get_weather", "get_weather", "run_python"]
    assert result.raw.results[0] is not None
    assert result.raw.results[0].output == Weather(city="Paris", temp_c=12.5)
    program = result.raw.results[2]
    assert program is not None
    assert program.output == ProgramOutput(
        "difference 2.5\n", {"warmer": "Paris"}, 'difference 2.5\n{"warmer":"Paris"}'
    )
    assert [o.name for o in result.observations] == ["run_python"]


async def test_gathered_calls_run_at_the_same_time() -> None:
    both = asyncio.Event()
    started: list[str] = []

    @tool
    async def slow(name: str) -> str:
        """Waits for the other call."""
        started.append(name)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # only a concurrent call can set it
        return name

    made = PythonToolChain().register_tool(slow)
    program = 'import asyncio\nr = await asyncio.gather(slow("a"), slow("b"))\nr'
    result = await made.execute(ExecutionContext(), program, XMLFormat())
    assert body(result.text) == '["a","b"]'
    assert result.raw.errors == (None, None, None)


def test_positional_arguments_and_defaults_reach_the_tool_by_name() -> None:
    result = run("[await add(2), await add(2, 5), await add(b=3, a=1)]")
    assert body(result.text) == "[3,7,4]"
    assert [c.args for c in result.raw.calls[:3]] == [{"a": 2}, {"a": 2, "b": 5}, {"b": 3, "a": 1}]


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ('await get_weather(town="Oslo")', "unknown-argument"),
        ("await get_weather(7)", "Expected `str`, found `Literal[7]`"),
        ('w = await get_weather("Oslo")\nw["temp"]', 'did you mean "temp_c"?'),
        ('get_weather("Oslo")\n1', "is not awaited"),
        ("await add(1, 2, 3)", "too-many-positional-arguments"),
        ('w = get_weather("Oslo")\nw["city"]', "not-subscriptable"),
        ("await get_forecast('Oslo')", "unresolved-reference"),
    ],
)
def test_a_program_that_does_not_type_check_runs_no_tool(program: str, said: str) -> None:
    result = run(program)
    text = body(result.text)
    assert text.startswith(
        "Error: the program was not run (no tool ran): it does not type-check against the "
        "tools' signatures:\nprogram.py:"
    )
    assert said in text
    assert sum(runs.values()) == 0
    assert [c.name for c in result.raw.calls] == ["run_python"]
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"


def test_a_failed_call_raises_in_the_program_which_may_catch_it() -> None:
    caught = run(
        'try:\n    await explode("no disk")\nexcept Exception as e:\n    print("caught:", e)'
    )
    assert body(caught.text) == "caught: explode failed: ValueError: no disk"
    assert caught.raw.errors[0] is not None and caught.raw.errors[0].kind == "tool_error"
    assert caught.raw.errors[1] is None  # the program itself ended well
    uncaught = run('x = 1\nawait explode("no disk")\nprint("never")')
    assert body(uncaught.text) == (
        "Error: RuntimeError: explode failed: ValueError: no disk (line 2)"
    )


def test_an_uncaught_exception_names_its_line_and_keeps_what_was_printed() -> None:
    result = run('print("step 1")\nvalues = [1, 2]\nvalues[5]')
    assert body(result.text) == (
        "Error: IndexError: list index out of range (line 3)\nPrinted before it stopped:\nstep 1"
    )
    error = result.raw.errors[-1]
    assert error is not None and error.kind == "tool_error"


def test_each_call_goes_through_hooks_guards_validation_and_events() -> None:
    class Rewrite(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            if call.name == "add":
                return ToolCall(call.name, {**call.args, "b": 100}, call.id)
            return None

        def after_tool_call(
            self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[object]
        ) -> ToolResult[object] | None:
            if call.name == "get_weather":
                return ToolResult(Weather(city="Hooked", temp_c=0))
            return None

        def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
            if call.name == "explode":
                raise ToolCallRefused("not in this run")

    ctx = ExecutionContext()
    ctx.hooks.add(Rewrite())
    seen: list[tuple[str, str]] = []
    ctx.events.subscribe(ToolCallStarted, lambda e: seen.append(("before", e.name)))
    ctx.events.subscribe(ToolCallFinished, lambda e: seen.append(("after", e.name)))
    result = run(
        'print(await add(1))\nprint((await get_weather("Oslo"))["city"])\n'
        'try:\n    await explode("x")\nexcept Exception as e:\n    print(e)',
        ctx=ctx,
    )
    assert body(result.text) == "101\nHooked\nexplode was refused: not in this run"
    assert runs == Counter({"add": 1, "get_weather": 1})  # the guard stopped explode
    names = ["add", "get_weather", "explode", "run_python"]
    assert seen == [
        ("before", "run_python"),
        ("before", "add"),
        ("after", "add"),
        ("before", "get_weather"),
        ("after", "get_weather"),
        ("after", "explode"),  # refused: it never started, and still ends once
        ("after", "run_python"),
    ]
    assert [c.name for c in result.raw.calls] == names


def test_arguments_are_validated_into_the_tool_input_even_unchecked() -> None:
    """With the type check off, a wrong type still never reaches the tool."""
    result = run("await add('two')", chain(type_check=False))
    assert body(result.text).startswith("Error: RuntimeError: invalid arguments for add")
    assert runs["add"] == 0
    first = result.raw.errors[0]
    assert first is not None and first.kind == "invalid_arguments"


@pytest.mark.parametrize(
    ("encoding", "shown"),
    [
        ("json", '[{"id":1,"ok":true},{"id":2,"ok":false}]'),
        ("toon", "[2]{id,ok}:\n  1,true\n  2,false"),
    ],
)
def test_the_last_value_is_written_in_the_chain_observations_encoding(
    encoding: str, shown: str
) -> None:
    result = run('[{"id": 1, "ok": True}, {"id": 2, "ok": False}]', chain(observations=encoding))
    assert body(result.text) == shown


def test_a_long_observation_is_cut_with_a_note() -> None:
    result = run('print("x" * 5000)', chain(max_observation_chars=1000))
    text = body(result.text)
    assert text.startswith("x" * 1000 + "\n[output truncated: 1000 of 5000 characters shown")
    program = result.raw.results[-1]
    assert program is not None and program.output == ProgramOutput(
        "x" * 5000 + "\n", None, "x" * 5000
    )


def test_a_program_that_shows_nothing_is_told_so() -> None:
    assert body(run("x = 1").text) == (
        "(the program printed nothing and its last expression has no value: print what you need)"
    )


def test_the_markdown_format_carries_a_program_too() -> None:
    result = chain().execute_sync(ExecutionContext(), "await add(2)", MarkdownFormat())
    assert result.text == "# observation\n\n## run_python\n3"


def test_a_fenced_program_is_read_without_its_fence() -> None:
    assert body(run("```python\nawait add(40, 2)\n```").text) == "42"


async def test_a_native_call_of_anything_but_a_program_is_answered_not_run() -> None:
    made = chain()
    seen: list[str] = []
    ctx = ExecutionContext()
    ctx.events.subscribe(ToolCallFinished, lambda e: seen.append(e.name))
    calls = [
        ToolCall("add", {"a": 1}, "c1"),
        ToolCall("run_python", {"code": 5}, "c2"),
        ToolCall("run_python", {"code": "await add(1)"}, "c3"),
    ]
    result = await made.execute_calls(ctx, calls, XMLFormat())
    assert [(o.id, o.text) for o in result.observations] == [
        ("c1", "Error: only run_python can be called: write a program that calls add(...)"),
        ("c2", 'Error: run_python takes {"code": "<a Python program>"}'),
        ("c3", "2"),
    ]
    assert runs == Counter({"add": 1})  # the program's call only
    assert seen == ["add", "run_python", "add", "run_python"]  # one end per call


async def test_a_call_past_its_timeout_fails_in_the_program_which_goes_on() -> None:
    @tool(timeout=0.1)
    async def slow() -> str:
        """Takes too long."""
        await asyncio.sleep(30)
        return "late"

    made = PythonToolChain().register_tool(slow).register_tool(add)
    program = "try:\n    await slow()\nexcept Exception as e:\n    print(e)\nawait add(1)"
    result = await made.execute(ExecutionContext(), program, XMLFormat())
    assert body(result.text) == "slow did not finish within 0.1 s\n2"
    first = result.raw.errors[0]
    assert first is not None and first.kind == "timeout"
