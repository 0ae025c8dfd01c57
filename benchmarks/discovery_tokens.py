"""Tool discovery: tokens a 60-tool agent task costs with every tool in the prompt and
with ``ToolSearch``, and how much of each request the previous one already had.

The task ("create an About page with a hero image of mountains") needs four of the
60 tools of a CMS (ten categories of six): ``search_images``, ``create_page``,
``add_section`` and ``set_section_image``, each fed by the result of the one before.
A scripted model plays it in both agents (``ReActAgent``, text mode; ``ToolCallingAgent``,
native mode):

* with every tool: it calls the four tools, then answers (five requests);
* with discovery: it calls only tools a search described (or named as found before);
  for a tool it lacks it calls ``tool_search``, in one of two styles a real model may
  take: ``stepwise``, a short description of that one step ("find an image") before
  each tool, or ``upfront``, one search with the list of every step it lacks, as the
  tool's description invites. A tool it saw among a search's other matches it
  searches by name. A tool the searches never return leaves the task unsolved, and
  the run is reported as such (the index is the real default backend, not a script).

Both players know how this library answers (a name in ``other_matches`` is searched by
name). A third, ``naive``, does not: it plays a plain model that knows nothing of
discovery. It works on one step at a time, searches in the task's own words
(``NAIVE_QUERIES``), calls a tool as soon as it sees its name anywhere it was shown
(a search's answer, an error, the prompt or the specs), does what an error tells it to
(``tool_search(query="...")``), and copies the ids its arguments need from the results
before (it never reads a schema: its arguments are the obvious ones for the step).

Tokens are o200k (offline), as in ``benchmarks.pass_by_reference``: each request's
messages and, in native mode, its tool specs, summed over the run (no prompt cache
assumed), plus what the model writes. The seed ("dynamic tool injection V2") claims
84-97 % less overhead per request and 88 % fewer input tokens over a 5-step task.
Target (issue 20): 75 % fewer over the whole task, in both agents, the task solved and
the prompt cache kept (below).

Prompt cache: for each request, the share of its tokens that is an unchanged prefix
of the request before it (text mode: system prompt then messages; native: the tool
specs, then the system prompt and messages, the order in which Anthropic caches
them). A request that only adds to the end of the previous one scores 100 %. Kept: in
text mode every request begins with the whole previous one; in native mode only a
request whose specs grew may not (a tool a search found, or a named one called, has
its spec appended to the specs).

Run alone with ``python -m benchmarks.discovery_tokens``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import msgspec

from agents import ReActAgent, ToolCallingAgent
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from agents.models._scripted import ScriptedRequest
from benchmarks._cms_tools import cms_info, cms_tools
from benchmarks._timing import Settings, render_table, verdict
from toolchain import JSONToolChain
from toolchain._tokens import count_tokens
from toolchain.discovery import ToolIndex, ToolSearch

__all__ = ["run"]

Mode = Literal["text", "native"]
Style = Literal["stepwise", "upfront", "naive"]
SEED_PER_REQUEST = (84.0, 97.0)  # % less overhead per request (the seed's table)
SEED_TASK = 88.0  # % fewer input tokens over a 5-step task (the seed's table)
TARGET_TASK = 75.0  # % fewer input tokens over the whole task (issue 20)
STYLES: tuple[Style, ...] = ("stepwise", "upfront", "naive")

NEEDED = ("search_images", "create_page", "add_section", "set_section_image")
QUERIES = {
    "search_images": "find an image",
    "create_page": "create a new page",
    "add_section": "add a hero section to a page",
    "set_section_image": "set the image of a section",
}
TASK = "Create an About page with a hero section showing an image of mountains."
NAIVE_QUERIES = {  # what a plain model asks for each step: the task's own words
    "search_images": "image of mountains",
    "create_page": "create an About page",
    "add_section": "add a hero section to the page",
    "set_section_image": "show the image in the hero section",
}
_SUGGESTED = re.compile(r'tool_search\(query=("(?:[^"\\]|\\.)*")\)')
_SECTION = re.compile(r"<(\w+)>\n(.*?)\n</\1>", re.DOTALL)


@dataclass(slots=True)
class Player:
    """The scripted model: the four calls in order, each once it has found its tool.

    With discovery it searches before a tool it has not found: ``stepwise`` with a
    short description of that one step, ``upfront`` with the list of every step it
    still lacks (the search tool takes a list). A tool it saw named among a search's
    other matches it searches by name. A step it searched for and still lacks ends
    the run unsolved."""

    mode: Mode
    discovery: bool
    style: Style = "stepwise"
    written: int = 0
    found: set[str] = field(default_factory=lambda: set())
    named: set[str] = field(default_factory=lambda: set())
    missing: str = ""

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply:
        self._read_searches(messages)
        done = _calls_made(messages)
        lacking = [name for name in NEEDED if name not in done and name not in self.found]
        step = next((name for name in NEEDED if name not in done), None)
        if step is None:
            return self._reply_answer("The About page has a mountain hero image.")
        if self.discovery and step not in self.found:
            query = step if step in self.named else QUERIES[step]
            if _searched(messages, query):  # searched already, still not found
                self.missing = step
                return self._reply_answer(f"I could not find a tool to {QUERIES[step]}.")
            if self.style == "upfront" and not _searched_any(messages):
                wanted = [n if n in self.named else QUERIES[n] for n in lacking]
                return self._reply_call("tool_search", {"query": wanted})
            return self._reply_call("tool_search", {"query": query})
        return self._reply_call(step, _args_for(step))

    def _read_searches(self, messages: Sequence[Message]) -> None:
        for message in messages:
            text = message.text_content()
            if '"found"' in text:
                start = text.index("{")
                end = text.rindex("}") + 1
                try:
                    data = json.loads(text[start:end])
                except ValueError:
                    continue
                self.found.update(entry["name"] for entry in data.get("found", []))
                self.found.update(data.get("found_before", []))
                self.named.update(data.get("other_matches", []))

    def _reply_call(self, name: str, args: dict[str, object]) -> str | ScriptedReply:
        return _reply_call(self, self.mode, name, args)

    def _reply_answer(self, text: str) -> str:
        return _reply_answer(self, self.mode, text)


class _Writer(Protocol):
    written: int


def _reply_call(
    player: _Writer, mode: Mode, name: str, args: dict[str, object]
) -> str | ScriptedReply:
    """A call of ``name`` as the model writes it, its tokens added to what it wrote."""
    if mode == "native":
        request = ToolCallRequest(f"c{name}", name, msgspec.json.encode(args).decode())
        player.written += count_tokens(name) + count_tokens(request.arguments)
        return ScriptedReply("", (request,))
    reply = f"<action>{msgspec.json.encode({'tool': name, 'args': args}).decode()}</action>"
    player.written += count_tokens(reply)
    return reply


def _reply_answer(player: _Writer, mode: Mode, text: str) -> str:
    """The final answer as the model writes it, its tokens added to what it wrote."""
    reply = text if mode == "native" else f"<answer>{text}</answer>"
    player.written += count_tokens(reply)
    return reply


@dataclass(slots=True)
class NaivePlayer:
    """A plain model that knows nothing of discovery (see the module text): one step
    at a time, in the task's words; it calls what it sees named, does what an error
    says, and copies ids from earlier results."""

    mode: Mode
    requests: list[ScriptedRequest] = field(default_factory=lambda: [])
    """The model's requests so far (the last is the one being answered): the specs."""
    written: int = 0
    searched: list[str] = field(default_factory=lambda: [])
    missing: str = ""

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply:
        results = _results(messages)
        done = {name for name, text in results if not text.startswith("Error:")}
        step = next((name for name in NEEDED if name not in done), None)
        if step is None:
            return _reply_answer(self, self.mode, "The About page has a mountain hero image.")
        suggested = _SUGGESTED.search(results[-1][1]) if results else None
        if suggested is not None and results[-1][1].startswith("Error:"):
            return self._search(json.loads(suggested.group(1)))  # as the error says
        if step in self._shown_names(messages):
            return _reply_call(self, self.mode, step, self._args(step, results))
        if NAIVE_QUERIES[step] in self.searched:  # asked, and never shown the tool
            self.missing = step
            return _reply_answer(self, self.mode, f"I found no tool to {NAIVE_QUERIES[step]}.")
        return self._search(NAIVE_QUERIES[step])

    def _search(self, query: str) -> str | ScriptedReply:
        self.searched.append(query)
        return _reply_call(self, self.mode, "tool_search", {"query": query})

    def _shown_names(self, messages: Sequence[Message]) -> set[str]:
        """The task's tools named anywhere the model was shown: the prompt, the
        specs, tool results and errors (not its own messages)."""
        shown = [m.text_content() for m in messages if m.role != "assistant"]
        shown += [spec.name for spec in self.requests[-1].options.tools]
        text = "\n".join(shown)
        return {name for name in NEEDED if re.search(rf"\b{name}\b", text)}

    def _args(self, step: str, results: list[tuple[str, str]]) -> dict[str, object]:
        """The step's obvious arguments, with the ids copied from the results."""
        values: dict[str, object] = {}
        for name, text in results:
            try:
                values[name] = json.loads(text)
            except ValueError:
                continue
        image, page, section = (
            values.get("search_images"),
            values.get("create_page"),
            values.get("add_section"),
        )
        if step == "search_images":
            return {"query": "mountains"}
        if step == "create_page":
            return {"title": "About", "slug": "about"}
        if step == "add_section":
            return {"page_id": _field(page, "id"), "template": "hero"}
        image_id = _field(_first(_field(image, "results")), "id")
        return {"section_id": _field(section, "id"), "image_id": image_id}


def _results(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(tool, what it returned or its error) for each call answered so far, in order:
    native tool messages, or the sections of text-mode observations."""
    found: list[tuple[str, str]] = []
    for message in messages:
        if message.role == "tool" and message.name:
            found.append((message.name, message.text_content().strip()))
        elif message.role == "user" and "<observation>" in message.text_content():
            inner = message.text_content().split("<observation>", 1)[1]
            found += [(m.group(1), m.group(2).strip()) for m in _SECTION.finditer(inner)]
    return found


def _field(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else None


def _first(value: object) -> object:
    return value[0] if isinstance(value, list) and value else None


def _args_for(step: str) -> dict[str, object]:
    plans: dict[str, dict[str, object]] = {
        "search_images": {"query": "mountains"},
        "create_page": {"title": "About", "slug": "about"},
        "add_section": {"page_id": "page-7", "template": "hero"},
        "set_section_image": {"section_id": "sec-3", "image_id": "img-42"},
    }
    return plans[step]


def _calls_made(messages: Sequence[Message]) -> set[str]:
    made: set[str] = set()
    for message in messages:
        if message.role != "assistant":
            continue
        made.update(call.name for call in message.tool_calls)
        text = message.text_content()
        made.update(name for name in NEEDED if f'"tool":"{name}"' in text)
    return made


def _searched_any(messages: Sequence[Message]) -> bool:
    return any(
        '"tool":"tool_search"' in m.text_content()
        or any(c.name == "tool_search" for c in m.tool_calls)
        for m in messages
        if m.role == "assistant"
    )


def _searched(messages: Sequence[Message], query: str) -> bool:
    wanted = msgspec.json.encode(query).decode()
    return any(
        wanted in m.text_content() or any(wanted in c.arguments for c in m.tool_calls)
        for m in messages
        if m.role == "assistant"
    )


@dataclass(frozen=True, slots=True)
class Count:
    requests: list[int]
    """Input tokens of each request."""
    prefix: list[tuple[float, bool]]
    """Per request after the first: % of its tokens that repeat the previous request's
    start, and whether the whole previous request is that start."""
    appended: list[bool]
    """Per request after the first: whether its specs are the previous request's with
    more appended (native mode: a tool found, or a named one called)."""
    written: int
    solved: bool
    note: str

    @property
    def read(self) -> int:
        return sum(self.requests)


def _serialised(mode: Mode, messages: Sequence[Message], specs: str) -> list[str]:
    parts = [specs] if mode == "native" else []
    for message in messages:
        calls = "".join(f"{c.name}{c.arguments}" for c in message.tool_calls)
        parts.append(f"{message.role}:{message.text_content()}{calls}")
    return parts


def _prefix_share(previous: list[str], current: list[str]) -> tuple[float, bool]:
    """(% of ``current``'s tokens in its longest common prefix with ``previous``, whether
    all of ``previous`` is that prefix: a cache of the previous request is reused whole)."""
    total = count_tokens("\n".join(current))
    shared: list[str] = []
    whole = len(previous) <= len(current)
    for before, now in zip(previous, current, strict=False):
        if before == now:
            shared.append(now)
            continue
        whole = False
        common = 0
        for a, b in zip(before, now, strict=False):
            if a != b:
                break
            common += 1
        shared.append(now[:common])
        break
    share = 100.0 * count_tokens("\n".join(shared)) / total if total else 100.0
    return share, whole


def count_run(mode: Mode, discovery: bool, style: Style = "stepwise") -> Count:
    tools = cms_tools()
    extensions: list[ToolSearch] = []
    chain = JSONToolChain()
    if discovery:
        search = ToolSearch(ToolIndex(tools, cms_info(tools)), defer=True)
        extensions.append(search)
    else:
        for each in tools:
            chain.register_tool(each)
    player: Player | NaivePlayer
    if style == "naive" and discovery:
        player = NaivePlayer(mode)
        model = ScriptedModel(player)
        player.requests = model.requests  # it reads the specs of the request it answers
    else:
        player = Player(mode, discovery, style)
        model = ScriptedModel(player)
    agent: ReActAgent[str] | ToolCallingAgent[str] = (
        ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
        if mode == "native"
        else ReActAgent(model, tool_chain=chain, extensions=extensions)
    )
    result = agent.run_sync(TASK)
    by_name = {t.name: t for t in tools}
    assert all(name in by_name for name in NEEDED)
    solved = result.ok and by_name["set_section_image"].calls == [
        {"section_id": "sec-3", "image_id": "img-42"}
    ]
    requests: list[int] = []
    prefix: list[tuple[float, bool]] = []
    appended: list[bool] = []
    previous: list[str] | None = None
    for before, request in zip([None, *model.requests], model.requests, strict=False):
        specs = msgspec.json.encode(
            [
                {"name": s.name, "description": s.description, "parameters": s.parameters}
                for s in request.options.tools
            ]
        ).decode()
        parts = _serialised(mode, request.messages, specs)
        requests.append(count_tokens("\n".join(parts)))
        if previous is not None and before is not None:
            prefix.append(_prefix_share(previous, parts))
            earlier, now = before.options.tools, request.options.tools
            appended.append(len(now) > len(earlier) and now[: len(earlier)] == earlier)
        previous = parts
    queries = NAIVE_QUERIES if isinstance(player, NaivePlayer) else QUERIES
    note = f"no tool found to {queries[player.missing]}" if player.missing else ""
    return Count(requests, prefix, appended, player.written, solved, note)


def _saving(without: int, with_: int) -> float:
    return 100.0 * (without - with_) / without


def run(settings: Settings) -> None:
    """Count the task's tokens in both agents, with every tool and with discovery."""
    del settings  # token counts do not depend on timing settings
    print("== Tool discovery: tokens of a 60-tool task, every tool vs ToolSearch ==")
    print(f"task: {TASK!r}; needs {', '.join(NEEDED)}")
    print("o200k tokens (offline) of every request (messages, and native tool specs);")
    print("the model searches one step at a time (stepwise) or for the whole task first (upfront),")
    print("or plays a plain model that calls what it sees named and does what errors say (naive)")
    print()
    rows: list[list[str]] = []
    verdicts: list[str] = []
    prefix_rows: list[list[str]] = []
    for mode in ("text", "native"):
        every = count_run(mode, discovery=False)
        agent = "ReActAgent (text)" if mode == "text" else "ToolCallingAgent (native)"
        shares = ", ".join(f"{share:.0f}" for share, _ in every.prefix)
        kept = sum(whole for _, whole in every.prefix)
        prefix_rows.append([agent, "every tool", shares, f"{kept} of {len(every.prefix)}"])
        for style in STYLES:
            found = count_run(mode, discovery=True, style=style)
            first = _saving(every.requests[0], found.requests[0])
            whole = _saving(every.read, found.read)
            solved = every.solved and found.solved
            rows.append(
                [
                    agent,
                    style,
                    f"{len(every.requests)} / {len(found.requests)}",
                    f"{every.requests[0]:,} / {found.requests[0]:,}",
                    f"{first:.1f} %",
                    f"{every.read:,} / {found.read:,}",
                    f"{whole:.1f} %",
                    f"{every.written} / {found.written}",
                    "yes" if solved else f"NO ({found.note or every.note})",
                ]
            )
            verdicts.append(
                f"{agent}, {style}: whole task {whole:.1f} % fewer input tokens (target >= "
                f"{TARGET_TASK:g} %, solved, cache prefix kept): "
                f"{verdict(whole >= TARGET_TASK and solved and _cache_kept(mode, found))}; "
                f"first request {first:.1f} % smaller (seed: {SEED_PER_REQUEST[0]:g}-"
                f"{SEED_PER_REQUEST[1]:g} % less overhead): {verdict(first >= SEED_PER_REQUEST[0])}"
            )
            shares = ", ".join(f"{share:.0f}" for share, _ in found.prefix)
            kept = sum(whole for _, whole in found.prefix)
            prefix_rows.append(
                [agent, f"ToolSearch, {style}", shares, f"{kept} of {len(found.prefix)}"]
            )
    headers = [
        "agent (mode)",
        "search",
        "requests every / search",
        "first request",
        "first: saving",
        "input tokens, whole task",
        "task: saving",
        "written",
        "task solved",
    ]
    print(render_table(headers, rows, "llrrrrrrl"))
    print()
    for line in verdicts:
        print(line)
    print(f"(the seed claims {SEED_TASK:g} % over its 5-step task)")
    print()
    print("prompt cache: % of each request (from the 2nd) that repeats the previous one's start;")
    print("'previous reused whole': requests that begin with all of the request before them")
    headers = ["agent (mode)", "tools", "requests 2, 3, ...", "previous reused whole"]
    print(render_table(headers, prefix_rows, "lllr"))
    print(
        "  text mode keeps every earlier request whole (a search result only adds to the end;"
        " a low share is a large result, not a cache miss). Native mode appends a found "
        "tool's spec to the specs, which come first in Anthropic's cache order, so a request "
        "after a search (or a named tool's first call) reuses only the specs sent before."
    )
    print()
    from benchmarks.reported_savings import discovery_rows, report  # it imports this module

    report(discovery_rows())


def _cache_kept(mode: Mode, count: Count) -> bool:
    """Text mode: every request begins with the whole previous one. Native: only a
    request whose specs grew may not (a found or called tool's spec is appended)."""
    kept = [whole for _, whole in count.prefix]
    if mode == "text":
        return all(kept)
    return all(whole or grew for whole, grew in zip(kept, count.appended, strict=True))


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.discovery_tokens")
