"""The discovery index: the tools that can be found, their metadata, and its checks.

``ToolIndex`` joins the tools (their names, descriptions and parameter schemas) with
the ``ToolInfo`` written for them, the custom extractors of working memory and the
workflow guidance of each category. ``problems()`` lists every inconsistency at once,
so a misconfigured index fails at startup with the whole list, not one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import msgspec

from toolchain._errors import ToolchainError
from toolchain._kept import Kept, kept_for
from toolchain._tool import Tool
from toolchain.discovery._documents import ToolDocument
from toolchain.discovery._metadata import Extractor, ToolInfo

__all__ = ["ToolIndex", "ToolIndexError"]

AnyTool = Tool[Any, Any]


class ToolIndexError(ToolchainError, ValueError):
    """The index is inconsistent; ``problems`` lists every problem found.

    >>> str(ToolIndexError(["a", "b"]))
    'the tool index has 2 problems:\\n- a\\n- b'
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        count = f"{len(problems)} problem" + ("" if len(problems) == 1 else "s")
        super().__init__(f"the tool index has {count}:\n" + "\n".join(f"- {p}" for p in problems))


class ToolIndex:
    """Tools that discovery can find, with their metadata.

    - ``tools``: the tools (the deferred ones and any others the index should know).
    - ``info``: a ``ToolInfo`` per tool (optional unless ``require_info``).
    - ``extractors``: custom working-memory extractors by tool name.
    - ``workflows``: guidance text per category, returned with the tools found.

    >>> from toolchain import tool
    >>> @tool
    ... def list_pages() -> list[str]:
    ...     '''List the site's pages.'''
    ...     return []
    >>> index = ToolIndex([list_pages], [ToolInfo("list_pages", category="pages")],
    ...                   workflows={"pages": "Pages have unique slugs."})
    >>> index.problems()
    []
    >>> index.documents()[0].category, index.workflow(["pages"])
    ('pages', 'Pages have unique slugs.')
    >>> ToolIndex([list_pages], [ToolInfo("list_posts")]).problems()
    ["metadata names 'list_posts', which is not a registered tool"]
    """

    def __init__(
        self,
        tools: Iterable[AnyTool],
        info: Iterable[ToolInfo] = (),
        *,
        extractors: Mapping[str, Extractor] | None = None,
        workflows: Mapping[str, str] | None = None,
        require_info: bool = False,
    ) -> None:
        self.tools: dict[str, AnyTool] = {}
        self._duplicates: list[str] = []
        for each in tools:
            if each.name in self.tools and self.tools[each.name] is not each:
                self._duplicates.append(each.name)
            self.tools[each.name] = each
        self.info: dict[str, ToolInfo] = {}
        self._duplicate_info: list[str] = []
        for entry in info:
            if entry.name in self.info:
                self._duplicate_info.append(entry.name)
            self.info[entry.name] = entry
        self.extractors: dict[str, Extractor] = dict(extractors or {})
        self.workflows: dict[str, str] = dict(workflows or {})
        self.require_info = require_info
        self._read: dict[str, _Read] = {}
        """Each tool as last read (`_read_tool`): its document and definition, made again
        only when the tool, its description, metadata or input schema changed."""
        self._documents: tuple[ToolDocument, ...] = ()

    def problems(self) -> list[str]:
        """Every inconsistency, in a stable order (empty when the index is sound)."""
        found: list[str] = [f"two different tools are named {n!r}" for n in self._duplicates]
        found += [f"{n!r} has metadata twice" for n in self._duplicate_info]
        if self.require_info:
            found += [
                f"the tool {name!r} has no metadata (ToolInfo)"
                for name in self.tools
                if name not in self.info
            ]
        for name, entry in self.info.items():
            if name not in self.tools:
                found.append(f"metadata names {name!r}, which is not a registered tool")
                continue
            found += [
                f"{name!r} lists the related tool {other!r}, which is not registered"
                for other in entry.related
                if other not in self.tools
            ]
            if entry.extraction is not None and name in self.extractors:
                found.append(f"{name!r} has both an extraction schema and a custom extractor")
        found += [
            f"a custom extractor is given for {name!r}, which is not a registered tool"
            for name in self.extractors
            if name not in self.tools
        ]
        return found

    def validate(self) -> None:
        """Raise ``ToolIndexError`` listing every problem, if there is any."""
        problems = self.problems()
        if problems:
            raise ToolIndexError(problems)

    def info_of(self, name: str) -> ToolInfo:
        """The metadata of ``name`` (an empty ``ToolInfo`` when none was written)."""
        return self.info.get(name) or ToolInfo(name)

    def documents(self) -> tuple[ToolDocument, ...]:
        """What the search backends index: one document per tool, in tool order (the same
        tuple again while every tool is the same: a backend given it knows it at once)."""
        made = tuple(self._read_tool(tool).document for tool in self.tools.values())
        if len(self._read) > len(made):  # tools gone from ``tools``: their reads go too
            self._read = {name: read for name, read in self._read.items() if name in self.tools}
        last = self._documents
        if last == made:  # compared in C, each document by identity first
            return last
        self._documents = made
        return made

    def document(self, tool: AnyTool) -> ToolDocument:
        """What the search backends index of ``tool``: its name, description (the
        metadata's, when it has one), category, phrases, parameters and hint."""
        return self._read_tool(tool).document

    def definition(self, tool: AnyTool) -> str:
        """``tool``'s definition as a model reads it when it is described: its name,
        description and compact parameter schema (what deferring it keeps out).

        >>> from toolchain import tool
        >>> @tool
        ... def ping(host: str) -> str:
        ...     '''Ping a host.'''
        ...     return host
        >>> print(ToolIndex([ping]).definition(ping))
        ping: Ping a host.
        {"additionalProperties":false,"properties":{"host":{"type":"string"}},"required":["host"],"type":"object"}
        """
        return self._read_tool(tool).definition

    def prompt_schema(self, tool: AnyTool) -> dict[str, object]:
        """``tool.prompt_schema()``, the parameters a search describes it with: asked
        once while the tool is the same (a tool class may make its own at a cost)."""
        return self._read_tool(tool).prompt_schema

    def _read_tool(self, tool: AnyTool) -> _Read:
        """``tool`` as the index reads it. Made once for a tool as it is, for every
        search made over the index (one per request, say): read again when the tool,
        its description, metadata or input schema changed since (changed in place too)."""
        info = self.info.get(tool.name)
        description = tool.description
        schema = tool.input_schema()
        known = self._read.get(tool.name)
        if (
            known is not None
            and known.tool is tool
            and known.info is info
            and known.schema is schema
            and known.description == description
        ):
            return known
        entry = info or ToolInfo(tool.name)
        document = ToolDocument(
            tool.name,
            (entry.description or description).strip(),
            entry.category,
            entry.phrases,
            # The names and descriptions (no need to compact): read once per schema, for
            # every index made of its tools.
            kept_for(_PARAMETERS, schema, _parameters),
            entry.hint,
        )
        shown = tool.prompt_schema()
        definition = f"{tool.name}: {description}\n{msgspec.json.encode(shown).decode()}"
        made = _Read(tool, info, description, schema, document, shown, definition)
        self._read[tool.name] = made
        return made

    def workflow(self, categories: Iterable[str]) -> str:
        """The guidance of ``categories`` (each once, in the order given)."""
        seen: dict[str, None] = dict.fromkeys(c for c in categories if c in self.workflows)
        return "\n\n".join(self.workflows[c].strip() for c in seen)


@dataclass(frozen=True, slots=True)
class _Read:
    """A tool as the index last read it: what its document and definition were made from."""

    tool: AnyTool
    info: ToolInfo | None
    description: str
    schema: object
    document: ToolDocument
    prompt_schema: dict[str, object]
    definition: str


_PARAMETERS = Kept[int, tuple[dict[str, object], tuple[tuple[str, str], ...]]](1024)
"""Input schemas and their parameters' names and descriptions (`ToolIndex.document`)."""


def _parameters(schema: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    found: list[tuple[str, str]] = []
    for name, spec in cast("Mapping[str, object]", properties).items():
        description = ""
        if isinstance(spec, Mapping):
            text = cast("Mapping[str, object]", spec).get("description")
            description = text if isinstance(text, str) else ""
        found.append((name, description))
    return tuple(found)
