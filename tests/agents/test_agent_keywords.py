"""What a peer library's user types first: ``tools=[...]`` on either agent, and a
misspelt or foreign keyword refused by name (never an option silently ignored).

The runs go through the real OpenAI SDK to a loopback server, by a model string read
from the environment, as a user's first script does.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agents import ReActAgent, ScriptedModel, ToolCallingAgent, run_prompt
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion
from tests.support.replies import calls_reply
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Tool,
    ToolDefinitionError,
    ToolResult,
    tool,
)

AGENTS = [ReActAgent, ToolCallingAgent]


class Query(BaseModel):
    city: str


seen: list[str] = []


@tool
def get_weather(city: str) -> dict[str, object]:
    """Today's weather in a city."""
    seen.append(city)
    return {"city": city, "sky": "light rain"}


def umbrella_needed(sky: str) -> bool:
    """Whether a sky calls for an umbrella."""
    return "rain" in sky


@pytest.fixture
def server(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    monkeypatch.setenv("OPENAI_API_BASE", loopback.openai_base_url)
    seen.clear()
    return loopback


async def test_tool_calling_agent_takes_tools_and_calls_them(server: LoopbackServer) -> None:
    server.enqueue(
        calls_reply("openai", [("call_1", "get_weather", '{"city": "Oslo"}')]),
        calls_reply("openai", [("call_2", "umbrella_needed", '{"sky": "light rain"}')]),
        openai_completion("Take an umbrella."),
    )
    agent = ToolCallingAgent("openai:m", tools=[get_weather, umbrella_needed])
    result = await agent.run("Do I need an umbrella in Oslo?")
    assert result.ok, result.error
    assert result.answer == "Take an umbrella."
    assert seen == ["Oslo"]
    sent = [spec["function"]["name"] for spec in server.requests[0].json()["tools"]]
    assert sent == ["get_weather", "umbrella_needed"]  # the plain function became a tool
    assert result.steps[1].tool_results[0].raw.output(0, bool) is True
    assert isinstance(agent.tool_chain, JSONToolChain)


async def test_react_agent_takes_tools_and_calls_them_through_a_json_chain(
    server: LoopbackServer,
) -> None:
    server.enqueue(
        openai_completion('<action>{"tool": "get_weather", "args": {"city": "Oslo"}}</action>'),
        openai_completion("<answer>Take an umbrella.</answer>"),
    )
    agent = ReActAgent("openai:m", tools=[get_weather, umbrella_needed])
    result = await agent.run("Do I need an umbrella in Oslo?")
    assert result.ok, result.error
    assert (result.answer, seen) == ("Take an umbrella.", ["Oslo"])
    system = server.requests[0].json()["messages"][0]["content"]
    assert "- get_weather:" in system and "- umbrella_needed:" in system


@pytest.mark.parametrize("agent", AGENTS)
def test_a_misspelt_keyword_is_a_type_error_with_a_did_you_mean(agent: Any) -> None:
    with pytest.raises(TypeError) as raised:
        agent(ScriptedModel(["ok"]), tool_chian=JSONToolChain(), system_prompt="Be terse.")
    message = str(raised.value)
    assert message.startswith(f"{agent.__name__}() got unexpected keyword arguments")
    assert "'tool_chian' (did you mean 'tool_chain'?)" in message
    assert "'system_prompt' (did you mean behavior=...?)" in message


@pytest.mark.parametrize("agent", AGENTS)
def test_an_unknown_keyword_with_no_close_name_lists_the_known_ones(agent: Any) -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'colour'; it takes .*tools"):
        agent(ScriptedModel(["ok"]), colour="blue")


@pytest.mark.parametrize("agent", AGENTS)
def test_tools_and_tool_chain_together_are_refused(agent: Any) -> None:
    with pytest.raises(TypeError, match=r"takes tools= or tool_chain=, not both"):
        agent(ScriptedModel(["ok"]), tools=[get_weather], tool_chain=JSONToolChain())
    with pytest.raises(TypeError, match=r"tools= takes a list of tools"):
        agent(ScriptedModel(["ok"]), tools=get_weather)


def test_run_prompt_refuses_an_unknown_option_by_name() -> None:
    def build(prompt: Any) -> None:
        prompt.user("Hi")

    with pytest.raises(TypeError, match=r"'temprature' \(did you mean 'temperature'\?\)"):
        # mypy rejects this call too; the check is for code it does not see
        run_prompt(build, model=ScriptedModel(["Hello"]), temprature=0.2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'tools' \(did you mean prompt\.def_tool"):
        run_prompt(build, model=ScriptedModel(["Hello"]), tools=[get_weather])  # type: ignore[call-arg]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_tool_class_in_tools_says_to_pass_an_instance(agent: Any) -> None:
    class Forecast(Tool[Query, str]):
        name = "forecast"
        description = "Forecast for a city."

        def call(self, ctx: ExecutionContext, input: Query) -> ToolResult[str]:
            return ToolResult(input.city)

    with pytest.raises(ToolDefinitionError, match=r"register an instance: Forecast\(\)$"):
        agent(ScriptedModel(["ok"]), tools=[Forecast])
