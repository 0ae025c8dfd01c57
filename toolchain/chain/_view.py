"""Views of a chain: its tools with more beside them, or fewer callable, the chain unchanged.

An agent whose extensions bring tools (``ToolSearch``'s ``tool_search``, an admin
extension's tools) runs on a view of the chain it was given (``with_tools``), and a step
whose hooks turned some tools off runs its calls on a narrower one (``narrowed``). A view
shares the chain's `Registry`, which only ``register_tool`` writes: a tool registered on
the chain later is the view's too, and nothing a view adds is the chain's, so a second
agent on the same chain sees none of the first one's tools. This is pydantic-ai's
``WrapperToolset`` / ``FilteredToolset`` shape: wrap, never mutate.

An added tool hides a tool the chain registers later under the same name: in the
view the extension keeps its own tool (its hooks and prompts name it).

A module of its own: it is how a run widens or narrows a chain without changing it, and
nothing else here knows the chain from outside.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Self

from formats import TextFormat
from toolchain._concurrency import run_sync
from toolchain._errors import ToolCallParseError, duplicate_tool
from toolchain._events import ToolCallParseFailed
from toolchain._result import ToolCall, ToolCallError, ToolChainResult
from toolchain.chain._config import inactive_tool
from toolchain.chain._stages import AnyTool

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext
    from toolchain.chain._base import ToolChain

__all__ = ["Narrowed", "Registry", "added_tools"]


class Registry:
    """The tools registered on a chain, shared with its views, and a version that moves
    at each registration (a chain's ``config`` is made anew when it has moved)."""

    __slots__ = ("tools", "version")

    def __init__(self) -> None:
        self.tools: dict[str, AnyTool] = {}
        self.version = 0

    def add(self, tool: AnyTool) -> None:
        self.tools[tool.name] = tool
        self.version += 1  # after the tool: a reader that sees the new version finds it


def added_tools(
    offered: Mapping[str, AnyTool], added: tuple[AnyTool, ...], tools: Sequence[AnyTool]
) -> tuple[AnyTool, ...]:
    """``added`` (a view's own tools) with those of ``tools`` that ``offered`` (the view's
    tools, ``added`` among them) does not have yet. Raises ``DuplicateToolError`` when
    one's name is another tool's."""
    more: dict[str, AnyTool] = {}
    for tool in tools:
        taken = offered.get(tool.name)
        if taken is None:
            taken = more.get(tool.name)
        if taken is tool:
            continue  # offered already: nothing to add
        if taken is not None:
            raise duplicate_tool(tool.name, taken)
        more[tool.name] = tool
    return (*added, *more.values())


class Narrowed:
    """A chain that is not a ``ToolChainBase`` (one written against the ``ToolChain``
    protocol alone), with only ``active`` tools callable: it cannot narrow itself, so
    this wraps it, delegating everything and reading each action once, itself, to
    answer the calls to other tools (``ToolChainBase.narrowed`` does this in the chain's
    own check stage)."""

    def __init__(self, chain: ToolChain, active: tuple[str, ...]) -> None:
        self.chain = chain
        self.active = active
        self._active = frozenset(active)

    @property
    def name(self) -> str:
        return self.chain.name

    @property
    def guidance(self) -> str:
        return self.chain.guidance

    @property
    def tools(self) -> Mapping[str, AnyTool]:
        return {n: t for n, t in self.chain.tools.items() if n in self._active}

    def parse_section(self, content: str) -> object:
        return self.chain.parse_section(content)

    def register_tool(self, tool: AnyTool) -> Self:
        self.chain.register_tool(tool)
        return self

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str:
        return self.chain.available_tools_prompt(self.active if names is None else names)

    def parse_calls(
        self, content: str, text_format: TextFormat | None = None
    ) -> list[ToolCall | str]:
        return self.chain.parse_calls(content, text_format)

    async def execute(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        try:
            items = self.chain.parse_calls(content, text_format)
        except ToolCallParseError as error:
            if ctx.events.has_subscribers(ToolCallParseFailed):
                ctx.events.emit(ToolCallParseFailed(ctx, content, str(error)))
            raise
        calls = [
            ToolCall("error", {}, rejected=ToolCallError("parse", item))
            if isinstance(item, str)
            else item
            for item in items
        ]
        return await self.execute_calls(ctx, calls, text_format)

    async def execute_calls(
        self, ctx: ExecutionContext, calls: Sequence[ToolCall], text_format: TextFormat
    ) -> ToolChainResult:
        tools = self.chain.tools
        marked = [
            ToolCall(call.name, call.args, call.id, inactive_tool(call.name, self.active))
            if call.rejected is None and call.name in tools and call.name not in self._active
            else call
            for call in calls
        ]
        return await self.chain.execute_calls(ctx, marked, text_format)

    def execute_sync(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        return run_sync(self.execute(ctx, content, text_format))
