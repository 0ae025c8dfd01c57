"""Every failure contained: what a tool, a hook, an observer or a model's call text does
never escapes ``execute``, never loses a finished call, and never hangs the run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import pathlib
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from formats import FormatParseError, MarkdownFormat, Section, XMLFormat
from formats._section import NAME_PATTERN
from tests.support.tools import CityIn, Stubborn, Weather, add
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Limits,
    RawToolChainResult,
    Stats,
    Tool,
    ToolCallFinished,
    ToolCallParseError,
    ToolCallParseFailed,
    ToolDefinitionError,
    ToolResult,
    YAMLToolChain,
    tool,
)
from toolchain._concurrency import MAX_WORKERS

FMT = XMLFormat()


def agent_format() -> XMLFormat:
    fmt = XMLFormat()
    for name in ("thinking", "action", "answer"):
        fmt.register_section(Section(name))
    return fmt


# -- observers are not hooks ---------------------------------------------------------


async def test_an_observer_that_raises_never_changes_a_successful_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ctx = ExecutionContext()

    def disk_full(event: ToolCallFinished) -> None:
        raise OSError("No space left on device")

    ctx.events.subscribe(ToolCallFinished, disk_full)
    chain = JSONToolChain().register_tool(Weather())
    with caplog.at_level(logging.ERROR, logger="toolchain"):
        result = await chain.execute(ctx, '{"tool": "get_weather", "args": {"city": "Oslo"}}', FMT)
    assert result.raw.errors == (None,)
    assert result.raw.output(0, dict)["city"] == "Oslo"
    assert ctx.stats.get(Stats.OBSERVER_ERRORS) == 1
    assert "an observer of ToolCallFinished failed" in caplog.text


async def test_an_observer_of_parse_failures_that_raises_leaves_the_documented_error() -> None:
    ctx = ExecutionContext()

    def broken(event: ToolCallParseFailed) -> None:
        raise RuntimeError("observer bug")

    ctx.events.subscribe(ToolCallParseFailed, broken)
    with pytest.raises(ToolCallParseError):
        await JSONToolChain().execute(ctx, "{not json", FMT)
    assert ctx.stats.get(Stats.OBSERVER_ERRORS) == 1


# -- one limit rule ------------------------------------------------------------------


def test_reaching_a_limit_is_not_passing_it() -> None:
    stats = Stats()
    stats.increment(Stats.TOOL_CALLS, 2)
    stats.increment(Stats.STEPS, 3)
    limits = Limits(max_tool_calls=2, max_steps=3)
    assert limits.exceeded(stats) is None
    assert limits.exceeded(stats, starting_step=True) == "max_steps"
    stats.increment(Stats.TOOL_CALLS)
    assert limits.exceeded(stats) == "max_tool_calls"
    assert limits.tool_call_refused(stats, "add") == "max_tool_calls=2"


# -- mistakes reach the developer early ----------------------------------------------


def test_a_tool_class_without_a_name_fails_when_defined() -> None:
    with pytest.raises(ToolDefinitionError, match="Nameless has no name"):

        class Nameless(Tool[CityIn, str]):
            description = "No name."

            def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
                return ToolResult("")


def test_a_tool_class_without_a_description_fails_when_defined() -> None:
    with pytest.raises(ToolDefinitionError, match="Mute has no description"):

        class Mute(Tool[CityIn, str]):
            name = "mute"

            def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
                return ToolResult("")


def test_a_tool_class_with_an_invalid_name_fails_when_defined() -> None:
    with pytest.raises(ToolDefinitionError, match="Spaced: tool name 'get weather'"):

        class Spaced(Tool[CityIn, str]):
            name = "get weather"
            description = "Spaces."

            def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
                return ToolResult("")


def test_a_call_with_the_wrong_arity_fails_when_defined() -> None:
    with pytest.raises(ToolDefinitionError, match=r"Forgetful\.call\(self, input\)"):

        class Forgetful(Tool[CityIn, str]):
            name = "forgetful"
            description = "Forgot the context parameter."

            def call(self, input: CityIn) -> ToolResult[str]:  # type: ignore[override]
                return ToolResult("")


def test_a_name_set_in_init_is_checked_at_register_tool() -> None:
    class Configurable(Tool[CityIn, str]):
        description = "Named per instance."

        def __init__(self, name: str) -> None:
            self.name = name

        def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
            return ToolResult("")

    JSONToolChain().register_tool(Configurable("fine"))
    with pytest.raises(ToolDefinitionError, match="Configurable: tool name '日本'"):
        JSONToolChain().register_tool(Configurable("日本"))


async def test_a_tool_returning_something_else_is_reported_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Sloppy(Tool[CityIn, str]):
        name = "sloppy"
        description = "Returns a bare string."

        async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
            return "oops"  # type: ignore[return-value]

    chain = JSONToolChain().register_tool(Sloppy())
    with caplog.at_level(logging.ERROR, logger="toolchain"):
        result = await chain.execute(
            ExecutionContext(), '{"tool": "sloppy", "args": {"city": "x"}}', FMT
        )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "output_error"
    assert "sloppy returned str, not a ToolResult" in result.text
    assert "sloppy returned str, not a ToolResult" in caplog.text


# -- typed raw results ---------------------------------------------------------------


class Forecast(BaseModel):
    city: str
    high_c: int


class ForecastTool(Tool[CityIn, Forecast]):
    name = "forecast"
    description = "A typed forecast."

    async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[Forecast]:
        return ToolResult(Forecast(city=input.city, high_c=21), instructions="Cite it.")


async def test_raw_output_is_the_tools_typed_text_and_the_whole_result_stays_reachable() -> None:
    chain = JSONToolChain().register_tool(ForecastTool()).register_tool(add)
    content = '[{"tool": "forecast", "args": {"city": "Oslo"}}, {"tool": "nope", "args": {}}]'
    result = await chain.execute(ExecutionContext(), content, FMT)
    raw: RawToolChainResult = result.raw
    forecast = raw.output(0, Forecast)  # typed as Forecast, checked at run time
    assert forecast.high_c == 21
    first = raw.results[0]
    assert first is not None and first.output is forecast
    assert first.result.instructions == "Cite it."
    with pytest.raises(TypeError, match="returned Forecast, not str"):
        raw.output(0, str)
    with pytest.raises(LookupError, match="unknown_tool"):
        raw.output(1, Forecast)


async def test_each_call_has_an_id_and_its_own_observation() -> None:
    chain = JSONToolChain().register_tool(add)
    ctx = ExecutionContext()
    content = '[{"tool": "add", "args": {"a": 1}}, {"tool": "nope", "args": {}}]'
    result = await chain.execute(ctx, content, FMT)
    assert [call.id for call in result.raw.calls] == ["call_1", "call_2"]
    assert [(o.id, o.name, o.text) for o in result.observations] == [
        ("call_1", "add", "1"),
        ("call_2", "nope", result.observations[1].text),
    ]
    assert result.observations[1].text.startswith("Error: unknown tool 'nope'")
    again = await chain.execute(ctx, '{"tool": "add", "args": {"a": 2}}', FMT)
    assert again.raw.calls[0].id == "call_3"  # unique within the run


# -- every failure contained ---------------------------------------------------------


@pytest.mark.parametrize("chain", [JSONToolChain(), YAMLToolChain()], ids=["json", "yaml"])
async def test_a_non_ascii_tool_name_is_an_error_section_not_a_crash(
    chain: JSONToolChain | YAMLToolChain,
) -> None:
    chain = type(chain)().register_tool(add)
    content = '{"tool":"日本","args":{}}' if isinstance(chain, JSONToolChain) else "tool: 日本"
    result = await chain.execute(ExecutionContext(), content, FMT)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "unknown_tool"
    assert "unknown tool '日本'" in result.text
    assert result.text.startswith("<observation>\n<unknown_tool>")


@pytest.mark.parametrize("name", ["answer", "action", "thinking", "observation", "ANSWER"])
async def test_an_error_section_never_carries_a_registered_section_name(name: str) -> None:
    fmt = agent_format()
    chain = JSONToolChain().register_tool(add)
    result = await chain.execute(ExecutionContext(), f'{{"tool": "{name}", "args": {{}}}}', fmt)
    assert f"<tool_{name}>" in result.text
    reparsed = fmt.parse("<thinking>x</thinking>\n" + result.text)
    assert list(reparsed) == ["thinking"]


@pytest.mark.parametrize("fmt", [XMLFormat(), MarkdownFormat()], ids=["xml", "markdown"])
@pytest.mark.parametrize("name", ["answer", "Action", "thinking", "observation"])
def test_an_error_section_is_renamed_even_in_a_bare_format(
    fmt: XMLFormat | MarkdownFormat, name: str
) -> None:
    # Written with a format that registered nothing (a native agent's, a loop's own),
    # the observation is still read by one that has: it must not hold an answer.
    chain = JSONToolChain().register_tool(add)
    result = chain.execute_sync(ExecutionContext(), f'{{"tool": "{name}"}}', type(fmt)())
    error = result.raw.errors[0]
    assert error is not None and error.kind == "unknown_tool"
    with pytest.raises(FormatParseError):
        reader(type(fmt)).parse(result.text)
    heading = f"<tool_{name}>" if isinstance(fmt, XMLFormat) else f"## tool_{name}"
    assert heading in result.text


def reader(kind: type[XMLFormat] | type[MarkdownFormat], *extra: str) -> XMLFormat | MarkdownFormat:
    """A format that reads what an agent reads (and ``extra`` sections)."""
    fmt = kind()
    for name in ("thinking", "action", "answer", *extra):
        fmt.register_section(Section(name))
    return fmt


def _named(name: str) -> Tool[Any, Any]:
    def run() -> str:
        return "ok"

    return tool(name=name, description="A tool named by the test.")(run)


NAMES = st.one_of(
    st.sampled_from(
        [
            "answer", "ANSWER", "Answer", "action", "thinking", "observation", "final",
            "Final", "verdict", "answer ", " answer", "<answer>", "answer>", "</answer>",
            "# answer", "answer:", "answer\n", "tool_answer", "thin\u212aing", "ans\u200bwer",
            "an-swer", "answer.", ".answer", "_answer", "", " ", "日本", "add",
        ]
    ),
    st.from_regex(NAME_PATTERN, fullmatch=True),
    st.text(max_size=24),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    name=NAMES,
    known=st.booleans(),
    kind=st.sampled_from([XMLFormat, MarkdownFormat]),
    same_format=st.booleans(),
)
def test_no_tool_name_known_or_unknown_forges_a_section(
    name: str,
    known: bool,
    kind: type[XMLFormat] | type[MarkdownFormat],
    same_format: bool,
) -> None:
    # An agent's format with a custom answer section ("final", "verdict") as well.
    agent = reader(kind, "final", "verdict")
    chain = JSONToolChain().register_tool(add)
    if known and name not in chain.tools:
        with contextlib.suppress(ToolDefinitionError):
            chain.register_tool(_named(name))
    content = json.dumps({"tool": name, "args": {}})
    # The chain knows the agent's sections when given its format; with a bare one it
    # still knows those agents read by default.
    written_with = agent if same_format else kind()
    result = chain.execute_sync(ExecutionContext(), content, written_with)
    assert len(result.raw.calls) == 1
    parsed_by = agent if same_format else reader(kind)
    with pytest.raises(FormatParseError):
        parsed_by.parse(result.text)


async def test_a_registered_tool_named_like_a_section_cannot_forge_it() -> None:
    @tool(name="answer")
    def answer_tool() -> str:
        """A tool whose name collides with the answer section."""
        return "42"

    fmt = agent_format()
    result = (
        await JSONToolChain()
        .register_tool(answer_tool)
        .execute(ExecutionContext(), '{"tool": "answer"}', fmt)
    )
    assert "<tool_answer>\n42\n</tool_answer>" in result.text
    assert result.raw.output(0, str) == "42"


@pytest.mark.parametrize("inline", [False, True], ids=["worker", "inline"])
async def test_a_sync_tool_raising_stop_iteration_fails_at_once(inline: bool) -> None:
    @tool(inline=inline, timeout=None)
    def drained() -> str:
        """Pulls from an empty iterator."""
        return next(iter([]))

    chain = JSONToolChain(timeout=None).register_tool(drained).register_tool(add)
    content = '[{"tool": "drained"}, {"tool": "add", "args": {"a": 3}}]'
    result = await asyncio.wait_for(chain.execute(ExecutionContext(), content, FMT), timeout=5)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "tool_error"
    assert "StopIteration" in error.message
    assert result.raw.output(1, int) == 3


def test_a_tool_that_swallows_cancellation_is_abandoned_and_execute_sync_returns() -> None:
    chain = JSONToolChain(timeout=0.1, cancel_grace=0.1)
    chain.register_tool(Stubborn()).register_tool(add)
    content = '[{"tool": "stubborn", "args": {"city": "x"}}, {"tool": "add", "args": {"a": 1}}]'
    started = time.perf_counter()
    result = chain.execute_sync(ExecutionContext(), content, FMT)
    assert time.perf_counter() - started < 30  # a hang guard, not a speed limit
    error = result.raw.errors[0]
    assert error is not None and error.kind == "timeout"
    assert "ignored cancellation and was abandoned" in error.message
    assert result.raw.output(1, int) == 1


STUBBORN_PROGRAM = """
from tests.support.tools import Stubborn
from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain
chain = JSONToolChain(timeout=0.05, cancel_grace=0.05).register_tool(Stubborn())
lone = '{"tool": "stubborn", "args": {"city": "x"}}'
pair = f"[{lone}, {lone}]"
for content in (lone, pair):
    result = chain.execute_sync(ExecutionContext(), content, XMLFormat())
    assert result.raw.errors[0] is not None
print("done")
"""


def test_a_process_that_abandoned_stubborn_calls_still_exits_quietly() -> None:
    # Closing an abandoned coroutine at exit would throw GeneratorExit into code that
    # swallows everything: with no loop left, it would spin for ever.
    finished = subprocess.run(
        [sys.executable, "-c", STUBBORN_PROGRAM],
        capture_output=True,
        text=True,
        timeout=60,  # a hang guard, not a speed limit
        cwd=pathlib.Path(__file__).parents[2],
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "done"
    assert "Exception ignored" not in finished.stderr


class Quitter(Tool[CityIn, str]):
    name = "quitter"
    description = "Calls sys.exit."
    inline = True

    def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
        raise SystemExit(3)


class AsyncQuitter(Quitter):
    name = "async_quitter"

    async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:  # type: ignore[override]
        raise SystemExit(4)


class WorkerQuitter(Quitter):
    name = "worker_quitter"
    inline = False


async def test_system_exit_from_any_kind_of_tool_is_that_calls_error() -> None:
    chain = JSONToolChain()
    for quitter in (Quitter(), AsyncQuitter(), WorkerQuitter()):
        chain.register_tool(quitter)
    chain.register_tool(add)
    names = ["quitter", "async_quitter", "worker_quitter"]
    calls = [f'{{"tool": "{n}", "args": {{"city": "x"}}}}' for n in names]
    content = "[" + ", ".join([*calls, '{"tool": "add", "args": {"a": 5}}']) + "]"
    result = await chain.execute(ExecutionContext(), content, FMT)
    kinds = [e.kind if e else None for e in result.raw.errors]
    assert kinds == ["tool_error", "tool_error", "tool_error", None]
    assert all("SystemExit" in e.message for e in result.raw.errors if e)
    assert result.raw.output(3, int) == 5


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


async def test_an_exception_whose_str_raises_is_still_reported() -> None:
    @tool
    def grumpy() -> str:
        """Raises an exception that cannot be printed."""
        raise Unprintable

    result = (
        await JSONToolChain()
        .register_tool(grumpy)
        .execute(ExecutionContext(), '{"tool": "grumpy"}', FMT)
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "tool_error"
    assert "Unprintable" in error.message and "could not be read" in error.message


def test_a_sync_tool_that_cancels_its_run_and_returns_keeps_its_result() -> None:
    class Finisher(Tool[CityIn, str]):
        name = "finisher"
        description = "Stops the run, but finishes its own work first."

        def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
            ctx.cancel("done for today")
            return ToolResult(f"saved {input.city}")

    chain = JSONToolChain().register_tool(Finisher())
    kept = 0
    for _ in range(20):
        result = chain.execute_sync(
            ExecutionContext(), '{"tool": "finisher", "args": {"city": "Oslo"}}', FMT
        )
        kept += result.raw.errors == (None,) and result.raw.output(0, str) == "saved Oslo"
    assert kept == 20


async def test_calls_per_action_are_capped_and_the_rest_is_one_error() -> None:
    chain = JSONToolChain(max_calls=10).register_tool(add)
    content = "[" + "1," * 49_999 + "1]"
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert len(result.raw.calls) == 11
    last = result.raw.errors[-1]
    assert last is not None
    assert last.message == (
        "49990 more calls were not run: an action may hold at most 10 calls; "
        "send the rest in a later action"
    )
    assert len(result.text) < 5_000


async def test_blocking_sync_tools_use_a_bounded_pool_of_threads() -> None:
    peak = 0
    lock = threading.Lock()

    @tool
    def block(ms: int) -> int:
        """Blocks the thread for a while."""
        nonlocal peak
        with lock:
            peak = max(peak, threading.active_count())
        time.sleep(ms / 1000)
        return ms

    before = threading.active_count()
    chain = JSONToolChain(max_calls=200).register_tool(block)
    content = "[" + ", ".join(['{"tool": "block", "args": {"ms": 5}}'] * 200) + "]"
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.ok
    assert peak <= before + MAX_WORKERS


async def test_a_huge_output_is_cut_in_the_observation_and_kept_whole_in_raw() -> None:
    @tool
    def dump() -> str:
        """Returns a lot of text."""
        return "x" * 1_000_000

    chain = JSONToolChain(max_output_chars=1_000).register_tool(dump)
    result = await chain.execute(ExecutionContext(), '{"tool": "dump"}', MarkdownFormat())
    assert len(result.text) < 1_200
    assert "[output truncated: 1000 of 1000000 characters shown" in result.text
    assert len(result.raw.output(0, str)) == 1_000_000


async def test_instructions_none_is_no_instructions_and_loses_nothing() -> None:
    @tool
    def lax() -> ToolResult[str]:
        """Passes instructions=None."""
        return ToolResult("x", instructions=None)  # type: ignore[arg-type]

    chain = JSONToolChain().register_tool(lax).register_tool(add)
    content = '[{"tool": "lax"}, {"tool": "add", "args": {"a": 2}}]'
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.ok
    assert "<lax>\nx\n</lax>" in result.text


async def test_an_argument_validator_raising_an_odd_exception_is_invalid_arguments() -> None:
    from pydantic import field_validator

    class Picky(BaseModel):
        code: str

        @field_validator("code")
        @classmethod
        def lookup(cls, value: str) -> str:
            return {"a": "A"}[value]  # KeyError for anything else

    class PickyTool(Tool[Picky, str]):
        name = "picky"
        description = "Validates oddly."

        async def call(self, ctx: ExecutionContext, input: Picky) -> ToolResult[str]:
            return ToolResult(input.code)

    result = (
        await JSONToolChain()
        .register_tool(PickyTool())
        .execute(ExecutionContext(), '{"tool": "picky", "args": {"code": "z"}}', FMT)
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert "KeyError" in error.message


@pytest.mark.parametrize("calls", [1, 2])
async def test_async_tools_keep_task_bound_state_across_suspension(calls: int) -> None:
    """A cancel scope (anyio, as httpx uses) entered before an await must be exited in
    the same task: eager starting runs each call as its own task from the first step."""
    import anyio

    @tool
    async def scoped(n: int) -> int:
        """Awaits inside a cancel scope."""
        with anyio.fail_after(5):
            entered = asyncio.current_task()
            await anyio.sleep(0.001)
            assert asyncio.current_task() is entered
        return n

    chain = JSONToolChain().register_tool(scoped)
    items = [f'{{"tool": "scoped", "args": {{"n": {n}}}}}' for n in range(1, calls + 1)]
    result = await chain.execute(ExecutionContext(), "[" + ", ".join(items) + "]", FMT)
    assert result.raw.errors == (None,) * calls
    assert [result.raw.output(i, int) for i in range(calls)] == list(range(1, calls + 1))


async def test_a_cancel_scope_inside_a_lone_call_cancels_only_what_it_scopes() -> None:
    import anyio

    @tool
    async def patient() -> str:
        """Gives up on a slow step, then answers."""
        with anyio.move_on_after(0.01):
            await anyio.sleep(5)
        return "gave up waiting, answered anyway"

    result = (
        await JSONToolChain()
        .register_tool(patient)
        .execute(ExecutionContext(), '{"tool": "patient"}', FMT)
    )
    assert result.raw.output(0, str) == "gave up waiting, answered anyway"
