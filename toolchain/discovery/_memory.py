"""``WorkingMemory``: the entities tool results named, listed for the model each step.

After each successful call, the tool's extraction schema (``ToolInfo.extraction``) or
its custom extractor picks the entities out of the result: the page just created,
the images a search returned. They are deduplicated by type and id (the latest
sighting wins), and the most recent are listed with every step, beside the tools
discovered and used so far, so the model can refer to "the hero image" without
looking it up again. All of it is carried by the conversation
(``AgentResult.extension_state``).

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> from toolchain.discovery import Extraction, ToolIndex, ToolInfo
>>> @tool
... def search_images(query: str) -> dict[str, object]:
...     '''Search the media library.'''
...     return {"results": [{"id": "img-7", "filename": "mountain.jpg"}]}
>>> info = ToolInfo("search_images",
...                 extraction=Extraction("results", "image", "filename", is_array=True))
>>> memory = WorkingMemory(ToolIndex([search_images], [info]))
>>> chain = JSONToolChain(extensions=[memory]).register_tool(search_images)
>>> ctx = ExecutionContext()
>>> call = '{"tool": "search_images", "args": {"query": "hills"}}'
>>> _ = chain.execute_sync(ctx, call, XMLFormat())
>>> print(memory.prompt_section(ctx))
Known entities (latest last):
- image: mountain.jpg (img-7)
Tools used: search_images
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from toolchain._context import ExecutionContext, StateKey
from toolchain._errors import ToolchainValueError
from toolchain._extension import Extension
from toolchain._hooks import ToolHook
from toolchain._observations import to_builtins
from toolchain._oneline import one_line
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolResult
from toolchain.discovery._activation import found_tools
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._metadata import Entity, Extraction, Extractor

__all__ = ["WorkingMemory", "extract_entities"]

_log = logger("toolchain")


@dataclass(slots=True)
class _Memory:
    entities: dict[tuple[str, str], Entity] = field(default_factory=lambda: {})
    """(type, id) → entity, oldest first (a new sighting moves it to the end)."""
    used: dict[str, None] = field(default_factory=lambda: {})


_STATE = StateKey[_Memory]("toolchain.discovery.memory")


def _memory(ctx: ExecutionContext) -> _Memory:
    return ctx.state.setdefault(_STATE, _Memory)


class WorkingMemory(Extension):
    """Working memory (see the module text).

    - ``index``: where the extraction schemas and custom extractors come from.
    - ``extractors``: more custom extractors by tool name (beside the index's).
    - ``shown``: how many of the latest entities each step lists.
    - ``kept``: how many entities the memory keeps at most (the oldest go first).
    """

    name = "working_memory"

    def __init__(
        self,
        index: ToolIndex | None = None,
        *,
        extractors: Mapping[str, Extractor] | None = None,
        shown: int = 10,
        kept: int = 500,
    ) -> None:
        if shown < 1 or kept < shown:
            raise ToolchainValueError("shown must be at least 1, and kept at least shown")
        self.schemas: dict[str, Extraction] = {}
        self.extractors: dict[str, Extractor] = {}
        if index is not None:
            self.schemas = {
                name: info.extraction
                for name, info in index.info.items()
                if info.extraction is not None
            }
            self.extractors.update(index.extractors)
        self.extractors.update(extractors or {})
        self.shown = shown
        self.kept = kept

    def install(self, ctx: ExecutionContext) -> None:
        _memory(ctx)
        ctx.hooks.add(_Recorder(self))

    def prompt_section(self, ctx: ExecutionContext) -> str:
        memory = _memory(ctx)
        lines: list[str] = []
        latest = list(memory.entities.values())[-self.shown :]
        if latest:
            lines.append("Known entities (latest last):")
            lines += [f"- {_shown(e.type)}: {_shown(e.name)} ({_shown(e.id)})" for e in latest]
        found = found_tools(ctx)
        if found:
            lines.append("Tools found: " + ", ".join(found))
        if memory.used:
            lines.append("Tools used: " + ", ".join(memory.used))
        return "\n".join(lines)

    def entities(self, ctx: ExecutionContext) -> tuple[Entity, ...]:
        """Every entity remembered, oldest first."""
        return tuple(_memory(ctx).entities.values())

    def remember(self, ctx: ExecutionContext, tool: str, output: object) -> list[Entity]:
        """Extract the entities of one result of ``tool`` and remember them."""
        found = self.extract(tool, output)
        memory = _memory(ctx)
        for entity in found:
            key = (entity.type, entity.id)
            memory.entities.pop(key, None)
            memory.entities[key] = entity
        while len(memory.entities) > self.kept:
            del memory.entities[next(iter(memory.entities))]
        return found

    def extract(self, tool: str, output: object) -> list[Entity]:
        """The entities in one result: the custom extractor first, else the schema.

        A failing extractor is logged and yields nothing: memory never fails a call.
        """
        custom = self.extractors.get(tool)
        try:
            if custom is not None:
                return [e for e in custom(output) if isinstance(cast(object, e), Entity)]
            schema = self.schemas.get(tool)
            return [] if schema is None else extract_entities(output, schema)
        except Exception:
            _log.warning("extracting entities from %s failed", tool, exc_info=True)
            return []

    def save_state(self, ctx: ExecutionContext) -> object | None:
        memory = _memory(ctx)
        if not memory.entities and not memory.used:
            return None
        return {
            "entities": [[e.type, e.id, e.name] for e in memory.entities.values()],
            "used": list(memory.used),
        }

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        saved = msgspec.convert(state, _Saved)
        memory = _memory(ctx)
        for type_, id_, name in saved.entities:
            memory.entities[(type_, id_)] = Entity(type_, id_, name)
        memory.used.update(dict.fromkeys(saved.used))


class _Saved(msgspec.Struct):
    entities: list[tuple[str, str, str]] = msgspec.field(default_factory=list[tuple[str, str, str]])
    used: list[str] = msgspec.field(default_factory=list[str])


class _Recorder(ToolHook):
    def __init__(self, owner: WorkingMemory) -> None:
        self.owner = owner

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        owner = self.owner
        _memory(ctx).used[call.name] = None
        if call.name in owner.extractors or call.name in owner.schemas:
            try:
                output = to_builtins(result.text)
            except Exception:  # the chain reports unserialisable output itself
                return
            owner.remember(ctx, call.name, output)


def _shown(text: str) -> str:
    """A tool result's names on one bounded line: they must not forge lines of the list."""
    return one_line(text, 80)


def extract_entities(output: object, schema: Extraction) -> list[Entity]:
    """The entities ``schema`` finds in ``output`` (plain data); objects missing the id
    or name field are skipped.

    >>> data = {"page": {"id": 3, "name": "About"}}
    >>> extract_entities(data, Extraction("page", "page"))
    [Entity(type='page', id='3', name='About')]
    """
    value: object = output
    path = schema.path.strip()
    if path not in ("", "$root"):
        for key in path.removeprefix("$root.").split("."):
            if not isinstance(value, Mapping):
                return []
            value = cast("Mapping[str, object]", value).get(key)
    items: Sequence[object]
    if schema.is_array:
        if not isinstance(value, list):
            return []
        items = cast("list[object]", value)
    else:
        items = [value]
    found: list[Entity] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        fields = cast("Mapping[str, object]", item)
        id_, name = fields.get(schema.id_field), fields.get(schema.name_field)
        if id_ is None or name is None:
            continue
        found.append(Entity(schema.entity_type, str(id_), str(name)))
    return found
