"""Whole multi-step ReAct runs through the real provider SDKs, against a loopback server.

The server replays the demo's scripted outputs in each provider's wire format; the
agent, its tools and the SDKs are all real, so this covers request building,
streaming, parallel tool calls and observations end to end.
"""

from __future__ import annotations

import pytest

from agents.demo import build_demo
from agents.demo.script import demo_outputs
from agents.events import ModelTextDelta, RunFinished
from agents.models import AnthropicModel, Model, OpenAIChatModel
from formats import XMLFormat
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer
from tests.support.replies import Provider


@pytest.fixture
def server(loopback: LoopbackServer) -> LoopbackServer:
    loopback.respond_with(chat_script(demo_outputs(XMLFormat(), "yaml"), chunk_size=9))
    return loopback


def provider_model(provider: Provider, server: LoopbackServer) -> Model:
    if provider == "openai":
        return OpenAIChatModel("gpt-test", api_key="k", base_url=server.openai_base_url)
    return AnthropicModel("claude-test", api_key="k", base_url=server.base_url)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_whole_run_with_parallel_calls(provider: Provider, server: LoopbackServer) -> None:
    demo = build_demo(model=provider_model(provider, server))
    result = await demo.agent.run(demo.task)
    assert result.ok, result.error
    assert result.answer is not None and "AA102" in result.answer
    assert demo.data.bookings["BK001"].flight_number == "AA102"
    assert len(server.requests) == 5
    first_action = result.steps[0].tool_results[0]
    assert [c.name for c in first_action.raw.calls] == [
        "get_customer_info",
        "get_flight_info",
        "search_airline_policy",
    ]
    # The second request carries the first observation back to the model.
    body = server.requests[1].json()
    sent = str(body["messages"])
    assert "<observation>" in sent and "customer_id: C001" in sent
    if provider == "anthropic":
        assert "<available_tools>" in str(body["system"])
    else:
        assert body["messages"][0]["role"] == "system"
    assert result.usage.input_tokens > 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_whole_streamed_run(provider: Provider, server: LoopbackServer) -> None:
    demo = build_demo(model=provider_model(provider, server))
    events = [event async for event in demo.agent.stream(demo.task)]
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.result.ok, final.result.error
    answer = "".join(
        e.text for e in events if isinstance(e, ModelTextDelta) and e.section == "answer"
    )
    assert answer == final.result.answer
    assert all(request.json().get("stream") for request in server.requests)
