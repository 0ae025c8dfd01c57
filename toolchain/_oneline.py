"""Text on one bounded line, for lists shown to the model (previews, names, summaries)
and for log records.

A module of its own, small as it is: observations, log records and the agents' listings
all cut text this way, and it depends on nothing, so any of them may import it.
"""

from __future__ import annotations

import re

__all__ = ["escape_controls", "log_line", "one_line"]

# Control characters but tab and line feed (C0, DEL, C1) and the bidirectional
# overrides: printed raw they could move a terminal's cursor, retitle it or reorder text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


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


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with its control characters (but tab and line feed) written as escapes.

    >>> escape_controls("a\\tb\\x1b[2Jc\\u202e")
    'a\\tb\\\\x1b[2Jc\\\\u202e'
    """
    return _CONTROL.sub(_escaped, text)


def log_line(text: str, limit: int) -> str:
    """``one_line`` for a log record: a model's or a tool's text cannot forge another
    record (no line breaks) nor reach a terminal's control codes (escaped).

    >>> log_line("no such thing\\n\\x1b]0;title\\x07", 80)
    'no such thing \\\\x1b]0;title\\\\x07'
    """
    return escape_controls(one_line(text, limit))
