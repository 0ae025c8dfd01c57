"""What every section format shares: the registered sections, and the operations built
from a format's own scanner (``stream``) and renderer (``format_sections``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import ClassVar, Self

from formats._errors import FormatValueError
from formats._section import FormattedSection, TextSection, check_name, fold_name
from formats._stream import SectionStream

__all__ = ["SectionRegistry"]


class SectionRegistry(ABC):
    """Base of ``XMLFormat`` and ``MarkdownFormat``; not a protocol users must extend."""

    structure_intro: ClassVar[str]

    def __init__(self) -> None:
        self._sections: dict[str, TextSection] = {}
        # Each name as registered, by its folded spelling: what a parse looks tags up
        # in, kept as sections are registered rather than rebuilt per parse.
        self._names_by_fold: dict[str, str] = {}

    @property
    def sections(self) -> tuple[TextSection, ...]:
        """The registered sections, in registration order."""
        return tuple(self._sections.values())

    def register_section(self, section: TextSection) -> Self:
        """Register a section the model may write.

        Its name must be ASCII (``ValueError`` otherwise) and is matched ignoring ASCII
        letter case only: ``ANSWER`` is ``answer``; no non-ASCII letter folds onto it.
        """
        key = fold_name(check_name(section.name))
        if key in self._sections:
            raise FormatValueError(f"section {section.name!r} is already registered")
        self._sections[key] = section
        self._names_by_fold[key] = section.name
        return self

    def describe_structure(self) -> str:
        """The prompt text that teaches the model the section structure."""
        parts = [self.structure_intro]
        for section in self._sections.values():
            guidance = section.guidance.strip() or f"... {section.name} content here ..."
            example = FormattedSection(section.name, guidance, escape=False)
            parts.append(self.format_sections([example]))
        return "\n\n".join(parts)

    def parse(self, output: str) -> dict[str, list[str]]:
        """Every registered section's contents, in order (stripped of outer whitespace).

        Raises ``FormatParseError`` when no registered section is present.
        """
        scanner = self.stream()
        scanner.feed(output)
        return scanner.close()

    def format_section(self, name: str, content: str) -> str:
        """One section; content is encoded so it cannot open or close a section."""
        return self.format_sections([FormattedSection(name, content)])

    @abstractmethod
    def stream(self) -> SectionStream:
        """An incremental parser over the registered sections."""

    @abstractmethod
    def parse_nested(self, content: str, names: Iterable[str]) -> dict[str, list[str]]: ...

    @abstractmethod
    def format_sections(self, sections: Sequence[FormattedSection]) -> str: ...

    @abstractmethod
    def wrap_observation(self, text: str) -> str: ...
