"""What a run leaves for the developer: log records and the console trace.

- a failed model call: one WARNING on the ``agents`` logger, redacted, with the run, the
  step, the model and the error kind as attributes (a 401 quoting the key, an
  unreachable port, a timeout, the run's time limit), over the loopback server;
- each step: one DEBUG record (what the model did, its tokens); a rejected reply: INFO;
- `ConsoleTraceWriter`: the run as plain text as it happens, outside text printed
  literally.
"""

from __future__ import annotations

import io
import logging

import pytest

from agents import (
    AgentResult,
    ConsoleTraceWriter,
    ReActAgent,
    ScriptedModel,
    ToolCallingAgent,
)
from agents.models import AnthropicModel, Model, OpenAIChatModel
from tests.support.agent_kinds import Agent, Kind
from tests.support.anthropic_replies import anthropic_error
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion, openai_error
from tests.support.replies import Provider
from toolchain import ExecutionContext, JSONToolChain, Limits, ToolError, tool
from toolchain._redact import REDACTED

KEY = "Lq2Vn8XwRt0pZs4Ke-no-shape"  # no known key shape: only remembering it blanks it


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def find_flight(number: str) -> str:
    """Look a flight up."""
    raise ToolError(f"no flight {number}")


def chain() -> JSONToolChain:
    return JSONToolChain().register_tool(add).register_tool(find_flight)


def agent_on(model: Model, kind: Kind) -> Agent:
    if kind == "react":
        return ReActAgent(model, tool_chain=chain())
    return ToolCallingAgent(model, tool_chain=chain())


def fields(record: logging.LogRecord, *names: str) -> tuple[object, ...]:
    """The record's attributes ``names`` (our loggers pass them as ``extra``)."""
    return tuple(record.__dict__[name] for name in names)


def model_failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "agents" and r.levelno == logging.WARNING and hasattr(r, "model")
    ]


# --- model failures ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["react", "native"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_401_quoting_the_key_logs_a_redacted_warning(
    loopback: LoopbackServer,
    caplog: pytest.LogCaptureFixture,
    provider: Provider,
    kind: Kind,
) -> None:
    caplog.set_level(logging.DEBUG, logger="agents")
    model: OpenAIChatModel | AnthropicModel
    if provider == "openai":
        loopback.enqueue(openai_error(401, f"Incorrect API key provided: {KEY}"))
        model = OpenAIChatModel("m", api_key=KEY, base_url=loopback.openai_base_url)
    else:
        loopback.enqueue(anthropic_error(401, f"invalid x-api-key {KEY}"))
        model = AnthropicModel("m", api_key=KEY, base_url=loopback.base_url)
    result = await agent_on(model, kind).run("Hi")
    await model.aclose()
    assert result.stopped_by == "error"
    assert result.error is not None and KEY not in result.error
    (record,) = model_failures(caplog)
    assert fields(record, "run", "step", "model", "error_kind", "status_code") == (
        "agent",
        1,
        f"{provider}:m",
        "ModelCallError",
        401,
    )
    message = record.getMessage()
    assert message.startswith(f"agent step 1: model call to {provider}:m failed: ")
    assert "HTTP 401" in message and REDACTED in message
    assert all(KEY not in r.getMessage() for r in caplog.records)
    ended = [r for r in caplog.records if getattr(r, "stopped_by", None) == "error"]
    assert [r.levelno for r in ended] == [logging.INFO]


async def test_an_unreachable_endpoint_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agents")
    with LoopbackServer() as gone:
        base_url = gone.openai_base_url
    model = OpenAIChatModel("m", api_key=KEY, base_url=base_url, max_retries=0)
    result = await ReActAgent(model).run("Hi")
    assert result.stopped_by == "error"
    (record,) = model_failures(caplog)
    assert fields(record, "error_kind", "status_code") == ("ModelCallError", None)
    assert "could not talk to" in record.getMessage()


async def test_a_model_timeout_logs_a_warning(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agents")
    loopback.enqueue(openai_completion("too late").delayed(5))
    model = OpenAIChatModel(
        "m", api_key=KEY, base_url=loopback.openai_base_url, timeout=0.2, max_retries=0
    )
    result = await ToolCallingAgent(model).run("Hi")
    assert result.stopped_by == "error"
    (record,) = model_failures(caplog)
    assert fields(record, "error_kind") == ("ModelTimeoutError",)
    assert "timed out" in record.getMessage()


async def test_the_run_time_limit_during_a_model_call_logs_a_warning(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agents")
    loopback.enqueue(openai_completion("too late").delayed(5))
    model = OpenAIChatModel("m", api_key=KEY, base_url=loopback.openai_base_url)
    result = await ReActAgent(model, limits=Limits(timeout=0.2)).run("Hi")
    await model.aclose()
    assert (result.stopped_by, result.limit) == ("limit", "timeout")
    (record,) = model_failures(caplog)
    assert fields(record, "error_kind") == ("timeout",)
    assert "did not answer before the run's time limit" in record.getMessage()
    (ended,) = [r for r in caplog.records if hasattr(r, "stopped_by")]
    assert (ended.levelno, ended.getMessage()) == (
        logging.INFO,
        "agent ended: limit (timeout) after 0 steps",
    )


async def test_a_model_that_raises_logs_an_error_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agents")

    def broken(messages: object) -> str:
        raise RuntimeError(f"bug in my model, Authorization: Bearer {KEY}\nsecond line")

    result = await ReActAgent(ScriptedModel(broken)).run("Hi")
    assert result.stopped_by == "error" and result.error is not None
    assert KEY not in result.error
    (record,) = [r for r in caplog.records if hasattr(r, "model")]
    assert record.levelno == logging.ERROR
    assert fields(record, "step", "model", "error_kind") == (1, "scripted", "RuntimeError")
    message = record.getMessage()
    assert "bug in my model" in message and KEY not in message and "\n" not in message
    # The traceback is there, redacted; the exception, whose text holds the key, is not
    # (a handler could write its traceback again from it).
    assert record.exc_text is not None and "RuntimeError: bug in my model" in record.exc_text
    assert KEY not in record.exc_text and record.exc_info is None


# --- steps and rejections ---------------------------------------------------------------


async def test_each_step_logs_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agents")
    model = ScriptedModel(
        [
            '<action>[{"tool": "add", "args": {"a": 2, "b": 2}},'
            ' {"tool": "find_flight", "args": {"number": "AA9"}}]</action>',
            "no sections at all",
            "<answer>4</answer>",
        ]
    )
    result = await ReActAgent(model, tool_chain=chain()).run("2 + 2?")
    assert result.answer == "4"
    steps = [r for r in caplog.records if hasattr(r, "answered")]
    assert [r.levelno for r in steps] == [logging.DEBUG] * 3
    assert [fields(r, "step", "calls", "answered") for r in steps] == [
        (1, ("add", "find_flight"), False),
        (2, (), False),
        (3, (), True),
    ]
    for record, step in zip(steps, result.steps, strict=True):
        usage = step.usage
        assert fields(record, "input_tokens", "output_tokens") == (
            usage.input_tokens,
            usage.output_tokens,
        )
    assert steps[0].getMessage().startswith("agent step 1: the model called add, find_flight (")
    assert steps[2].getMessage().startswith("agent step 3: the model answered: 4 (")
    (rejected,) = [r for r in caplog.records if hasattr(r, "rejection")]
    assert rejected.levelno == logging.INFO
    assert fields(rejected, "rejection", "step") == ("format", 2)
    assert "no section found" in rejected.getMessage()
    (ended,) = [r for r in caplog.records if hasattr(r, "stopped_by")]
    assert (ended.levelno, ended.getMessage()) == (
        logging.DEBUG,
        "agent ended: answer after 3 steps",
    )


async def test_native_steps_log_their_calls(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agents")
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=2), "4"])
    result = await ToolCallingAgent(model, tool_chain=chain()).run("2 + 2?")
    assert result.answer == "4"
    steps = [r for r in caplog.records if hasattr(r, "answered")]
    assert [fields(r, "step", "calls", "answered") for r in steps] == [
        (1, ("add",), False),
        (2, (), True),
    ]


async def test_with_logging_off_a_run_leaves_no_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agents")
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=2), "4"])
    await ToolCallingAgent(model, tool_chain=chain()).run("2 + 2?")
    assert [r for r in caplog.records if r.name.startswith("agents")] == []


# --- the console trace ------------------------------------------------------------------


def traced(
    agent: ReActAgent[str] | ToolCallingAgent[str], task: str
) -> tuple[str, AgentResult[str]]:
    out, ctx = io.StringIO(), ExecutionContext(name="demo")
    detach = ConsoleTraceWriter(out).attach(ctx)
    result = agent.run_sync(task, ctx=ctx)
    detach()
    return out.getvalue(), result


def test_the_console_trace_shows_a_run_as_it_happens() -> None:
    model = ScriptedModel(
        [
            "<thinking>Is [/b] a tag? [bold]maybe[/bold]</thinking>"
            '<action>[{"tool": "add", "args": {"a": 2, "b": 2}},'
            ' {"tool": "find_flight", "args": {"number": "[/INST]\\u001b]0;pwned\\u0007"}},'
            ' {"tool": "ad", "args": {}}]</action>',
            "no sections at all",
            "<answer>[red]4[/red]</answer>",
        ]
    )
    text, result = traced(ReActAgent(model, tool_chain=chain()), "2 + 2?")
    assert result.answer == "[red]4[/red]"
    lines = text.splitlines()
    assert lines[0] == "step 1"
    assert lines[1].startswith("  scripted replied in ")
    assert "Is [/b] a tag? [bold]maybe[/bold]" in lines[2]
    assert '  -> add {"a":2,"b":2} [call_1]' in lines
    assert any(line.startswith("  <- add ok in ") and line.endswith(": 4") for line in lines)
    flight = next(line for line in lines if line.startswith("  <- find_flight failed"))
    assert flight.endswith(r"no flight [/INST]\x1b]0;pwned\x07")
    assert "(tool_error)" in flight
    assert any(line.startswith("  <- ad failed (unknown_tool)") for line in lines)
    assert "  ! reply rejected (format): no section found" in text
    assert lines[-2:] == ["answer: [red]4[/red]", f"(demo: 3 steps, {_tokens(result)} tokens)"]
    assert "\x1b" not in text and "\x07" not in text


def test_the_console_trace_of_a_native_run_and_of_a_stop() -> None:
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=2)] * 3)
    agent = ToolCallingAgent(model, tool_chain=chain(), limits=Limits(max_steps=2))
    text, result = traced(agent, "Loop")
    assert result.stopped_by == "limit"
    assert text.count('  -> add {"a":2,"b":2} [call_') == 2
    assert text.splitlines()[-2] == "stopped by limit: max_steps"


def test_the_console_trace_redacts_what_a_model_repeats(
    loopback: LoopbackServer,
) -> None:
    loopback.enqueue(openai_completion(f"<answer>your key is {KEY}</answer>"))
    model = OpenAIChatModel("m", api_key=KEY, base_url=loopback.openai_base_url)
    text, result = traced(ReActAgent(model), "What is my key?")
    assert result.answer == f"your key is {KEY}"  # the program gets what the model said
    assert KEY not in text and f"answer: your key is {REDACTED}" in text


def _tokens(result: AgentResult[str]) -> int:
    return result.usage.input_tokens + result.usage.output_tokens
