"""The check both chat APIs share: media is accepted in user messages only."""

from __future__ import annotations

from agents.models._errors import UnsupportedContentError
from agents.models._types import Message
from toolchain import TextContent

__all__ = ["text_only"]


def text_only(message: Message, index: int, api: str) -> str:
    """The message's text; ``UnsupportedContentError`` if it holds any media part."""
    for part in message.content:
        if not isinstance(part, TextContent):
            raise UnsupportedContentError(
                f"{api} takes media only in user messages; the {message.role} message at "
                f"index {index} holds {part.describe()}"
            )
    return message.text_content()
