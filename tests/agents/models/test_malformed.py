"""A server answering 200 with something that is not what its API promises.

Every such answer must raise the library's `ModelCallError` naming what was wrong,
never an ``AttributeError``, ``TypeError``, ``JSONDecodeError`` or a pydantic error
from inside an adapter or SDK: for both providers, whole and streamed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from agents.models import (
    AnthropicModel,
    Message,
    Model,
    ModelCallError,
    ModelResponse,
    OpenAIChatModel,
    TextDelta,
    ToolCallDelta,
)
from tests.support.anthropic_replies import anthropic_message
from tests.support.loopback import LoopbackServer, Reply, json_reply, sse_reply
from tests.support.openai_replies import openai_completion
from tests.support.replies import Provider

QUESTION = [Message.text("user", "What is 6 * 7?")]
HTML = Reply(
    headers=(("Content-Type", "text/html"),),
    body=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
)
NOT_JSON = Reply(headers=(("Content-Type", "application/json"),), body=b"{not json}")


@dataclass(frozen=True)
class Case:
    provider: Provider
    streamed: bool
    reply: Reply
    says: str  # what the error must name

    def prefix(self) -> str:
        whole = {
            "openai": "openai:gpt-test: the response is not a chat completion: ",
            "anthropic": "anthropic:claude-test: the response is not a Messages API message: ",
        }
        streamed = {
            "openai": "openai:gpt-test: the stream is not a chat completion stream: ",
            "anthropic": "anthropic:claude-test: the stream is not a Messages API event stream: ",
        }
        return (streamed if self.streamed else whole)[self.provider]


def _edited(reply: Reply, edit: Callable[[dict[str, Any]], None]) -> Reply:
    body = json.loads(reply.body)
    edit(body)
    return json_reply(body)


def _openai_whole(edit: Callable[[dict[str, Any]], None]) -> Reply:
    return _edited(openai_completion("42"), edit)


def _anthropic_whole(edit: Callable[[dict[str, Any]], None]) -> Reply:
    return _edited(anthropic_message("42"), edit)


def _chunk(**fields: object) -> dict[str, object]:
    choice: dict[str, object] = {"index": 0, "delta": {"content": "4"}, "finish_reason": None}
    choice.update(fields)
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-loopback",
        "choices": [choice],
    }


def _openai_stream(bad: object) -> Reply:
    """A good first chunk, then ``bad`` (an object, or a raw ``data:`` line's text)."""
    return sse_reply([(None, _chunk()), (None, bad), (None, "[DONE]")])


_START: dict[str, object] = {
    "type": "message_start",
    "message": {
        "id": "msg_x",
        "type": "message",
        "role": "assistant",
        "model": "claude-loopback",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}


def _text_delta(text: object) -> dict[str, object]:
    return {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }


def _anthropic_stream(name: str, bad: object) -> Reply:
    """message_start and a first delta, then the event ``name`` with data ``bad``."""
    return sse_reply(
        [
            ("message_start", _START),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", _text_delta("4")),
            (name, bad),
            ("message_stop", {"type": "message_stop"}),
        ]
    )  # fmt: skip


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    """An edit setting the field at a dotted path (digits index lists) to ``value``."""

    def edit(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = body
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[last] = value

    return edit


CASES: dict[str, Case] = {
    # OpenAI, whole
    "openai-html": Case("openai", False, HTML, "the body is not JSON: '<html>"),
    "openai-json-list": Case(
        "openai", False, json_reply([{"id": "x"}]), "the body is a JSON array, not an object"
    ),
    "openai-message-null": Case(
        "openai",
        False,
        _openai_whole(_set("choices.0.message", None)),
        "choices[0].message is null, not an object",
    ),
    "openai-content-42": Case(
        "openai",
        False,
        _openai_whole(_set("choices.0.message.content", 42)),
        "choices[0].message.content is 42 (a number), not a string",
    ),
    "openai-usage-text": Case(
        "openai",
        False,
        _openai_whole(_set("usage.prompt_tokens", "lots")),
        "usage.prompt_tokens is 'lots' (a string), not a token count",
    ),
    "openai-invalid-json": Case(
        "openai", False, NOT_JSON, "invalid JSON (Expecting property name enclosed in double"
    ),
    # OpenAI, streamed
    "openai-stream-html": Case(
        "openai", True, HTML, "the server answered text/html, not server-sent events"
    ),
    "openai-stream-json-list": Case(
        "openai", True, _openai_stream([1, 2]), "a chunk is a JSON array, not an object"
    ),
    "openai-stream-delta-null": Case(
        "openai",
        True,
        _openai_stream(_chunk(delta=None)),
        "chunk.choices[0].delta is null, not an object",
    ),
    "openai-stream-content-42": Case(
        "openai",
        True,
        _openai_stream(_chunk(delta={"content": 42})),
        "chunk.choices[0].delta.content is 42 (a number), not a string",
    ),
    "openai-stream-usage-text": Case(
        "openai",
        True,
        _openai_stream({**_chunk(), "usage": {"prompt_tokens": 3, "completion_tokens": "lots"}}),
        "chunk.usage.completion_tokens is 'lots' (a string), not a token count",
    ),
    "openai-stream-invalid-json": Case(
        "openai", True, _openai_stream("{not json}"), "invalid JSON (Expecting property name"
    ),
    # Anthropic, whole
    "anthropic-html": Case("anthropic", False, HTML, "the body is not JSON: '<html>"),
    "anthropic-json-list": Case(
        "anthropic", False, json_reply([1, 2]), "the body is a JSON array, not an object"
    ),
    "anthropic-content-null": Case(
        "anthropic",
        False,
        _anthropic_whole(_set("content", None)),
        "content is null, not a list",
    ),
    "anthropic-content-42": Case(
        "anthropic",
        False,
        _anthropic_whole(_set("content", 42)),
        "content is 42 (a number), not a list",
    ),
    "anthropic-text-42": Case(
        "anthropic",
        False,
        _anthropic_whole(_set("content.0.text", 42)),
        "content[0].text is 42 (a number), not a string",
    ),
    "anthropic-usage-text": Case(
        "anthropic",
        False,
        _anthropic_whole(_set("usage.output_tokens", "lots")),
        "usage.output_tokens is 'lots' (a string), not a token count",
    ),
    "anthropic-invalid-json": Case(
        "anthropic", False, NOT_JSON, "invalid JSON (Expecting property name enclosed in double"
    ),
    # Anthropic, streamed
    "anthropic-stream-html": Case(
        "anthropic", True, HTML, "the server answered text/html, not server-sent events"
    ),
    "anthropic-stream-json-list": Case(
        "anthropic",
        True,
        _anthropic_stream("content_block_delta", [1, 2]),
        "an event is a JSON array, not an object",
    ),
    "anthropic-stream-message-null": Case(
        "anthropic",
        True,
        sse_reply([("message_start", {"type": "message_start", "message": None})]),
        "message_start.message is null, not an object",
    ),
    "anthropic-stream-text-42": Case(
        "anthropic",
        True,
        _anthropic_stream("content_block_delta", _text_delta(42)),
        "content_block_delta.delta.text is 42 (a number), not a string",
    ),
    "anthropic-stream-usage-text": Case(
        "anthropic",
        True,
        _anthropic_stream(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": "lots"},
            },
        ),
        "message_delta.usage.output_tokens is 'lots' (a string), not a token count",
    ),
    "anthropic-stream-invalid-json": Case(
        "anthropic",
        True,
        _anthropic_stream("content_block_delta", "{not json}"),
        "invalid JSON (Expecting property name",
    ),
}


@pytest.fixture
async def models(loopback: LoopbackServer) -> AsyncIterator[dict[Provider, Model]]:
    openai = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_base_url)
    anthropic = AnthropicModel("claude-test", api_key="k", base_url=loopback.base_url)
    yield {"openai": openai, "anthropic": anthropic}
    await openai.aclose()
    await anthropic.aclose()


async def _call(model: Model, streamed: bool) -> list[TextDelta | ToolCallDelta | ModelResponse]:
    if streamed:
        return [item async for item in model.stream(QUESTION)]
    return [await model.generate(QUESTION)]


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
async def test_a_malformed_answer_raises_model_call_error_naming_the_fault(
    loopback: LoopbackServer, models: dict[Provider, Model], case: Case
) -> None:
    loopback.enqueue(case.reply)
    with pytest.raises(ModelCallError) as caught:
        await _call(models[case.provider], case.streamed)
    assert type(caught.value) is ModelCallError
    message = str(caught.value)
    assert message.startswith(case.prefix()), message
    assert case.says in message, message
    assert len(loopback.requests) == 1  # a 200 is never retried


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_json_answer_to_a_streamed_request_is_an_error_not_an_empty_reply(
    loopback: LoopbackServer, models: dict[Provider, Model], provider: Provider
) -> None:
    whole = openai_completion("42") if provider == "openai" else anthropic_message("42")
    loopback.enqueue(whole)
    with pytest.raises(ModelCallError, match="answered application/json, not server-sent events"):
        await _call(models[provider], streamed=True)


async def test_a_200_error_body_is_reported_as_the_servers_error(
    loopback: LoopbackServer, models: dict[Provider, Model]
) -> None:
    loopback.enqueue(json_reply({"error": {"message": "model is loading", "code": 503}}))
    with pytest.raises(ModelCallError, match=r"it reports an error: model is loading$"):
        await _call(models["openai"], streamed=False)


async def test_a_stream_stopped_early_by_its_reader_still_closes_cleanly(
    loopback: LoopbackServer, models: dict[Provider, Model]
) -> None:
    loopback.enqueue(_openai_stream(_chunk(delta={"content": "2"})))
    stream = models["openai"].stream(QUESTION)
    first = await anext(stream)
    assert first == TextDelta("4")
    await stream.aclose()  # type: ignore[attr-defined]  # an async generator
    loopback.enqueue(openai_completion("42"))
    assert (await models["openai"].generate(QUESTION)).text == "42"
