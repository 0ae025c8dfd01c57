"""What one ``tool_search`` answers the model: each tool described once, the rest named.

A search's tokens stay in the conversation for every later request, so the answer
says each thing once and only what the model can use now:

- ``found``: the best match of each query (or the tool a query names exactly),
  described (description, hint, related tools, approval, and in text mode its
  parameter schema) and made callable;
- ``found_before``: matches already described in this run (text mode) or already
  callable with their spec sent (native mode), or always listed: by name only;
- ``other_matches``: the other matches, by name only, and callable as they are (a
  model calls what it sees named): a call whose arguments validate runs, one whose
  arguments do not is answered with the tool's parameters, and either makes the tool
  active (``_gate``); a search for a name finds that tool alone, described;
- ``workflow``: the guidance of the described tools' categories, each category once
  a run.

A tool's compacted parameter schema is asked of it once (``ToolIndex.prompt_schema``), not
per search.

Describing only the best match keeps activation sparing too: in native mode every
callable tool's spec is sent with every later request. Two other savings were weighed
and left out. Shortening earlier answers once their tools are in use would rewrite the
conversation's start, so every later request would miss the provider's prompt cache
(a cached token costs a tenth or less of a new one: more than the shortening saves).
Running a call in the step of the search that finds its tool would need arguments the
model cannot know before the tool is described; a list of queries saves those
requests instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from toolchain._tool import Tool
from toolchain.discovery._activation import Discovery
from toolchain.discovery._index import ToolIndex

__all__ = ["Answer", "take_up"]

AnyTool = Tool[Any, Any]


@dataclass(slots=True)
class Answer:
    """One search's answer, built query by query (``add``), then ``result()``."""

    index: ToolIndex
    deferred: frozenset[str]
    state: Discovery
    found: list[dict[str, object]] = field(default_factory=lambda: [])
    before: list[str] = field(default_factory=lambda: [])
    other: list[str] = field(default_factory=lambda: [])
    placed: set[str] = field(default_factory=lambda: set())
    categories: list[str] = field(default_factory=lambda: [])

    def add(self, names: Sequence[str], *, exact: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Take one query's matches, best first (``exact``: the first is the tool the
        query names). Returns the tools it made callable just now, and those it named
        without describing them."""
        activated: list[str] = []
        named: list[str] = []
        for rank, name in enumerate(names):
            best = rank == 0
            if best and name in self.other:  # another query's other match: this one's best
                self.other.remove(name)
            elif name in self.placed:
                continue
            self.placed.add(name)
            if best and (exact or not self._told(name)):
                self._describe(name)
                if name in self.deferred and name not in self.state.active:
                    self.state.active[name] = None
                    activated.append(name)
            elif self._callable(name):
                self.before.append(name)
            else:
                self.other.append(name)
                self.state.named[name] = None
                named.append(name)
        return tuple(activated), tuple(named)

    def result(self) -> dict[str, object]:
        """The answer as the model reads it (see the module text)."""
        result: dict[str, object] = {"found": self.found}
        if self.before:
            result["found_before"] = self.before
        if self.other:
            result["other_matches"] = self.other
        fresh = [c for c in dict.fromkeys(self.categories) if c not in self.state.guided]
        workflow = self.index.workflow(fresh)
        if workflow:
            self.state.guided.update(dict.fromkeys(fresh))
            result["workflow"] = workflow
        return result

    def _callable(self, name: str) -> bool:
        return name not in self.deferred or name in self.state.active

    def _told(self, name: str) -> bool:
        """Whether the model already has ``name``'s definition: listed (not deferred),
        described by a search of this run (text), or sent as a spec (native)."""
        if name not in self.deferred:
            return True
        if self.state.protocol == "native":
            return name in self.state.active
        return name in self.state.described

    def _describe(self, name: str) -> None:
        tool, info = self.index.tools[name], self.index.info_of(name)
        entry: dict[str, object] = {"name": name}
        description = info.description or tool.description
        # Native: the spec sent from the next request carries the tool's own description.
        if self.state.protocol == "text" or description != tool.description:
            entry["description"] = description
        if info.hint:
            entry["hint"] = info.hint
        if info.related:
            entry["related"] = list(info.related)
        if info.requires_confirmation:
            entry["needs_approval"] = True
        if self.state.protocol == "text":
            entry["parameters"] = self.index.prompt_schema(tool)
            self.state.described[name] = None
        self.found.append(entry)
        self.categories.append(info.category)


def take_up(state: Discovery, answer: object, index: ToolIndex, deferred: frozenset[str]) -> None:
    """Make what a search's ``answer`` made callable callable in ``state``: the found
    tools active (and, text mode, described), the other matches named, their
    categories guided. A durable run replays a recorded search without running it, so
    its answer is all the run has of it: without this, the tools the model was told it
    can call would be refused as not found. After a live search it changes nothing
    (the search did the same)."""
    if not isinstance(answer, dict):
        return
    given = cast("dict[str, object]", answer)
    found = given.get("found")
    for entry in cast("list[object]", found) if isinstance(found, list) else []:
        name = cast("dict[str, object]", entry).get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name not in index.tools:
            continue
        if name in deferred:
            state.active.setdefault(name)
        if "parameters" in cast("dict[str, object]", entry):
            state.described.setdefault(name)
        if "workflow" in given:
            state.guided.setdefault(index.info_of(name).category)
    named = given.get("other_matches")
    for name in cast("list[object]", named) if isinstance(named, list) else []:
        if isinstance(name, str) and name in index.tools:
            state.named.setdefault(name)
