"""The ``TextFormat`` protocol: one section convention, read and written."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, Self, runtime_checkable

from formats._section import FormattedSection, TextSection
from formats._stream import SectionStream

__all__ = ["TextFormat"]


@runtime_checkable
class TextFormat(Protocol):
    """How sections are delimited, both in the model's output and in observations.

    Implementations keep three invariants: for any registered name and any content,
    ``parse(format_section(name, c))[name] == [c.strip()]``; tool output can never open
    or close a section in an observation; parsing is linear and a streamed parse gives
    the same result as a whole one.

    >>> from formats import MarkdownFormat, XMLFormat
    >>> isinstance(XMLFormat(), TextFormat), isinstance(MarkdownFormat(), TextFormat)
    (True, True)
    """

    @property
    def sections(self) -> tuple[TextSection, ...]: ...

    def register_section(self, section: TextSection) -> Self: ...

    def describe_structure(self) -> str: ...

    def parse(self, output: str) -> dict[str, list[str]]: ...

    def parse_nested(self, content: str, names: Iterable[str]) -> dict[str, list[str]]: ...

    def stream(self) -> SectionStream: ...

    def format_section(self, name: str, content: str) -> str: ...

    def format_sections(self, sections: Sequence[FormattedSection]) -> str: ...

    def wrap_observation(self, text: str) -> str: ...
