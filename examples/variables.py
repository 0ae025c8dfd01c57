"""Tool-output variables: the model compares two forecasts by name, not by copying them.

Run: python examples/variables.py                       # offline, on a scripted stand-in model
     python examples/variables.py openai:gpt-4o-mini    # a real model (OPENAI_API_KEY set)

Every tool output is saved as a variable (``$weather_nyc = {...}`` in the tool message);
``compare_weather`` is called with ``"$weather_nyc"`` and ``"$weather_london"`` and
receives both dicts whole, and the answer's ``$...`` references are filled in too.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from agents import Message, ModelError, ScriptedModel, ToolCallingAgent, render_transcript
from agents.models import ScriptedReply
from toolchain import JSONToolChain, ToolError, tool
from toolchain.variables import ToolVariables

WEATHER: dict[str, dict[str, object]] = {
    "nyc": {"temperature": 28.4, "feelsLike": 30.1, "humidity": 40, "windSpeed": 12.2,
            "conditions": "Clear sky", "location": "New York"},
    "london": {"temperature": 17.2, "feelsLike": 16.5, "humidity": 85, "windSpeed": 20.5,
               "conditions": "Light rain", "location": "London"},
}  # fmt: skip


@tool
def get_weather(location: str) -> dict[str, object]:
    """Current weather for a location (NYC or London): °C, %, km/h."""
    found = WEATHER.get(location.strip().lower())
    if found is None:
        raise ToolError(f"no data for {location!r}; known locations: NYC, London")
    return found


@tool
def compare_weather(a: dict[str, object], b: dict[str, object]) -> str:
    """Compare two weather reports from get_weather."""
    gap = float(str(a["temperature"])) - float(str(b["temperature"]))
    warmer, colder = (a, b) if gap >= 0 else (b, a)
    return f"{warmer['location']} is {abs(gap):.1f} °C warmer than {colder['location']}"


def name_output(tool: str, args: Mapping[str, object], output: object) -> str | None:
    """get_weather(location="NYC") is saved as $weather_nyc; others keep <tool>_<n>."""
    return f"weather_{args['location']}" if tool == "get_weather" else None


def offline_model(messages: Sequence[Message]) -> str | ScriptedReply:
    """Stands in for a real model offline: fetches what is missing, then compares by name."""
    seen = "\n".join(m.text_content() for m in messages if m.role == "tool")
    if "$weather_nyc =" not in seen:
        return ScriptedModel.call("get_weather", location="NYC")
    if "$weather_london =" not in seen:
        return ScriptedModel.call("get_weather", location="London")
    if "$compare_weather_1 =" not in seen:
        return ScriptedModel.call("compare_weather", a="$weather_nyc", b="$weather_london")
    return (
        "$compare_weather_1: $weather_nyc.conditions at $weather_nyc.temperature °C "
        "against $weather_london.conditions at $weather_london.temperature °C."
    )


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else ScriptedModel(offline_model, name="offline")
    chain = JSONToolChain().register_tool(get_weather).register_tool(compare_weather)
    try:
        agent = ToolCallingAgent(
            model, tool_chain=chain, extensions=[ToolVariables(naming=name_output)]
        )
    except ModelError as error:  # e.g. the provider's API key is not set
        sys.exit(str(error))
    result = agent.run_sync("Compare the weather in NYC and London.")
    print(render_transcript(result.messages[1:]))  # all but the system prompt
    print(f"\nanswer: {result.answer if result.ok else result.error}")


if __name__ == "__main__":
    main()
