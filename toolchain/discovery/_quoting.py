"""How text the model wrote is quoted back, to it and to the logs: bounded, or as JSON.

A query, a tool name or a call's arguments may be of any length and hold anything;
they are shown cut short, or JSON-encoded where they must read as one value.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

__all__ = ["args_text", "quoted", "shortened"]


def shortened(text: str, limit: int = 200) -> str:
    """``text`` as it is quoted back (the model may send one of any length).

    >>> shortened("find an image"), shortened("abcdef", 4)
    ('find an image', 'abc…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(text: str) -> str:
    """``text`` as a JSON string, quotes included: ``tool_search(query="add a page")``."""
    return msgspec.json.encode(text).decode()


def args_text(args: Mapping[str, object]) -> str:
    """A call's arguments as JSON, cut at 200 characters."""
    text = msgspec.json.encode(args).decode()
    return text if len(text) <= 200 else text[:199] + "…"
