"""The relay's prompt cases and the mastra weather flow, scripted, in text and native mode.

The simulated tools (`agents.evals.toolsets.RelayWorld`) are those of the relay's case
files in ``agents/evals/cases/relay``.

Each case scripts what a model would do after reading the observations: it takes the
reference or variable name it was shown and passes it on. The assertions are on the
calls made and on what the tools really received (real values, never references).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

import msgspec
import pytest

from agents import AgentResult, ReActAgent, ToolCallingAgent
from agents.evals.toolsets import LONG_TRANSCRIPT, SHORT_TRANSCRIPT, RelayWorld
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from toolchain import Extension, JSONToolChain, ToolChain, tool
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

Mode = Literal["text", "native"]
MODES: list[Mode] = ["text", "native"]

REFERENCE = re.compile(r"internal://[A-Za-z0-9_-]+")

World = RelayWorld  # the simulated tools now live with the relay's prompt cases


Calls = list[tuple[str, dict[str, object]]]
Step = Callable[[str], "Calls | str"]
"""Given the text of the latest observation, the next calls, or the final answer."""


def scripted(mode: Mode, steps: Sequence[Step]) -> ScriptedModel:
    """A model that plays ``steps`` in order, each reading the latest observation."""
    position = iter(steps)

    def reply(messages: Sequence[Message]) -> str | ScriptedReply:
        seen = "\n".join(m.text_content() for m in messages[-3:] if m.role != "assistant")
        planned = next(position)(seen)
        if isinstance(planned, str):
            return planned if mode == "native" else f"<answer>{planned}</answer>"
        if mode == "native":
            calls = tuple(
                ToolCallRequest(f"c{i}", name, msgspec.json.encode(args).decode())
                for i, (name, args) in enumerate(planned)
            )
            return ScriptedReply("", calls)
        body = msgspec.json.encode([{"tool": n, "args": a} for n, a in planned]).decode()
        return f"<action>{body}</action>"

    return ScriptedModel(reply)


def agent(
    mode: Mode, model: ScriptedModel, chain: ToolChain, extensions: Sequence[Extension] = ()
) -> ReActAgent[str] | ToolCallingAgent[str]:
    if mode == "native":
        return ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
    return ReActAgent(model, tool_chain=chain, extensions=extensions)


def ref(seen: str) -> str:
    found = REFERENCE.findall(seen)
    assert found, f"no reference in what the model saw: {seen[:300]!r}"
    return str(found[-1])


def run(
    mode: Mode,
    steps: Sequence[Step],
    world: World,
    relay_mode: Literal["opaque", "json"] = "opaque",
) -> tuple[AgentResult[str], ScriptedModel]:
    model = scripted(mode, steps)
    relay = ContextRelay(threshold=2000, mode=relay_mode)
    relayed = agent(mode, model, world.chain(), [relay])
    return relayed.run_sync("Go."), model


# -- the relay's prompt cases -------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_case0_a_short_output_is_not_boxed(mode: Mode) -> None:
    world = World()
    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "999"})],
        lambda seen: [("deep_check", {"text": SHORT_TRANSCRIPT})],
        lambda seen: "It is fine.",
    ]
    result, _ = run(mode, steps, world)
    assert result.ok
    shown = "".join(m.text_content() for m in result.messages[1:])  # after the system prompt
    assert "internal://" not in shown
    assert world.received["deep_check"] == [{"text": SHORT_TRANSCRIPT}]


@pytest.mark.parametrize("mode", MODES)
def test_case1_a_boxed_transcript_passes_through_to_deep_check(mode: Mode) -> None:
    world = World()
    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        lambda seen: [("deep_check", {"text": ref(seen)})],
        lambda seen: "Checked.",
    ]
    result, _ = run(mode, steps, world)
    assert result.ok
    assert world.received["deep_check"] == [{"text": LONG_TRANSCRIPT}]
    # The model never saw the transcript: only its reference.
    assert "word7999" not in "".join(m.text_content() for m in result.messages)


@pytest.mark.parametrize("mode", MODES)
def test_case2_a_boxed_transcript_is_routed_to_the_writer(mode: Mode) -> None:
    world = World()
    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        lambda seen: [
            ("google_drive_write_file", {"file_content": ref(seen), "file_name": "transcript.txt"})
        ],
        lambda seen: "Saved.",
    ]
    result, _ = run(mode, steps, world)
    assert result.ok and "deep_check" not in world.received
    assert world.received["google_drive_write_file"] == [
        {"file_content": LONG_TRANSCRIPT, "file_name": "transcript.txt"}
    ]


@pytest.mark.parametrize("mode", MODES)
def test_case3_a_slice_of_the_end_answers_without_a_full_read(mode: Mode) -> None:
    world = World()
    box: list[str] = []

    def check(seen: str) -> Calls:
        box.append(ref(seen))
        return [("deep_check", {"text": box[0]})]

    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        check,
        lambda seen: [
            (
                "internal_resource_read_slice",
                {"opaque_reference": box[0], "start_index": -30, "length": 30},
            )
        ],
        lambda seen: f"The last number is {re.findall(r'[0-9]{4}', seen)[-1]}.",
    ]
    result, _ = run(mode, steps, world)
    assert result.answer == "The last number is 4242."
    names = [c.name for it in result.steps for r in it.tool_results for c in r.raw.calls]
    assert "internal_resource_read" not in names


@pytest.mark.parametrize("mode", MODES)
def test_case4_boxed_and_plain_outputs_both_reach_the_writer(mode: Mode) -> None:
    world = World()
    box: list[str] = []

    def check(seen: str) -> Calls:
        box.append(ref(seen))
        return [("deep_check", {"text": box[0]})]

    def save(seen: str) -> Calls:
        analysis = re.search(r"Analysis: [^\n<]*", seen)
        assert analysis is not None, seen
        return [
            ("google_drive_write_file", {"file_content": box[0], "file_name": "transcript.txt"}),
            (
                "google_drive_write_file",
                {"file_content": analysis.group(0).strip('"'), "file_name": "analysis.txt"},
            ),
        ]

    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        check,
        save,
        lambda seen: "Both saved.",
    ]
    result, _ = run(mode, steps, world)
    assert result.ok
    writes = world.received["google_drive_write_file"]
    assert writes[0] == {"file_content": LONG_TRANSCRIPT, "file_name": "transcript.txt"}
    assert writes[1] == {
        "file_content": "Analysis: 8006 words, nothing alarming.",
        "file_name": "analysis.txt",
    }


@pytest.mark.parametrize("mode", MODES)
def test_web1_grep_finds_images_in_a_boxed_page(mode: Mode) -> None:
    world = World()
    steps: list[Step] = [
        lambda seen: [("get_page", {"url": "https://example.com"})],
        lambda seen: [
            (
                "internal_resource_grep",
                {"opaque_reference": ref(seen), "pattern": "<img", "window": 0},
            )
        ],
        lambda seen: "Images: " + ", ".join(re.findall(r'src="([^"]+)"', seen)),
    ]
    result, _ = run(mode, steps, world)
    assert result.answer == "Images: /cat.png, /dog.png"


@pytest.mark.parametrize("mode", MODES)
def test_json_mode_shows_resource_links_and_takes_them_back(mode: Mode) -> None:
    world = World()

    def check(seen: str) -> Calls:
        link = re.search(r'\{"type":"resource_link","uri":"internal://[^"]+"\}', seen)
        assert link is not None, seen
        return [("deep_check", {"text": msgspec.json.decode(link.group(0))})]

    steps: list[Step] = [
        lambda seen: [("yt_transcribe", {"video_id": "123"})],
        check,
        lambda seen: "Checked.",
    ]
    result, _ = run(mode, steps, world, relay_mode="json")
    assert result.ok
    assert world.received["deep_check"] == [{"text": LONG_TRANSCRIPT}]


@pytest.mark.parametrize("mode", MODES)
def test_another_runs_reference_is_unknown_never_its_data(mode: Mode) -> None:
    world = World()
    first, _ = run(
        mode,
        [lambda seen: [("yt_transcribe", {"video_id": "123"})], lambda seen: "ok"],
        world,
    )
    stolen = ref("".join(m.text_content() for m in first.messages))
    second, _ = run(
        mode,
        [lambda seen: [("deep_check", {"text": stolen})], lambda seen: "ok"],
        world,
    )
    errors = second.steps[0].tool_results[0].raw.errors
    assert errors[0] is not None and errors[0].kind == "invalid_arguments"
    assert "unknown reference" in errors[0].message
    assert "deep_check" not in world.received


# -- the mastra weather flow ---------------------------------------------------------------

WEATHER = {
    "NYC": {"city": "NYC", "temperature": 28, "conditions": "sunny", "humidity": 40},
    "London": {"city": "London", "temperature": 17, "conditions": "rain", "humidity": 85},
}


@pytest.mark.parametrize("mode", MODES)
def test_weather_compare_by_variable(mode: Mode) -> None:
    received: list[dict[str, object]] = []

    @tool
    def get_weather(location: str) -> dict[str, object]:
        """Current weather in a city."""
        return WEATHER[location]

    @tool
    def compare_weather(a: dict[str, object], b: dict[str, object]) -> str:
        """Compare two weather reports."""
        received.append({"a": a, "b": b})
        warmer = a if int(str(a["temperature"])) > int(str(b["temperature"])) else b
        return f"{warmer['city']} is warmer"

    def naming(tool: str, args: Any, output: object) -> str | None:
        return f"weather_{args['location']}" if tool == "get_weather" else None

    chain = JSONToolChain(extensions=[ToolVariables(naming)])
    chain.register_tool(get_weather).register_tool(compare_weather)
    steps: list[Step] = [
        lambda seen: [("get_weather", {"location": "NYC"})],
        lambda seen: [("get_weather", {"location": "London"})],
        lambda seen: [("compare_weather", {"a": "$weather_nyc", "b": "$weather_london"})],
        lambda seen: (
            "$compare_weather_1: $weather_nyc.temperature C against $weather_london.temperature C."
        ),
    ]
    model = scripted(mode, steps)
    result = agent(mode, model, chain).run_sync("Compare NYC and London.")
    assert received == [{"a": WEATHER["NYC"], "b": WEATHER["London"]}]
    assert result.answer == '"NYC is warmer": 28 C against 17 C.' or result.answer == (
        "NYC is warmer: 28 C against 17 C."
    )
    # Reports this small are named beside their results, with no guide or list: those
    # would cost each request more than passing the reports by name saves.
    last_request = model.requests[-1].messages
    assert "Variables:" not in "".join(m.text_content() for m in last_request)
    shown = "".join(m.text_content() for m in result.messages)
    assert '$weather_nyc = {"city":"NYC"' in shown
