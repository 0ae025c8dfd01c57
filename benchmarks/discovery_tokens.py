"""Tool discovery: tokens a 60-tool agent task costs with every tool in the prompt and
with ``ToolSearch``, and how much of each request the previous one already had.

The task ("create an About page with a hero image of mountains") needs four of the
60 tools of a CMS (ten categories of six): ``search_images``, ``create_page``,
``add_section`` and ``set_section_image``, each fed by the result of the one before.
A scripted model plays it in both agents (``ReActAgent``, text mode; ``ToolCallingAgent``,
native mode):

* with every tool: it calls the four tools, then answers (five requests);
* with discovery: before a tool it has not found yet it calls ``tool_search`` with a
  short description of what it wants ("find an image"), and then only the tools that
  search returned; a tool the searches never return leaves the task unsolved, and the
  run is reported as such (the index is the real default backend, not a script).

Tokens are o200k (offline), as in ``benchmarks.pass_by_reference``: each request's
messages and, in native mode, its tool specs, summed over the run (no prompt cache
assumed), plus what the model writes. The seed ("dynamic tool injection V2") claims
84-97 % less overhead per request and 88 % fewer input tokens over a 5-step task.

Prompt cache: for each request, the share of its tokens that is an unchanged prefix
of the request before it (text mode: system prompt then messages; native: the tool
specs, then the system prompt and messages, the order in which Anthropic caches
them). A request that only adds to the end of the previous one scores 100 %.

Run alone with ``python -m benchmarks.discovery_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import pydantic

from agents import ReActAgent, ToolCallingAgent
from agents.models import Message, ScriptedModel, ScriptedReply, ToolCallRequest
from benchmarks._timing import Settings, render_table, verdict
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult
from toolchain._tokens import count_tokens
from toolchain.discovery import ToolIndex, ToolInfo, ToolSearch

__all__ = ["run"]

Mode = Literal["text", "native"]
SEED_PER_REQUEST = (84.0, 97.0)  # % less overhead per request (the seed's table)
SEED_TASK = 88.0  # % fewer input tokens over a 5-step task (the seed's table)

# Nine categories of six tools, and six section tools; each action's parameters are
# described as a CMS's documentation would. Names and texts are this benchmark's own.
CATEGORIES: dict[str, tuple[str, str]] = {
    "pages": ("page", "a page of the website (its title, slug, status and sections)"),
    "posts": ("post", "a blog post (title, body in Markdown, tags, publication status)"),
    "images": ("image", "an image of the media library (file, alt text, dimensions)"),
    "navigation": ("menu", "a navigation menu of the site's header or footer"),
    "users": ("user", "a user account of the CMS (name, email, role)"),
    "comments": ("comment", "a reader's comment on a post (author, text, moderation state)"),
    "files": ("file", "a downloadable file of the media library (PDF, archive, document)"),
    "analytics": ("report", "a traffic report of the site (visits, sources, top pages)"),
    "settings": ("setting", "a site setting (name, value, scope)"),
}
ACTIONS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "list": (
        "List {plural}: {what}. Returns the newest first, paginated.",
        [
            ("limit", "integer", "How many to return, 1 to 100."),
            ("cursor", "string", "The cursor of the previous page, if any."),
            ("status", "string", "Only items in this status: draft, published or archived."),
        ],
    ),
    "get": (
        "Get one {noun} by id: {what}. Returns every field.",
        [("id", "string", "The {noun}'s id, as returned by list or search.")],
    ),
    "create": (
        "Create a new {noun}: {what}. Returns the created {noun} with its id.",
        [
            ("title", "string", "The {noun}'s title or name."),
            ("slug", "string", "URL-safe identifier; derived from the title if omitted."),
            ("fields", "object", "Other fields to set, by name."),
        ],
    ),
    "update": (
        "Update fields of an existing {noun}: {what}. Fields not given are kept.",
        [
            ("id", "string", "The {noun}'s id."),
            ("fields", "object", "The fields to change, by name, with their new values."),
        ],
    ),
    "delete": (
        "Delete a {noun} for good: {what}. This cannot be undone.",
        [
            ("id", "string", "The {noun}'s id."),
            ("confirm", "boolean", "Must be true: a guard against accidental deletion."),
        ],
    ),
    "search": (
        "Search {plural} by meaning and keywords: {what}. Returns matches with scores.",
        [
            ("query", "string", "What to look for, in plain words."),
            ("limit", "integer", "How many matches to return, 1 to 50."),
        ],
    ),
}
SECTIONS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "list_sections",
        "List the sections of a page in order (hero, text, gallery, call to action).",
        [("page_id", "string", "The page's id.")],
    ),
    (
        "get_section",
        "Get one section of a page with its content fields.",
        [("section_id", "string", "The section's id.")],
    ),
    (
        "add_section",
        "Add a section to a page from a template (hero, text, gallery, call to action).",
        [
            ("page_id", "string", "The page's id."),
            ("template", "string", "The template: hero, text, gallery or cta."),
            ("position", "integer", "Where to insert it; at the end if omitted."),
        ],
    ),
    (
        "update_section",
        "Change the content fields of a section (merged with what is there).",
        [
            ("section_id", "string", "The section's id."),
            ("fields", "object", "The fields to change."),
        ],
    ),
    (
        "remove_section",
        "Remove a section from its page.",
        [("section_id", "string", "The section's id.")],
    ),
    (
        "set_section_image",
        "Set the image of a section's image field (a hero's background, a gallery slot).",
        [
            ("section_id", "string", "The section's id."),
            ("image_id", "string", "The image's id from the media library."),
        ],
    ),
]
# Example requests per action (the index's "phrases", as the seed writes them).
PHRASES: dict[str, tuple[str, ...]] = {
    "list": ("show all {plural}", "which {plural} are there"),
    "get": ("open a {noun}", "show one {noun}"),
    "create": ("add a new {noun}", "make a {noun}"),
    "update": ("edit a {noun}", "change a {noun}"),
    "delete": ("remove a {noun}", "delete a {noun}"),
    "search": ("find a {noun}", "look for {plural}"),
}
NEEDED = ("search_images", "create_page", "add_section", "set_section_image")
QUERIES = {
    "search_images": "find an image",
    "create_page": "create a new page",
    "add_section": "add a hero section to a page",
    "set_section_image": "set the image of a section",
}
TASK = "Create an About page with a hero section showing an image of mountains."


class CmsTool(Tool[pydantic.BaseModel, dict[str, object]]):
    """One tool of the fake CMS: validates its input and returns a plausible record."""

    def __init__(
        self,
        name: str,
        description: str,
        params: list[tuple[str, str, str]],
        category: str,
        phrases: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.category = category
        self.phrases = phrases
        self.description = description
        types: dict[str, Any] = {"string": str, "integer": int, "boolean": bool, "object": dict}
        fields: dict[str, Any] = {
            param: (
                types[kind] | None,
                pydantic.Field(default=None, description=text),
            )
            for param, kind, text in params
        }
        self.input_type = pydantic.create_model(f"{name}_input", **fields)
        self.calls: list[dict[str, object]] = []

    async def call(
        self, ctx: ExecutionContext, input: pydantic.BaseModel
    ) -> ToolResult[dict[str, object]]:
        args = input.model_dump(exclude_none=True)
        self.calls.append(args)
        ids: dict[str, dict[str, object]] = {
            "search_images": {"results": [{"id": "img-42", "alt": "Mountains", "score": 0.93}]},
            "create_page": {"id": "page-7", "title": args.get("title"), "status": "draft"},
            "add_section": {"id": "sec-3", "page_id": args.get("page_id"), "template": "hero"},
        }
        return ToolResult(ids.get(self.name, {"ok": True}))


def cms_tools() -> list[CmsTool]:
    tools: list[CmsTool] = []
    for category, (noun, what) in CATEGORIES.items():
        plural = category if category != "analytics" else "reports"
        for action, (template, params) in ACTIONS.items():
            name = f"{action}_{plural}" if action in ("list", "search") else f"{action}_{noun}"
            text = template.format(noun=noun, plural=plural, what=what)
            filled = [(p, k, d.format(noun=noun)) for p, k, d in params]
            phrases = tuple(p.format(noun=noun, plural=plural) for p in PHRASES[action])
            tools.append(CmsTool(name, text, filled, category, phrases))
    tools += [CmsTool(name, text, params, "sections") for name, text, params in SECTIONS]
    assert len(tools) == 60 and all(n in {t.name for t in tools} for n in NEEDED)
    return tools


def cms_info(tools: Sequence[CmsTool]) -> list[ToolInfo]:
    return [ToolInfo(t.name, category=t.category, phrases=t.phrases) for t in tools]


@dataclass(slots=True)
class Player:
    """The scripted model: the four calls in order, searching first when asked to."""

    mode: Mode
    discovery: bool
    written: int = 0
    found: set[str] | None = None
    missing: str = ""

    def __post_init__(self) -> None:
        self.found = set()

    def __call__(self, messages: Sequence[Message]) -> str | ScriptedReply:
        assert self.found is not None
        self._read_searches(messages)
        done = _calls_made(messages)
        step = next((name for name in NEEDED if name not in done), None)
        if step is None:
            return self._reply_answer("The About page has a mountain hero image.")
        if self.discovery and step not in self.found:
            if _searched(messages, QUERIES[step]):  # searched already, still not found
                self.missing = step
                return self._reply_answer(f"I could not find a tool to {QUERIES[step]}.")
            return self._reply_call("tool_search", {"query": QUERIES[step]})
        return self._reply_call(step, _args_for(step))

    def _read_searches(self, messages: Sequence[Message]) -> None:
        assert self.found is not None
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

    def _reply_call(self, name: str, args: dict[str, object]) -> str | ScriptedReply:
        if self.mode == "native":
            request = ToolCallRequest(f"c{name}", name, msgspec.json.encode(args).decode())
            self.written += count_tokens(name) + count_tokens(request.arguments)
            return ScriptedReply("", (request,))
        reply = f"<action>{msgspec.json.encode({'tool': name, 'args': args}).decode()}</action>"
        self.written += count_tokens(reply)
        return reply

    def _reply_answer(self, text: str) -> str:
        reply = text if self.mode == "native" else f"<answer>{text}</answer>"
        self.written += count_tokens(reply)
        return reply


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


def count_run(mode: Mode, discovery: bool) -> Count:
    tools = cms_tools()
    extensions: list[ToolSearch] = []
    chain = JSONToolChain()
    if discovery:
        search = ToolSearch(ToolIndex(tools, cms_info(tools)), defer=True)
        extensions.append(search)
    else:
        for each in tools:
            chain.register_tool(each)
    player = Player(mode, discovery)
    model = ScriptedModel(player)
    agent: ReActAgent[str] | ToolCallingAgent[str] = (
        ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
        if mode == "native"
        else ReActAgent(model, tool_chain=chain, extensions=extensions)
    )
    result = agent.run_sync(TASK)
    by_name = {t.name: t for t in tools}
    solved = result.ok and by_name["set_section_image"].calls == [
        {"section_id": "sec-3", "image_id": "img-42"}
    ]
    requests: list[int] = []
    prefix: list[tuple[float, bool]] = []
    previous: list[str] | None = None
    for request in model.requests:
        specs = msgspec.json.encode(
            [
                {"name": s.name, "description": s.description, "parameters": s.parameters}
                for s in request.options.tools
            ]
        ).decode()
        parts = _serialised(mode, request.messages, specs)
        requests.append(count_tokens("\n".join(parts)))
        if previous is not None:
            prefix.append(_prefix_share(previous, parts))
        previous = parts
    note = f"no tool found to {QUERIES[player.missing]}" if player.missing else ""
    return Count(requests, prefix, player.written, solved, note)


def _saving(without: int, with_: int) -> float:
    return 100.0 * (without - with_) / without


def run(settings: Settings) -> None:
    """Count the task's tokens in both agents, with every tool and with discovery."""
    del settings  # token counts do not depend on timing settings
    print("== Tool discovery: tokens of a 60-tool task, every tool vs ToolSearch ==")
    print(f"task: {TASK!r}; needs {', '.join(NEEDED)}")
    print("o200k tokens (offline) of every request (messages, and native tool specs)")
    print()
    rows: list[list[str]] = []
    verdicts: list[str] = []
    prefix_rows: list[list[str]] = []
    for mode in ("text", "native"):
        every = count_run(mode, discovery=False)
        found = count_run(mode, discovery=True)
        first = _saving(every.requests[0], found.requests[0])
        whole = _saving(every.read, found.read)
        agent = "ReActAgent (text)" if mode == "text" else "ToolCallingAgent (native)"
        rows.append(
            [
                agent,
                f"{len(every.requests)} / {len(found.requests)}",
                f"{every.requests[0]:,} / {found.requests[0]:,}",
                f"{first:.1f} %",
                f"{every.read:,} / {found.read:,}",
                f"{whole:.1f} %",
                f"{every.written} / {found.written}",
                "yes" if every.solved and found.solved else f"NO ({found.note or every.note})",
            ]
        )
        verdicts.append(
            f"{agent}: first request {first:.1f} % smaller (seed: {SEED_PER_REQUEST[0]:g}-"
            f"{SEED_PER_REQUEST[1]:g} % less overhead): "
            f"{verdict(first >= SEED_PER_REQUEST[0])}; whole task {whole:.1f} % fewer input "
            f"tokens (seed: {SEED_TASK:g} %): {verdict(whole >= SEED_TASK)}; solved: "
            f"{'yes' if found.solved else 'NO'}"
        )
        for label, count in (("every tool", every), ("ToolSearch", found)):
            shares = ", ".join(f"{share:.0f}" for share, _ in count.prefix)
            kept = sum(whole for _, whole in count.prefix)
            prefix_rows.append([agent, label, shares, f"{kept} of {len(count.prefix)}"])
    headers = [
        "agent (mode)",
        "requests every / search",
        "first request",
        "first: saving",
        "input tokens, whole task",
        "task: saving",
        "written",
        "task solved",
    ]
    print(render_table(headers, rows, "lrrrrrrl"))
    print()
    for line in verdicts:
        print(line)
    print()
    print("prompt cache: % of each request (from the 2nd) that repeats the previous one's start;")
    print("'previous reused whole': requests that begin with all of the request before them")
    headers = ["agent (mode)", "tools", "requests 2, 3, ...", "previous reused whole"]
    print(render_table(headers, prefix_rows, "lllr"))
    print(
        "  text mode keeps every earlier request whole (a search result only adds to the end;"
        " a low share is a large result, not a cache miss). Native mode appends a found "
        "tool's spec to the specs, which come first in Anthropic's cache order, so a request "
        "after a search reuses only the specs sent before."
    )
    print()
    from benchmarks.reported_savings import discovery_rows, report  # it imports this module

    report(discovery_rows())


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.discovery_tokens")
