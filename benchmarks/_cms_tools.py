"""The fake CMS of ``benchmarks.discovery_tokens``: 60 tools in ten categories, each
with parameters described as a CMS's documentation would, and their index metadata.
Names and texts are this benchmark's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from toolchain import ExecutionContext, Tool, ToolResult
from toolchain.discovery import ToolInfo

__all__ = ["CmsTool", "cms_info", "cms_tools"]

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
    assert len(tools) == 60
    return tools


def cms_info(tools: Sequence[CmsTool]) -> list[ToolInfo]:
    return [ToolInfo(t.name, category=t.category, phrases=t.phrases) for t in tools]
