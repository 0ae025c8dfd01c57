"""`ScriptedModel` scripting native tool calls: replies, streams and callables."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    ScriptedReply,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
)

QUESTION = [Message.text("user", "What is 2 + 3?")]


async def test_a_scripted_reply_returns_its_calls_with_stop_reason_tool_use() -> None:
    calls = (ToolCallRequest("c1", "add", '{"a":2,"b":3}'), ToolCallRequest("c2", "now", "{}"))
    model = ScriptedModel([ScriptedReply("Let me compute.", calls), "5"])
    first = await model.generate(QUESTION)
    assert (first.text, first.stop_reason, first.tool_calls) == (
        "Let me compute.",
        "tool_use",
        calls,
    )
    second = await model.generate(QUESTION)
    assert (second.text, second.stop_reason, second.tool_calls) == ("5", "stop", ())


async def test_call_helper_encodes_arguments_and_numbers_missing_ids() -> None:
    model = ScriptedModel(
        [ScriptedModel.call("add", a=2, b=3), ScriptedModel.call("add", {"a": 1}, b=1)]
    )
    first = await model.generate(QUESTION)
    second = await model.generate(QUESTION)
    assert first.tool_calls == (ToolCallRequest("call_1", "add", '{"a":2,"b":3}'),)
    assert second.tool_calls == (ToolCallRequest("call_2", "add", '{"a":1,"b":1}'),)
    assert first.tool_calls[0].parsed_arguments() == {"a": 2, "b": 3}


async def test_call_helper_keeps_a_given_id_and_text() -> None:
    model = ScriptedModel(
        [ScriptedModel.call("search", {"id": 7, "text": "q"}, id="x", text="Hm.")]
    )
    reply = await model.generate(QUESTION)
    assert reply.text == "Hm."
    assert reply.tool_calls == (ToolCallRequest("x", "search", '{"id":7,"text":"q"}'),)


async def test_invalid_argument_json_is_replayed_as_written() -> None:
    broken = ToolCallRequest("c1", "add", '{"a": 2,')
    model = ScriptedModel([ScriptedReply(tool_calls=(broken,))])
    reply = await model.generate(QUESTION)
    assert reply.tool_calls == (broken,)
    with pytest.raises(ValueError, match="not valid JSON"):
        reply.tool_calls[0].parsed_arguments()


async def test_stream_yields_text_then_tool_call_deltas_then_the_response() -> None:
    calls = (
        ToolCallRequest("c1", "add", '{"a": 2, "b": 3}'),
        ToolCallRequest("c2", "mul", '{"a": 4, "b": 5}'),
    )
    model = ScriptedModel([ScriptedReply("Computing both.", calls)], chunk_size=4)
    items = [item async for item in model.stream(QUESTION)]
    response = items[-1]
    assert isinstance(response, ModelResponse)
    assert response.tool_calls == calls and response.stop_reason == "tool_use"
    texts = [item for item in items if isinstance(item, TextDelta)]
    deltas = [item for item in items if isinstance(item, ToolCallDelta)]
    assert "".join(t.text for t in texts) == "Computing both."
    # Text comes first, then the calls in order, each opened by its id and name.
    assert items.index(deltas[0]) > items.index(texts[-1])
    assert [d.index for d in deltas] == sorted(d.index for d in deltas)
    for index, call in enumerate(calls):
        own = [d for d in deltas if d.index == index]
        assert (own[0].id, own[0].name) == (call.id, call.name)
        assert all(not d.id and not d.name for d in own[1:])
        assert "".join(d.arguments for d in own) == call.arguments
        assert all(len(d.arguments) <= 4 for d in own)


async def test_streamed_deltas_assemble_into_the_final_calls() -> None:
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=3)], chunk_size=3)
    assembled: dict[int, list[str]] = {}
    final: ModelResponse | None = None
    async for item in model.stream(QUESTION):
        if isinstance(item, ToolCallDelta):
            if item.id:
                assembled[item.index] = [item.id, item.name, ""]
            assembled[item.index][2] += item.arguments
        elif isinstance(item, ModelResponse):
            final = item
    assert final is not None
    assert [ToolCallRequest(*parts) for parts in assembled.values()] == list(final.tool_calls)


async def test_callable_scripts_may_return_replies_or_text() -> None:
    def script(messages: Sequence[Message]) -> str | ScriptedReply:
        last = messages[-1]
        if last.role == "tool":
            return f"The sum is {last.text_content()}."
        return ScriptedModel.call("add", a=2, b=3)

    model = ScriptedModel(script)
    first = await model.generate(QUESTION)
    assert first.stop_reason == "tool_use"
    call = first.tool_calls[0]
    history = [
        *QUESTION,
        Message("assistant", (), tool_calls=first.tool_calls),
        Message("tool", Message.text("tool", "5").content, tool_call_id=call.id, name=call.name),
    ]
    second = await model.generate(history)
    assert (second.text, second.tool_calls) == ("The sum is 5.", ())


async def test_requests_record_the_tools_offered() -> None:
    from agents.models import ToolSpec

    spec = ToolSpec("add", "Add two integers.", {"type": "object"})
    options = GenerateOptions(tools=(spec,), tool_choice="required")
    model = ScriptedModel([ScriptedModel.call("add", a=1, b=1)])
    await model.generate(QUESTION, options)
    assert model.requests[0].options.tools == (spec,)
    assert model.requests[0].options.tool_choice == "required"


async def test_a_stop_sequence_cut_drops_the_calls() -> None:
    model = ScriptedModel(
        [ScriptedReply("Thought: x\nObservation: y", (ToolCallRequest("c", "t"),))]
    )
    reply = await model.generate(QUESTION, GenerateOptions(stop=("\nObservation:",)))
    assert (reply.text, reply.stop_reason, reply.tool_calls) == ("Thought: x", "stop_sequence", ())


async def test_usage_counts_call_arguments_as_output() -> None:
    model = ScriptedModel([ScriptedModel.call("add", a=2, b=3)])
    reply = await model.generate(QUESTION)
    assert reply.usage.output_tokens > 0


def test_a_single_request_instead_of_a_tuple_is_refused() -> None:
    with pytest.raises(TypeError, match="tuple of ToolCallRequest"):
        ScriptedReply(tool_calls=ToolCallRequest("c", "t"))  # type: ignore[arg-type]


async def test_a_callable_returning_something_else_is_a_type_error() -> None:
    model = ScriptedModel(lambda messages: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="str or a ScriptedReply"):
        await model.generate(QUESTION)
