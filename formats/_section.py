"""Sections: what a model writes (``TextSection``) and what we write back (``FormattedSection``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from formats._errors import FormatError, FormatValueError

__all__ = [
    "NAME_PATTERN",
    "FormatParseError",
    "FormattedSection",
    "Section",
    "TextSection",
    "check_name",
    "fold_name",
]

# A section (tag or heading) name: ASCII only. ``\w`` would admit every Unicode letter,
# and case-folding those can forge a registered name ("thin\u212aing" lowers to "thinking").
NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_NAME = re.compile(NAME_PATTERN)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def check_name(name: str) -> str:
    """``name`` if it can be a section (a tag or heading) name, else ``ValueError``.

    >>> check_name("tool_x.v-2")
    'tool_x.v-2'
    >>> check_name("thin\\u212aing")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    formats._errors.FormatValueError: section name ... is not a valid tag name: \
use ASCII letters, ...
    """
    if not _NAME.fullmatch(name):
        raise FormatValueError(
            f"section name {name!r} is not a valid tag name: use ASCII letters, digits, '_', "
            "'-', '.', starting with a letter or '_'"
        )
    return name


def fold_name(name: str) -> str:
    """``name`` with ASCII letters lower-cased and nothing else changed.

    Section names match case-insensitively in ASCII only: ``str.lower`` would also fold
    non-ASCII letters, some onto ASCII ones (KELVIN SIGN U+212A to ``k``).

    >>> fold_name("ANSWER"), fold_name("thin\\u212aing") == "thinking"
    ('answer', False)
    """
    return name.lower() if name.isascii() else name.translate(_ASCII_LOWER)


class FormatParseError(FormatError, ValueError):
    """The model's output holds none of the registered sections.

    The message names the sections that were expected, so a loop can show it to the
    model as corrective feedback.

    >>> str(FormatParseError(["thinking", "answer"]))
    'no section found; write your response in sections: thinking, answer'
    """

    def __init__(self, expected: Sequence[str], detail: str = "") -> None:
        self.expected = tuple(expected)
        self.detail = detail
        names = ", ".join(self.expected) or "(none registered)"
        message = f"no section found; write your response in sections: {names}"
        super().__init__(f"{message} ({detail})" if detail else message)


@runtime_checkable
class TextSection(Protocol):
    """A section the model writes: a name, guidance on what goes inside, and a parser.

    Tool chains and terminations are sections too: a chain parses its content into
    tool calls, a termination into an answer.

    >>> class Plan:
    ...     name = "plan"
    ...     guidance = "Numbered steps."
    ...     def parse_section(self, content: str) -> object:
    ...         return content.splitlines()
    >>> isinstance(Plan(), TextSection)
    True
    """

    @property
    def name(self) -> str: ...

    @property
    def guidance(self) -> str: ...

    def parse_section(self, content: str) -> object: ...


@dataclass(frozen=True, slots=True)
class Section:
    """A plain-text section: its parsed value is its content.

    >>> Section("thinking", guidance="Reason step by step.").parse_section("  hm  ")
    'hm'
    """

    name: str
    guidance: str = ""

    def parse_section(self, content: str) -> str:
        return content.strip()


@dataclass(frozen=True, slots=True)
class FormattedSection:
    """A section to write back to the model, e.g. one tool's output in an observation.

    ``children`` nest inside it: ``## child`` in Markdown, a nested tag in XML.
    Content is escaped so it cannot open or close a section; ``escape=False`` is for
    trusted markup only, such as a prompt that shows the model the section syntax.

    >>> child = FormattedSection("instructions", "Cite it.")
    >>> s = FormattedSection("weather", "21C", children=(child,))
    >>> s.children[0].name
    'instructions'
    """

    name: str
    content: str
    children: Sequence[FormattedSection] = ()
    escape: bool = True
