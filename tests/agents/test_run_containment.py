"""A run never raises for anything a model, a tool, a termination or an observer does:
it ends with a stop reason and keeps everything already finished."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agents import ReActAgent, ScriptedModel, TypedTermination
from agents.models import Message
from formats import MarkdownFormat, XMLFormat
from tests.support.tools import Stubborn, Weather, add
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Limits,
    Stats,
    ToolCallParseFailed,
    YAMLToolChain,
)

ADD = '<action>\n{"tool": "add", "args": {"a": 1}}\n</action>'


def test_a_run_may_make_exactly_max_tool_calls_and_still_answer() -> None:
    model = ScriptedModel([ADD, ADD, "<answer>2</answer>"])
    chain = JSONToolChain().register_tool(add)
    result = ReActAgent(model, tool_chain=chain, limits=Limits(max_tool_calls=2)).run_sync("go")
    assert result.stopped_by == "answer" and result.answer == "2"
    assert result.stats[Stats.TOOL_CALLS] == 2


def test_the_call_past_max_tool_calls_is_refused_and_the_run_stops() -> None:
    model = ScriptedModel([ADD, ADD, ADD, "<answer>3</answer>"])
    chain = JSONToolChain().register_tool(add)
    result = ReActAgent(model, tool_chain=chain, limits=Limits(max_tool_calls=2)).run_sync("go")
    third = result.steps[2].tool_results[0].raw.errors[0]
    assert third is not None and third.kind == "limit"
    assert result.stopped_by == "limit" and result.limit == "max_tool_calls"
    assert len(result.steps) == 3


def test_an_observer_that_raises_on_parse_failures_does_not_crash_run_sync() -> None:
    ctx = ExecutionContext()

    def broken(event: ToolCallParseFailed) -> None:
        raise RuntimeError("observer bug")

    ctx.events.subscribe(ToolCallParseFailed, broken)
    model = ScriptedModel(["<action>{not json</action>", "<answer>fine</answer>"])
    agent = ReActAgent(model, tool_chain=JSONToolChain().register_tool(add))
    result = agent.run_sync("go", ctx=ctx)
    assert result.answer == "fine"
    assert ctx.stats.get(Stats.OBSERVER_ERRORS) == 1


def test_a_model_that_raises_anything_ends_the_run_with_an_error_and_keeps_its_steps() -> None:
    outputs = iter([ADD])

    def script(messages: Sequence[Message]) -> str:
        for output in outputs:
            return output
        return str(1 / 0)

    agent = ReActAgent(ScriptedModel(script), tool_chain=JSONToolChain().register_tool(add))
    result = agent.run_sync("go")
    assert result.stopped_by == "error"
    assert result.error is not None and "ZeroDivisionError" in result.error
    assert len(result.steps) == 1
    assert result.steps[0].tool_results[0].raw.output(0, int) == 1


class Order(BaseModel):
    item: str


def test_a_validator_that_raises_is_a_rejected_answer_not_a_crash() -> None:
    def broken(order: Order) -> str | None:
        return ["no"][5]  # IndexError

    model = ScriptedModel(['<answer>{"item": "tea"}</answer>'] * 2)
    agent = ReActAgent(model, termination=TypedTermination(Order, validators=[broken]))
    result = agent.run_sync("go", ctx=ExecutionContext(limits=Limits(max_steps=2)))
    assert result.stopped_by == "limit"
    assert len(result.steps) == 2
    assert "IndexError" in result.steps[0].feedback


def test_a_huge_bracket_answer_is_rejected_not_a_recursion_error() -> None:
    model = ScriptedModel(
        ["<answer>" + "[" * 100_000 + "</answer>", '<answer>{"item": "x"}</answer>']
    )
    agent = ReActAgent(model, termination=TypedTermination(Order))
    result = agent.run_sync("go")
    assert result.stopped_by == "answer" and result.answer == Order(item="x")
    assert result.steps[0].feedback.startswith("answer rejected")


def test_a_tool_swallowing_cancellation_cannot_keep_run_sync_from_returning() -> None:
    chain = JSONToolChain(timeout=0.3, cancel_grace=0.1).register_tool(Stubborn())
    call = '<action>{"tool": "stubborn", "args": {"city": "x"}}</action>'
    model = ScriptedModel([call, call, call])
    agent = ReActAgent(model, tool_chain=chain, limits=Limits(timeout=0.5))
    started = time.perf_counter()
    result = agent.run_sync("go")
    assert time.perf_counter() - started < 30  # a hang guard, not a speed limit
    assert result.stopped_by == "limit" and result.limit == "timeout"
    error = result.steps[0].tool_results[0].raw.errors[0]
    assert error is not None and error.kind == "timeout"


@pytest.mark.parametrize("fmt", [XMLFormat, MarkdownFormat], ids=["xml", "markdown"])
@pytest.mark.parametrize("chain_type", [JSONToolChain, YAMLToolChain], ids=["json", "yaml"])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    outputs=st.lists(
        st.one_of(
            st.text(max_size=300),
            st.builds(
                lambda head, body, tail: f"{head}<action>{body}</action>{tail}",
                st.text(max_size=40),
                st.text(max_size=200),
                st.text(max_size=40),
            ),
            st.builds(lambda body: f"# action\n{body}\n# answer\n{body}", st.text(max_size=200)),
            st.sampled_from(
                [
                    '<action>{"tool":"日本","args":{}}</action>',
                    '<action>{"tool":"answer","args":{}}</action>',
                    "<action>- tool: add\n  args: {a: 0x_}</action>",
                    '<action>"\\ud800"</action>',
                    "<answer>" + "[" * 5000 + "</answer>",
                    "<thin\u212aing>x</thinking><action>[1,2,3]</action>",
                ]
            ),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_model_output_ends_a_run_with_a_stop_reason(
    outputs: list[str],
    fmt: type[XMLFormat] | type[MarkdownFormat],
    chain_type: type[JSONToolChain] | type[YAMLToolChain],
) -> None:
    chain = chain_type().register_tool(add).register_tool(Weather())
    agent = ReActAgent(ScriptedModel(outputs), tool_chain=chain, text_format=fmt())
    result = agent.run_sync("go", ctx=ExecutionContext(limits=Limits(max_steps=len(outputs))))
    assert result.stopped_by in ("answer", "limit", "error")
    assert len(result.steps) <= len(outputs)
