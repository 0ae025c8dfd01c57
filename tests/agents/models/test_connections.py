"""A model keeps its connections from run to run: agents built per request that share
one model share its keep-alive connection (docs/models.md, "One model for many agents")."""

from __future__ import annotations

import openai

from agents import ToolCallingAgent
from agents.models import OpenAIChatModel
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion
from toolchain import JSONToolChain


async def test_agents_built_per_request_on_one_model_share_its_connection(
    loopback: LoopbackServer,
) -> None:
    loopback.respond_with(lambda request: openai_completion("done"))
    model = OpenAIChatModel("gpt-test", api_key="test-key", base_url=loopback.openai_base_url)
    chain = JSONToolChain()
    try:
        for _ in range(5):  # a web handler's way: a new agent for each request
            agent = ToolCallingAgent(model, tool_chain=chain)
            result = await agent.run("Hello?")
            assert result.answer == "done"
    finally:
        await model.aclose()
    assert len(loopback.requests) == 5
    assert loopback.connections_opened == 1


async def test_a_model_built_per_request_opens_connections_of_its_own(
    loopback: LoopbackServer,
) -> None:
    """What the docs warn of: a model per request, even over one client, connects anew."""
    loopback.respond_with(lambda request: openai_completion("done"))
    client = openai.AsyncOpenAI(api_key="test-key", base_url=loopback.openai_base_url)
    chain = JSONToolChain()
    try:
        for _ in range(3):
            model = OpenAIChatModel("gpt-test", client=client)
            result = await ToolCallingAgent(model, tool_chain=chain).run("Hello?")
            assert result.answer == "done"
            await model.aclose()
    finally:
        await client.close()
    assert loopback.connections_opened == 3
