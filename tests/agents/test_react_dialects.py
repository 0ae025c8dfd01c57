"""ReActAgent with a DialectToolChain: native call formats inside the action section."""

from __future__ import annotations

from agents.models import ScriptedModel
from agents.react import ReActAgent
from tests.support.tools import Weather
from toolchain import DialectToolChain


async def test_native_calls_in_the_action_section() -> None:
    model = ScriptedModel(
        [
            "<thinking>Need both.</thinking>\n<action>\n"
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n'
            "<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n"
            "</action>",
            "<answer>Both are mild.</answer>",
        ]
    )
    agent = ReActAgent(model, tool_chain=DialectToolChain().register_tool(Weather()))
    result = await agent.run("Weather in Paris and Oslo?")
    assert result.ok and result.answer == "Both are mild."
    raw = result.steps[0].tool_results[0].raw
    assert [dict(call.args) for call in raw.calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert raw.ok
    assert "<tool_call>" in model.requests[0].messages[0].text_content()  # the guidance


async def test_an_action_with_no_call_is_fed_back() -> None:
    model = ScriptedModel(["<action>I will look it up.</action>", "<answer>Sorry.</answer>"])
    agent = ReActAgent(model, tool_chain=DialectToolChain().register_tool(Weather()))
    result = await agent.run("Weather?")
    assert result.answer == "Sorry."
    feedback = model.requests[-1].messages[-1].text_content()
    assert "no tool call was found" in feedback
