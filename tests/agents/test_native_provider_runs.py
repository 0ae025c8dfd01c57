"""``ToolCallingAgent`` runs through the real OpenAI and Anthropic SDKs, over loopback HTTP.

Each test drives the whole agent (step engine, chain, tools, adapter, SDK, HTTP) for
both providers and checks two things: what the SDK really sent (``server.requests``)
and the ``AgentResult``. Covered: parallel calls answered by call id, streamed argument
JSON split at awkward points, unreadable arguments answered as that call's error, an
image inside a tool result, a typed answer through ``final_answer``, and a 429 retried.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pydantic
import pytest

from agents import (
    ModelTextDelta,
    ModelToolCallDelta,
    RunEvent,
    RunFinished,
    ToolCallingAgent,
    ToolCallStarted,
    TypedTermination,
)
from agents.models import AnthropicModel, OpenAIChatModel, ToolCallRequest, Usage
from tests.support.anthropic_replies import anthropic_blocks_stream, anthropic_error, tool_use
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_call_delta, openai_calls_stream, openai_error
from tests.support.replies import (
    Provider,
    calls_reply,
    streamed_calls,
    streamed_text_reply,
    text_reply,
)
from toolchain import ImageContent, JSONToolChain, Tool, ToolResult, tool
from toolchain.testing import fixed_clock

ProviderModel = OpenAIChatModel | AnthropicModel

# A valid 1x1 PNG (checked by `test_the_png_is_a_valid_image`).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
PNG_BASE64 = base64.b64encode(PNG).decode()


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest) -> Provider:
    chosen: Provider = request.param
    return chosen


@pytest.fixture
async def model(provider: Provider, server: LoopbackServer) -> AsyncIterator[ProviderModel]:
    adapter: ProviderModel
    if provider == "openai":
        adapter = OpenAIChatModel(
            "gpt-test", api_key="k", base_url=server.openai_base_url, max_retries=2
        )
    else:
        adapter = AnthropicModel(
            "claude-test", api_key="k", base_url=server.base_url, max_retries=2
        )
    yield adapter
    await adapter.aclose()


def native(model: ProviderModel, *tools: Tool[Any, Any]) -> ToolCallingAgent[str]:
    chain = JSONToolChain()
    for each in tools:
        chain.register_tool(each)
    return ToolCallingAgent(model, tool_chain=chain, clock=fixed_clock)


def ids(provider: Provider, *names: str) -> tuple[str, ...]:
    """Call ids in each provider's style: ``call_<name>`` or ``toolu_<name>``."""
    prefix = "call_" if provider == "openai" else "toolu_"
    return tuple(prefix + name for name in names)


async def collect(events: AsyncIterator[RunEvent[Any]]) -> list[RunEvent[Any]]:
    return [event async for event in events]


def finished(events: Sequence[RunEvent[Any]]) -> RunFinished[Any]:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def test_the_png_is_a_valid_image() -> None:
    """The image the tools return is a real PNG: signature, CRCs, pixel data, IEND."""
    assert PNG[:8] == b"\x89PNG\r\n\x1a\n"
    position = 8
    kinds: list[bytes] = []
    while position < len(PNG):
        (length,) = struct.unpack(">I", PNG[position : position + 4])
        kind, data = PNG[position + 4 : position + 8], PNG[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", PNG[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + data) == crc
        kinds.append(kind)
        if kind == b"IHDR":
            assert struct.unpack(">IIBBBBB", data) == (1, 1, 8, 2, 0, 0, 0)
        if kind == b"IDAT":
            assert zlib.decompress(data) == b"\x00\xff\x00\x00"  # one red pixel
        position += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


# -- 1. parallel calls ------------------------------------------------------------------


async def test_parallel_calls_run_concurrently_and_each_is_answered_by_its_id(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    log: list[str] = []
    both_started = asyncio.Event()
    time_done = asyncio.Event()

    async def started(name: str) -> None:
        log.append(f"start {name}")
        if len(log) == 2:
            both_started.set()
        # Called one after the other, the first would wait here for the second in vain.
        await asyncio.wait_for(both_started.wait(), 5)

    @tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        await started("weather")
        await asyncio.wait_for(time_done.wait(), 5)  # finish last, though called first
        log.append("end weather")
        return f"Sunny in {city}"

    @tool
    async def get_time(city: str) -> str:
        """The local time in a city."""
        await started("time")
        log.append("end time")
        time_done.set()
        return f"14:00 in {city}"

    weather_id, time_id = ids(provider, "w1", "t2")
    server.enqueue(
        calls_reply(
            provider,
            [
                (weather_id, "get_weather", '{"city": "Paris"}'),
                (time_id, "get_time", '{"city":"Paris"}'),
            ],
            text="Checking both.",
        ),
        text_reply(provider, "Sunny, and 14:00."),
    )
    result = await native(model, get_weather, get_time).run("Weather and time in Paris?")

    assert result.ok, result.error
    assert result.answer == "Sunny, and 14:00."
    assert sorted(log[:2]) == ["start time", "start weather"]
    assert log[2:] == ["end time", "end weather"]
    assert len(server.requests) == 2
    first, second = (request.json() for request in server.requests)
    if provider == "openai":
        assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "get_time"]
        assert first["tool_choice"] == "auto"
        assert second["messages"][2:] == [
            {
                "role": "assistant",
                "content": "Checking both.",
                "tool_calls": [
                    {
                        "id": weather_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": time_id,
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"city":"Paris"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": weather_id, "content": "Sunny in Paris"},
            {"role": "tool", "tool_call_id": time_id, "content": "14:00 in Paris"},
        ]
    else:
        assert [t["name"] for t in first["tools"]] == ["get_weather", "get_time"]
        assert first["tool_choice"] == {"type": "auto"}
        assert second["messages"][1:] == [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking both."},
                    {
                        "type": "tool_use",
                        "id": weather_id,
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": time_id,
                        "name": "get_time",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": weather_id,
                        "content": [{"type": "text", "text": "Sunny in Paris"}],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": time_id,
                        "content": [{"type": "text", "text": "14:00 in Paris"}],
                    },
                ],
            },
        ]
    assert [c.id for c in result.steps[0].tool_calls] == [weather_id, time_id]
    replies = [(m.tool_call_id, m.name) for m in result.messages if m.role == "tool"]
    assert replies == [(weather_id, "get_weather"), (time_id, "get_time")]


# -- 2. a streamed run ------------------------------------------------------------------

# The weather call's argument JSON, as the model writes it: \u escapes, an escaped quote,
# an escaped backslash, raw UTF-8 (ü, 🥐) and a surrogate pair escape (🌍).
WEATHER_JSON = r'{"city": "Caf\u00e9 \"Zürich\" \\ 🥐 \ud83c\udf0d"}'
WEATHER_CITY = 'Café "Zürich" \\ 🥐 🌍'
WEATHER_PIECES = (
    "{",  # a piece holding only the opening brace
    '"ci',  # inside a key
    r'ty": "Caf\u00',  # inside a string, inside a \u escape
    "e9 \\",  # a lone backslash: its escaped character comes next
    '"Zü',
    'rich\\" \\',  # the first half of an escaped backslash
    "\\ 🥐 \\ud83c",  # between the halves of a surrogate pair
    '\\udf0d"}',
)
TIME_JSON = '{"city": "Zürich"}'
TIME_PIECES = ('{"city', '": "Zü', 'rich"}')


async def test_a_streamed_run_reassembles_call_arguments_split_at_awkward_points(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    assert "".join(WEATHER_PIECES) == WEATHER_JSON and "".join(TIME_PIECES) == TIME_JSON
    assert json.loads(WEATHER_JSON) == {"city": WEATHER_CITY}
    received: list[tuple[str, str]] = []

    @tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        received.append(("get_weather", city))
        return "Sunny"

    @tool
    async def get_time(city: str) -> str:
        """The local time in a city."""
        received.append(("get_time", city))
        return "14:00"

    weather_id, time_id = ids(provider, "w", "t")
    expected: list[ModelToolCallDelta]
    if provider == "openai":
        # Interleaved, as chat completions allow: the second call opens while the first
        # is in the middle of a key.
        w, t = WEATHER_PIECES, TIME_PIECES
        order = [(0, w[0]), (0, w[1]), (1, ""), (0, w[2]), (1, t[0]), (0, w[3]), (1, t[1])]
        order += [(0, w[4]), (0, w[5]), (1, t[2]), (0, w[6]), (0, w[7])]
        deltas: list[Mapping[str, Any]] = [{"content": "On it."}]
        expected = []
        opened: set[int] = set()
        for index, piece in order:
            call_id, name = (weather_id, "get_weather") if index == 0 else (time_id, "get_time")
            if index in opened:
                deltas.append(openai_call_delta(index, arguments=piece))
                expected.append(ModelToolCallDelta(1, index, "", "", piece))
            else:
                opened.add(index)
                deltas.append(openai_call_delta(index, call_id, name, piece))
                expected.append(ModelToolCallDelta(1, index, call_id, name, piece))
        first_reply = openai_calls_stream(deltas, split_every=3)
    else:
        # The Messages API streams one content block after another.
        first_reply = anthropic_blocks_stream(
            [
                ({"type": "text", "text": ""}, ["On ", "it."]),
                (tool_use(weather_id, "get_weather", {}), WEATHER_PIECES),
                (tool_use(time_id, "get_time", {}), TIME_PIECES),
            ],
            split_every=3,
        )
        expected = [
            ModelToolCallDelta(1, 0, weather_id, "get_weather", ""),
            *[ModelToolCallDelta(1, 0, "", "", piece) for piece in WEATHER_PIECES],
            ModelToolCallDelta(1, 1, time_id, "get_time", ""),
            *[ModelToolCallDelta(1, 1, "", "", piece) for piece in TIME_PIECES],
        ]
    assert first_reply.chunks is not None
    cut_inside_a_character = 0
    for chunk in first_reply.chunks:
        try:
            chunk.decode()
        except UnicodeDecodeError:
            cut_inside_a_character += 1
    assert cut_inside_a_character > 0  # the HTTP chunks split multi-byte UTF-8 too
    server.enqueue(first_reply, streamed_text_reply(provider, "Sunny, ", "14:00."))

    events = await collect(native(model, get_weather, get_time).stream("Zürich?"))

    result = finished(events).result
    assert result.ok, result.error
    assert result.answer == "Sunny, 14:00."
    assert [e for e in events if isinstance(e, ModelToolCallDelta)] == expected
    text = "".join(e.text for e in events if isinstance(e, ModelTextDelta) and e.step == 1)
    assert text == "On it."
    started = [(e.name, e.args) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("get_weather", {"city": WEATHER_CITY}), ("get_time", {"city": "Zürich"})]
    assert sorted(received) == [("get_time", "Zürich"), ("get_weather", WEATHER_CITY)]
    assert result.steps[0].tool_calls == (
        ToolCallRequest(weather_id, "get_weather", WEATHER_JSON),
        ToolCallRequest(time_id, "get_time", TIME_JSON),
    )
    requests = [request.json() for request in server.requests]
    assert len(requests) == 2 and all(body["stream"] is True for body in requests)
    if provider == "openai":
        assistant = requests[1]["messages"][2]
        arguments = [call["function"]["arguments"] for call in assistant["tool_calls"]]
        assert arguments == [WEATHER_JSON, TIME_JSON]  # byte for byte as the model wrote it
        assert assistant["content"] == "On it."
    else:
        assistant = requests[1]["messages"][1]
        assert assistant["content"] == [
            {"type": "text", "text": "On it."},
            {
                "type": "tool_use",
                "id": weather_id,
                "name": "get_weather",
                "input": {"city": WEATHER_CITY},
            },
            {"type": "tool_use", "id": time_id, "name": "get_time", "input": {"city": "Zürich"}},
        ]


# -- 3. unreadable arguments --------------------------------------------------------------


async def test_unreadable_arguments_are_answered_as_that_calls_error_and_the_model_retries(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    cities: list[str] = []

    @tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        cities.append(city)
        return f"Sunny in {city}"

    broken_id, fixed_id = ids(provider, "bad", "good")
    broken = '{"city": "Par'
    # Streamed: the only way Anthropic delivers argument JSON that does not parse.
    server.enqueue(
        streamed_calls(provider, [(broken_id, "get_weather", ['{"city": ', '"Par'])]),
        streamed_calls(provider, [(fixed_id, "get_weather", ['{"city": "Paris"}'])]),
        streamed_text_reply(provider, "Sunny in Paris."),
    )

    result = finished(await collect(native(model, get_weather).stream("Paris weather?"))).result

    assert result.ok, result.error
    assert result.answer == "Sunny in Paris."
    assert cities == ["Paris"]  # the broken call never reached the tool
    raw = result.steps[0].tool_results[0].raw
    assert raw.results[0] is None
    error = raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert result.steps[0].tool_calls == (ToolCallRequest(broken_id, "get_weather", broken),)
    assert result.stats["tool_errors"] == 1
    second, third = (server.requests[i].json() for i in (1, 2))
    if provider == "openai":
        call, answer = second["messages"][2:]
        assert call["tool_calls"][0]["function"]["arguments"] == broken  # as the model wrote it
        assert answer["role"] == "tool" and answer["tool_call_id"] == broken_id
        message = answer["content"]
        assert third["messages"][-1] == {
            "role": "tool",
            "tool_call_id": fixed_id,
            "content": "Sunny in Paris",
        }
    else:
        call, answer = second["messages"][1:]
        # The API wants an object: the broken text goes as _raw, for the model to see.
        assert call["content"] == [
            {"type": "tool_use", "id": broken_id, "name": "get_weather", "input": {"_raw": broken}}
        ]
        [block] = answer["content"]
        assert block["type"] == "tool_result" and block["tool_use_id"] == broken_id
        assert block["is_error"] is True
        [text] = block["content"]
        message = text["text"]
        assert third["messages"][-1]["content"] == [
            {
                "type": "tool_result",
                "tool_use_id": fixed_id,
                "content": [{"type": "text", "text": "Sunny in Paris"}],
            }
        ]
    assert message.startswith("Error: ")
    assert "not valid JSON" in message
    assert "send the call again with its arguments as one JSON object" in message


# -- 4. an image from a tool ----------------------------------------------------------------


async def test_an_image_from_a_tool_travels_with_its_call(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    @tool
    async def chart(city: str) -> ToolResult[str]:
        """A temperature chart of a city."""
        return ToolResult(
            f"chart of {city}", media=(ImageContent(data=PNG, media_type="image/png"),)
        )

    (chart_id,) = ids(provider, "chart")
    server.enqueue(
        calls_reply(provider, [(chart_id, "chart", '{"city": "Rome"}')]),
        text_reply(provider, "One red pixel."),
    )

    result = await native(model, chart).run("Chart Rome.")

    assert result.ok and result.answer == "One red pixel."
    listing = (
        f"chart of Rome\n\n<attachments>\n[1] image (image/png, {len(PNG)} bytes)\n</attachments>"
    )
    sent = server.requests[1].json()["messages"]
    if provider == "openai":
        assert sent[-2:] == [
            {"role": "tool", "tool_call_id": chart_id, "content": listing},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"[attachment 1 of {chart_id} (chart)]"},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{PNG_BASE64}"},
                    },
                ],
            },
        ]
        url = sent[-1]["content"][1]["image_url"]["url"]
        assert base64.b64decode(url.removeprefix("data:image/png;base64,")) == PNG
    else:
        assert sent[-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": chart_id,
                    "content": [
                        {"type": "text", "text": listing},
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": PNG_BASE64,
                            },
                        },
                    ],
                }
            ],
        }
        assert base64.b64decode(sent[-1]["content"][0]["content"][1]["source"]["data"]) == PNG
    [reply] = [m for m in result.messages if m.role == "tool"]
    assert reply.content[1] == ImageContent(data=PNG, media_type="image/png")


# -- 5. a typed answer ----------------------------------------------------------------------


class Booking(pydantic.BaseModel):
    flight: str
    seats: int


def at_least_one_seat(booking: Booking) -> str | None:
    return None if booking.seats >= 1 else "seats must be at least 1"


BOOKING_SCHEMA = {
    "properties": {
        "flight": {"title": "Flight", "type": "string"},
        "seats": {"title": "Seats", "type": "integer"},
    },
    "required": ["flight", "seats"],
    "title": "Booking",
    "type": "object",
    "additionalProperties": False,
}


async def test_a_typed_answer_comes_through_final_answer_and_a_rejection_answers_that_call(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    @tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return "Sunny"

    rejected_id, accepted_id = ids(provider, "a1", "a2")
    server.enqueue(
        calls_reply(provider, [(rejected_id, "final_answer", '{"flight": "AA102", "seats": 0}')]),
        calls_reply(provider, [(accepted_id, "final_answer", '{"flight": "AA102", "seats": 2}')]),
    )
    agent = ToolCallingAgent(
        model,
        termination=TypedTermination(Booking, validators=[at_least_one_seat]),
        tool_chain=JSONToolChain().register_tool(get_weather),
        clock=fixed_clock,
    )

    result = await agent.run("Book AA102 for two.")

    assert result.ok, result.error
    assert isinstance(result.answer, Booking)
    assert result.answer == Booking(flight="AA102", seats=2)
    assert len(server.requests) == 2
    first, second = (request.json() for request in server.requests)
    rejection = "Error: answer rejected: seats must be at least 1"
    if provider == "openai":
        assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "final_answer"]
        answer_tool = first["tools"][1]["function"]
        assert answer_tool["parameters"] == BOOKING_SCHEMA
        assert answer_tool["strict"] is True
        assert first["tool_choice"] == "required"
        assert second["tool_choice"] == "required"
        assert second["messages"][-1] == {
            "role": "tool",
            "tool_call_id": rejected_id,
            "content": rejection,
        }
    else:
        assert [t["name"] for t in first["tools"]] == ["get_weather", "final_answer"]
        answer_tool = first["tools"][1]
        assert answer_tool["input_schema"] == BOOKING_SCHEMA
        assert answer_tool["strict"] is True
        assert first["tool_choice"] == {"type": "any"}
        assert second["tool_choice"] == {"type": "any"}
        assert second["messages"][-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": rejected_id,
                    "content": [{"type": "text", "text": rejection}],
                    "is_error": True,
                }
            ],
        }
    assert result.steps[0].feedback == "answer rejected: seats must be at least 1"
    assert result.stats["parse_errors"] == 1
    last = result.messages[-1]
    assert (last.role, last.tool_call_id, last.text_content()) == (
        "tool",
        accepted_id,
        "Answer accepted.",
    )


# -- 6. a rate limit, then success ----------------------------------------------------------


async def test_a_rate_limited_call_is_retried_and_usage_counts_only_the_replies(
    provider: Provider, server: LoopbackServer, model: ProviderModel
) -> None:
    @tool
    async def get_time(city: str) -> str:
        """The local time in a city."""
        return "14:00"

    (time_id,) = ids(provider, "t")
    # retry-after-ms: 1 (the loopback default) keeps the retry instant; a bare
    # "retry-after: 0" would make both SDKs fall back to their ~0.5 s backoff.
    limited = (
        openai_error(429, "slow down", error_type="rate_limit_error")
        if provider == "openai"
        else anthropic_error(429, "slow down", error_type="rate_limit_error")
    )
    server.enqueue(
        limited,
        calls_reply(provider, [(time_id, "get_time", '{"city": "Oslo"}')], usage=(20, 9)),
        text_reply(provider, "It is 14:00.", usage=(35, 6)),
    )

    result = await native(model, get_time).run("Time in Oslo?")

    assert result.ok, result.error
    assert result.answer == "It is 14:00."
    assert len(server.requests) == 3
    refused, retried, after_tools = server.requests
    assert refused.json() == retried.json()  # the same request, sent again
    assert retried.headers.get("x-stainless-retry-count") == "1"
    assert after_tools.headers.get("x-stainless-retry-count") == "0"
    assert len(result.steps) == 2
    assert [i.usage for i in result.steps] == [Usage(20, 9), Usage(35, 6)]
    assert result.usage == Usage(55, 15)
    assert result.stats["model_calls"] == 2
    assert result.stats["input_tokens"] == 55 and result.stats["output_tokens"] == 15
