"""Translation between our messages and the OpenAI chat completions wire format.

The SDK's types are imported for the type checker only: at run time the wire messages
are plain dicts, so this module loads without the SDK.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agents.models._errors import UnsupportedContentError
from agents.models._text_only import text_only
from agents.models._types import GenerateOptions, Message
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionContentPartParam, ChatCompletionMessageParam
    from openai.types.chat.chat_completion_content_part_input_audio_param import InputAudio
    from openai.types.chat.chat_completion_content_part_param import File

__all__ = ["openai_messages", "openai_stop_reason"]

_WAV = ("audio/wav", "audio/wave", "audio/x-wav", "audio/vnd.wave")
_MP3 = ("audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg-3")

_FINISH_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}

_API = "OpenAI chat completions"


def openai_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Our messages as chat completion messages; media goes only in user messages."""
    wire: list[ChatCompletionMessageParam] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            wire.append({"role": "system", "content": text_only(message, index, _API)})
        elif message.role == "assistant":
            wire.append({"role": "assistant", "content": text_only(message, index, _API)})
        elif all(isinstance(part, TextContent) for part in message.content):
            # A plain string is what every OpenAI-compatible server accepts.
            wire.append({"role": "user", "content": message.text_content()})
        else:
            parts = [_part(part, index) for part in message.content]
            wire.append({"role": "user", "content": parts})
    return wire


def openai_stop_reason(
    finish_reason: str | None, extra: Mapping[str, object] | None, options: GenerateOptions
) -> str:
    """A finish reason in our words; ``extra`` is the choice's non-standard fields."""
    if finish_reason is None:
        return "other"
    # vLLM names the stop string it matched; plain OpenAI says only "stop".
    matched = (extra or {}).get("stop_reason")
    if finish_reason == "stop" and isinstance(matched, str) and matched in options.stop:
        return "stop_sequence"
    return _FINISH_REASONS.get(finish_reason, "other")


def _part(part: ContentPart, index: int) -> ChatCompletionContentPartParam:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImageContent):
        return {"type": "image_url", "image_url": {"url": part.data_url()}}
    if isinstance(part, AudioContent):
        return {"type": "input_audio", "input_audio": _audio(part, index)}
    return _file(part, index)


def _audio(part: AudioContent, index: int) -> InputAudio:
    if part.data is None:
        raise UnsupportedContentError(
            f"OpenAI chat completions take audio only inline (data=), not by URL; "
            f"the user message at index {index} holds {part.describe()}"
        )
    encoded = part.data_url().partition(",")[2]
    if part.media_type in _WAV:
        return {"data": encoded, "format": "wav"}
    if part.media_type in _MP3:
        return {"data": encoded, "format": "mp3"}
    raise UnsupportedContentError(
        f"OpenAI chat completions take wav or mp3 audio only; the user message at index "
        f"{index} holds {part.describe()}"
    )


def _file(part: BinaryContent, index: int) -> File:
    if part.data is None:
        raise UnsupportedContentError(
            f"OpenAI chat completions take files only inline (data=), not by URL; "
            f"the user message at index {index} holds {part.describe()}"
        )
    extension = mimetypes.guess_extension(part.media_type) or ".bin"
    return {
        "type": "file",
        "file": {"file_data": part.data_url(), "filename": f"attachment{extension}"},
    }
