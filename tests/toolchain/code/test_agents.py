"""Code mode the user's way: both agents run a program the model wrote, the text agent
from its action section, the native one through the one tool ``run_python`` (over a real
OpenAI-compatible HTTP server on loopback)."""

from __future__ import annotations

import json
from collections import Counter

from agents import ReActAgent, ToolCallingAgent
from agents.models import OpenAIChatModel, ScriptedModel
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_call, openai_calls, openai_completion
from toolchain import tool
from toolchain.code import PythonToolChain

runs: Counter[str] = Counter()

PROGRAM = (
    "import asyncio\n"
    'paris, oslo = await asyncio.gather(get_weather("Paris"), get_weather("Oslo"))\n'
    'print("warmer:", paris["city"] if paris["temp_c"] > oslo["temp_c"] else oslo["city"])'
)


@tool
def get_weather(city: str) -> dict[str, object]:
    """Current weather for a city."""
    runs[city] += 1
    return {"city": city, "temp_c": {"Paris": 21.5, "Oslo": 9.0}.get(city, 15.0)}


def chain() -> PythonToolChain:
    return PythonToolChain().register_tool(get_weather)


def test_the_text_agent_runs_the_program_in_its_action() -> None:
    runs.clear()
    model = ScriptedModel([f"<action>\n{PROGRAM}\n</action>", "<answer>Paris</answer>"])
    result = ReActAgent(model, tool_chain=chain()).run_sync("Which is warmer, Paris or Oslo?")
    assert result.answer == "Paris"
    assert runs == Counter({"Paris": 1, "Oslo": 1})
    (step,) = result.steps[0].tool_results
    assert step.text == (
        "<observation>\n<run_python>\nwarmer: Paris\n</run_python>\n</observation>"
    )
    assert [c.name for c in step.raw.calls] == ["get_weather", "get_weather", "run_python"]
    system = result.messages[0].text_content()
    assert "async def get_weather(city: str) -> dict[str, Any]:" in system
    assert "await every call" in system  # the chain's guidance


def test_a_type_error_is_answered_and_the_model_tries_again() -> None:
    runs.clear()
    model = ScriptedModel(
        [
            '<action>w = await get_weather(town="Oslo")\nprint(w)</action>',
            '<action>print((await get_weather("Oslo"))["temp_c"])</action>',
            "<answer>9.0</answer>",
        ]
    )
    result = ReActAgent(model, tool_chain=chain()).run_sync("How warm is Oslo?")
    assert result.answer == "9.0"
    (first,), (second,) = (step.tool_results for step in result.steps[:2])
    assert "the program was not run (no tool ran)" in first.text
    assert "unknown-argument" in first.text
    assert "<run_python>\n9.0\n</run_python>" in second.text
    assert runs == Counter({"Oslo": 1})


def test_the_native_agent_calls_run_python_over_http(loopback: LoopbackServer) -> None:
    runs.clear()
    loopback.enqueue(
        openai_calls([openai_call("call_a", "run_python", json.dumps({"code": PROGRAM}))]),
        openai_completion("Paris is warmer."),
    )
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_base_url)
    result = ToolCallingAgent(model, tool_chain=chain()).run_sync("Which is warmer?")
    assert result.answer == "Paris is warmer."
    assert runs == Counter({"Paris": 1, "Oslo": 1})
    first, second = (request.json() for request in loopback.requests)
    (offered,) = first["tools"]  # one tool: the program; the tools are its stubs
    assert offered["function"]["name"] == "run_python"
    assert offered["function"]["parameters"]["required"] == ["code"]
    assert (
        "async def get_weather(city: str) -> dict[str, Any]:"
        in (offered["function"]["description"])
    )
    reply = second["messages"][-1]
    assert reply == {"role": "tool", "tool_call_id": "call_a", "content": "warmer: Paris"}
