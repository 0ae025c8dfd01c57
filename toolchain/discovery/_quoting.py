"""How text the model wrote is quoted back, to it and to the logs: bounded, or as JSON.

A query or a tool name may be of any length and hold anything; it is shown cut short,
or JSON-encoded where it must read as one value.
"""

from __future__ import annotations

import msgspec

__all__ = ["quoted", "shortened"]


def shortened(text: str, limit: int = 200) -> str:
    """``text`` as it is quoted back (the model may send one of any length).

    >>> shortened("find an image"), shortened("abcdef", 4)
    ('find an image', 'abc…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(text: str) -> str:
    """``text`` as a JSON string, quotes included: ``tool_search(query="add a page")``."""
    return msgspec.json.encode(text).decode()
