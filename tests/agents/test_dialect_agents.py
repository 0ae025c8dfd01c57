"""``DialectToolChain`` as the drop-in for local models served without a tool parser.

The server (the loopback OpenAI-compatible one, driven through the real ``openai`` SDK
by a model string, as a user points the agent at vLLM or llama.cpp) passes the model's
native call format through as text content. Both agents must read it as calls, keep
the reasoning apart, answer with the content alone, and tell the model when call
markup could not be read, never take it as the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic
import pytest

from agents import ReActAgent, RunFinished, ToolCallingAgent, TypedTermination
from agents.result import AgentResult
from tests.support.agent_kinds import Agent, Kind, answer
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer
from toolchain import DialectToolChain, JSONToolChain, tool

THINK = "<think>Oslo first, two days.</think>\n"
CALLS = {
    "hermes": (
        THINK + "Let me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>'
    ),
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]',
    "qwen3_coder": (
        THINK + "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
    ),
    "llama3_json": '{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}}',
    "llama3_python_tag": (
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}}'
    ),
    "pythonic": 'Checking. [get_weather(city="Oslo", days=2)]',
}
ANSWER = "Take an umbrella: rain both days."
WEATHER = {"city": "Oslo", "days": 2, "sky": "rain"}


@tool
def get_weather(city: str, days: int = 1) -> dict[str, object]:
    """The weather in a city for the next days."""
    return {"city": city, "days": days, "sky": "rain"}


@pytest.fixture
def server(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("VLLM_API_BASE", loopback.openai_base_url)
    monkeypatch.setenv("VLLM_API_KEY", "local-key")
    return loopback


def make_agent(kind: Kind) -> Agent:
    chain = DialectToolChain().register_tool(get_weather)
    if kind == "native":
        return ToolCallingAgent("vllm:qwen3", tool_chain=chain)
    return ReActAgent("vllm:qwen3", tool_chain=chain)


async def run(
    agent: ToolCallingAgent[Any] | ReActAgent[Any], task: str, *, streaming: bool
) -> AgentResult[Any]:
    if not streaming:
        return await agent.run(task)
    events = [event async for event in agent.stream(task)]
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last.result


def script(server: LoopbackServer, outputs: Sequence[str]) -> None:
    # chunk_size=4 splits every marker across stream chunks.
    server.respond_with(chat_script(outputs, chunk_size=4))


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kind", ["native", "react"])
@pytest.mark.parametrize("family", sorted(CALLS))
async def test_native_call_text_runs_as_calls(
    server: LoopbackServer, family: str, kind: Kind, streaming: bool
) -> None:
    script(server, [CALLS[family], answer(kind, ANSWER)])
    result = await run(make_agent(kind), "Do I need an umbrella in Oslo?", streaming=streaming)

    assert result.ok, result.error
    assert result.answer == ANSWER
    first = result.steps[0]
    assert first.feedback == ""
    raw = first.tool_results[0].raw
    assert [(call.name, dict(call.args)) for call in raw.calls] == [
        ("get_weather", {"city": "Oslo", "days": 2})  # XML and pythonic text typed by schema
    ]
    assert raw.ok and raw.results[0] is not None and raw.results[0].output == WEATHER
    if CALLS[family].startswith(THINK):
        assert first.sections["thinking"] == ["Oslo first, two days."]
    sent = server.requests[1].json()["messages"]
    if kind == "native":
        # The conversation reads as if the server had a tool parser: a structured call
        # (no markup, no thinking in the content) answered by its own tool message.
        assistant, reply = sent[-2], sent[-1]
        assert assistant["role"] == "assistant"
        assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["get_weather"]
        assert "<tool_call>" not in str(assistant.get("content"))
        assert "<think>" not in str(assistant.get("content"))
        assert reply["role"] == "tool" and reply["tool_call_id"] == assistant["tool_calls"][0]["id"]
        assert '"sky":"rain"' in reply["content"]
        assert [c.name for c in first.tool_calls] == ["get_weather"]
    else:
        assert sent[-2] == {"role": "assistant", "content": CALLS[family]}
        assert "<observation>" in sent[-1]["content"] and '"sky":"rain"' in sent[-1]["content"]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_native_plain_answer_is_the_content_without_thinking(
    server: LoopbackServer, streaming: bool
) -> None:
    script(server, ["<think>No tool needed.</think>\nIt is 4."])
    result = await run(make_agent("native"), "2 + 2?", streaming=streaming)
    assert result.ok and result.answer == "It is 4."
    assert result.steps[0].sections == {"thinking": ["No tool needed."]}
    assert result.messages[-1].text_content() == "It is 4."


async def test_native_answer_quoting_a_call_shape_for_no_tool_stays_the_answer(
    server: LoopbackServer,
) -> None:
    # Call-shaped JSON naming no offered tool, in an answer: text, as written.
    answer = (
        "A call looks like this:\n```json\n"
        '{"name": "book_flight", "arguments": {"to": "Oslo"}}\n```'
    )
    script(server, [answer])
    result = await run(make_agent("native"), "Show me a tool call.", streaming=False)
    assert result.ok and result.answer == answer
    assert result.steps[0].feedback == ""


async def test_react_final_answer_label_is_the_answer(server: LoopbackServer) -> None:
    script(server, ["Thought: no lookup needed.\nFinal Answer: 4"])
    result = await run(make_agent("react"), "2 + 2?", streaming=False)
    assert result.ok and result.answer == "4"
    assert result.steps[0].sections == {"thinking": ["no lookup needed."]}


async def test_react_plain_prose_without_sections_is_still_fed_back(
    server: LoopbackServer,
) -> None:
    script(server, ["It is 4.", "<answer>4</answer>"])
    result = await run(make_agent("react"), "2 + 2?", streaming=False)
    assert result.answer == "4"
    assert "no section found" in result.steps[0].feedback


MALFORMED = '<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>'
GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kind", ["native", "react"])
async def test_a_malformed_call_is_feedback_never_the_answer(
    server: LoopbackServer, kind: Kind, streaming: bool
) -> None:
    script(server, [f"Checking.\n{MALFORMED}", GOOD, answer(kind, ANSWER)])
    result = await run(make_agent(kind), "Umbrella in Oslo?", streaming=streaming)

    assert result.ok and result.answer == ANSWER
    first, second = result.steps[0], result.steps[1]
    assert first.tool_results == () and "your tool call" in first.feedback
    assert "<tool_call> body is not JSON" in first.feedback
    assert result.stats["parse_errors"] == 1
    # The model was told, in the next request, and then made the call.
    told = server.requests[1].json()["messages"][-1]
    assert told["role"] == "user" and "could not be read" in told["content"]
    assert second.tool_results[0].raw.ok


async def test_native_calls_run_and_the_unread_rest_is_fed_back(server: LoopbackServer) -> None:
    script(server, [f"{GOOD}\n{MALFORMED}", ANSWER])
    result = await run(make_agent("native"), "Umbrella in Oslo?", streaming=False)
    assert result.ok and result.answer == ANSWER
    first = result.steps[0]
    assert first.tool_results[0].raw.ok
    assert "part of your reply was not read as a tool call" in first.feedback
    sent = server.requests[1].json()["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "user"]


async def test_native_unknown_tool_in_markup_is_that_calls_error(server: LoopbackServer) -> None:
    unknown = '<tool_call>{"name": "get_wether", "arguments": {"city": "Oslo"}}</tool_call>'
    script(server, [unknown, ANSWER])
    result = await run(make_agent("native"), "Umbrella in Oslo?", streaming=False)
    assert result.ok and result.answer == ANSWER
    error = result.steps[0].tool_results[0].raw.errors[0]
    assert error is not None and error.kind == "unknown_tool"
    assert "Did you mean 'get_weather'" in error.message


class Verdict(pydantic.BaseModel):
    umbrella: bool


async def test_native_typed_answer_written_as_a_call(server: LoopbackServer) -> None:
    script(
        server,
        [GOOD, '<tool_call>{"name": "final_answer", "arguments": {"umbrella": true}}</tool_call>'],
    )
    chain = DialectToolChain().register_tool(get_weather)
    agent = ToolCallingAgent("vllm:qwen3", tool_chain=chain, termination=TypedTermination(Verdict))
    result = await agent.run("Umbrella in Oslo?")
    assert result.ok, result.error
    assert result.answer == Verdict(umbrella=True)


async def test_json_chain_unchanged_native_text_is_the_answer(server: LoopbackServer) -> None:
    script(server, [GOOD])
    agent = ToolCallingAgent("vllm:qwen3", tool_chain=JSONToolChain().register_tool(get_weather))
    result = await agent.run("Umbrella in Oslo?")
    assert result.answer == GOOD  # only the dialect chain reads calls in text
