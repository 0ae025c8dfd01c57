"""Tool discovery: the model finds the CMS tools it needs, and publishing waits for you.

Run: python examples/discovery.py                       # offline, on a scripted stand-in model
     python examples/discovery.py openai:gpt-4o-mini    # a real model (OPENAI_API_KEY set)

The model starts with ``tool_search`` only. It searches, calls what it found, and its
call to ``publish_page`` (which ``requires_confirmation``) pauses the run; you answer
y or n on stdin, and the conversation resumes with your decision. Working memory lists
the page and image the tools returned.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from agents import Message, ModelError, ScriptedModel, ToolCallingAgent, render_transcript
from agents.models import ScriptedReply
from toolchain import tool
from toolchain.discovery import (
    Approval,
    Extraction,
    ToolIndex,
    ToolInfo,
    ToolSearch,
    WorkingMemory,
)


@tool
def search_images(query: str) -> dict[str, object]:
    """Search the media library's images by description."""
    return {"results": [{"id": "img-42", "alt": f"{query} at dawn", "score": 0.93}]}


@tool
def create_page(title: str) -> dict[str, str]:
    """Create a new draft page with a title."""
    return {"id": "page-7", "title": title, "status": "draft"}


@tool
def set_hero_image(page_id: str, image_id: str) -> str:
    """Set the hero image of a page."""
    return f"{image_id} is the hero of {page_id}"


@tool
def publish_page(page_id: str) -> str:
    """Publish a draft page so visitors see it."""
    return f"{page_id} is live"


@tool
def list_users() -> list[dict[str, str]]:
    """List the CMS's user accounts."""
    return [{"id": "u1", "name": "Ana"}]


@tool
def send_newsletter(subject: str) -> str:
    """Send the newsletter to every subscriber."""
    return "sent"


INDEX = ToolIndex(
    [search_images, create_page, set_hero_image, publish_page, list_users, send_newsletter],
    [
        ToolInfo(
            "search_images",
            category="images",
            phrases=("find an image", "look for a photo"),
            extraction=Extraction("results", "image", name_field="alt", is_array=True),
        ),
        ToolInfo(
            "create_page",
            category="pages",
            phrases=("add a new page",),
            extraction=Extraction("$root", "page", name_field="title"),
        ),
        ToolInfo("set_hero_image", category="pages", phrases=("set a page's hero image",)),
        ToolInfo(
            "publish_page",
            category="pages",
            phrases=("publish a page",),
            risk="moderate",
            requires_confirmation=True,
        ),
        ToolInfo("list_users", category="users"),
        ToolInfo("send_newsletter", category="mail", risk="moderate"),
    ],
    workflows={"pages": "New pages are drafts until published; publishing needs approval."},
)
PLAN = [
    ("find an image", "search_images", {"query": "mountains"}),
    ("add a new page", "create_page", {"title": "About"}),
    ("set a page's hero image", "set_hero_image", {"page_id": "page-7", "image_id": "img-42"}),
    ("publish a page", "publish_page", {"page_id": "page-7"}),
]


def offline_model(messages: Sequence[Message]) -> str | ScriptedReply:
    """Stands in for a real model offline: searches for everything its plan needs at
    once, then calls each tool (searching again for any it did not find)."""
    found: set[str] = set()
    done: set[str] = set()
    results: dict[str, str] = {}
    for message in messages:
        if message.role == "tool" and message.name == "tool_search":
            result, _ = json.JSONDecoder().raw_decode(message.text_content())  # sections follow
            found.update(entry["name"] for entry in result["found"])
            found.update(result.get("found_before", []))
        elif message.role == "tool":
            results[message.name] = message.text_content()
        done.update(call.name for call in message.tool_calls)
    if "tool_search" not in done:
        return ScriptedModel.call("tool_search", query=[query for query, _, _ in PLAN])
    published = results.get("publish_page", "")
    if "is live" in published:
        return "The About page is live, with a mountain hero image."
    if "was not approved" in published:
        return "The About page is ready as a draft; publishing it was not approved."
    for _, name, args in PLAN:
        if name in done:
            continue
        if name not in found:
            return ScriptedModel.call("tool_search", query=name)
        return ScriptedModel.call(name, args)
    return "The About page is ready as a draft."


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else ScriptedModel(offline_model, name="offline")
    search = ToolSearch(INDEX, defer=True)
    memory = WorkingMemory(INDEX)
    try:
        agent = ToolCallingAgent(model, extensions=[search, memory])
    except ModelError as error:  # e.g. the provider's API key is not set
        sys.exit(str(error))
    task = "Make an About page with a mountain hero image, and publish it."
    result = agent.run_sync(task)
    print(render_transcript(result.messages[1:]))
    while result.pending:  # held for the owner: resuming runs (or refuses) the call itself
        decisions: dict[str, Approval] = {}
        for held in result.pending:
            print(f"\n{result.paused}\napprove {held.tool}({json.dumps(dict(held.args))})? [y/N] ")
            # No stdin (closed, or started without one) or an empty line: the answer is no.
            yes = sys.stdin is not None and sys.stdin.readline().strip().lower() == "y"
            decisions[held.call_id] = (
                Approval.granted() if yes else Approval.denied("the owner said no")
            )
        seen = len(result.messages)
        result = agent.resume_sync(result, decisions)
        print(render_transcript(result.messages[seen - 1 :]))
    ended = f"{result.stopped_by}: {result.error or result.limit or result.paused}"
    print(f"\nanswer: {result.answer if result.ok else ended}")
    print(f"remembered: {result.extension_state.get('working_memory')}")


if __name__ == "__main__":
    main()
