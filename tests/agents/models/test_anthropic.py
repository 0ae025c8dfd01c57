"""`AnthropicModel` driven through the real ``anthropic`` SDK against the loopback server."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from agents.models import (
    AnthropicModel,
    GenerateOptions,
    Message,
    Model,
    ModelCallError,
    ModelResponse,
    ModelTimeoutError,
    UnsupportedContentError,
    Usage,
)
from tests.agents.models.streams import stream_texts
from tests.support.anthropic_replies import anthropic_error, anthropic_message, anthropic_stream
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer, json_reply, sse_reply
from toolchain import AudioContent, BinaryContent, ImageContent, TextContent

PNG = b"\x89PNG\r\n\x1a\nfake"
QUESTION = [Message.text("system", "Answer briefly."), Message.text("user", "What is 6 * 7?")]


@pytest.fixture
async def model(loopback: LoopbackServer) -> AsyncIterator[AnthropicModel]:
    adapter = AnthropicModel(
        "claude-test", api_key="test-key", base_url=loopback.base_url, max_retries=2
    )
    yield adapter
    await adapter.aclose()


@pytest.fixture
async def impatient(loopback: LoopbackServer) -> AsyncIterator[AnthropicModel]:
    adapter = AnthropicModel(
        "claude-test", api_key="test-key", base_url=loopback.base_url, timeout=0.2, max_retries=0
    )
    yield adapter
    await adapter.aclose()


def test_is_a_model(model: AnthropicModel) -> None:
    assert isinstance(model, Model)
    assert model.name == "anthropic:claude-test"


async def test_generate_returns_text_stop_reason_and_usage(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("42", input_tokens=12, output_tokens=3))
    response = await model.generate(QUESTION)
    assert response == ModelResponse(
        "42", "stop", Usage(12, 3), "claude-loopback", id="msg_loopback"
    )
    request = loopback.last_request
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert "anthropic-version" in request.headers
    credentials = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert credentials.endswith("test-key")
    body = request.json()
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 4096  # the API requires it, so the adapter always sends one
    assert not {"stop_sequences", "temperature", "seed"} & body.keys()


async def test_system_messages_go_to_the_system_parameter(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("ok"))
    history = [
        *QUESTION,
        Message.text("assistant", "42"),
        Message.text("system", "Check your work."),
        Message.text("user", "Sure?"),
    ]
    await model.generate(history)
    body = loopback.last_request.json()
    assert body["system"] == "Answer briefly.\n\nCheck your work."
    assert body["messages"] == [
        {"role": "user", "content": "What is 6 * 7?"},
        {"role": "assistant", "content": "42"},
        {"role": "user", "content": "Sure?"},
    ]


async def test_options_are_passed_through(loopback: LoopbackServer, model: AnthropicModel) -> None:
    loopback.enqueue(anthropic_message("ok"))
    options = GenerateOptions(stop=("\nObservation:",), temperature=0.25, max_tokens=64, seed=1)
    await model.generate(QUESTION, options)
    body = loopback.last_request.json()
    assert body["stop_sequences"] == ["\nObservation:"]
    assert body["temperature"] == 0.25
    assert body["max_tokens"] == 64
    assert "seed" not in body  # the Messages API has no seed


async def test_image_parts_are_sent_as_base64_or_url_blocks(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("a cat"))
    look = Message(
        "user",
        (
            TextContent("What is this?"),
            ImageContent(data=PNG, media_type="image/png"),
            ImageContent(url="https://example.com/cat.jpg", media_type="image/jpeg"),
            TextContent(""),
        ),
    )
    await model.generate([look])
    content = loopback.last_request.json()["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "What is this?"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(PNG).decode(),
            },
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]


async def test_documents_are_sent_as_document_blocks(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("read"))
    parts = (
        BinaryContent(data=b"%PDF-1.7", media_type="application/pdf"),
        BinaryContent(data=b"plain words", media_type="text/plain"),
    )
    await model.generate([Message("user", parts)])
    pdf, text = loopback.last_request.json()["messages"][0]["content"]
    assert pdf["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(b"%PDF-1.7").decode(),
    }
    assert text["source"] == {"type": "text", "media_type": "text/plain", "data": "plain words"}


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (Message("user", (AudioContent(data=b"RIFF"),)), "takes no audio"),
        (Message("user", (ImageContent(data=b"BM", media_type="image/bmp"),)), "jpeg, png"),
        (Message("user", (BinaryContent(data=b"PK", media_type="application/zip"),)), "PDF"),
        (Message("assistant", (ImageContent(data=PNG),)), "only in user messages"),
    ],
)
async def test_unsendable_content_fails_before_any_request(
    loopback: LoopbackServer, model: AnthropicModel, message: Message, match: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=match):
        await model.generate([message])
    assert loopback.requests == []


async def test_rate_limit_is_retried_after_the_servers_delay(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        anthropic_error(429, "slow down", error_type="rate_limit_error", retry_after_ms=20),
        anthropic_message("42"),
    )
    started = time.monotonic()
    response = await model.generate(QUESTION)
    assert response.text == "42"
    assert time.monotonic() - started < 1.0  # the SDK's own backoff would be 0.5 s or more
    first, second = loopback.requests
    assert first.json() == second.json()
    assert second.headers["x-stainless-retry-count"] == "1"


async def test_persistent_server_error_raises_model_call_error(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(*[anthropic_error(529, "Overloaded", error_type="overloaded_error")] * 3)
    with pytest.raises(ModelCallError) as caught:
        await model.generate(QUESTION)
    assert caught.value.status_code == 529
    assert (
        str(caught.value) == "anthropic:claude-test: HTTP 529 (gave up after 2 retries): Overloaded"
    )
    assert len(loopback.requests) == 3


async def test_client_errors_are_not_retried(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        anthropic_error(
            400, "`temperature` is deprecated for this model.", error_type="invalid_request_error"
        )
    )
    with pytest.raises(ModelCallError, match="HTTP 400: `temperature` is deprecated"):
        await model.generate(QUESTION, GenerateOptions(temperature=0.0))
    assert len(loopback.requests) == 1


async def test_timeout_raises_model_timeout_error(
    loopback: LoopbackServer, impatient: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_message("too late").delayed(5))
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"timed out.*within 0\.2 s"):
        await impatient.generate(QUESTION)
    assert time.monotonic() - started < 2.0


async def test_stream_reassembles_deltas_split_mid_tag(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(anthropic_stream(["<ans", "wer>4", "2</answer>"], input_tokens=9))
    deltas, final = await stream_texts(model, QUESTION)
    assert deltas == ["<ans", "wer>4", "2</answer>"]
    assert final == ModelResponse(
        "<answer>42</answer>", "stop", Usage(9, 4), "claude-loopback", id="msg_loopback"
    )
    body = loopback.last_request.json()
    assert body["stream"] is True
    assert body["system"] == "Answer briefly."


async def test_stream_reports_a_matched_stop_sequence(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        anthropic_stream(["Action: calc"], stop_reason="stop_sequence", stop_sequence="\nObs")
    )
    _, final = await stream_texts(model, QUESTION, GenerateOptions(stop=("\nObs",), max_tokens=99))
    assert final.stop_reason == "stop_sequence"
    body = loopback.last_request.json()
    assert (body["stop_sequences"], body["max_tokens"]) == (["\nObs"], 99)


async def test_stream_stalling_mid_way_times_out(
    loopback: LoopbackServer, impatient: AnthropicModel
) -> None:
    # The SDK lets this read timeout escape unwrapped; the adapter must still translate it.
    loopback.enqueue(replace(anthropic_stream(["a", "b"]), chunk_delay=5))
    with pytest.raises(ModelTimeoutError):
        await stream_texts(impatient, QUESTION)


async def test_stream_error_event_raises_model_call_error(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    start = anthropic_stream([])
    assert start.chunks is not None
    error = sse_reply(
        [("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}})]
    )
    assert error.chunks is not None
    loopback.enqueue(replace(start, chunks=start.chunks[:2] + error.chunks))
    with pytest.raises(ModelCallError, match="error mid-stream: Busy"):
        await stream_texts(model, QUESTION)


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop_sequence"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
        ("tool_use", "tool_use"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons_are_normalised(
    loopback: LoopbackServer, model: AnthropicModel, stop_reason: str, expected: str
) -> None:
    loopback.enqueue(anthropic_message("x", stop_reason=stop_reason))
    assert (await model.generate(QUESTION)).stop_reason == expected


async def test_cached_input_tokens_count_as_input(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.enqueue(
        json_reply(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-loopback",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 5,
                    "cache_creation_input_tokens": 100,
                    "cache_read_input_tokens": 20,
                    "output_tokens": 2,
                },
            }
        )
    )
    assert (await model.generate(QUESTION)).usage == Usage(125, 2, cached_input_tokens=20)


async def test_scripted_handler_answers_whole_and_streamed_calls(
    loopback: LoopbackServer, model: AnthropicModel
) -> None:
    loopback.respond_with(chat_script(["Thought: multiply", "Final Answer: 42"], chunk_size=5))
    first = await model.generate(QUESTION)
    deltas, second = await stream_texts(model, QUESTION)
    assert first.text == "Thought: multiply"
    assert (deltas, second.text) == (["Final", " Answ", "er: 4", "2"], "Final Answer: 42")
