"""Translation between our messages and the Anthropic Messages API wire format.

The SDK's types are imported for the type checker only: at run time the wire messages
are plain dicts, so this module loads without the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

from agents.models._errors import UnsupportedContentError
from agents.models._text_only import text_only
from agents.models._types import Message
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

if TYPE_CHECKING:
    from anthropic.types import DocumentBlockParam, ImageBlockParam, MessageParam, TextBlockParam

    _Block: TypeAlias = TextBlockParam | ImageBlockParam | DocumentBlockParam

__all__ = ["anthropic_request", "anthropic_stop_reason"]

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


def anthropic_request(messages: Sequence[Message]) -> tuple[str | None, list[MessageParam]]:
    """The ``system`` text (every system message, in order) and the remaining turns."""
    system: list[str] = []
    wire: list[MessageParam] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            system.append(text_only(message, index, _API))
        elif message.role == "assistant":
            wire.append({"role": "assistant", "content": text_only(message, index, _API)})
        elif all(isinstance(part, TextContent) for part in message.content):
            wire.append({"role": "user", "content": message.text_content()})
        else:
            # The API rejects empty text blocks, and they carry nothing anyway.
            parts = [p for p in message.content if not (isinstance(p, TextContent) and not p.text)]
            wire.append({"role": "user", "content": [_block(p, index) for p in parts]})
    return ("\n\n".join(system) if system else None), wire


def anthropic_stop_reason(stop_reason: str | None) -> str:
    """An Anthropic stop reason in our words."""
    return _STOP_REASONS.get(stop_reason, "other") if stop_reason is not None else "other"


def _block(part: ContentPart, index: int) -> _Block:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImageContent):
        return _image(part, index)
    if isinstance(part, AudioContent):
        raise UnsupportedContentError(
            f"Anthropic's Messages API takes no audio; the user message at index {index} "
            f"holds {part.describe()}"
        )
    return _document(part, index)


def _image(part: ImageContent, index: int) -> ImageBlockParam:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    media_type = _IMAGE_TYPES.get(part.media_type)
    if media_type is None:
        raise UnsupportedContentError(
            f"Anthropic takes jpeg, png, gif or webp images only; the user message at index "
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
        f"Anthropic takes PDF or inline plain-text documents only; the user message at index "
        f"{index} holds {part.describe()}"
    )
