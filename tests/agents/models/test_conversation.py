"""Conversations to JSON and back: every field kept, bad input refused clearly."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.models import (
    CONVERSATION_VERSION,
    Message,
    Role,
    ToolCallRequest,
    messages_from_json,
    messages_to_json,
)
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

CHAT = (
    Message.text("system", "You are terse."),
    Message(
        "user",
        (
            TextContent("What is in these?"),
            ImageContent(data=PNG, media_type="image/png"),
            ImageContent(url="https://example.com/cat.jpg", media_type="image/jpeg"),
            AudioContent(data=b"RIFF\x00\x00", media_type="audio/wav"),
            BinaryContent(url="https://example.com/a.pdf", media_type="application/pdf"),
        ),
    ),
    Message(
        "assistant",
        (TextContent("Looking."),),
        tool_calls=(
            ToolCallRequest("call_1", "describe", '{"index": 0}'),
            ToolCallRequest("call_2", "describe", '{"index": 1,'),
        ),
    ),
    Message(
        "tool",
        (TextContent("a cat"), ImageContent(data=b"", media_type="image/gif")),
        tool_call_id="call_1",
        name="describe",
    ),
    Message("tool", (TextContent("Error: bad JSON"),), tool_call_id="call_2", name="describe"),
    Message.text("assistant", "A cat and a sound."),
)


def test_a_conversation_with_media_and_tool_calls_round_trips() -> None:
    assert messages_from_json(messages_to_json(CHAT)) == CHAT


def test_media_bytes_are_base64_and_the_document_has_a_version() -> None:
    document = json.loads(messages_to_json(CHAT))
    assert document["version"] == CONVERSATION_VERSION == 1
    image = document["messages"][1]["content"][1]
    assert image == {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}
    assert document["messages"][1]["content"][2] == {
        "type": "image",
        "media_type": "image/jpeg",
        "url": "https://example.com/cat.jpg",
    }
    assert document["messages"][3]["tool_call_id"] == "call_1"
    assert document["messages"][2]["tool_calls"][1]["arguments"] == '{"index": 1,'


def test_json_is_read_from_bytes_too() -> None:
    assert messages_from_json(messages_to_json(CHAT).encode()) == CHAT


def test_empty_conversation_round_trips() -> None:
    assert messages_from_json(messages_to_json([])) == ()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "not a conversation JSON document"),
        ("[1, 2]", "not a conversation JSON document"),
        ('{"messages": []}', "not a conversation JSON document"),
        ('{"version": 2, "messages": []}', "version 2; this library reads version 1"),
        ('{"version": 1}', "invalid conversation JSON"),
        ('{"version": 1, "messages": [{"role": "robot", "content": []}]}', "role"),
        (
            '{"version": 1, "messages": [{"role": "user", "content": [{"type": "video"}]}]}',
            "invalid conversation JSON",
        ),
        (
            '{"version": 1, "messages": [{"role": "user", "content": '
            '[{"type": "image", "media_type": "image/png", "data": "!!"}]}]}',
            "invalid conversation JSON",
        ),
        (
            '{"version": 1, "messages": [{"role": "user", "content": '
            '[{"type": "image", "media_type": "image/png"}]}]}',
            "messages[0]: ImageContent needs exactly one of data= or url=",
        ),
        (
            '{"version": 1, "messages": [{"role": "user", "content": '
            '[{"type": "binary", "media_type": "x", "data": "", "url": "u"}]}]}',
            "got both",
        ),
    ],
)
def test_bad_input_raises_a_clear_value_error(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        messages_from_json(text)


_text = st.text(max_size=40)
_media_type = st.sampled_from(["image/png", "image/jpeg", "audio/wav", "application/pdf", "x/y"])


def _media(
    kind: type[ImageContent] | type[AudioContent] | type[BinaryContent],
) -> st.SearchStrategy[ContentPart]:
    by_data = st.builds(
        lambda d, m: kind(data=d, media_type=m), st.binary(max_size=64), _media_type
    )
    by_url = st.builds(lambda u, m: kind(url=u, media_type=m), _text, _media_type)
    return st.one_of(by_data, by_url)


_parts: st.SearchStrategy[ContentPart] = st.one_of(
    st.builds(TextContent, _text),
    _media(ImageContent),
    _media(AudioContent),
    _media(BinaryContent),
)
_calls = st.builds(ToolCallRequest, _text, _text, _text)
_roles: st.SearchStrategy[Role] = st.sampled_from(["system", "user", "assistant", "tool"])
_messages = st.builds(
    Message,
    _roles,
    st.lists(_parts, max_size=5).map(tuple),
    st.lists(_calls, max_size=3).map(tuple),
    _text,
    _text,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_messages, max_size=6))
def test_round_trip_is_lossless_for_any_messages(messages: list[Message]) -> None:
    assert messages_from_json(messages_to_json(messages)) == tuple(messages)


@settings(max_examples=50, deadline=None)
@given(st.lists(_messages, max_size=4))
def test_serialisation_is_stable(messages: list[Message]) -> None:
    text = messages_to_json(messages)
    assert messages_to_json(messages_from_json(text)) == text
