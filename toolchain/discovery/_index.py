"""The discovery index: the tools that can be found, their metadata, and its checks.

``ToolIndex`` joins the tools (their names, descriptions and parameter schemas) with
the ``ToolInfo`` written for them, the custom extractors of working memory and the
workflow guidance of each category. ``problems()`` lists every inconsistency at once,
so a misconfigured index fails at startup with the whole list, not one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

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
        """What the search backends index: one document per tool, in tool order."""
        return tuple(self.document(tool) for tool in self.tools.values())

    def document(self, tool: AnyTool) -> ToolDocument:
        info = self.info_of(tool.name)
        return ToolDocument(
            tool.name,
            (info.description or tool.description).strip(),
            info.category,
            info.phrases,
            # The names and descriptions (no need to compact): read once per schema, for
            # every index and search made of its tools (one made per request, say).
            kept_for(_PARAMETERS, tool.input_schema(), _parameters),
            info.hint,
        )

    def workflow(self, categories: Iterable[str]) -> str:
        """The guidance of ``categories`` (each once, in the order given)."""
        seen: dict[str, None] = dict.fromkeys(c for c in categories if c in self.workflows)
        return "\n\n".join(self.workflows[c].strip() for c in seen)


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
