"""An MCP ``CallToolResult`` as this library's ``ToolResult``.

- ``structuredContent``, when the server sent it, is the typed output (``ToolResult.text``);
  text blocks that only repeat it (the spec asks servers to send both) are dropped: its
  JSON in any layout, or, for FastMCP's ``{"result": value}`` wrapping of a plain
  return value, the value itself (the string as it is, one block per list item). Any
  other text is kept as a text part beside it (``TextContent``, labelled with its
  length; ``ContextRelay`` counts and boxes it with the output).
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
        extra = _not_repeating(entries, structured)
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


def _not_repeating(entries: list[object], structured: object) -> list[object]:
    """The entries that are not a text repeating ``structured``.

    >>> _not_repeating(['{"a": 1}', "note"], {"a": 1})
    ['note']
    >>> _not_repeating(["Ada", "Grace"], {"result": ["Ada", "Grace"]})  # FastMCP, list[str]
    []
    >>> _not_repeating(["hello"], {"result": "hello"})  # FastMCP, str
    []
    """
    wrapped = _wrapped(structured)
    texts = [entry for entry in entries if isinstance(entry, str)]
    items = cast("list[object]", wrapped) if type(wrapped) is list else None
    if (
        items is not None
        and len(texts) == len(entries) == len(items) > 1
        and all(_same(text, item) for text, item in zip(texts, items, strict=True))
    ):
        return []  # one block per item of a wrapped list
    values: list[object] = [structured] if wrapped is _NONE else [structured, wrapped]
    return [
        entry
        for entry in entries
        if not (isinstance(entry, str) and any(_same(entry, value) for value in values))
    ]


_NONE = object()


def _wrapped(structured: object) -> object:
    """The value of a one-field object (FastMCP's ``{"result": value}``), else ``_NONE``."""
    if type(structured) is dict:
        fields = cast("dict[str, object]", structured)
        if len(fields) == 1:
            return next(iter(fields.values()))
    return _NONE


def _same(text: str, value: object) -> bool:
    """Whether ``text`` is ``value``: the string itself, or its JSON."""
    if isinstance(value, str) and text == value:
        return True
    if not text.lstrip().startswith(("{", "[", '"')) and isinstance(value, dict | list | str):
        return False  # not JSON of that: no parse (a 36,000-character text is common)
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _as_text(entry: object) -> str:
    return entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
