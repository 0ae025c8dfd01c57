"""`ScriptedModel`: replay, scripting by function, recording, stops and streaming."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelError,
    ModelResponse,
    ScriptedModel,
    ScriptedRequest,
    ScriptExhaustedError,
    TextDelta,
    ToolCallDelta,
    Usage,
)

QUESTION = [Message.text("system", "Answer briefly."), Message.text("user", "What is 6 * 7?")]


async def collect(
    model: Model, options: GenerateOptions | None = None
) -> list[TextDelta | ToolCallDelta | ModelResponse]:
    return [item async for item in model.stream(QUESTION, options)]


def test_is_a_model() -> None:
    model: Model = ScriptedModel(["x"], name="demo")
    assert isinstance(model, Model)
    assert model.name == "demo"


async def test_replays_outputs_in_order() -> None:
    model = ScriptedModel(["first", "second"])
    first = await model.generate(QUESTION)
    second = await model.generate(QUESTION)
    assert (first.text, second.text) == ("first", "second")
    assert first.stop_reason == "stop"
    assert first.model == "scripted"


async def test_exhaustion_names_the_number_of_outputs() -> None:
    model = ScriptedModel(["one", "two"])
    await model.generate(QUESTION)
    await model.generate(QUESTION)
    with pytest.raises(ScriptExhaustedError, match="given 2 outputs") as caught:
        await model.generate(QUESTION)
    assert isinstance(caught.value, ModelError)
    assert "call 3" in str(caught.value)


async def test_exhaustion_also_stops_a_stream() -> None:
    model = ScriptedModel([])
    with pytest.raises(ScriptExhaustedError, match="given 0 outputs"):
        await collect(model)


async def test_a_function_computes_each_output_from_the_messages() -> None:
    seen: list[int] = []

    def script(messages: Sequence[Message]) -> str:
        seen.append(len(messages))
        return messages[-1].text_content().upper()

    model = ScriptedModel(script)
    for _ in range(3):
        assert (await model.generate(QUESTION)).text == "WHAT IS 6 * 7?"
    assert seen == [2, 2, 2]


async def test_records_every_request_with_its_options() -> None:
    model = ScriptedModel(["a", "b"])
    options = GenerateOptions(stop=("X",), temperature=0.0, max_tokens=50, seed=7)
    await model.generate(QUESTION)
    await collect(model, options)
    assert model.requests == [
        ScriptedRequest(tuple(QUESTION), GenerateOptions()),
        ScriptedRequest(tuple(QUESTION), options),
    ]


async def test_cuts_output_at_the_earliest_stop_sequence() -> None:
    model = ScriptedModel(["Thought: add\nAction: calc\nObservation: 42"])
    options = GenerateOptions(stop=("\nObservation:", "\nAction:"))
    response = await model.generate(QUESTION, options)
    assert response.text == "Thought: add"
    assert response.stop_reason == "stop_sequence"


async def test_cuts_output_at_max_tokens() -> None:
    model = ScriptedModel(["x" * 40])
    response = await model.generate(QUESTION, GenerateOptions(max_tokens=3))
    assert response.text == "x" * 12
    assert response.stop_reason == "length"
    assert response.usage.output_tokens == 3


async def test_usage_estimates_four_characters_per_token() -> None:
    model = ScriptedModel(["abcdefghi"])
    response = await model.generate([Message.text("user", "12345")])
    assert response.usage == Usage(input_tokens=2, output_tokens=3)


async def test_stream_yields_chunks_then_one_final_response() -> None:
    model = ScriptedModel(["<answer>42</answer>"], chunk_size=7)
    items = await collect(model)
    deltas, final = items[:-1], items[-1]
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == ["<answer", ">42</an", "swer>"]
    assert all(isinstance(d, TextDelta) for d in deltas)
    assert isinstance(final, ModelResponse)
    assert final.text == "<answer>42</answer>"


async def test_stream_honours_stop_sequences() -> None:
    model = ScriptedModel(["Final Answer: 42\nObservation: none"], chunk_size=100)
    items = await collect(model, GenerateOptions(stop=("\nObservation",)))
    assert items == [
        TextDelta("Final Answer: 42"),
        ModelResponse("Final Answer: 42", "stop_sequence", Usage(8, 4), "scripted"),
    ]


async def test_empty_output_streams_only_the_response() -> None:
    items = await collect(ScriptedModel([""]))
    assert len(items) == 1
    assert isinstance(items[0], ModelResponse)


def test_rejects_a_single_string_and_a_bad_chunk_size() -> None:
    with pytest.raises(TypeError, match="single string"):
        ScriptedModel("42")
    with pytest.raises(ValueError, match="chunk_size"):
        ScriptedModel(["42"], chunk_size=0)


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=60),
    chunk_size=st.integers(min_value=1, max_value=10),
    stops=st.lists(st.text(min_size=1, max_size=3), max_size=3),
)
async def test_streamed_pieces_add_up_to_the_cut_output(
    text: str, chunk_size: int, stops: list[str]
) -> None:
    model = ScriptedModel([text], chunk_size=chunk_size)
    items = await collect(model, GenerateOptions(stop=tuple(stops)))
    final = items[-1]
    assert isinstance(final, ModelResponse)
    deltas = [item.text for item in items[:-1] if isinstance(item, TextDelta)]
    assert "".join(deltas) == final.text
    assert all(1 <= len(delta) <= chunk_size for delta in deltas)
    assert text.startswith(final.text)
    assert not any(stop in final.text for stop in stops)
    assert (final.stop_reason == "stop_sequence") == any(stop in text for stop in stops)
