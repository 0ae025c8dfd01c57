"""An MCP ``CallToolResult`` as this library's ``ToolResult``.

- ``structuredContent``, when the server sent it, is the typed output (``ToolResult.text``);
  text blocks that only repeat it as JSON (the spec asks servers to send both) are
  dropped, any other text is kept as a text part beside it.
- Otherwise the text blocks are the output: one string (blocks joined by newlines), or,
  when resources come with them, a list in content order where each text block is a
  string and each resource an object (``{"type": "resource_link", "uri": ...}``,
  ``{"type": "resource", "uri": ..., "text": ...}``).
- Images, audio and binary embedded resources become media (``ImageContent``,
  ``AudioContent``, ``BinaryContent``), decoded from base64.
- ``isError`` results are the call's failure: ``error_message`` is what the model reads.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import pydantic

from toolchain._content import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent
from toolchain._result import ToolResult

if TYPE_CHECKING:
    import mcp_types

__all__ = ["error_message", "tool_result"]

_MAX_ERROR_CHARS = 4_000


def tool_result(result: mcp_types.CallToolResult) -> ToolResult[object]:
    """The ``ToolResult`` of a successful call (see the module text)."""
    entries, media = _blocks(result.content)
    structured = result.structured_content
    if structured is not None:
        extra = [entry for entry in entries if not _repeats(entry, structured)]
        media = [*(TextContent(_as_text(entry)) for entry in extra), *media]
        return ToolResult(structured, media=tuple(media))
    if all(isinstance(entry, str) for entry in entries):
        return ToolResult("\n".join(str(entry) for entry in entries), media=tuple(media))
    return ToolResult(entries, media=tuple(media))


def error_message(result: mcp_types.CallToolResult) -> str:
    """What an ``isError`` result says, for the model: its text, else its data."""
    entries, _ = _blocks(result.content)
    text = "\n".join(_as_text(entry) for entry in entries).strip()
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    if not text:
        text = "the tool reported an error without a message"
    if len(text) > _MAX_ERROR_CHARS:
        text = text[: _MAX_ERROR_CHARS - 3] + "..."
    return text


def _blocks(
    content: Sequence[mcp_types.ContentBlock],
) -> tuple[list[object], list[ContentPart]]:
    """(the textual entries in order, the media parts in order)."""
    import mcp_types

    entries: list[object] = []
    media: list[ContentPart] = []
    for block in cast("Sequence[object]", content):  # a server may be newer than this client
        if isinstance(block, mcp_types.TextContent):
            entries.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            data = _decoded(block.data)
            if data is None:
                entries.append({"type": block.type, "error": "the server sent invalid base64"})
            elif isinstance(block, mcp_types.ImageContent):
                media.append(ImageContent(data=data, media_type=block.mime_type))
            else:
                media.append(AudioContent(data=data, media_type=block.mime_type))
        elif isinstance(block, mcp_types.ResourceLink):
            link: dict[str, object] = {
                "type": "resource_link",
                "uri": block.uri,
                "name": block.name,
            }
            _put(link, title=block.title, description=block.description)
            _put(link, mimeType=block.mime_type, size=block.size)
            entries.append(link)
        elif isinstance(block, mcp_types.EmbeddedResource):
            entries.append(_resource(block.resource, media))
        elif isinstance(block, pydantic.BaseModel):  # a newer block type: shown as sent
            entries.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    return entries, media


def _resource(
    resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents,
    media: list[ContentPart],
) -> dict[str, object]:
    import mcp_types

    entry: dict[str, object] = {"type": "resource", "uri": resource.uri}
    _put(entry, mimeType=resource.mime_type)
    if isinstance(resource, mcp_types.TextResourceContents):
        entry["text"] = resource.text
        return entry
    data = _decoded(resource.blob)
    if data is None:
        entry["error"] = "the server sent invalid base64"
        return entry
    kind = resource.mime_type or "application/octet-stream"
    if kind.startswith("image/"):
        media.append(ImageContent(data=data, media_type=kind))
    elif kind.startswith("audio/"):
        media.append(AudioContent(data=data, media_type=kind))
    else:
        media.append(BinaryContent(data=data, media_type=kind))
    entry["attached"] = f"{len(data)} bytes, as an attachment"
    return entry


def _put(entry: dict[str, object], **fields: object) -> None:
    entry.update((key, value) for key, value in fields.items() if value is not None)


def _decoded(data: str) -> bytes | None:
    try:  # whitespace (line breaks every 76 characters …) is not an error
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _repeats(entry: object, structured: object) -> bool:
    """Whether a text block only repeats the structured content as JSON."""
    if not isinstance(entry, str):
        return False
    try:
        return bool(json.loads(entry) == structured)
    except ValueError:
        return False


def _as_text(entry: object) -> str:
    return entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
