"""What the discovery index knows about each tool beyond its name and schema.

The seed ("dynamic tool injection V2") keeps one record per tool: how to find it
(category, example phrases, related tools), how careful to be with it (risk level,
whether a person must confirm a call) and what it returns worth remembering (an
extraction schema for working memory). ``ToolInfo`` is that record; ``Extraction``
the schema; ``Entity`` what working memory keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolchain._result import Risk

__all__ = ["Entity", "Extraction", "Extractor", "Risk", "ToolInfo"]


@dataclass(frozen=True, slots=True)
class Extraction:
    """Where a tool's result holds entities, and which fields name them.

    ``path`` is a dotted path into the result (``""`` or ``"$root"``: the result
    itself; ``"data.items"``: a nested field); ``is_array`` when it leads to a list of
    entities.

    >>> Extraction("results", "image", name_field="filename", is_array=True).entity_type
    'image'
    """

    path: str
    entity_type: str
    name_field: str = "name"
    id_field: str = "id"
    is_array: bool = False


@dataclass(frozen=True, slots=True)
class Entity:
    """Something a tool result named that later steps may refer to (a page, an image)."""

    type: str
    id: str
    name: str


Extractor = Callable[[object], Sequence[Entity]]
"""A custom extractor: the tool's result (plain data) → the entities in it."""


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """Discovery metadata for one tool (all optional beside the name).

    >>> ToolInfo("cms_create_page", category="pages", phrases=("add a page",),
    ...          risk="moderate").requires_confirmation
    False
    """

    name: str
    category: str = ""
    phrases: tuple[str, ...] = ()
    """Example requests this tool answers: searched like its description."""
    related: tuple[str, ...] = ()
    """Tools often used with this one (named in the search result)."""
    risk: Risk = "safe"
    requires_confirmation: bool = False
    """A call waits for the approval callback before it runs."""
    hint: str = ""
    """A short usage hint returned with the tool when a search finds it."""
    extraction: Extraction | None = None
    description: str | None = None
    """Overrides the tool's own description in the index (None: the tool's)."""
