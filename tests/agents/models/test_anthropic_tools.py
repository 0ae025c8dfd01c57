"""`AnthropicModel`'s native tool calling and prompt caching, through the real SDK.

Every reply here comes from `tests.support.anthropic_replies`, so the SDK parses the
bytes the Messages API would send.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Mapping, Sequence

import pytest

from agents.models import (
    AnthropicModel,
    GenerateOptions,
    Message,
    ModelCallError,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    ToolSpec,
    UnsupportedContentError,
    Usage,
)
from tests.agents.models.streams import stream_items
from tests.support.anthropic_replies import (
    anthropic_blocks,
    anthropic_blocks_stream,
    anthropic_error,
    anthropic_message,
    json_pieces,
    tool_use,
)
from tests.support.loopback import LoopbackServer, Reply
from toolchain import ImageContent, TextContent

PNG = b"\x89PNG\r\n\x1a\nfake"
ADD = ToolSpec(
    "add",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
PLOT = ToolSpec("plot", "Draw a chart.", {"type": "object", "properties": {}})
TOOLS = GenerateOptions(tools=(ADD, PLOT))
QUESTION = [Message.text("system", "Use tools."), Message.text("user", "2 + 3, and a chart?")]


@pytest.fixture
async def model(loopback: LoopbackServer) -> AsyncIterator[AnthropicModel]:
    adapter = AnthropicModel(
        "claude-test", api_key="test-key", base_url=loopback.base_url, max_retries=2
    )
    yield adapter
    await adapter.aclose()


@pytest.fixture
async def caching(loopback: LoopbackServer) -> AsyncIterator[AnthropicModel]:
    adapter = AnthropicModel(
        "claude-test", api_key="test-key", base_url=loopback.base_url, cache_prompt=True
    )
    yield adapter
    await adapter.aclose()


async def test_request_carries_tool_specs_and_auto_choice(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("no need"))
    strict_plot = ToolSpec(PLOT.name, PLOT.description, PLOT.parameters, strict=True)
    await model.generate(QUESTION, GenerateOptions(tools=(ADD, strict_plot)))
    body = loopback.last_request.json()
    assert body["tools"] == [
        {"name": "add", "description": "Add two integers.", "input_schema": ADD.parameters},
        {
            "name": "plot",
            "description": "Draw a chart.",
            "input_schema": {"type": "object", "properties": {}},
            "strict": True,
        },
    ]
    assert body["tool_choice"] == {"type": "auto"}


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("add", {"type": "tool", "name": "add"}),
    ],
)
async def test_each_tool_choice_form_reaches_the_wire(
    loopback: LoopbackServer, model: AnthropicModel, choice: str, wire: dict[str, str]
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    await model.generate(QUESTION, GenerateOptions(tools=(ADD,), tool_choice=choice))
    assert loopback.last_request.json()["tool_choice"] == wire


async def test_without_tools_neither_tools_nor_tool_choice_is_sent(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    await model.generate(QUESTION, GenerateOptions(tool_choice="required"))
    assert not {"tools", "tool_choice"} & loopback.last_request.json().keys()


async def test_two_tool_calls_and_their_results_map_to_tool_use_and_tool_result_blocks(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("5, and here is the chart"))
    history = [
        *QUESTION,
        Message(
            "assistant",
            (TextContent("Both at once."),),
            tool_calls=(
                ToolCallRequest("toolu_1", "add", '{"a": 2, "b": 3}'),
                ToolCallRequest("toolu_2", "plot", "{}"),
            ),
        ),
        Message("tool", (TextContent("5"),), tool_call_id="toolu_1", name="add"),
        Message(
            "tool",
            (TextContent("Error: the chart has no data"), ImageContent(data=PNG)),
            tool_call_id="toolu_2",
            name="plot",
        ),
        Message.text("user", "Thanks."),
    ]
    await model.generate(history, TOOLS)
    body = loopback.last_request.json()
    assert body["system"] == "Use tools."
    assert body["messages"] == [
        {"role": "user", "content": "2 + 3, and a chart?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Both at once."},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
                {"type": "tool_use", "id": "toolu_2", "name": "plot", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "5"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [
                        {"type": "text", "text": "Error: the chart has no data"},
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": base64.b64encode(PNG).decode(),
                            },
                        },
                    ],
                    "is_error": True,
                },
            ],
        },
        {"role": "user", "content": "Thanks."},
    ]


async def test_a_tool_only_assistant_turn_has_no_empty_text_block(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    call = ToolCallRequest("toolu_1", "add", '{"a": 1, "b": 1}')
    history = [
        *QUESTION,
        Message("assistant", (TextContent(""),), tool_calls=(call,)),
        Message("tool", (TextContent("2"),), tool_call_id="toolu_1", name="add"),
    ]
    await model.generate(history, TOOLS)
    assistant = loopback.last_request.json()["messages"][1]
    assert [block["type"] for block in assistant["content"]] == ["tool_use"]


@pytest.mark.parametrize("arguments", ['{"a": 2, "b":', "[1, 2]", "not json"])
async def test_arguments_that_are_not_a_json_object_go_as_raw_text(
    loopback: LoopbackServer, model: AnthropicModel, arguments: str
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    call = ToolCallRequest("toolu_1", "add", arguments)
    history = [
        *QUESTION,
        Message("assistant", (), tool_calls=(call,)),
        Message("tool", (TextContent("Error: invalid JSON"),), tool_call_id="toolu_1"),
    ]
    await model.generate(history, TOOLS)
    tool_use_block = loopback.last_request.json()["messages"][1]["content"][0]
    assert tool_use_block["input"] == {"_raw": arguments}


async def test_a_tool_message_without_a_call_id_fails_before_any_request(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    with pytest.raises(UnsupportedContentError, match="no tool_call_id"):
        await model.generate([*QUESTION, Message.text("tool", "5")], TOOLS)
    assert loopback.requests == []


async def test_two_parallel_tool_use_blocks_are_parsed_with_ids(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        anthropic_blocks(
            [
                {"type": "text", "text": "Working on both."},
                tool_use("toolu_01A", "add", {"a": 2, "b": 3}),
                tool_use("toolu_01B", "plot", {"title": "café", "points": [[0, 1.5]]}),
            ]
        )
    )
    response = await model.generate(QUESTION, TOOLS)
    assert response == ModelResponse(
        "Working on both.",
        "tool_use",
        Usage(30, 9),
        "claude-loopback",
        (
            ToolCallRequest("toolu_01A", "add", '{"a":2,"b":3}'),
            ToolCallRequest("toolu_01B", "plot", '{"title":"café","points":[[0,1.5]]}'),
        ),
        id="msg_loopback",
    )
    assert response.tool_calls[1].parsed_arguments() == {"title": "café", "points": [[0, 1.5]]}


async def test_streamed_input_json_split_at_awkward_points_assembles_and_yields_deltas(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    add_pieces = ('{"', 'a": ', "2", ', "b"', ":3", "}")
    plot_pieces = ("", '{"title": "caf', "\\u00e9", ' \\"q', '\\"", "points": [[0, 1.', "5]]}")
    loopback.enqueue(
        anthropic_blocks_stream(
            [
                ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "On it."}]),
                (tool_use("toolu_1", "add", {}), json_pieces(*add_pieces)),
                (tool_use("toolu_2", "plot", {}), json_pieces(*plot_pieces)),
                (tool_use("toolu_3", "plot", {}), []),
            ]
        )
    )
    deltas, final = await stream_items(model, QUESTION, TOOLS)
    assert deltas == [
        TextDelta("On it."),
        ToolCallDelta(0, id="toolu_1", name="add"),
        *[ToolCallDelta(0, arguments=piece) for piece in add_pieces],
        ToolCallDelta(1, id="toolu_2", name="plot"),
        *[ToolCallDelta(1, arguments=piece) for piece in plot_pieces if piece],
        ToolCallDelta(2, id="toolu_3", name="plot"),
    ]
    assert final.text == "On it."
    assert final.stop_reason == "tool_use"
    assert final.tool_calls == (
        ToolCallRequest("toolu_1", "add", "".join(add_pieces)),
        ToolCallRequest("toolu_2", "plot", "".join(plot_pieces)),
        ToolCallRequest("toolu_3", "plot", "{}"),
    )
    assert final.tool_calls[0].parsed_arguments() == {"a": 2, "b": 3}
    assert final.tool_calls[1].parsed_arguments() == {
        "title": 'café "q"',
        "points": [[0, 1.5]],
    }
    body = loopback.last_request.json()
    assert body["stream"] is True
    assert [tool["name"] for tool in body["tools"]] == ["add", "plot"]


async def test_a_streamed_call_whose_input_came_at_its_start_is_kept(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_blocks_stream([(tool_use("toolu_1", "add", {"a": 1, "b": 2}), [])]))
    deltas, final = await stream_items(model, QUESTION, TOOLS)
    assert deltas == [
        ToolCallDelta(0, id="toolu_1", name="add"),
        ToolCallDelta(0, arguments='{"a":1,"b":2}'),
    ]
    assert final.tool_calls == (ToolCallRequest("toolu_1", "add", '{"a":1,"b":2}'),)


async def test_cache_prompt_places_breakpoints_on_system_and_last_block(
    loopback: LoopbackServer, caching: AnthropicModel
) -> None:
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1800,
        "output_tokens": 9,
    }
    loopback.enqueue(anthropic_blocks([{"type": "text", "text": "5"}], usage=usage))
    call = ToolCallRequest("toolu_1", "add", '{"a": 2, "b": 3}')
    history = [
        *QUESTION,
        Message("assistant", (), tool_calls=(call,)),
        Message("tool", (TextContent("5"),), tool_call_id="toolu_1", name="add"),
    ]
    response = await caching.generate(history, TOOLS)
    assert response.usage == Usage(1812, 9, cached_input_tokens=1800)
    body = loopback.last_request.json()
    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Use tools.", "cache_control": ephemeral}]
    first, assistant, results = body["messages"]
    assert first == {"role": "user", "content": "2 + 3, and a chart?"}
    assert "cache_control" not in assistant["content"][-1]
    assert results["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "5"}],
            "cache_control": ephemeral,
        }
    ]


async def test_cache_prompt_turns_a_plain_last_message_into_a_marked_block(
    loopback: LoopbackServer, caching: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    await caching.generate([Message.text("user", "Hi")])
    body = loopback.last_request.json()
    assert "system" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_without_cache_prompt_no_cache_control_is_sent(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    await model.generate(QUESTION)
    assert b"cache_control" not in loopback.last_request.body


async def test_streamed_cached_tokens_reach_usage(
    loopback: LoopbackServer, caching: AnthropicModel
) -> None:
    start = {"input_tokens": 4, "cache_read_input_tokens": 900, "output_tokens": 1}
    loopback.enqueue(
        anthropic_blocks_stream(
            [({"type": "text", "text": ""}, [{"type": "text_delta", "text": "5"}])],
            start_usage=start,
            end_usage={"output_tokens": 3},
            stop_reason="end_turn",
        )
    )
    _, final = await stream_items(caching, QUESTION)
    assert final.usage == Usage(904, 3, cached_input_tokens=900)
    assert loopback.last_request.json()["system"][0]["cache_control"] == {"type": "ephemeral"}


async def test_rate_limit_then_success_with_tools(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        anthropic_error(429, "slow down", error_type="rate_limit_error"),
        anthropic_blocks([tool_use("toolu_1", "add", {"a": 2, "b": 3})]),
    )
    response = await model.generate(QUESTION, GenerateOptions(tools=(ADD,), tool_choice="add"))
    assert response.tool_calls == (ToolCallRequest("toolu_1", "add", '{"a":2,"b":3}'),)
    first, second = loopback.requests
    assert first.json() == second.json()
    assert second.json()["tool_choice"] == {"type": "tool", "name": "add"}


def _whole(block: dict[str, object]) -> Reply:
    return anthropic_blocks([block])


def _streamed(
    start: Mapping[str, object], deltas: Sequence[Mapping[str, object]], index: int = 0
) -> Reply:
    reply = anthropic_blocks_stream([(start, deltas)])
    if index == 0:
        return reply
    assert reply.chunks is not None  # move the deltas to another block index
    chunks = [
        chunk.replace(b'"index": 0', b'"index": %d' % index) if b"content_block_delta" in chunk
        else chunk
        for chunk in reply.chunks
    ]  # fmt: skip
    return Reply(status=reply.status, headers=reply.headers, chunks=tuple(chunks))


_MALFORMED: dict[str, tuple[Reply, bool, str]] = {
    "input-a-string": (
        _whole(tool_use("toolu_1", "add", "a=2")),
        False,
        "content[0].input is 'a=2' (a string), not an object",
    ),
    "input-missing": (
        _whole({"type": "tool_use", "id": "toolu_1", "name": "add"}),
        False,
        "content[0].input is null, not an object",
    ),
    "id-a-number": (
        _whole(tool_use(42, "add", {})),
        False,
        "content[0].id is 42 (a number), not a string",
    ),
    "name-missing": (
        _whole({"type": "tool_use", "id": "toolu_1", "input": {}}),
        False,
        "content[0].name is null, not a string",
    ),
    "stream-partial-json-a-number": (
        _streamed(
            tool_use("toolu_1", "add", {}), [{"type": "input_json_delta", "partial_json": 5}]
        ),
        True,
        "content_block_delta.delta.partial_json is 5 (a number), not a string",
    ),
    "stream-input-for-a-text-block": (
        _streamed({"type": "text", "text": ""}, json_pieces('{"a": 1}')),
        True,
        "content_block_delta at index 0 sends tool input, but no tool_use started",
    ),
    "stream-input-for-an-unopened-block": (
        _streamed(tool_use("toolu_1", "add", {}), json_pieces("{}"), index=3),
        True,
        "content_block_delta at index 3 sends tool input, but no tool_use started",
    ),
    "stream-name-missing": (
        _streamed({"type": "tool_use", "id": "toolu_1", "input": {}}, []),
        True,
        "content_block_start.content_block.name is null, not a string",
    ),
}


@pytest.mark.parametrize(("reply", "streamed", "says"), _MALFORMED.values(), ids=list(_MALFORMED))
async def test_malformed_tool_use_raises_model_call_error(
    loopback: LoopbackServer, model: AnthropicModel, reply: Reply, streamed: bool, says: str
) -> None:
    loopback.enqueue(reply)
    with pytest.raises(ModelCallError) as caught:
        await (
            stream_items(model, QUESTION, TOOLS) if streamed else model.generate(QUESTION, TOOLS)
        )
    assert type(caught.value) is ModelCallError
    assert says in str(caught.value)
