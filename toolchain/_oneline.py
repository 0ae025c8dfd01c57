"""Text on one bounded line, for lists shown to the model (previews, names, summaries)."""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace runs made single spaces, cut to ``limit`` characters
    (an ellipsis marks the cut): a value shown in a list cannot forge lines of it.

    >>> one_line("Home\\n- page: Admin", 40)
    'Home - page: Admin'
    >>> one_line("abcdef", 4)
    'abc…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
