"""The pass-by-reference benchmark's tasks: their tools, scripts and mechanisms.

The relay's tools and data are the PoC's world (`RelayWorld`), the one the relay's eval
cases and tests run against: video 123's long transcript ends "... and the last number is
4242.", and every page is one large HTML document with two images. The weather tools are
mastra's (`WeatherWorld`), which RelayWorld does not hold.

Each script is a list of steps, one per reply of the model: given the text of the latest
observations, the next calls or the final answer. It is written twice over, by reference
(the model passes on the ``internal://`` reference or the ``$variable`` it was shown) and
by value (it copies what it read), so the tools receive the same values in both runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agents.evals.toolsets import LONG_TRANSCRIPT, RELAY_THRESHOLD, RelayWorld
from benchmarks._record_flow import Recorded, RecordWorld, ScriptError, record_flow
from toolchain import Extension, Tool, tool
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

__all__ = [
    "TASKS",
    "WEATHER",
    "WEATHER_CLAIM",
    "ScriptError",
    "Step",
    "Task",
    "Toolset",
    "WeatherWorld",
    "new_world",
]

WEATHER_CLAIM = 70.0  # the variables plan's claim, % fewer tokens

# -- the weather data ----------------------------------------------------------------------

# mastra's weather tool (create-mastra template) returns exactly these seven fields.
WEATHER: dict[str, dict[str, object]] = {
    "NYC": {
        "temperature": 22.4,
        "feelsLike": 24.1,
        "humidity": 63,
        "windSpeed": 14.8,
        "windGust": 31.0,
        "conditions": "Partly cloudy",
        "location": "New York",
    },
    "London": {
        "temperature": 14.2,
        "feelsLike": 12.9,
        "humidity": 81,
        "windSpeed": 19.4,
        "windGust": 38.2,
        "conditions": "Light drizzle",
        "location": "London",
    },
}
WEATHER_ANSWER = "New York is warmer: {a} °C against {b} °C in London."

# -- the worlds --------------------------------------------------------------------------

Toolset = Literal["relay", "weather", "record"]
"""``relay``: `RelayWorld`'s tools; ``weather``: `WeatherWorld`'s; ``record``:
`RecordWorld`'s (``benchmarks._record_flow``)."""


@dataclass
class WeatherWorld(Recorded):
    """mastra's weather tools, recording what they received."""

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        world = self

        @tool
        def get_weather(location: str) -> dict[str, object]:
            """Get current weather for a location."""
            world.record("get_weather", location=location)
            return WEATHER[location]

        @tool
        def compare_weather(a: dict[str, object], b: dict[str, object]) -> str:
            """Compare two weather reports: which is warmer, windier and wetter."""
            world.record("compare_weather", a=a, b=b)
            hotter = _number(a, "temperature") > _number(b, "temperature")
            warmer, cooler = (a, b) if hotter else (b, a)
            return (
                f"{warmer['location']} is warmer than {cooler['location']} by "
                f"{_number(warmer, 'temperature') - _number(cooler, 'temperature'):.1f} °C."
            )

        return (get_weather, compare_weather)


def _number(report: dict[str, object], key: str) -> float:
    return float(str(report[key]))


# -- the scripts -------------------------------------------------------------------------

Calls = list[tuple[str, dict[str, object]]]
Step = Callable[[str], "Calls | str"]
"""Given the text of the latest observations, the next calls, or the final answer."""
REFERENCE = re.compile(r"internal://[A-Za-z0-9_-]+")


def _ref(seen: str) -> str:
    found = REFERENCE.findall(seen)
    if not found:
        raise ScriptError(f"no reference in what the model saw: {seen[:300]!r}")
    return str(found[-1])


def case1(by_reference: bool) -> list[Step]:
    def check(seen: str) -> Calls:
        return [("deep_check", {"text": _ref(seen) if by_reference else LONG_TRANSCRIPT})]

    return [lambda seen: [("yt_transcribe", {"video_id": "123"})], check, lambda seen: "Checked."]


def case2(by_reference: bool) -> list[Step]:
    def save(seen: str) -> Calls:
        content = _ref(seen) if by_reference else LONG_TRANSCRIPT
        args: dict[str, object] = {"file_content": content, "file_name": "transcript.txt"}
        return [("google_drive_write_file", args)]

    return [lambda seen: [("yt_transcribe", {"video_id": "123"})], save, lambda seen: "Saved."]


def _last_number(seen: str) -> str:
    found = re.findall(r"last number is ([0-9]+)", seen)
    if not found:
        raise ScriptError(f"the number is not in what the model saw: {seen[-300:]!r}")
    return f"The last number is {found[-1]}."


def case3(by_reference: bool) -> list[Step]:
    box: list[str] = []

    def check(seen: str) -> Calls:
        box.append(_ref(seen) if by_reference else LONG_TRANSCRIPT)
        return [("deep_check", {"text": box[0]})]

    def read_end(seen: str) -> Calls:
        args: dict[str, object] = {"opaque_reference": box[0], "start_index": -40, "length": 40}
        return [("internal_resource_read_slice", args)]

    first: Step = lambda seen: [("yt_transcribe", {"video_id": "123"})]  # noqa: E731
    if by_reference:
        return [first, check, read_end, _last_number]
    return [first, check, _last_number]  # the transcript is in the conversation already


def case4(by_reference: bool) -> list[Step]:
    box: list[str] = []

    def check(seen: str) -> Calls:
        box.append(_ref(seen) if by_reference else LONG_TRANSCRIPT)
        return [("deep_check", {"text": box[0]})]

    def save(seen: str) -> Calls:
        analysis = re.search(r"Analysis: [^\n<\"]*", seen)
        if analysis is None:
            raise ScriptError(f"no analysis in what the model saw: {seen[-300:]!r}")
        return [
            ("google_drive_write_file", {"file_content": box[0], "file_name": "transcript.txt"}),
            (
                "google_drive_write_file",
                {"file_content": analysis.group(0), "file_name": "analysis.txt"},
            ),
        ]

    return [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        check,
        save,
        lambda seen: "Both saved.",
    ]


def _images(seen: str) -> str:
    return "Images: " + ", ".join(re.findall(r'<img src="([^"]+)"', seen))


def web1(by_reference: bool) -> list[Step]:
    def grep(seen: str) -> Calls:
        args: dict[str, object] = {"opaque_reference": _ref(seen), "pattern": "<img", "window": 0}
        return [("internal_resource_grep", args)]

    first: Step = lambda seen: [("get_page", {"url": "https://demo.local/history"})]  # noqa: E731
    return [first, grep, _images] if by_reference else [first, _images]


def weather(by_reference: bool) -> list[Step]:
    def compare(seen: str) -> Calls:
        if by_reference:
            return [("compare_weather", {"a": "$weather_nyc", "b": "$weather_london"})]
        return [("compare_weather", {"a": WEATHER["NYC"], "b": WEATHER["London"]})]

    def answer(seen: str) -> str:
        if by_reference:
            refs = {"a": "$weather_nyc.temperature", "b": "$weather_london.temperature"}
            return WEATHER_ANSWER.format(**refs)
        temps = {"a": WEATHER["NYC"]["temperature"], "b": WEATHER["London"]["temperature"]}
        return WEATHER_ANSWER.format(**temps)

    return [
        lambda seen: [("get_weather", {"location": "NYC"})],
        lambda seen: [("get_weather", {"location": "London"})],
        compare,
        answer,
    ]


def _weather_name(tool_name: str, args: Any, output: object) -> str | None:
    return f"weather_{args['location']}" if tool_name == "get_weather" else None


@dataclass(frozen=True)
class Task:
    name: str
    prompt: str
    toolset: Toolset
    script: Callable[[bool], list[Step]]
    extension: Callable[[], Extension]
    claim: str
    big_output: bool = True
    """Whether the first call's output is the large one (its step is reported alone)."""


_TRANSCRIBE = "Generate a transcript of the YouTube video with video_id='123'"
TASKS = (
    Task(
        "case1",
        f"{_TRANSCRIBE} and then pass it to Deep Check for analysis.",
        "relay",
        case1,
        lambda: ContextRelay(RELAY_THRESHOLD),
        "stops context bloat (no figure)",
    ),
    Task(
        "case2",
        f"{_TRANSCRIBE} and save it to a file on Google Drive named 'transcript.txt'.",
        "relay",
        case2,
        lambda: ContextRelay(RELAY_THRESHOLD),
        "stops context bloat (no figure)",
    ),
    Task(
        "case3",
        f"{_TRANSCRIBE} and then pass it to Deep Check for analysis. Then let me know what "
        "number appears at the end of the transcript.",
        "relay",
        case3,
        lambda: ContextRelay(RELAY_THRESHOLD),
        "stops context bloat (no figure)",
    ),
    Task(
        "case4",
        f"{_TRANSCRIBE} and then pass it to Deep Check for analysis. Then save both the "
        "transcript and the analysis to files on Google Drive named 'transcript.txt' and "
        "'analysis.txt', respectively.",
        "relay",
        case4,
        lambda: ContextRelay(RELAY_THRESHOLD),
        "stops context bloat (no figure)",
    ),
    Task(
        "web1",
        "Fetch https://demo.local/history and list the images on the page.",
        "relay",
        web1,
        lambda: ContextRelay(RELAY_THRESHOLD),
        "stops context bloat (no figure)",
    ),
    Task(
        "weather",
        "What's the weather in NYC? What about London? Then compare them.",
        "weather",
        weather,
        lambda: ToolVariables(_weather_name),
        f"~{WEATHER_CLAIM:g} % fewer (variables plan)",
        big_output=False,
    ),
    Task(
        "weather, full guide",
        "What's the weather in NYC? What about London? Then compare them.",
        "weather",
        weather,
        lambda: ToolVariables(_weather_name, instruction_style="full"),
        f"~{WEATHER_CLAIM:g} % fewer (variables plan)",
        big_output=False,
    ),
    Task(
        "weather, minimal guide",
        "What's the weather in NYC? What about London? Then compare them.",
        "weather",
        weather,
        lambda: ToolVariables(_weather_name, instruction_style="minimal"),
        f"~{WEATHER_CLAIM:g} % fewer (variables plan)",
        big_output=False,
    ),
    Task(
        "record",
        "Fetch customer C-1042, enrich the record, then send both to the CRM.",
        "record",
        record_flow,
        ToolVariables,
        f"~{WEATHER_CLAIM:g} % fewer (variables plan)",
        big_output=False,
    ),
)


def new_world(toolset: Toolset) -> RelayWorld | WeatherWorld | RecordWorld:
    """Fresh tools for one run of a task on ``toolset``."""
    if toolset == "record":
        return RecordWorld()
    return RelayWorld() if toolset == "relay" else WeatherWorld()
