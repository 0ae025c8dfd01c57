"""A snapshot of a native tool-calling run's transcript, as a user reads it.

Stored as a readable .md file: the system prompt, the task, the model's calls with
their ids, and each call's own tool message (an error, and a result with an image
attachment), so any change to how native runs are answered or rendered shows in review.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from agents import ToolCallingAgent
from agents.models import ScriptedModel, ScriptedReply
from toolchain import ImageContent, JSONToolChain, ToolResult, tool
from toolchain.testing import fixed_clock

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


@tool
def chart(city: str) -> ToolResult[str]:
    """A temperature chart of a city."""
    return ToolResult(
        f"chart of {city}: 14 to 19 C this week",
        media=(ImageContent(data=PNG, media_type="image/png"),),
        instructions="Describe the trend in one sentence.",
    )


@tool
def weather(city: str) -> dict[str, object]:
    """Today's weather in a city."""
    if city == "Atlantis":
        raise LookupError(f"no weather station in {city}")
    return {"city": city, "temp_c": 21}


async def test_native_run_transcript(snapshot_md: SnapshotAssertion) -> None:
    both = ScriptedModel.call("chart", city="Rome", id="call_chart").tool_calls
    both += ScriptedModel.call("weather", city="Atlantis", id="call_weather").tool_calls
    model = ScriptedModel(
        [
            ScriptedReply("I'll get the chart and the weather at once.", both),
            "Rome is warming through the week; Atlantis has no weather station.",
        ]
    )
    agent = ToolCallingAgent(
        model,
        tool_chain=JSONToolChain().register_tool(chart).register_tool(weather),
        behavior="You are a weather assistant.",
        clock=fixed_clock,
    )

    result = await agent.run("How is Rome's week going, and what is the weather in Atlantis?")

    assert result.ok, result.error
    errors = result.steps[0].tool_results[0].raw.errors
    assert [e.kind if e else None for e in errors] == [None, "tool_error"]
    assert result.transcript() == snapshot_md
