"""Translation between our messages and the Anthropic Messages API wire format.

The SDK's types are imported for the type checker only: at run time the wire messages
are plain dicts, so this module loads without the SDK.

Native tool calls map both ways: an assistant message's calls become ``tool_use``
blocks after its text, and a run of ``tool`` messages becomes one user message of
``tool_result`` blocks (media inside the result, which the API allows; ``is_error`` when
the text starts with ``Error:``). The API wants ``input`` to be an object, so arguments
that are not a JSON object (a model's broken JSON, kept raw in `ToolCallRequest`) go as
``{"_raw": <the text>}``: the model sees what it wrote next to the error that answers it,
rather than an empty call it never made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

from agents.models._errors import UnsupportedContentError
from agents.models._text_only import text_only
from agents.models._types import Message, ToolCallRequest, ToolSpec
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

if TYPE_CHECKING:
    from anthropic.types import (
        CacheControlEphemeralParam,
        DocumentBlockParam,
        ImageBlockParam,
        MessageParam,
        TextBlockParam,
        ToolChoiceParam,
        ToolParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
    )

    _Block: TypeAlias = TextBlockParam | ImageBlockParam | DocumentBlockParam
    _TurnBlock: TypeAlias = _Block | ToolUseBlockParam | ToolResultBlockParam
    _Turn: TypeAlias = tuple[Literal["user", "assistant"], str | list[_TurnBlock]]

__all__ = ["anthropic_request", "anthropic_stop_reason", "anthropic_tools"]

_ImageType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
_IMAGE_TYPES: Mapping[str, _ImageType] = {
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/png": "image/png",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}

_STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop_sequence",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}

_API = "Anthropic"


def anthropic_request(
    messages: Sequence[Message], *, cache_prompt: bool = False
) -> tuple[str | list[TextBlockParam] | None, list[MessageParam]]:
    """The ``system`` parameter (every system message, in order) and the remaining turns.

    With ``cache_prompt`` the system prompt goes as one text block and it, like the last
    content block of the last turn, carries an ephemeral ``cache_control`` breakpoint, so
    the provider can cache the prefix that stays the same from one step to the next.
    """
    system: list[str] = []
    turns: list[_Turn] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role == "system":
            system.append(text_only(message, index, _API))
        elif message.role == "tool":
            results: list[_TurnBlock] = []
            while index < len(messages) and messages[index].role == "tool":
                results.append(_tool_result(messages[index], index))
                index += 1
            turns.append(("user", results))
            continue
        elif message.role == "assistant":
            turns.append(("assistant", _assistant(message, index)))
        elif all(isinstance(part, TextContent) for part in message.content):
            turns.append(("user", message.text_content()))
        else:
            turns.append(("user", list(_blocks(message.content, index))))
        index += 1
    joined = "\n\n".join(system) if system else None
    if not cache_prompt:
        return joined, [_wire(turn) for turn in turns]
    if turns:
        turns[-1] = _cached_turn(turns[-1])
    cached_system: list[TextBlockParam] | None = (
        [{"type": "text", "text": joined, "cache_control": _breakpoint()}] if joined else None
    )
    return cached_system, [_wire(turn) for turn in turns]


def anthropic_tools(
    tools: Sequence[ToolSpec], choice: str
) -> tuple[list[ToolParam], ToolChoiceParam]:
    """The ``tools`` and ``tool_choice`` parameters for our tool specs and choice.

    >>> from agents.models._types import ToolSpec
    >>> specs, choice = anthropic_tools([ToolSpec("add", "Add.", {"type": "object"})], "add")
    >>> specs[0]["input_schema"], choice
    ({'type': 'object'}, {'type': 'tool', 'name': 'add'})
    """
    params: list[ToolParam] = []
    for spec in tools:
        param: ToolParam = {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.parameters),
        }
        if spec.strict:
            param["strict"] = True
        params.append(param)
    tool_choice: ToolChoiceParam
    if choice == "auto":
        tool_choice = {"type": "auto"}
    elif choice == "required":
        tool_choice = {"type": "any"}
    elif choice == "none":
        tool_choice = {"type": "none"}
    else:
        tool_choice = {"type": "tool", "name": choice}
    return params, tool_choice


def anthropic_stop_reason(stop_reason: str | None) -> str:
    """An Anthropic stop reason in our words."""
    return _STOP_REASONS.get(stop_reason, "other") if stop_reason is not None else "other"


def _breakpoint() -> CacheControlEphemeralParam:
    return {"type": "ephemeral"}


def _wire(turn: _Turn) -> MessageParam:
    role, content = turn
    if role == "assistant":
        return {"role": "assistant", "content": content}
    return {"role": "user", "content": content}


def _cached_turn(turn: _Turn) -> _Turn:
    """The turn with a cache breakpoint on its last content block (text made a block)."""
    role, content = turn
    if isinstance(content, str):
        if not content:
            return turn  # the API rejects empty text blocks; nothing to mark
        return role, [{"type": "text", "text": content, "cache_control": _breakpoint()}]
    if content:
        content[-1]["cache_control"] = _breakpoint()
    return turn


def _assistant(message: Message, index: int) -> str | list[_TurnBlock]:
    """Plain text, or its text block (if any) followed by one ``tool_use`` per call."""
    text = text_only(message, index, _API)
    if not message.tool_calls:
        return text
    blocks: list[_TurnBlock] = [{"type": "text", "text": text}] if text else []
    blocks += [_tool_use(call) for call in message.tool_calls]
    return blocks


def _tool_use(call: ToolCallRequest) -> ToolUseBlockParam:
    try:
        arguments: dict[str, object] = call.parsed_arguments()
    except ValueError:
        arguments = {"_raw": call.arguments}
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def _tool_result(message: Message, index: int) -> ToolResultBlockParam:
    """A tool message as a ``tool_result``: its text, then its media, inside the result."""
    if not message.tool_call_id:
        raise UnsupportedContentError(
            f"Anthropic needs the id of the call a tool result answers; the tool message "
            f"at index {index} has no tool_call_id"
        )
    result: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    content = list(_blocks(message.content, index))
    if content:
        result["content"] = content
    if message.text_content().lstrip().startswith("Error:"):
        result["is_error"] = True
    return result


def _blocks(parts: Sequence[ContentPart], index: int) -> list[_Block]:
    # The API rejects empty text blocks, and they carry nothing anyway.
    return [_block(p, index) for p in parts if not (isinstance(p, TextContent) and not p.text)]


def _block(part: ContentPart, index: int) -> _Block:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImageContent):
        return _image(part, index)
    if isinstance(part, AudioContent):
        raise UnsupportedContentError(
            f"Anthropic's Messages API takes no audio; the message at index {index} "
            f"holds {part.describe()}"
        )
    return _document(part, index)


def _image(part: ImageContent, index: int) -> ImageBlockParam:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    media_type = _IMAGE_TYPES.get(part.media_type)
    if media_type is None:
        raise UnsupportedContentError(
            f"Anthropic takes jpeg, png, gif or webp images only; the message at index "
            f"{index} holds {part.describe()}"
        )
    encoded = part.data_url().partition(",")[2]
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": encoded},
    }


def _document(part: BinaryContent, index: int) -> DocumentBlockParam:
    if part.media_type == "application/pdf":
        if part.url is not None:
            return {"type": "document", "source": {"type": "url", "url": part.url}}
        encoded = part.data_url().partition(",")[2]
        return {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
        }
    if part.media_type == "text/plain" and part.data is not None:
        text = part.data.decode("utf-8", errors="replace")
        return {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
        }
    raise UnsupportedContentError(
        f"Anthropic takes PDF or inline plain-text documents only; the message at index "
        f"{index} holds {part.describe()}"
    )
