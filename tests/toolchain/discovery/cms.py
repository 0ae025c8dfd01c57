"""The CMS tools the ToolSearch tests run: six tools, their metadata, and helpers to
build a search and an agent over them and to read what the model saw."""

from __future__ import annotations

from typing import Any

from agents import AgentResult
from agents.models import ScriptedModel
from tests.support.agent_kinds import Agent, Kind, agent
from toolchain import JSONToolChain, Tool, tool
from toolchain.discovery import (
    Extraction,
    KeywordSearch,
    ToolIndex,
    ToolInfo,
    ToolSearch,
    WorkingMemory,
)

__all__ = [
    "INFO",
    "TOOLS",
    "WORKFLOWS",
    "build",
    "create_page",
    "index",
    "list_pages",
    "ran",
    "search_for",
    "search_result",
    "spec_names",
    "tool_texts",
]

ran: list[tuple[str, dict[str, object]]] = []


@tool
def list_pages() -> list[dict[str, str]]:
    """List the site's pages."""
    ran.append(("list_pages", {}))
    return [{"id": "p1", "name": "Home"}, {"id": "p2", "name": "About"}]


@tool
def create_page(title: str) -> dict[str, str]:
    """Create a new page with a title."""
    ran.append(("create_page", {"title": title}))
    return {"id": "p9", "name": title}


@tool
def search_images(query: str) -> dict[str, object]:
    """Search the image library by description."""
    ran.append(("search_images", {"query": query}))
    return {"results": [{"id": "img-7", "filename": "mountain.jpg"}]}


@tool
def attach_image(page_id: str, image_id: str) -> str:
    """Attach an image to a page's hero section."""
    ran.append(("attach_image", {"page_id": page_id, "image_id": image_id}))
    return "attached"


@tool
def publish_page(page_id: str) -> str:
    """Publish a page so visitors can see it."""
    ran.append(("publish_page", {"page_id": page_id}))
    return "published"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message."""
    ran.append(("send_email", {"to": to}))
    return "sent"


INFO = [
    ToolInfo("list_pages", category="pages", extraction=Extraction("", "page", is_array=True)),
    ToolInfo(
        "create_page",
        category="pages",
        phrases=("add a new page",),
        extraction=Extraction("$root", "page"),
    ),
    ToolInfo(
        "search_images",
        category="images",
        phrases=("find an image", "look for a photo"),
        hint="Scores near 1 are the best matches.",
        related=("attach_image",),
        extraction=Extraction("results", "image", name_field="filename", is_array=True),
    ),
    ToolInfo("attach_image", category="images", phrases=("attach an image to a page",)),
    ToolInfo(
        "publish_page",
        category="pages",
        phrases=("publish a page",),
        risk="moderate",
        requires_confirmation=True,
    ),
    ToolInfo("send_email", category="mail", phrases=("email someone",)),
]
WORKFLOWS = {"images": "Search the library before attaching; ids start with img-."}
TOOLS: list[Tool[Any, Any]] = [
    list_pages,
    create_page,
    search_images,
    attach_image,
    publish_page,
    send_email,
]


def index() -> ToolIndex:
    return ToolIndex(TOOLS, INFO, workflows=WORKFLOWS)


def build(kind: Kind, model: ScriptedModel, *extensions: ToolSearch | WorkingMemory) -> Agent:
    return agent(kind, model, JSONToolChain(), extensions=extensions)


def search_for(**options: object) -> ToolSearch:
    return ToolSearch(index(), backend=KeywordSearch(), defer=True, **options)  # type: ignore[arg-type]


def spec_names(model: ScriptedModel) -> list[list[str]]:
    return [[spec.name for spec in request.options.tools] for request in model.requests]


def tool_texts(result: AgentResult[str]) -> str:
    return "\n".join(m.text_content() for m in result.messages if m.role in ("user", "tool"))


def search_result(kind: Kind, result: AgentResult[str]) -> str:
    """The JSON the first tool_search returned, as the model saw it."""
    for message in result.messages:
        text = message.text_content()
        if kind == "native" and message.role == "tool" and message.name == "tool_search":
            return text
        if kind == "react" and message.role == "user" and "<tool_search>" in text:
            return text.split("<tool_search>", 1)[1].split("</tool_search>", 1)[0].strip()
    raise AssertionError("no tool_search result")
