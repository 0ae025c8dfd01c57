"""Translation between our messages and the OpenAI chat completions wire format.

The SDK's types are imported for the type checker only: at run time the wire messages
are plain dicts, so this module loads without the SDK.

Tool messages carry text only on this API. The media of a run of consecutive tool
messages (one turn's answers) goes in one user message right after the run, each part
after a label such as ``[attachment 2 of call_1 (get_chart)]``: attachments are
numbered across the run, as a tool chain's observation numbers them (``[2] image …``).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from agents.models._errors import UnsupportedContentError
from agents.models._text_only import text_only
from agents.models._types import GenerateOptions, Message, ToolSpec
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
        ChatCompletionToolChoiceOptionParam,
    )
    from openai.types.chat.chat_completion_content_part_input_audio_param import InputAudio
    from openai.types.chat.chat_completion_content_part_param import File
    from openai.types.shared_params import FunctionDefinition

__all__ = ["openai_messages", "openai_stop_reason", "openai_tool_choice", "openai_tools"]

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

_CHOICE_WORDS: Mapping[str, Literal["auto", "required", "none"]] = {
    "auto": "auto",
    "required": "required",
    "none": "none",
}

_API = "OpenAI chat completions"


def openai_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Our messages as chat completion messages; media goes only in user messages.

    A tool message's media follows its run of tool messages in one user message (see
    the module's text).
    """
    wire: list[ChatCompletionMessageParam] = []
    attachments: list[ChatCompletionContentPartParam] = []  # of the current run of tool messages
    count = 0
    for index, message in enumerate(messages):
        if message.role == "tool":
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": message.text_content(),
                }
            )
            for part in message.content:
                if not isinstance(part, TextContent):
                    count += 1
                    attachments.append({"type": "text", "text": _label(count, message)})
                    attachments.append(_part(part, f"the tool message at index {index}"))
            continue
        if attachments:
            wire.append({"role": "user", "content": attachments})
            attachments = []
        count = 0
        if message.role == "system":
            wire.append({"role": "system", "content": text_only(message, index, _API)})
        elif message.role == "assistant":
            wire.append(_assistant(message, index))
        elif all(isinstance(part, TextContent) for part in message.content):
            # A plain string is what every OpenAI-compatible server accepts; the parts stay
            # apart as paragraphs (an observation and a tool's text parts, say), not glued.
            texts = (p.text for p in message.content if isinstance(p, TextContent) and p.text)
            text = "\n\n".join(texts)
            wire.append({"role": "user", "content": text})
        else:
            where = f"the user message at index {index}"
            parts = [_part(part, where) for part in message.content]
            wire.append({"role": "user", "content": parts})
    if attachments:
        wire.append({"role": "user", "content": attachments})
    return wire


def openai_tools(tools: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    """Tool specs as chat completion ``tools``; ``strict`` is sent only when set.

    >>> [tool] = openai_tools([ToolSpec("add", "Add.", {"type": "object"}, strict=True)])
    >>> tool["function"]
    {'name': 'add', 'description': 'Add.', 'parameters': {'type': 'object'}, 'strict': True}
    """
    wire: list[ChatCompletionFunctionToolParam] = []
    for tool in tools:
        function: FunctionDefinition = {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        }
        if tool.strict:
            function["strict"] = True
        wire.append({"type": "function", "function": function})
    return wire


def openai_tool_choice(choice: str) -> ChatCompletionToolChoiceOptionParam:
    """``auto``, ``required`` and ``none`` as they are; any other word names the tool.

    >>> openai_tool_choice("required"), openai_tool_choice("add")
    ('required', {'type': 'function', 'function': {'name': 'add'}})
    """
    word = _CHOICE_WORDS.get(choice)
    if word is not None:
        return word
    return {"type": "function", "function": {"name": choice}}


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


def _assistant(message: Message, index: int) -> ChatCompletionAssistantMessageParam:
    text = text_only(message, index, _API)
    if not message.tool_calls:
        return {"role": "assistant", "content": text}
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in message.tool_calls
    ]
    # With calls, the API takes a null content in place of an empty one.
    return {"role": "assistant", "content": text or None, "tool_calls": calls}


def _label(number: int, message: Message) -> str:
    """``[attachment 1 of call_1 (get_chart)]``: which tool result a media part belongs to."""
    name = f" ({message.name})" if message.name else ""
    return f"[attachment {number} of {message.tool_call_id or 'a tool call'}{name}]"


def _part(part: ContentPart, where: str) -> ChatCompletionContentPartParam:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImageContent):
        return {"type": "image_url", "image_url": {"url": part.data_url()}}
    if isinstance(part, AudioContent):
        return {"type": "input_audio", "input_audio": _audio(part, where)}
    return _file(part, where)


def _audio(part: AudioContent, where: str) -> InputAudio:
    if part.data is None:
        raise UnsupportedContentError(
            f"OpenAI chat completions take audio only inline (data=), not by URL; "
            f"{where} holds {part.describe()}"
        )
    encoded = part.data_url().partition(",")[2]
    if part.media_type in _WAV:
        return {"data": encoded, "format": "wav"}
    if part.media_type in _MP3:
        return {"data": encoded, "format": "mp3"}
    raise UnsupportedContentError(
        f"OpenAI chat completions take wav or mp3 audio only; {where} holds {part.describe()}"
    )


def _file(part: BinaryContent, where: str) -> File:
    if part.data is None:
        raise UnsupportedContentError(
            f"OpenAI chat completions take files only inline (data=), not by URL; "
            f"{where} holds {part.describe()}"
        )
    extension = mimetypes.guess_extension(part.media_type) or ".bin"
    return {
        "type": "file",
        "file": {"file_data": part.data_url(), "filename": f"attachment{extension}"},
    }
