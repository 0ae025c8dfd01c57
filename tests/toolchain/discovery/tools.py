"""A small hand-written tool set the discovery backend tests search."""

from __future__ import annotations

from toolchain.discovery._documents import ToolDocument

TOOLS = (
    ToolDocument(
        "cms_searchImages",
        "Semantic search for images in the media library by description.",
        "images",
        phrases=("find image", "look for photo"),
        parameters=(("query", "What the image shows"),),
    ),
    ToolDocument(
        "cms_createPage",
        "Create a new CMS page with a title and slug.",
        "pages",
        phrases=("add page to site",),
        parameters=(("title", "The page title"), ("slug", "The URL path")),
    ),
    ToolDocument(
        "cms_addSectionToPage",
        "Add a section template, such as a hero or a gallery, to a page.",
        "sections",
        parameters=(("page_id", "The page"), ("template", "The section template")),
    ),
    ToolDocument(
        "get_weather",
        "Current temperature and conditions for a city.",
        "weather",
        parameters=(("city", "The city name"),),
    ),
    ToolDocument(
        "send_email",
        "Send an email message; it can mention the weather or anything else.",
        "mail",
        parameters=(("to", "Recipient address"), ("body", "Message text")),
    ),
    ToolDocument(
        "translate_text",
        "Translate text between languages.",
        "language",
        parameters=(("text", "Text to translate"), ("target", "Target language code")),
    ),
)
