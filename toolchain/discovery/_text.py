"""The text of a tool that the search backends read.

Tool names are identifiers (``cms_searchImages``, ``math.hypot``, ``HTTPRequest``);
queries are prose. Splitting identifiers into words lets "search images" meet
``cms_searchImages`` in every backend alike.
"""

from __future__ import annotations

import re

from toolchain.discovery._documents import ToolDocument

__all__ = ["document_prose", "split_identifiers"]

# A lower-case letter or digit followed by a capital ("searchImages"), or the last
# capital of an acronym followed by a word ("HTTPRequest" -> "HTTP Request").
_CASE_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_JOINERS = re.compile(r"[_.\-/:#]+")


def split_identifiers(text: str) -> str:
    """``text`` with identifiers broken into words (case, underscores, dots, dashes).

    >>> split_identifiers("cms_searchImages math.hypot HTTPRequest")
    'cms search Images math hypot HTTP Request'
    """
    return _JOINERS.sub(" ", _CASE_BOUNDARY.sub(" ", text))


def document_prose(doc: ToolDocument, *, parameters: bool = True) -> str:
    """One tool as plain prose: its name in words, description, phrases, category,
    hint and (unless ``parameters`` is False) its parameters' names and descriptions.

    >>> document_prose(ToolDocument("get_weather", "Current weather.", "weather",
    ...                             parameters=(("city", "A city name"),)))
    'get weather. Current weather. weather. city: A city name'
    """
    parts = [split_identifiers(doc.name).strip(), doc.description]
    parts += [*doc.phrases, doc.category, doc.hint]
    if parameters:
        parts += [f"{split_identifiers(name)}: {text}".strip() for name, text in doc.parameters]
    cleaned = (part.strip().rstrip(".").strip() for part in parts)
    return ". ".join(part for part in cleaned if part)
