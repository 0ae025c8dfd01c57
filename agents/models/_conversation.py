"""Conversations as JSON: `messages_to_json` and `messages_from_json`, without loss.

Every field of every `Message` is kept: roles, text, media (inline bytes as base64,
or a URL) with their media types, an assistant turn's tool calls (id, name and the
raw argument text) and a tool turn's ``tool_call_id`` and ``name``. The document has
a ``version`` so that later formats can still read this one.

>>> from toolchain import ImageContent
>>> chat = (Message("user", (TextContent("What is this?"), ImageContent(data=b"\\x89PNG"))),)
>>> text = messages_to_json(chat)
>>> text[:60]
'{"version":1,"messages":[{"role":"user","content":[{"type":"'
>>> messages_from_json(text) == chat
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

import msgspec

from agents._errors import AgentValueError
from agents.models._types import Message, ToolCallRequest
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

__all__ = [
    "CONVERSATION_VERSION",
    "WireCall",
    "WireMessage",
    "WirePart",
    "message_from_wire",
    "message_to_wire",
    "messages_from_json",
    "messages_to_json",
    "part_from_wire",
    "part_to_wire",
]

CONVERSATION_VERSION: Final = 1
"""The version `messages_to_json` writes and `messages_from_json` reads."""


class _Text(msgspec.Struct, tag_field="type", tag="text", frozen=True):
    text: str


class _Image(msgspec.Struct, tag_field="type", tag="image", frozen=True, omit_defaults=True):
    media_type: str
    data: bytes | None = None
    url: str | None = None


class _Audio(msgspec.Struct, tag_field="type", tag="audio", frozen=True, omit_defaults=True):
    media_type: str
    data: bytes | None = None
    url: str | None = None


class _Binary(msgspec.Struct, tag_field="type", tag="binary", frozen=True, omit_defaults=True):
    media_type: str
    data: bytes | None = None
    url: str | None = None


WirePart = _Text | _Image | _Audio | _Binary


class WireCall(msgspec.Struct, frozen=True):
    id: str
    name: str
    arguments: str


class WireMessage(msgspec.Struct, frozen=True, omit_defaults=True):
    role: Literal["system", "user", "assistant", "tool"]
    content: tuple[WirePart, ...]
    tool_calls: tuple[WireCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""


class _Conversation(msgspec.Struct, frozen=True):
    version: int
    messages: tuple[WireMessage, ...]


class _Version(msgspec.Struct):
    version: int


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(_Conversation)
_VERSION_DECODER: Final = msgspec.json.Decoder(_Version)


def messages_to_json(messages: Iterable[Message]) -> str:
    """The conversation as one JSON document (compact, UTF-8 text).

    >>> messages_to_json([Message.text("user", "hi")])
    '{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}'
    """
    wire = _Conversation(CONVERSATION_VERSION, tuple(message_to_wire(m) for m in messages))
    return _ENCODER.encode(wire).decode()


def messages_from_json(text: str | bytes) -> tuple[Message, ...]:
    """The messages `messages_to_json` wrote; ``ValueError`` saying what is wrong otherwise.

    >>> messages_from_json('{"version": 1, "messages": []}')
    ()
    >>> messages_from_json('{"version": 9, "messages": []}')
    Traceback (most recent call last):
    ...
    agents._errors.AgentValueError: conversation JSON has version 9; this library reads version 1
    """
    try:
        version = _VERSION_DECODER.decode(text).version
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
        raise AgentValueError(f"not a conversation JSON document: {error}") from error
    if version != CONVERSATION_VERSION:
        raise AgentValueError(
            f"conversation JSON has version {version}; "
            f"this library reads version {CONVERSATION_VERSION}"
        )
    try:
        wire = _DECODER.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
        raise AgentValueError(f"invalid conversation JSON: {error}") from error
    messages: list[Message] = []
    for index, message in enumerate(wire.messages):
        try:
            messages.append(message_from_wire(message))
        except ValueError as error:
            raise AgentValueError(
                f"invalid conversation JSON: messages[{index}]: {error}"
            ) from error
    return tuple(messages)


def message_to_wire(message: Message) -> WireMessage:
    """A message in this JSON form (the durable record embeds it: ``agents.durable``)."""
    return WireMessage(
        message.role,
        tuple(part_to_wire(part) for part in message.content),
        tuple(WireCall(c.id, c.name, c.arguments) for c in message.tool_calls),
        message.tool_call_id,
        message.name,
    )


def part_to_wire(part: ContentPart) -> WirePart:
    """A content part in this JSON form."""
    if isinstance(part, TextContent):
        return _Text(part.text)
    if isinstance(part, ImageContent):
        return _Image(part.media_type, part.data, part.url)
    if isinstance(part, AudioContent):
        return _Audio(part.media_type, part.data, part.url)
    return _Binary(part.media_type, part.data, part.url)


def message_from_wire(message: WireMessage) -> Message:
    """The message of `message_to_wire`; ``ValueError`` for an invalid media part."""
    return Message(
        message.role,
        tuple(part_from_wire(part) for part in message.content),
        tuple(ToolCallRequest(c.id, c.name, c.arguments) for c in message.tool_calls),
        message.tool_call_id,
        message.name,
    )


def part_from_wire(part: WirePart) -> ContentPart:
    """The part of `part_to_wire`; ``ValueError`` unless exactly one of data and url."""
    # The media classes raise ValueError unless exactly one of data and url is given.
    if isinstance(part, _Text):
        return TextContent(part.text)
    if isinstance(part, _Image):
        return ImageContent(data=part.data, url=part.url, media_type=part.media_type)
    if isinstance(part, _Audio):
        return AudioContent(data=part.data, url=part.url, media_type=part.media_type)
    return BinaryContent(data=part.data, url=part.url, media_type=part.media_type)
