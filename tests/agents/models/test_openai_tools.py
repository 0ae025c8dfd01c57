"""Native tool calling on `OpenAIChatModel`, through the real ``openai`` SDK and the loopback.

The replies with tool calls come from `tests.support.openai_replies`, in the shapes
api.openai.com sends.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from agents.models import (
    GenerateOptions,
    Message,
    ModelCallError,
    ModelResponse,
    OpenAIChatModel,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from tests.agents.models.streams import stream_items
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import (
    openai_call,
    openai_call_delta,
    openai_calls,
    openai_calls_stream,
    openai_error,
    openai_usage,
)
from toolchain import ImageContent, TextContent

PNG = b"\x89PNG\r\n\x1a\nfake"
PNG_URL = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
WEATHER_SCHEMA: Mapping[str, object] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = (
    ToolSpec("get_weather", "The weather in a city.", WEATHER_SCHEMA, strict=True),
    ToolSpec("get_time", "The local time in a city.", {"type": "object"}),
)
QUESTION = [Message.text("user", "Weather and time in Paris?")]


@pytest.fixture
async def model(loopback: LoopbackServer) -> AsyncIterator[OpenAIChatModel]:
    adapter = OpenAIChatModel(
        "gpt-test", api_key="test-key", base_url=loopback.openai_base_url, max_retries=2
    )
    yield adapter
    await adapter.aclose()


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ("get_time", {"type": "function", "function": {"name": "get_time"}}),
    ],
)
async def test_request_carries_tools_and_each_tool_choice(
    loopback: LoopbackServer, model: OpenAIChatModel, choice: str, wire: object
) -> None:
    loopback.enqueue(openai_calls([openai_call("call_1", "get_time", "{}")]))
    await model.generate(QUESTION, GenerateOptions(tools=TOOLS, tool_choice=choice))
    body = loopback.last_request.json()
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": WEATHER_SCHEMA,
                "strict": True,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "The local time in a city.",
                "parameters": {"type": "object"},
            },
        },
    ]
    assert body["tool_choice"] == wire
    assert "parallel_tool_calls" not in body


async def test_streamed_request_carries_tools_too(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls_stream([openai_call_delta(0, "call_1", "get_time", "{}")]))
    await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS, tool_choice="required"))
    body = loopback.last_request.json()
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "get_time"]
    assert body["tool_choice"] == "required"


async def test_without_tools_neither_tools_nor_tool_choice_is_sent(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls(None, text="Sunny.", finish_reason="stop"))
    await model.generate(QUESTION, GenerateOptions(tool_choice="required"))
    assert not {"tools", "tool_choice"} & loopback.last_request.json().keys()


async def test_assistant_calls_and_tool_messages_go_on_the_wire_as_the_api_expects(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls(None, text="Sunny, 14:00.", finish_reason="stop"))
    calls = (
        ToolCallRequest("call_1", "get_weather", '{"city": "Paris"}'),
        ToolCallRequest("call_2", "get_time", '{"city":"Paris"}'),
    )
    history = [
        Message.text("system", "Use the tools."),
        *QUESTION,
        Message("assistant", (), tool_calls=calls),
        Message("tool", (TextContent("sunny"),), tool_call_id="call_1", name="get_weather"),
        Message("tool", (TextContent("14:00"),), tool_call_id="call_2", name="get_time"),
        Message("assistant", (TextContent("Checking again."),), tool_calls=calls[:1]),
        Message("tool", (TextContent("still sunny"),), tool_call_id="call_1", name="get_weather"),
    ]
    await model.generate(history, GenerateOptions(tools=TOOLS))
    assert loopback.last_request.json()["messages"] == [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"city":"Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "14:00"},
        {
            "role": "assistant",
            "content": "Checking again.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "still sunny"},
    ]


async def test_two_parallel_calls_are_parsed_with_ids_and_raw_arguments(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(
        openai_calls(
            [
                openai_call("call_a1", "get_weather", '{"city":  "Paris"}'),
                openai_call("call_b2", "get_time", '{\n  "city": "Paris"\n}'),
            ]
        )
    )
    response = await model.generate(QUESTION, GenerateOptions(tools=TOOLS))
    assert response == ModelResponse(
        "",
        "tool_use",
        Usage(20, 9),
        "gpt-loopback",
        (
            ToolCallRequest("call_a1", "get_weather", '{"city":  "Paris"}'),
            ToolCallRequest("call_b2", "get_time", '{\n  "city": "Paris"\n}'),
        ),
        id="chatcmpl-loopback",
    )
    assert [call.parsed_arguments() for call in response.tool_calls] == [{"city": "Paris"}] * 2


async def test_calls_without_ids_or_arguments_get_positional_ids_and_empty_objects(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    # Ollama says "stop" even when it calls tools.
    loopback.enqueue(
        openai_calls(
            [openai_call(None, "get_time", ""), {"type": "function", "function": {"name": "x"}}],
            text="Let me check.",
            finish_reason="stop",
        )
    )
    response = await model.generate(QUESTION, GenerateOptions(tools=TOOLS))
    assert response.text == "Let me check."
    assert response.stop_reason == "tool_use"
    assert response.tool_calls == (
        ToolCallRequest("call_1", "get_time", "{}"),
        ToolCallRequest("call_2", "x", "{}"),
    )


async def test_invalid_json_arguments_pass_through_raw(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls([openai_call("call_1", "get_weather", '{"city": Paris')]))
    response = await model.generate(QUESTION, GenerateOptions(tools=TOOLS))
    (call,) = response.tool_calls
    assert call == ToolCallRequest("call_1", "get_weather", '{"city": Paris')
    with pytest.raises(ValueError, match="not valid JSON"):
        call.parsed_arguments()


async def test_streamed_call_deltas_split_at_awkward_points_assemble_in_index_order(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    deltas = [
        {"content": "Checking."},
        openai_call_delta(0, "call_w"),  # the id alone
        openai_call_delta(0, name="get_wea"),  # mid-name
        openai_call_delta(0, name="ther", arguments='{"ci'),
        openai_call_delta(
            1, "call_t", "get_time", ""
        ),  # the second call starts before the first ends
        openai_call_delta(0, arguments='ty": "Pa'),  # mid-JSON
        openai_call_delta(1, arguments='{"city": "Paris"}'),
        openai_call_delta(0, arguments='ris"}'),
    ]
    loopback.enqueue(openai_calls_stream(deltas))
    items, final = await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS))
    assert items == [
        TextDelta("Checking."),
        ToolCallDelta(0, id="call_w"),
        ToolCallDelta(0, name="get_wea"),
        ToolCallDelta(0, name="ther", arguments='{"ci'),
        ToolCallDelta(1, id="call_t", name="get_time"),
        ToolCallDelta(0, arguments='ty": "Pa'),
        ToolCallDelta(1, arguments='{"city": "Paris"}'),
        ToolCallDelta(0, arguments='ris"}'),
    ]
    assert final == ModelResponse(
        "Checking.",
        "tool_use",
        Usage(20, 9),
        "gpt-loopback",
        (
            ToolCallRequest("call_w", "get_weather", '{"city": "Paris"}'),
            ToolCallRequest("call_t", "get_time", '{"city": "Paris"}'),
        ),
        id="chatcmpl-loopback",
    )


async def test_streamed_calls_arriving_out_of_index_order_come_back_in_index_order(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(
        openai_calls_stream(
            [
                openai_call_delta(1, None, "get_time", "{}"),
                openai_call_delta(0, "call_w", "get_weather", "{}"),
            ]
        )
    )
    _, final = await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS))
    assert final.tool_calls == (
        ToolCallRequest("call_w", "get_weather", "{}"),
        ToolCallRequest("call_2", "get_time", "{}"),
    )


async def test_a_tool_message_with_an_image_becomes_text_and_a_following_user_message(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls(None, text="Rising.", finish_reason="stop"))
    chart = ImageContent(data=PNG, media_type="image/png")
    photo = ImageContent(url="https://example.com/paris.jpg", media_type="image/jpeg")
    history = [
        *QUESTION,
        Message(
            "assistant",
            (),
            tool_calls=(
                ToolCallRequest("call_1", "get_chart", "{}"),
                ToolCallRequest("call_2", "get_photo", "{}"),
            ),
        ),
        Message(
            "tool",
            (TextContent("chart\n[1] image (image/png)"), chart),
            tool_call_id="call_1",
            name="get_chart",
        ),
        Message(
            "tool",
            (TextContent("photo\n[2] image (image/jpeg)"), photo),
            tool_call_id="call_2",
            name="get_photo",
        ),
        Message.text("user", "And the trend?"),
    ]
    await model.generate(history, GenerateOptions(tools=TOOLS))
    messages = loopback.last_request.json()["messages"]
    assert messages[2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "chart\n[1] image (image/png)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "photo\n[2] image (image/jpeg)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[attachment 1 of call_1 (get_chart)]"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
                {"type": "text", "text": "[attachment 2 of call_2 (get_photo)]"},
                {"type": "image_url", "image_url": {"url": "https://example.com/paris.jpg"}},
            ],
        },
        {"role": "user", "content": "And the trend?"},
    ]


async def test_attachment_numbering_restarts_with_each_run_of_tool_messages(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_calls(None, text="Done.", finish_reason="stop"))
    chart = ImageContent(data=PNG, media_type="image/png")
    call = ToolCallRequest("call_1", "get_chart", "{}")
    answer = Message("tool", (TextContent("[1] image"), chart), tool_call_id="call_1")
    history = [*QUESTION, Message("assistant", (), tool_calls=(call,)), answer] * 2
    await model.generate(history, GenerateOptions(tools=TOOLS))
    messages = loopback.last_request.json()["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "tool", "user"] * 2
    labels = [messages[i]["content"][0]["text"] for i in (3, 7)]
    assert labels == ["[attachment 1 of call_1]"] * 2


async def test_cached_tokens_reach_usage_whole_and_streamed(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    cached = openai_usage(prompt=1200, completion=30, cached=1024)
    loopback.enqueue(
        openai_calls([openai_call("call_1", "get_time", "{}")], usage=cached),
        openai_calls_stream([openai_call_delta(0, "call_1", "get_time", "{}")], usage=cached),
    )
    whole = await model.generate(QUESTION, GenerateOptions(tools=TOOLS))
    _, streamed = await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS))
    assert whole.usage == streamed.usage == Usage(1200, 30, cached_input_tokens=1024)


async def test_rate_limit_then_success_with_tools(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(
        openai_error(429, "slow down"),
        openai_calls([openai_call("call_1", "get_weather", '{"city": "Paris"}')]),
    )
    response = await model.generate(QUESTION, GenerateOptions(tools=TOOLS, tool_choice="required"))
    assert response.tool_calls == (ToolCallRequest("call_1", "get_weather", '{"city": "Paris"}'),)
    first, second = loopback.requests
    assert first.json() == second.json()
    assert second.json()["tool_choice"] == "required"


@pytest.mark.parametrize(
    ("tool_calls", "message"),
    [
        ("call it", "choices[0].message.tool_calls is 'call it' (a string), not a list"),
        ([42], "choices[0].message.tool_calls[0] is 42 (a number), not an object"),
        (
            [{"id": "call_1", "type": "function", "function": None}],
            "choices[0].message.tool_calls[0].function is null, not an object",
        ),
        (
            [openai_call("call_1", "get_time", "{}"), {"id": "c", "function": {"arguments": "{}"}}],
            "choices[0].message.tool_calls[1].function.name is null, not a string",
        ),
        (
            [{"id": "c", "function": {"name": "get_time", "arguments": {"city": "Paris"}}}],
            "choices[0].message.tool_calls[0].function.arguments is a JSON object, not a string",
        ),
        (
            [{"id": 7, "function": {"name": "get_time", "arguments": "{}"}}],
            "choices[0].message.tool_calls[0].id is 7 (a number), not a string",
        ),
    ],
)
async def test_a_malformed_tool_calls_field_is_a_model_call_error(
    loopback: LoopbackServer, model: OpenAIChatModel, tool_calls: object, message: str
) -> None:
    loopback.enqueue(openai_calls(tool_calls))
    with pytest.raises(ModelCallError) as caught:
        await model.generate(QUESTION, GenerateOptions(tools=TOOLS))
    assert str(caught.value) == (
        f"openai:gpt-test: the response is not a chat completion: {message}"
    )


@pytest.mark.parametrize(
    ("delta", "message"),
    [
        ({"tool_calls": {"index": 0}}, "chunk.choices[0].delta.tool_calls is a JSON object"),
        (
            openai_call_delta(-1, "call_1", "get_time"),
            "tool_calls[0].index is -1 (a number), not a call",
        ),
        ({"tool_calls": [{"index": [0]}]}, "tool_calls[0].index is a JSON array, not a call"),
        (
            {"tool_calls": [{"index": 0, "function": {"name": ["get"]}}]},
            "tool_calls[0].function.name is a JSON array, not a string",
        ),
        (
            {"tool_calls": [{"index": 0, "function": {"arguments": 5}}]},
            "tool_calls[0].function.arguments is 5 (a number), not a string",
        ),
    ],
)
async def test_a_malformed_streamed_tool_call_is_a_model_call_error(
    loopback: LoopbackServer, model: OpenAIChatModel, delta: Mapping[str, Any], message: str
) -> None:
    loopback.enqueue(openai_calls_stream([delta]))
    with pytest.raises(ModelCallError, match="the stream is not a chat completion stream") as e:
        await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS))
    assert message in str(e.value)


async def test_streamed_pieces_without_an_index_follow_their_ids(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    def unindexed(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"function": {"arguments": arguments}}
        if call_id is not None:
            entry.update(id=call_id, type="function")
        if name is not None:
            entry["function"]["name"] = name
        return {"tool_calls": [entry]}

    loopback.enqueue(
        openai_calls_stream(
            [
                unindexed("call_a", "get_time", '{"city":'),
                unindexed(None, None, ' "Rome"}'),
                unindexed("call_b", "get_weather", "{}"),
            ]
        )
    )
    _, final = await stream_items(model, QUESTION, GenerateOptions(tools=TOOLS))
    assert final.tool_calls == (
        ToolCallRequest("call_a", "get_time", '{"city": "Rome"}'),
        ToolCallRequest("call_b", "get_weather", "{}"),
    )
