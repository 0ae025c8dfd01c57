"""``ToolsAdded``: a chain's tools with more beside them, read live, the chain unchanged.

An agent whose extensions bring tools (``ToolSearch``'s ``tool_search``, an admin
extension's tools) runs on a view of the chain it was given (``with_tools`` on
``ToolChainBase``), whose tools are these: the chain's own as they are at each read
(a tool registered on the chain later is there too), then the added ones. The chain's
registry is only read, never written, so a second agent on the same chain sees none
of the first one's tools. This is pydantic-ai's ``WrapperToolset`` / ``for_run``
shape: wrap, never mutate.

An added tool hides a tool the chain registers later under the same name: in the
view the extension keeps its own tool (its hooks and prompts name it).

A module of its own: it is how a run widens a chain without changing it, and nothing
else here knows the chain from outside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolchain._errors import duplicate_tool
from toolchain._tool import Tool

__all__ = ["ToolsAdded"]

AnyTool = Tool[Any, Any]


class ToolsAdded:
    """The tools of ``base`` (a chain's registry: read, never written) with ``added``
    after them. Raises ``DuplicateToolError`` when an added tool's name is another
    tool's, in ``base`` or among ``added``."""

    __slots__ = ("_added", "_base", "_merged", "_seen")

    def __init__(self, base: Mapping[str, AnyTool], added: Sequence[AnyTool]) -> None:
        self._base = base
        self._added: dict[str, AnyTool] = {}
        for tool in added:
            taken = base.get(tool.name)
            if taken is None:
                taken = self._added.get(tool.name)
            if taken is tool:
                continue  # offered already: nothing to add
            if taken is not None:
                raise duplicate_tool(tool.name, taken)
            self._added[tool.name] = tool
        self._merged: dict[str, AnyTool] = {}
        self._seen = -1

    @property
    def added(self) -> tuple[AnyTool, ...]:
        """The tools added to ``base`` (none when it offered each one already)."""
        return tuple(self._added.values())

    def current(self) -> dict[str, AnyTool]:
        """``base``'s tools as they are now, then the added ones (an added tool wins over
        a base tool of its name). Not to be written.

        Made again only when ``base`` has grown since the last read: a chain's registry
        only grows (``register_tool`` adds; nothing replaces or removes a tool), so its
        length tells whether it changed, and every read after the first is a plain dict.
        """
        base = self._base
        if len(base) != self._seen:
            added = self._added
            merged = {name: tool for name, tool in base.items() if name not in added}
            merged.update(added)
            self._merged = merged  # before _seen: a reader that sees the new length
            self._seen = len(base)  # finds the new tools
        return self._merged
