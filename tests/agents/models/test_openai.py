"""`OpenAIChatModel` driven through the real ``openai`` SDK against the loopback server."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelCallError,
    ModelConfigError,
    ModelResponse,
    ModelTimeoutError,
    OpenAIChatModel,
    UnsupportedContentError,
    Usage,
)
from tests.agents.models.streams import stream_texts
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer, json_reply
from tests.support.openai_replies import openai_completion, openai_error, openai_stream
from toolchain import AudioContent, BinaryContent, ImageContent, TextContent

PNG = b"\x89PNG\r\n\x1a\nfake"
QUESTION = [Message.text("system", "Answer briefly."), Message.text("user", "What is 6 * 7?")]


@pytest.fixture
async def model(loopback: LoopbackServer) -> AsyncIterator[OpenAIChatModel]:
    adapter = OpenAIChatModel(
        "gpt-test", api_key="test-key", base_url=loopback.openai_base_url, max_retries=2
    )
    yield adapter
    await adapter.aclose()


@pytest.fixture
async def impatient(loopback: LoopbackServer) -> AsyncIterator[OpenAIChatModel]:
    adapter = OpenAIChatModel(
        "gpt-test",
        api_key="test-key",
        base_url=loopback.openai_base_url,
        timeout=0.2,
        max_retries=0,
    )
    yield adapter
    await adapter.aclose()


def test_is_a_model(model: OpenAIChatModel) -> None:
    assert isinstance(model, Model)
    assert model.name == "openai:gpt-test"


async def test_generate_returns_text_stop_reason_and_usage(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_completion("42", prompt_tokens=12, completion_tokens=3))
    response = await model.generate(QUESTION)
    assert response == ModelResponse(
        "42", "stop", Usage(12, 3), "gpt-loopback", id="chatcmpl-loopback"
    )
    request = loopback.last_request
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.json()
    assert body["model"] == "gpt-test"
    assert body["stream"] is False
    assert not {"stop", "temperature", "max_tokens", "seed"} & body.keys()


async def test_system_prompt_is_the_first_message(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_completion("ok"))
    history = [*QUESTION, Message.text("assistant", "42"), Message.text("user", "Sure?")]
    await model.generate(history)
    assert loopback.last_request.json()["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 6 * 7?"},
        {"role": "assistant", "content": "42"},
        {"role": "user", "content": "Sure?"},
    ]


async def test_text_parts_of_one_message_stay_apart_as_paragraphs(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    """An observation and a tool's text parts arrive as paragraphs, not glued together."""
    loopback.enqueue(openai_completion("ok"))
    parts = (TextContent("<observation>…</observation>"), TextContent("[1] text (12 chars)"))
    await model.generate([Message("user", parts)])
    assert loopback.last_request.json()["messages"] == [
        {"role": "user", "content": "<observation>…</observation>\n\n[1] text (12 chars)"}
    ]


async def test_options_are_passed_through(loopback: LoopbackServer, model: OpenAIChatModel) -> None:
    loopback.enqueue(openai_completion("ok"))
    options = GenerateOptions(stop=("\nObservation:",), temperature=0.25, max_tokens=64, seed=1234)
    await model.generate(QUESTION, options)
    body = loopback.last_request.json()
    assert body["stop"] == ["\nObservation:"]
    assert body["temperature"] == 0.25
    assert body["max_tokens"] == 64
    assert body["seed"] == 1234
    assert "max_completion_tokens" not in body


async def test_max_completion_tokens_field_can_be_chosen(loopback: LoopbackServer) -> None:
    adapter = OpenAIChatModel(
        "o4-test",
        api_key="k",
        base_url=loopback.openai_base_url,
        max_tokens_field="max_completion_tokens",
    )
    loopback.enqueue(openai_completion("ok"))
    await adapter.generate(QUESTION, GenerateOptions(max_tokens=10))
    await adapter.aclose()
    body = loopback.last_request.json()
    assert body["max_completion_tokens"] == 10
    assert "max_tokens" not in body


async def test_image_parts_are_sent_as_data_urls(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_completion("a cat"))
    look = Message(
        "user",
        (
            TextContent("What is this?"),
            ImageContent(data=PNG, media_type="image/png"),
            ImageContent(url="https://example.com/cat.jpg", media_type="image/jpeg"),
        ),
    )
    await model.generate([look])
    content = loopback.last_request.json()["messages"][0]["content"]
    encoded = base64.b64encode(PNG).decode()
    assert content == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
    ]


async def test_audio_and_files_are_sent_inline(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_completion("heard"))
    parts = (
        AudioContent(data=b"RIFFwav", media_type="audio/wav"),
        BinaryContent(data=b"%PDF-1.7", media_type="application/pdf"),
    )
    await model.generate([Message("user", parts)])
    audio, document = loopback.last_request.json()["messages"][0]["content"]
    assert audio == {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(b"RIFFwav").decode(), "format": "wav"},
    }
    assert document["type"] == "file"
    assert document["file"]["file_data"].startswith("data:application/pdf;base64,")
    assert document["file"]["filename"] == "attachment.pdf"


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (Message("user", (AudioContent(url="https://x/a.wav"),)), "audio only inline"),
        (Message("user", (AudioContent(data=b"ogg", media_type="audio/ogg"),)), "wav or mp3"),
        (Message("system", (ImageContent(data=PNG),)), "only in user messages"),
    ],
)
async def test_unsendable_content_fails_before_any_request(
    loopback: LoopbackServer, model: OpenAIChatModel, message: Message, match: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=match):
        await model.generate([message])
    assert loopback.requests == []


async def test_rate_limit_is_retried_after_the_servers_delay(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_error(429, "slow down", retry_after_ms=20), openai_completion("42"))
    started = time.monotonic()
    response = await model.generate(QUESTION)
    assert response.text == "42"
    assert time.monotonic() - started < 1.0  # the SDK's own backoff would be 0.5 s or more
    first, second = loopback.requests
    assert first.json() == second.json()
    assert second.headers["x-stainless-retry-count"] == "1"


async def test_persistent_server_error_raises_model_call_error(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(*[openai_error(500, "the GPU caught fire")] * 3)
    with pytest.raises(ModelCallError) as caught:
        await model.generate(QUESTION)
    assert caught.value.status_code == 500
    assert str(caught.value) == (
        "openai:gpt-test: HTTP 500 (gave up after 2 retries): the GPU caught fire"
    )
    assert len(loopback.requests) == 3


async def test_client_errors_are_not_retried(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_error(400, "bad stop", error_type="invalid_request_error"))
    with pytest.raises(ModelCallError, match=r"HTTP 400: bad stop$"):
        await model.generate(QUESTION)
    assert len(loopback.requests) == 1


async def test_timeout_raises_model_timeout_error(
    loopback: LoopbackServer, impatient: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_completion("too late").delayed(5))
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"timed out.*within 0\.2 s"):
        await impatient.generate(QUESTION)
    assert time.monotonic() - started < 2.0


async def test_unreachable_server_raises_model_call_error() -> None:
    with LoopbackServer() as gone:
        base_url = gone.openai_base_url
    adapter = OpenAIChatModel("gpt-test", api_key="k", base_url=base_url, max_retries=0)
    with pytest.raises(ModelCallError, match="could not talk to"):
        await adapter.generate(QUESTION)
    await adapter.aclose()


async def test_stream_reassembles_deltas_split_mid_tag(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_stream(["<ans", "wer>4", "2</answer>"], prompt_tokens=9))
    deltas, final = await stream_texts(model, QUESTION)
    assert deltas == ["<ans", "wer>4", "2</answer>"]
    assert final == ModelResponse(
        "<answer>42</answer>", "stop", Usage(9, 4), "gpt-loopback", id="chatcmpl-loopback"
    )
    body = loopback.last_request.json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_stream_passes_options_and_maps_the_finish_reason(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(openai_stream(["abc"], finish_reason="length"))
    options = GenerateOptions(stop=("X",), temperature=0.0, max_tokens=1, seed=5)
    _, final = await stream_texts(model, QUESTION, options)
    assert final.stop_reason == "length"
    body = loopback.last_request.json()
    assert (body["stop"], body["temperature"], body["max_tokens"], body["seed"]) == (
        ["X"],
        0.0,
        1,
        5,
    )


async def test_stream_without_usage_for_servers_that_refuse_stream_options(
    loopback: LoopbackServer,
) -> None:
    adapter = OpenAIChatModel(
        "gpt-test", api_key="k", base_url=loopback.openai_base_url, stream_usage=False
    )
    loopback.enqueue(openai_stream(["hi"], include_usage=False))
    _, final = await stream_texts(adapter, QUESTION)
    await adapter.aclose()
    assert final.usage == Usage()
    assert "stream_options" not in loopback.last_request.json()


async def test_stream_stalling_mid_way_times_out(
    loopback: LoopbackServer, impatient: OpenAIChatModel
) -> None:
    loopback.enqueue(replace(openai_stream(["a", "b"]), chunk_delay=5))
    with pytest.raises(ModelTimeoutError):
        await stream_texts(impatient, QUESTION)


async def test_stream_gives_up_on_persistent_errors(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(*[openai_error(503, "overloaded")] * 3)
    with pytest.raises(ModelCallError, match="HTTP 503"):
        await stream_texts(model, QUESTION)


@pytest.mark.parametrize(
    ("finish_reason", "extra", "expected"),
    [
        ("stop", {}, "stop"),
        ("stop", {"stop_reason": "\nObservation:"}, "stop_sequence"),  # vLLM's extension
        ("length", {}, "length"),
        ("content_filter", {}, "content_filter"),
        ("tool_calls", {}, "tool_use"),
        ("something_new", {}, "other"),
    ],
)
async def test_finish_reasons_are_normalised(
    loopback: LoopbackServer,
    model: OpenAIChatModel,
    finish_reason: str,
    extra: dict[str, object],
    expected: str,
) -> None:
    loopback.enqueue(openai_completion("x", finish_reason=finish_reason, choice_extra=extra))
    options = GenerateOptions(stop=("\nObservation:",))
    assert (await model.generate(QUESTION, options)).stop_reason == expected


async def test_a_response_without_choices_is_an_error(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.enqueue(
        json_reply(
            {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
        )
    )
    with pytest.raises(ModelCallError, match="no choices"):
        await model.generate(QUESTION)


async def test_scripted_handler_answers_whole_and_streamed_calls(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    loopback.respond_with(chat_script(["Thought: multiply", "Final Answer: 42"], chunk_size=5))
    first = await model.generate(QUESTION)
    deltas, second = await stream_texts(model, QUESTION)
    assert first.text == "Thought: multiply"
    assert (deltas, second.text) == (["Final", " Answ", "er: 4", "2"], "Final Answer: 42")
    with pytest.raises(ModelCallError, match="all 2 scripted outputs were used"):
        await model.generate(QUESTION)


async def test_an_unscripted_request_is_refused_without_retries(
    loopback: LoopbackServer, model: OpenAIChatModel
) -> None:
    with pytest.raises(ModelCallError, match="no reply queued for POST /v1/chat/completions"):
        await model.generate(QUESTION)
    assert len(loopback.requests) == 1


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-test")
