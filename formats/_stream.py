"""Streaming section events and the protocol of an incremental parser."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["SectionDelta", "SectionEnd", "SectionEvent", "SectionStart", "SectionStream"]


@dataclass(frozen=True, slots=True)
class SectionStart:
    """A registered section opened.

    >>> from formats import XMLFormat, Section
    >>> XMLFormat().register_section(Section("answer")).stream().feed("<answer>")
    [SectionStart(name='answer')]
    """

    name: str


@dataclass(frozen=True, slots=True)
class SectionDelta:
    """Decoded text appended to the open section.

    Whitespace is sent only once more text follows it, so the deltas of a section
    joined equal its final (stripped) content exactly.

    >>> from formats import XMLFormat, Section
    >>> stream = XMLFormat().register_section(Section("answer")).stream()
    >>> stream.feed("<answer>4")
    [SectionStart(name='answer'), SectionDelta(name='answer', text='4')]
    >>> stream.feed("2 ")  # the space waits: it may end the section
    [SectionDelta(name='answer', text='2')]
    """

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class SectionEnd:
    """A section closed (or was cut off by the end of the output); ``content`` is final.

    >>> from formats import XMLFormat, Section
    >>> stream = XMLFormat().register_section(Section("answer")).stream()
    >>> stream.feed("<answer>42</answer>")[-1]
    SectionEnd(name='answer', content='42')
    """

    name: str
    content: str


SectionEvent = SectionStart | SectionDelta | SectionEnd


class SectionStream(Protocol):
    """An incremental parser: feed chunks as they arrive, close at the end.

    Feeding any split of an output gives the same sections as parsing it whole.

    >>> from formats import XMLFormat, Section
    >>> stream = XMLFormat().register_section(Section("answer")).stream()
    >>> _ = stream.feed("<ans"), stream.feed("wer>4"), stream.feed("2</answer>")
    >>> stream.close()
    {'answer': ['42']}
    """

    @property
    def open_section(self) -> str | None:
        """The name of the section being written, or None between sections."""
        ...

    def feed(self, chunk: str) -> list[SectionEvent]:
        """Consume a chunk; return the events it completed."""
        ...

    def events(self) -> list[SectionEvent]:
        """Every event so far, in order."""
        ...

    def close(self) -> dict[str, list[str]]:
        """Finish: close a section left open and return every section's contents.

        Raises ``FormatParseError`` when no registered section was found.
        """
        ...
