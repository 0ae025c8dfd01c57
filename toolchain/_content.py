"""Content parts: the pieces of a message or tool result that are not plain text.

A part is either text or media. Media carries its bytes inline (``data``) or points at
them (``url``), never both, plus the IANA ``media_type``. Adapters turn parts into
each provider's wire format (data URLs, base64 blocks); tools only build them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from toolchain._errors import ToolchainValueError

__all__ = [
    "AudioContent",
    "BinaryContent",
    "ContentPart",
    "ImageContent",
    "MediaContent",
    "TextContent",
]


@dataclass(frozen=True, slots=True)
class TextContent:
    """Plain text.

    >>> TextContent("hello").text
    'hello'
    """

    text: str

    def describe(self) -> str:
        """A short label for observations, which show the text itself apart: its length.

        >>> TextContent("hello").describe()
        '5 characters'
        """
        return f"{len(self.text)} character{'s' * (len(self.text) != 1)}"


@dataclass(frozen=True, slots=True)
class _Media:
    data: bytes | None = None
    url: str | None = None
    media_type: str = "application/octet-stream"

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ToolchainValueError(
                f"{type(self).__name__} needs exactly one of data= or url=, "
                f"got {'both' if self.data is not None else 'neither'}"
            )

    def data_url(self) -> str:
        """The part as a URL: its ``url``, or a ``data:`` URL of its bytes."""
        if self.url is not None:
            return self.url
        assert self.data is not None  # guaranteed by __post_init__
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"

    def describe(self) -> str:
        """A short label for observations: ``image/png, 1234 bytes`` or the URL."""
        if self.url is not None:
            return f"{self.media_type}, {self.url}"
        assert self.data is not None
        return f"{self.media_type}, {len(self.data)} bytes"


@dataclass(frozen=True, slots=True)
class ImageContent(_Media):
    """An image, inline or by URL.

    >>> ImageContent(data=b"\\x89PNG", media_type="image/png").data_url()[:22]
    'data:image/png;base64,'
    """

    media_type: str = "image/png"


@dataclass(frozen=True, slots=True)
class AudioContent(_Media):
    """Audio, inline or by URL.

    >>> AudioContent(url="https://example.com/a.wav", media_type="audio/wav").url
    'https://example.com/a.wav'
    """

    media_type: str = "audio/wav"


@dataclass(frozen=True, slots=True)
class BinaryContent(_Media):
    """Any other file (PDF, CSV, archive …), inline or by URL.

    >>> BinaryContent(data=b"%PDF", media_type="application/pdf").media_type
    'application/pdf'
    """


MediaContent = ImageContent | AudioContent | BinaryContent
ContentPart = TextContent | ImageContent | AudioContent | BinaryContent
