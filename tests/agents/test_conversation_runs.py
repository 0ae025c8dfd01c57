"""A run continues an earlier conversation, also after a JSON round trip of its messages."""

from __future__ import annotations

from agents import ReActAgent, ScriptedModel
from agents.models import messages_from_json, messages_to_json
from tests.support.tools import Weather
from toolchain import ImageContent, TextContent, YAMLToolChain

WEATHER = "<action>\n- tool: get_weather\n  args: {city: Paris}\n</action>"


def test_a_second_run_sees_the_first_runs_messages_after_its_own_system_prompt() -> None:
    model = ScriptedModel([WEATHER, "<answer>21 C in Paris</answer>", "<answer>Yes</answer>"])
    agent = ReActAgent(model, tool_chain=YAMLToolChain().register_tool(Weather()))
    first = agent.run_sync("Weather in Paris?")
    second = agent.run_sync("Warm enough for a walk?", history=first.messages)
    assert second.answer == "Yes"
    sent = model.requests[-1].messages
    assert [m.role for m in sent].count("system") == 1
    assert sent[0].role == "system"
    assert sent[1 : len(first.messages)] == first.messages[1:]
    assert "Warm enough for a walk?" in sent[-1].text_content()
    assert second.messages[: len(sent)] == sent


def test_a_conversation_with_media_continues_after_a_json_round_trip() -> None:
    image = ImageContent(data=b"\x89PNG\r\n\x1a\n", media_type="image/png")
    model = ScriptedModel(["<answer>A cat.</answer>", "<answer>Grey.</answer>"])
    agent = ReActAgent(model)
    first = agent.run_sync([TextContent("What is in this picture?"), image])
    stored = messages_to_json(first.messages)
    restored = messages_from_json(stored)
    assert restored == first.messages
    second = agent.run_sync("What colour is it?", history=restored)
    assert second.answer == "Grey."
    assert image in model.requests[-1].messages[1].content
